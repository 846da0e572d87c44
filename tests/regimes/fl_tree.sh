#!/bin/sh
# fl_tree.sh: regime "fl", topology hierarchical (issue 17), in closed form:
#  - one level, one aggregator for all N devices on a link too fast to
#    share (every flow runs at its cap): round 0 lasts
#      2 x (server latency + 8 B / server bandwidth)   the aggregator's hops
#      + max_i (compute_i + comm_i)                    devices (devices.csv)
#      + N x (s_per_update + s_per_mb x B / 1e6)       the aggregation;
#  - bytes per level: level l's links carry 2 x B x (nodes below) x rounds;
#  - aggregator energy: busy_w x aggregation time + idle_w x the rest.
#
# usage: fl_tree.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
scn="$src/tests/data/sweep/tiny.json"
fail() { echo "FAIL: $*"; exit 1; }
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-8 * (a < 0 ? -a : a) + 1e-9) }'; }
field() { sed -n "s/.*\"$2\": \([0-9.e+-]*\).*/\1/p" "$1/summary.json"; }
B=407080
"$bin" run "$scn" --set regime.kind=fl --set regime.topology=hierarchical \
  --set 'network.links.fast={"bandwidth_mbps":1000000,"latency_ms":0}' \
  --set 'regime.levels=[{"fanout":4,"link":"fast","aggregator":{"s_per_update":0.01,"s_per_mb":0.1,"idle_w":3,"busy_w":40}}]' \
  --out one -q || fail "one level"
want=$(awk -F, -v B=$B '$1 == "0" { t = $4 + $5; if (t > m) m = t }
  END { printf "%.10f", m + 2 * (0.0005 + 8 * B / 1e9) + 4 * (0.01 + 0.1 * B / 1e6) }' one/devices.csv)
got=$(awk -F, '$1 == "0" { print $4 }' one/rounds.csv)
near "$want" "$got" || fail "one level: round 0 lasts $got, closed form $want"
echo "ok   one level: round 0 = $got s (closed form)"
ms=$(field one makespan_s) e=$(field one energy_aggregators_j)
agg=$(awk -v B=$B 'BEGIN { printf "%.10f", 3 * 4 * (0.01 + 0.1 * B / 1e6) }')
want=$(awk -v a="$agg" -v m="$ms" 'BEGIN { printf "%.10f", 40 * a + 3 * (m - a) }')
near "$want" "$e" || fail "aggregator energy $e, expected $want"
echo "ok   aggregator energy = busy x aggregation + idle x the rest ($e J)"

# Two levels over 4 devices: 2 then 1 aggregators; 3 rounds.
"$bin" run "$scn" --set regime.kind=fl --set regime.topology=hierarchical \
  --set 'regime.levels=[{"fanout":2,"link":"gbe","aggregator":{}},{"fanout":2,"link":"wifi","aggregator":{}}]' \
  --out two -q || fail "two levels"
for l in 1 2 3; do
  below=$((l == 1 ? 4 : l == 2 ? 2 : 1))
  [ "$(field two level${l}_bytes)" = $((2 * B * below * 3)) ] ||
    fail "level $l carried $(field two level${l}_bytes) bytes, expected $((2 * B * below * 3))"
done
echo "ok   two levels: bytes per level 2 x B x (nodes below) x rounds"
