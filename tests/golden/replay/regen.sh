#!/bin/sh
# Regenerate the replay golden files, on purpose only (a changed golden is a
# changed controller: say why in the commit). The adaptive cases were checked,
# when first written, against an independent Python re-implementation of the
# rules in policies/include/policies/hs_policy.h.
#   sh tests/golden/replay/regen.sh build/bin/hetsim
set -eu
hetsim=${1:?usage: regen.sh PATH/TO/hetsim}
dir=$(dirname "$0")
grep -v '^#' "$dir/cases.txt" | while read -r out args; do
  # shellcheck disable=SC2086
  "$hetsim" replay "$dir/telemetry.csv" $args > "$dir/$out.tmp"
  mv "$dir/$out.tmp" "$dir/$out"
done
