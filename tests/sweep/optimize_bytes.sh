#!/bin/sh
# optimize_bytes.sh: `hetsim optimize` writes the same bytes whatever runs it:
# -j 1, -j 3, and a search killed (SIGKILL, twice, once with a torn last line)
# and continued with --resume. Also: the front is the non-dominated set of
# the evaluations file (checked with awk), and every point was simulated
# exactly as `hetsim sweep` simulates it (one point compared).
#
# usage: optimize_bytes.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
scn="$src/tests/data/sweep/tiny.json"
set -- "$scn" --vary policy.w_e=0:1 --vary policy.deadband=0:0.3 --vary samples_per_round=3000,6000 \
  --objective pareto --budget 25 --weights 3 --seed 4
. "$src/tests/sweep/optimize_same.sh" # fail, same
"$bin" optimize "$@" -j 1 --out j1.csv -q || fail "-j 1"
[ "$(($(wc -l <j1.csv) - 2))" = 25 ] || fail "-j 1: expected 25 evaluations"
"$bin" optimize "$@" -j 3 --out j3.csv -q || fail "-j 3"
same j1.csv j3.csv "-j 3 = -j 1"

HETSIM_OPTIMIZE_KILL_AFTER=6 "$bin" optimize "$@" -j 2 --out k.csv -q 2>/dev/null
[ $? -ne 0 ] || fail "the kill hook did not kill"
[ ! -e k.front.csv ] || fail "a killed search wrote k.front.csv"
printf '2,3,0.5,0.1' >>k.csv
"$bin" optimize "$@" --out k.csv -q 2>/dev/null && fail "an existing file was reused without --resume"
HETSIM_OPTIMIZE_KILL_AFTER=4 "$bin" optimize "$@" -j 1 --out k.csv --resume -q 2>/dev/null
[ $? -ne 0 ] || fail "the second kill did not kill"
"$bin" optimize "$@" -j 2 --out k.csv --resume -q || fail "resume"
same j1.csv k.csv "killed twice + --resume = -j 1"
"$bin" optimize "$@" --budget 26 --out k.csv --resume -q 2>/dev/null && fail "resume of another search accepted"

# The front: no evaluation dominates a front point; every non-front point is dominated.
awk -F, 'NR==FNR { if (FNR > 2) { m[FNR] = $6; e[FNR] = $7; n = FNR } next }
  FNR > 2 { for (i = 3; i <= n; i++) if (m[i] <= $6 && e[i] <= $7 && (m[i] < $6 || e[i] < $7)) bad = 1 }
  END { exit bad }' j1.csv j1.front.csv || fail "a front point is dominated"
[ "$(($(wc -l <j1.front.csv) - 2))" -ge 1 ] || fail "empty front"
# One evaluation against hetsim sweep at the same point: the same makespan and energy.
line=$(sed -n 3p j1.csv)
we=$(echo "$line" | cut -d, -f3) db=$(echo "$line" | cut -d, -f4) kind=$(echo "$line" | cut -d, -f5)
ms=$(echo "$line" | cut -d, -f6)
"$bin" sweep "$scn" --grid samples_per_round="$kind" --grid policy.w_e="$we" --grid policy.deadband="$db" \
  --seeds 4 --out s.csv -q || fail "the same point as a sweep"
sms=$(sed -n 3p s.csv | cut -d, -f6)
awk -v a="$ms" -v b="$sms" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * (a > 0 ? a : 1)) }' ||
  fail "optimize says makespan $ms, sweep says $sms"
echo "ok   front non-dominated; a point equals hetsim sweep's"

# hetsim plot on the evaluations file: the front-history figure (when gnuplot is there).
if command -v gnuplot >/dev/null 2>&1; then
  "$bin" plot j1.csv --out plots -q || fail "hetsim plot of an optimize file"
  [ -s plots/front_history.png ] && [ -s plots/front_history.svg ] || fail "no front_history figure"
  echo "ok   front_history.png and .svg"
fi
