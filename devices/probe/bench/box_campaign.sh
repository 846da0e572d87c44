#!/bin/sh
# devices/probe/bench/box_campaign.sh PROBE [RUNS] [OUT]: the box campaign of
# issue 24 on this machine: box-mnist-pma-5.json (5 boards at 6/9/13/19/28 % of
# one core, links 20-200 Mbit/s, 15 PMA rounds) run RUNS times (3) with the
# equal policy and RUNS times with time-only, through `hetsim-probe box` (root).
# Prints every run's real makespan and, per policy, min / median / max and the
# time-only cut; says how busy the machine was (load average before and after).
# The records of every run stay in OUT (box-campaign/) for `hetsim replay` and
# for calibration with `hetsim-probe import`. A benchmark, not a test.
set -eu
PROBE=$1 RUNS=${2:-3} OUT=${3:-box-campaign}
HERE=$(cd "$(dirname "$0")" && pwd)
SCN=$HERE/box-mnist-pma-5.json
mkdir -p "$OUT"
rm -f "$OUT/makespans.txt"
sed 's/"kind": "equal"/"kind": "time-only"/' "$SCN" >"$OUT/box-mnist-pma-5-time-only.json"
cp "$SCN" "$OUT/box-mnist-pma-5-equal.json"
QUOTAS="--quota b06=0.06 --quota b09=0.09 --quota b13=0.13 --quota b19=0.19 --quota b28=0.28"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for policy in equal time-only; do
  for k in $(seq 1 "$RUNS"); do
    d=$OUT/$policy-$k
    # shellcheck disable=SC2086
    "$PROBE" box "$OUT/box-mnist-pma-5-$policy.json" --out "$d" $QUOTAS --quiet
    m=$(sed -n 's/^  "makespan_s": \(.*\),$/\1/p' "$d/run.json")
    o=$(sed -n 's/^  "overhead_fraction": \(.*\),$/\1/p' "$d/run.json")
    r=$(awk -F, 'NR > 1 { s += $7 } END { print s + 0 }' "$d/server.csv")
    echo "$policy run $k: makespan $m s, reallocations $r, runtime overhead fraction $o"
    echo "$policy $m" >>"$OUT/makespans.txt"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '{ v[$1] = v[$1] " " $2 }
END {
  for (p in v) {
    n = split(v[p], x, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
    med[p] = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    printf "%s: min %.2f s, median %.2f s, max %.2f s over %d runs\n", p, x[1], med[p], x[n], n
  }
  if ("equal" in med && "time-only" in med) printf "time-only cut vs equal (medians): %.1f %%\n", 100 * (1 - med["time-only"] / med["equal"])
}' "$OUT/makespans.txt"
