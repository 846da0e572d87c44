#!/bin/sh
# progress_bytes.sh: progress lines never change an output file. A run with
# and without --progress, and a sweep at -j 1 without it and at -j 2 with a
# line after every row, must write the same bytes (summary.json, rounds.csv,
# devices.csv; RESULTS.csv and RESULTS.points.csv).
# usage: progress_bytes.sh HETSIM_BIN SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 2
fail=0
sc=$src/scenarios/testbed-mnist-pma.json
"$bin" run "$sc" --policy time-only --set rounds=4 --out "$work/a" --quiet --progress 0 || fail=1
"$bin" run "$sc" --policy time-only --set rounds=4 --out "$work/b" --quiet --progress 0.000001 \
  2>"$work/b.err" || fail=1
grep -q "hetsim run: progress 4/4 rounds" "$work/b.err" || { echo "FAIL: no progress line from run"; fail=1; }
for f in summary.json rounds.csv devices.csv; do
  cmp "$work/a/$f" "$work/b/$f" || { echo "FAIL: run $f differs with --progress"; fail=1; }
done
tiny=$src/tests/data/sweep/tiny.json
"$bin" sweep "$tiny" --grid policy.w_e=0,0.5,1 --seeds 1-3 -j 1 --out "$work/s1.csv" --quiet \
  --progress 0 || fail=1
"$bin" sweep "$tiny" --grid policy.w_e=0,0.5,1 --seeds 1-3 -j 2 --out "$work/s2.csv" --quiet \
  --progress 0.000001 2>"$work/s2.err" || fail=1
grep -q "hetsim sweep: progress" "$work/s2.err" || { echo "FAIL: no progress line from sweep"; fail=1; }
cmp "$work/s1.csv" "$work/s2.csv" || { echo "FAIL: RESULTS differ"; fail=1; }
cmp "$work/s1.points.csv" "$work/s2.points.csv" || { echo "FAIL: points differ"; fail=1; }
grep -q "makespan_s_sd,makespan_s_ci95_lo,makespan_s_ci95_hi" "$work/s1.points.csv" ||
  { echo "FAIL: points lack sd/ci columns"; fail=1; }
[ $fail = 0 ] && echo "progress_bytes: outputs identical with and without progress"
exit $fail
