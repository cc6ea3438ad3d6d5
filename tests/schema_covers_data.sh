#!/bin/sh
# Fails when a YAML file under data/ matches no "## data/..." heading of data/SCHEMA.md (a heading
# may list several paths separated by ", "; <id> and * match any name).
cd "$1" || exit 2
patterns=$(grep '^## data/' data/SCHEMA.md | sed 's/^## //; s/, /\n/g; s/<[a-z]*>/*/g')
fail=0
for f in $(find data -name '*.yaml' | sort); do
  ok=0
  for p in $patterns; do
    # shellcheck disable=SC2254  # the heading is the pattern
    case $f in $p) ok=1 ;; esac
  done
  [ $ok = 1 ] || { echo "undocumented in data/SCHEMA.md: $f"; fail=1; }
done
exit $fail
