#!/bin/sh
# reference_pages.sh HETSIM SOURCE_DIR: the checked-in reference pages
# (sim/doc/reference/*.md) are exactly what `hetsim reference PAGE` prints
# from the build's tables; a key, column or metric added without its page
# fails here with the command that regenerates the page.
bin=$1
src=$2
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fail=0
for page in scenario-keys columns metrics; do
  want=$src/sim/doc/reference/$page.md
  if ! "$bin" reference "$page" >"$work/$page.md"; then
    echo "FAIL: hetsim reference $page exited with an error"
    fail=1
    continue
  fi
  if ! cmp -s "$want" "$work/$page.md"; then
    echo "FAIL: sim/doc/reference/$page.md differs from \`hetsim reference $page\`:"
    diff -u "$want" "$work/$page.md" | head -20
    echo "regenerate it: hetsim reference $page > sim/doc/reference/$page.md"
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "ok: 3 reference pages match the build"
exit "$fail"
