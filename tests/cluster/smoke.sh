#!/bin/sh
# tests/cluster/smoke.sh PROBE HETSIM SCENARIO WORKDIR: the cluster runtime's CI
# smoke. A real run of SCENARIO (2 boards, 2 PMA rounds, hetsim's trainers on
# Fashion-MNIST, real sockets on 127.0.0.1) through `hetsim-probe box` when the
# box can run here (root, a cgroup cpu controller, tc), else the same run with
# --no-isolation (said on stdout). Then: the records are complete (every row and
# column, the times of a row add up to its round), the energy is labelled
# consistently, and `hetsim replay` of telemetry.csv decides exactly the
# allocations the run used in its next rounds.
set -eu
PROBE=$1 HETSIM=$2 SCN=$3 WORK=$4
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "cluster_smoke: FAIL: $*" >&2; exit 1; }

if "$PROBE" box --check >"$WORK/check.txt" 2>&1; then
  MODE=box
  ISO=""
else
  MODE="no-isolation ($(cat "$WORK/check.txt"))"
  ISO=--no-isolation
fi
echo "cluster_smoke: mode: $MODE"
# shellcheck disable=SC2086
"$PROBE" box "$SCN" --out "$WORK/run" --max-samples 4000 --connect-timeout-s 60 $ISO || fail "the run exited $?"
R="$WORK/run"
for f in rounds.csv telemetry.csv allocations.csv server.csv run.json; do
  [ -s "$R/$f" ] || fail "$f missing"
done
ROUNDS=2 BOARDS=2
[ "$(head -1 "$R/telemetry.csv")" = "round,device,time_s,energy_j,samples,comm_s" ] || fail "telemetry.csv header"
[ "$(head -1 "$R/rounds.csv")" = "round,device,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,wait_s,round_s,energy_j,energy,loss" ] \
  || fail "rounds.csv header"
for f in rounds.csv telemetry.csv allocations.csv; do
  n=$(($(wc -l <"$R/$f") - 1))
  [ "$n" -eq $((ROUNDS * BOARDS)) ] || fail "$f has $n rows, expected $((ROUNDS * BOARDS))"
done
[ $(($(wc -l <"$R/server.csv") - 1)) -eq $ROUNDS ] || fail "server.csv rows"
# every field present, times >= 0, the parts of a row add up to round_s, training took time
awk -F, 'NR > 1 {
  if (NF != 14) { print "rounds.csv line " NR ": " NF " fields"; bad = 1 }
  for (i = 1; i <= NF; i++) if ($i == "") { print "rounds.csv line " NR ": field " i " empty"; bad = 1 }
  for (i = 4; i <= 11; i++) if ($i < 0) { print "rounds.csv line " NR ": field " i " negative"; bad = 1 }
  s = $4 + $5 + $6 + $7 + $8 + $9 + $10
  if (s - $11 > 1e-5 || $11 - s > 1e-5) { print "rounds.csv line " NR ": parts " s " vs round_s " $11; bad = 1 }
  if (!($7 > 0) || !($3 > 0)) { print "rounds.csv line " NR ": no training"; bad = 1 }
  if ($13 != "measured" && $13 != "stated" && $13 != "none") { print "rounds.csv line " NR ": energy " $13; bad = 1 }
  if ($13 == "measured") measured = 1
} END { if (measured) print "MEASURED"; exit bad }' "$R/rounds.csv" >"$WORK/awk.txt" || fail "$(cat "$WORK/awk.txt")"
if grep -q MEASURED "$WORK/awk.txt"; then
  grep -q '"energy_measured": true' "$R/run.json" || fail "measured rows but run.json says not measured"
else
  grep -q '"energy_measured": false' "$R/run.json" || fail "run.json says measured, no row is"
fi
# the decisions: replay's round r output is the allocation of round r + 1
POLICY=$(sed -n 's/^  "policy": "\(.*\)",$/\1/p' "$R/run.json")
[ -n "$POLICY" ] || fail "no policy in run.json"
"$HETSIM" replay "$R/telemetry.csv" --policy "$POLICY" -o "$WORK/next.csv" || fail "replay exited $?"
awk -F, 'NR > 1 && $1 + 1 < '"$ROUNDS"' { print $1 + 1 "," $2 "," $3 }' "$WORK/next.csv" >"$WORK/replayed.csv"
awk -F, 'NR > 1 && $1 > 0 { print $1 "," $2 "," $3 }' "$R/allocations.csv" >"$WORK/used.csv"
[ -s "$WORK/used.csv" ] || fail "no allocation after round 0"
cmp -s "$WORK/replayed.csv" "$WORK/used.csv" || fail "replay decided $(tr '\n' ' ' <"$WORK/replayed.csv"), the run used $(tr '\n' ' ' <"$WORK/used.csv")"
echo "cluster_smoke: ok ($MODE): $((ROUNDS * BOARDS)) records, replay of telemetry.csv gives the run's allocations"
