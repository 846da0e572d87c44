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

# Whole-system energy. Star with a server host and a network model: each round
# lasts pma's round + the server's aggregation, N x (s_per_update + s_per_mb x MB);
# server = busy_w x aggregation + idle_w x the rest; network = j_per_byte x 2 x
# B x 2 hops x N x rounds + port_w x (N + 1) x makespan; system = the parts.
"$bin" run "$scn" --set regime.kind=pma --out pma -q || fail "pma"
"$bin" run "$scn" --set regime.kind=fl \
  --set 'regime.server={"idle_w":50,"busy_w":120,"s_per_update":0.05,"s_per_mb":0.2}' \
  --set 'regime.network={"j_per_byte":1e-8,"port_w":0.5}' --out sys -q || fail "server and network"
agg=$(awk -v B=$B 'BEGIN { printf "%.12f", 4 * (0.05 + 0.2 * B / 1e6) }')
paste -d, pma/rounds.csv sys/rounds.csv | awk -F, -v a="$agg" 'NR > 1 {
  d = $12 - $4 - a; if (d < 0) d = -d; if (d > 1e-8) { print "round " $1 ": " $12 " vs " $4 " + " a; bad = 1 } }
  END { exit bad }' || fail "a round is not pma's round + the server's aggregation"
echo "ok   star + server: every round = pma's + N x aggregation per update"
ms=$(field sys makespan_s) dev=$(field sys energy_j)
srv=$(field sys energy_server_j) net=$(field sys energy_network_j) tot=$(field sys energy_system_j)
near "$(awk -v a="$agg" -v m="$ms" 'BEGIN { printf "%.10f", 120 * 3 * a + 50 * (m - 3 * a) }')" "$srv" ||
  fail "server energy $srv"
near "$(awk -v B=$B -v m="$ms" 'BEGIN { printf "%.10f", 1e-8 * 2 * B * 2 * 4 * 3 + 0.5 * 5 * m }')" "$net" ||
  fail "network energy $net"
near "$(awk -v a="$dev" -v b="$srv" -v c="$net" 'BEGIN { printf "%.10f", a + b + c }')" "$tot" ||
  fail "system energy $tot is not devices + server + network"
echo "ok   server, network and system energy identities"
# The sourced defaults (ESTIMATES, regime_fl.h): 1e-6 J per byte per link
# crossed (Wi-Fi), 1 W per endpoint port (switch ports) and the server host
# devices/profiles/server-r740.json (52.3 W idle, 457 W busy, aggregation 0 s:
# rounds stay pma's). port_w alone keeps the default j_per_byte; an inline
# server block overrides its profile field by field.
"$bin" run "$scn" --set regime.kind=fl --out dflt -q || fail "fl with default energy"
"$bin" run "$scn" --set regime.kind=fl --set 'regime.network={"port_w":0.5}' --out dport -q ||
  fail "fl with port_w only"
ms=$(field dflt makespan_s)
near "$(awk -v B=$B -v m="$ms" 'BEGIN { printf "%.10f", 1e-6 * 2 * B * 2 * 4 * 3 + 1 * 5 * m }')" \
  "$(field dflt energy_network_j)" || fail "default network energy $(field dflt energy_network_j)"
near "$(awk -v m="$ms" 'BEGIN { printf "%.10f", 52.3 * m }')" "$(field dflt energy_server_j)" ||
  fail "default server energy $(field dflt energy_server_j) is not 52.3 W x makespan"
near "$(awk -v B=$B -v m="$ms" 'BEGIN { printf "%.10f", 1e-6 * 2 * B * 2 * 4 * 3 + 0.5 * 5 * m }')" \
  "$(field dport energy_network_j)" || fail "port_w alone dropped the default j_per_byte"
cmp pma/rounds.csv dflt/rounds.csv || fail "the default server changed the rounds (aggregation is 0 s)"
"$bin" validate "$scn" --set regime.kind=fl > dflt.json || fail "validate fl"
grep -q '"profile":[[:space:]]*"server-r740"' dflt.json && grep -q '"port_w":[[:space:]]*1$' dflt.json ||
  fail "validate does not show the default server profile and port power"
"$bin" run "$scn" --set regime.kind=fl --set 'regime.server={"busy_w":100,"s_per_update":0.05}' \
  --out over -q || fail "server override"
ms=$(field over makespan_s) agg=$(awk 'BEGIN { printf "%.12f", 3 * 4 * 0.05 }')
near "$(awk -v a="$agg" -v m="$ms" 'BEGIN { printf "%.10f", 100 * a + 52.3 * (m - a) }')" \
  "$(field over energy_server_j)" || fail "override: server energy $(field over energy_server_j)"
echo "ok   defaults: 1e-6 J/B/link, 1 W/port, server-r740 (52.3 W idle); inline fields override it"
# validate prints every host resolved (profile name and its four figures):
# what it prints loads back to the same scenario (hierarchical, an aggregator
# overriding edge-n100, DVFS on the leaves).
"$bin" validate "$scn" --set regime.kind=fl --set regime.topology=hierarchical \
  --set 'regime.levels=[{"fanout":2,"link":"gbe","aggregator":{"profile":"edge-n100","busy_w":30}}]' \
  --set 'regime.dvfs={"levels":[{"speed":1,"power":1},{"speed":0.5,"power":0.3}],"governor":"slack"}' \
  > v1.json || fail "validate hierarchical"
"$bin" validate v1.json > v2.json || fail "validate its own output"
cmp v1.json v2.json || fail "validate's output does not load back unchanged"
grep -q '"busy_w":[[:space:]]*30,' v1.json && grep -q '"idle_w":[[:space:]]*6.4,' v1.json ||
  fail "the aggregator is not edge-n100 with busy_w overridden"
echo "ok   validate: hosts resolved (profile + figures) and loaded back unchanged"
# The energy metrics appear only for a regime that reports them (pma: none),
# and optimize can minimise energy_system_j: its front is the least of every
# evaluation's energy_system_j column.
"$bin" run "$scn" --set regime.kind=pma --out pmasum -q || fail "pma"
! grep -q energy_system_j pmasum/summary.json || fail "pma summary.json has energy_system_j"
grep -q '"energy_aggregators_j": 0' dflt/summary.json || fail "fl star: energy_aggregators_j is not 0"
"$bin" optimize "$scn" --set regime.kind=fl --vary policy.w_e=0:1 --objective energy_system \
  --budget 6 --out opt.csv -q || fail "optimize --objective energy_system"
col=$(sed -n 2p opt.csv | tr , '\n' | grep -n '^energy_system_j$' | cut -d: -f1)
[ -n "$col" ] || fail "opt.csv has no energy_system_j column"
min=$(awk -F, -v c="$col" 'NR > 2 { if (m == "" || $c < m) m = $c } END { print m }' opt.csv)
best=$(awk -F, -v c="$col" 'NR == 3 { print $c }' opt.front.csv)
[ -n "$min" ] && [ "$min" = "$best" ] || fail "front energy_system_j $best is not the least evaluated, $min"
echo "ok   energy metrics only where reported; optimize minimises energy_system_j ($best J)"
# Hierarchical: system = devices + server + aggregators + network (ports: 4 + 2 + 1).
"$bin" run "$scn" --set regime.kind=fl --set regime.topology=hierarchical \
  --set 'regime.levels=[{"fanout":2,"link":"gbe","aggregator":{"s_per_update":0.01,"idle_w":5,"busy_w":20}}]' \
  --set 'regime.server={"idle_w":30}' --set 'regime.network={"j_per_byte":2e-8,"port_w":1}' \
  --out hsys -q || fail "hierarchical with energy"
ms=$(field hsys makespan_s)
near "$(awk -v B=$B -v m="$ms" 'BEGIN { printf "%.10f", 2e-8 * 2 * B * 2 * 6 * 3 + 7 * m }')" \
  "$(field hsys energy_network_j)" || fail "hierarchical network energy"
near "$(awk -v a="$(field hsys energy_j)" -v b="$(field hsys energy_server_j)" \
  -v c="$(field hsys energy_aggregators_j)" -v d="$(field hsys energy_network_j)" \
  'BEGIN { printf "%.10f", a + b + c + d }')" "$(field hsys energy_system_j)" ||
  fail "hierarchical system energy is not the sum of its parts"
echo "ok   hierarchical: system = devices + server + aggregators + network"

# Ring: every round = the slowest participant's training + the ring
# all-reduce 2(p-1) alpha + 2 (p-1)/p 8B/beta (alpha: the largest access
# latency, 5 ms wifi; beta: the smallest access bandwidth, 50 Mbit/s); every
# participant is in COMM for exactly that time; network bytes x links =
# 4 (p-1) B per round; ports = the 4 devices (no server).
"$bin" run "$scn" --set regime.kind=fl --set regime.topology=ring \
  --set 'regime.network={"j_per_byte":1e-8,"port_w":1}' --out ring -q || fail "ring"
ar=$(awk -v B=$B 'BEGIN { printf "%.12f", 2 * 3 * 0.005 + 2 * 3 / 4 * 8 * B / 50e6 }')
awk -F, -v a="$ar" 'NR > 1 { d = $5 - a; if (d < 0) d = -d; if (d > 1e-9) bad = 1 } END { exit bad }' \
  ring/devices.csv || fail "ring: a device's comm time is not the all-reduce's $ar s"
for rr in 0 1 2; do
  want=$(awk -F, -v r=$rr -v a="$ar" '$1 == r { if ($4 > m) m = $4 } END { printf "%.10f", m + a }' ring/devices.csv)
  got=$(awk -F, -v r=$rr '$1 == r { print $4 }' ring/rounds.csv)
  near "$want" "$got" || fail "ring round $rr lasts $got, closed form $want"
done
near "$(awk -v B=$B -v m="$(field ring makespan_s)" 'BEGIN { printf "%.10f", 1e-8 * 4 * 3 * B * 3 + 4 * m }')" \
  "$(field ring energy_network_j)" || fail "ring network energy"
echo "ok   ring: rounds = slowest training + ring all-reduce (closed form), network energy"

# DVFS (minimal model): one level at nominal speed and power is fl star to the
# byte; powersave at speed 0.5 doubles every device's round-0 training exactly
# (same draws), and with power 0.3 the run's compute energy per training
# second is 0.3 / 0.5 = 0.6 of nominal in round 0: checked on the totals of
# round 0 through devices.csv's compute_s and the ledger's busy power.
"$bin" run "$scn" --set regime.kind=fl --out star -q || fail "star"
"$bin" run "$scn" --set regime.kind=fl --set 'regime.dvfs={"levels":[{"speed":1,"power":1}]}' \
  --out perf -q || fail "dvfs performance"
cmp star/devices.csv perf/devices.csv && cmp star/rounds.csv perf/rounds.csv ||
  fail "a single nominal level changed the run"
"$bin" run "$scn" --set regime.kind=fl \
  --set 'regime.dvfs={"levels":[{"speed":1,"power":1},{"speed":0.5,"power":0.3}],"governor":"powersave"}' \
  --out save -q || fail "dvfs powersave"
paste -d, star/devices.csv save/devices.csv | awk -F, '$1 == "0" {
  d = $12 - 2 * $4; if (d < 0) d = -d; if (d > 1e-8) bad = 1 } END { exit bad }' ||
  fail "powersave at speed 0.5 did not double round-0 training"
echo "ok   dvfs: a nominal level is fl star; speed 0.5 doubles training exactly"
# "levels": "profile" shares the thermal model's levels: powersave runs each
# device at its profile's slowest level (rpi4: speed 0.556, read from its
# profile file here); profiles without a thermal block stay nominal.
"$bin" run "$scn" --set regime.kind=fl --set 'regime.dvfs={"levels":"profile","governor":"powersave"}' \
  --out prof -q || fail "dvfs profile levels"
slow=$(grep -o '"speed": *[0-9.]*' "$src/devices/profiles/rpi4.json" | tail -1 | grep -o '[0-9.]*$')
paste -d, star/devices.csv prof/devices.csv | awk -F, -v s="$slow" '$1 == "0" {
  want = ($2 == "rpi4") ? $4 / s : $4; d = $12 - want; if (d < 0) d = -d; if (d > 1e-8) bad = 1 }
  END { exit bad }' || fail "profile levels: round-0 training is not nominal / speed"
echo "ok   dvfs levels from the profile's thermal block (rpi4 at speed $slow; others nominal)"
