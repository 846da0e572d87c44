#!/bin/sh
# check.sh: golden outputs of whole scenarios. Each line of tests/golden/cases
# is "NAME SCENARIO POLICY [--set key=value ...]"; the run's summary.json,
# rounds.csv and devices.csv must equal tests/golden/NAME/ byte for byte, except
# summary.json's "hetsim_version" line (it names the build: every commit has
# its own, and a golden must outlive commits that change nothing else). Each
# case is also checked with `hetsim run --expect`, which must agree.
#
# usage: check.sh HETSIM_BIN SOURCE_DIR WORK_DIR [--regen]
#   --regen rewrites the references (only on purpose: review the diff, commit
#   it with the reason the figures changed).
set -u
bin=$1 src=$2 work=$3 regen=${4:-}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
gold=$src/tests/golden
mkdir -p "$work"
nrun=0 nfail=0
while read -r name scenario policy rest; do
  case $name in ''|'#'*) continue ;; esac
  nrun=$((nrun + 1))
  out=$work/$name
  rm -rf "$out"
  # shellcheck disable=SC2086
  if ! (cd "$src" && "$bin" run "$scenario" --policy "$policy" --out "$out" --quiet $rest); then
    echo "FAIL $name: hetsim run failed"
    nfail=$((nfail + 1))
    continue
  fi
  if [ "$regen" = "--regen" ]; then
    mkdir -p "$gold/$name"
    cp "$out/summary.json" "$out/rounds.csv" "$out/devices.csv" "$gold/$name/"
    echo "regenerated $name"
    continue
  fi
  grep -v '^  "hetsim_version": ' "$out/summary.json" >"$out/summary.nover"
  grep -v '^  "hetsim_version": ' "$gold/$name/summary.json" >"$out/summary.gold"
  if ! cmp -s "$out/summary.nover" "$out/summary.gold"; then
    echo "FAIL $name: summary.json differs from tests/golden/$name/summary.json:"
    diff "$out/summary.gold" "$out/summary.nover" | head -5
    nfail=$((nfail + 1))
  fi
  for f in rounds.csv devices.csv; do
    if ! cmp -s "$out/$f" "$gold/$name/$f"; then
      echo "FAIL $name: $f differs from tests/golden/$name/$f:"
      diff "$gold/$name/$f" "$out/$f" | head -5
      nfail=$((nfail + 1))
    fi
  done
  # `hetsim run --expect` must agree with the byte comparison above.
  # shellcheck disable=SC2086
  if ! msg=$(cd "$src" && "$bin" run "$scenario" --policy "$policy" --quiet $rest \
      --expect "$gold/$name" 2>&1); then
    echo "FAIL $name: hetsim run --expect tests/golden/$name: $msg"
    nfail=$((nfail + 1))
  fi
done <"$gold/cases"
echo "golden: $((nrun - nfail)) passed, $nfail failed"
[ "$nfail" -eq 0 ]
