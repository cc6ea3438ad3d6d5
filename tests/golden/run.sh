#!/usr/bin/env bash
# Golden CLI tests: runs every case of cases.txt with the real binary from the repository root and
# compares stdout plus the exit status with <name>.txt byte for byte.
#   run.sh K3PLAN_BINARY            check (exit 1 and a diff on any difference)
#   run.sh K3PLAN_BINARY --update   rewrite the expected files (`make golden`)
set -u
bin=$1
mode=${2:-check}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
export LC_ALL=C
failed=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
while IFS= read -r line; do
  case "$line" in '#'* | '') continue ;; esac
  name=${line%%:*}
  args=${line#*: }
  # shellcheck disable=SC2086  # the arguments are split at spaces on purpose
  out=$("$bin" $args 2>&1; echo "exit: $?")
  if [ "$mode" = --update ]; then
    printf '%s\n' "$out" >"$here/$name.txt"
  elif ! diff -u "$here/$name.txt" <(printf '%s\n' "$out") >"$tmp" 2>&1; then
    echo "golden: $name differs ($args); diff below, \`make golden\` updates after review"
    cat "$tmp"
    failed=1
  fi
done <"$here/cases.txt"
[ "$mode" = --update ] && echo "golden: updated $(grep -cv '^#\|^$' "$here/cases.txt") cases"
exit $failed
