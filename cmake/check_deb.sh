#!/bin/sh
# Checks a built k3plan .deb without installing it system-wide: its control fields, then the binary
# unpacked to a scratch root and run from an unrelated directory (the catalogue is compiled in).
# With root and K3PLAN_DEB_INSTALL=1, also installs it with dpkg -i and runs /usr/bin/k3plan.
set -eu
deb=${1:?usage: check_deb.sh k3plan_VERSION_ARCH.deb}
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
dpkg-deb --field "$deb" Package Version Depends
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
cd /
"$root/usr/bin/k3plan" --version
"$root/usr/bin/k3plan" fit -m kimi-k3 -g b300 >/dev/null
echo "check_deb: $(basename "$deb") runs from / (fit -m kimi-k3 -g b300)"
if [ "${K3PLAN_DEB_INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
  dpkg -i "$deb"
  (cd "$root" && k3plan --version)
fi
