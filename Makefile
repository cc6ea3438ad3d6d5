# Two commands on a fresh Debian/Ubuntu machine: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PKGS := cmake g++ make libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev catch2 libcurl4-openssl-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps configure build run test sanitize format-check clean validation-table golden deb

deps:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

configure: deps
	@[ -f $(BUILD)/CMakeCache.txt ] || cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/k3plan fit -m kimi-k3

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

sanitize: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DK3PLAN_SANITIZE=ON -DK3PLAN_WERROR=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

format-check: configure
	cmake --build $(BUILD) --target format-check

clean:
	rm -rf $(BUILD) build-asan

# the published engine-accuracy table on the public start-up logs (written by the test of record)
validation-table: build
	cd $(BUILD) && ctest -R "start-up log|out-of-sample logs|in-sample logs|error bands" --output-on-failure || true
	cp $(BUILD)/engine-validation-logs.md docs/engine-validation-logs.md
	cp $(BUILD)/log-accuracy.yaml data/validation/log-accuracy.yaml

# the golden CLI outputs (tests/golden): rewrite them after a reviewed change, then read the diff
golden: build
	tests/golden/run.sh $(BUILD)/k3plan --update

# the Debian package: $(BUILD)/k3plan_<version>_<arch>.deb (CPack, needs only dpkg-deb); installs
# /usr/bin/k3plan, which carries its catalogue and runs from any directory
deb: build
	rm -f $(BUILD)/k3plan_*.deb
	cd $(BUILD) && cpack -G DEB
	sh cmake/check_deb.sh $(BUILD)/k3plan_*.deb
