// What a binary that links no generated entries sees (the generator k3plan_compile_data, and any
// program built from the layer libraries alone): no compiled entries, so every loader reads the
// embedded YAML, and no recorded commit. The build's generated/compiled_data.cpp and
// generated/build_info.cpp (linked into k3plan, the tests, the benchmarks) override these weak
// definitions. A file of its own, so that no caller inlines them.
#include <k3plan/compiled.hpp>
#include <k3plan/version.hpp>

namespace k3plan {

[[gnu::weak]] const std::vector<compiled::Entry>& compiled::entries() {
  static const std::vector<Entry> none;
  return none;
}
[[gnu::weak]] const char* build_commit() { return "unknown"; }
[[gnu::weak]] const char* build_version() { return "unknown"; }

}  // namespace k3plan
