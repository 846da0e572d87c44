#!/bin/sh
# fl_threshold.sh: regime "fl" (issue 17) against closed forms built from a
# pma run of the same scenario:
#  - topology star, and threshold with K = N, are pma to the byte
#    (rounds.csv, devices.csv);
#  - threshold K: round 0 ends at the K-th smallest arrival of pma's round 0
#    (arrival_i = compute_s + comm_s: every device starts at 0, and nothing
#    differs from pma before the K-th arrival);
#  - late "drop": late_updates = rounds x (N - K) (exactly the late N - K);
#    late "fold": the same count, and folded_updates <= late_updates;
#  - bad input (K > N, k without threshold) is one line, exit 2 (cases fl-*).
#
# usage: fl_threshold.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
scn="$src/tests/data/sweep/tiny.json"
fail() { echo "FAIL: $*"; exit 1; }
run() { out=$1; shift; "$bin" run "$scn" --set regime.kind=fl "$@" --out "$out" -q || fail "run $out"; }
"$bin" run "$scn" --set regime.kind=pma --out pma -q || fail "pma"
run star
run kN --set regime.topology=threshold --set regime.k=4
for d in star kN; do
  cmp pma/rounds.csv $d/rounds.csv && cmp pma/devices.csv $d/devices.csv || fail "$d differs from pma"
done
echo "ok   star and threshold K=N are pma to the byte"
rounds=$(grep -c '^[0-9]' pma/rounds.csv)
for k in 1 2 3; do
  run k$k --set regime.topology=threshold --set regime.k=$k
  want=$(awk -F, '$1 == "0" { printf "%.10f\n", $4 + $5 }' pma/devices.csv | sort -g | sed -n ${k}p)
  got=$(awk -F, '$1 == "0" { print $3 }' k$k/rounds.csv)
  awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8) }' ||
    fail "K=$k: round 0 ends at $got, the K-th arrival of pma is $want"
  late=$(sed -n 's/.*"late_updates": \([0-9]*\).*/\1/p' k$k/summary.json)
  [ "$late" = $((rounds * (4 - k))) ] || fail "K=$k: late_updates $late, expected $((rounds * (4 - k)))"
  run f$k --set regime.topology=threshold --set regime.k=$k --set regime.late=fold
  fl=$(sed -n 's/.*"late_updates": \([0-9]*\).*/\1/p' f$k/summary.json)
  fo=$(sed -n 's/.*"folded_updates": \([0-9]*\).*/\1/p' f$k/summary.json)
  [ "$fl" = "$late" ] && [ "$fo" -le "$fl" ] || fail "K=$k fold: late $fl folded $fo"
  echo "ok   K=$k: round 0 = K-th arrival ($got s), $late late updates, fold folds $fo"
done
