#!/bin/sh
# tests/cluster/smoke_regimes.sh PROBE HETSIM REGIME SCENARIO WORKDIR: the CI
# smoke of the cluster runtime's ddp and fedasync. A real run of SCENARIO (2
# boards, 2 rounds / reporting windows, hetsim's trainers on Fashion-MNIST,
# real sockets on 127.0.0.1, --no-isolation: any machine) and then the
# records: every file, every row and column, the times of a row add up, the
# energy labelled; ddp: every board's model hash equals the others' (and the
# server's, which the run checks) at every step and changes from step to step,
# the steps' samples add up to the round's allocation; fedasync: the merged
# updates of a window add up to its telemetry, each merged update's staleness
# is the versions merged since its download and its weight the polynomial
# rule's, the run stopped after the budget arrived. Both: `hetsim replay` of telemetry.csv decides exactly the
# allocations the run used next. ddp: the simulator's ddp learning of the
# same scenario ends with the same held-out loss (the same model, up to the
# float32 wire); then ddp again with ema-batch sizing each step: the same
# records, and each step's batches add up to its global batch.
set -eu
PROBE=$1 HETSIM=$2 REGIME=$3 SCN=$4 WORK=$5
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "cluster_smoke_$REGIME: FAIL: $*" >&2; exit 1; }
"$PROBE" box "$SCN" --out "$WORK/run" --max-samples 4000 --connect-timeout-s 60 --no-isolation >"$WORK/out.txt" \
  || fail "the run exited $?: $(cat "$WORK/out.txt")"
R="$WORK/run"
BOARDS=2 ROUNDS=2
check_ddp() { # the records of a ddp run in folder $R
  S=$(sed -n 's/^  "steps_per_round": \([0-9]*\),$/\1/p' "$R/run.json")
  [ -n "$S" ] || fail "no steps_per_round in run.json"
  grep -q '"models_identical": true' "$R/run.json" || fail "run.json: models_identical"
  [ "$(head -1 "$R/steps.csv")" = "round,step,device,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,wait_s,step_s,energy_j,energy,loss,model_hash" ] \
    || fail "steps.csv header"
  n=$(($(wc -l <"$R/steps.csv") - 1))
  [ "$n" -eq $((ROUNDS * S * BOARDS)) ] || fail "steps.csv has $n rows, expected $((ROUNDS * S * BOARDS))"
  [ $(($(wc -l <"$R/server.csv") - 1)) -eq $((ROUNDS * S)) ] || fail "server.csv rows"
  awk -F, 'FNR == 1 { next } FILENAME ~ /allocations/ { alloc[$1 "," $2] = $3; next } {
    if (NF != 16) { print "steps.csv line " FNR ": " NF " fields"; bad = 1 }
    for (i = 1; i <= NF; i++) if ($i == "") { print "steps.csv line " FNR ": field " i " empty"; bad = 1 }
    for (i = 5; i <= 12; i++) if ($i < 0) { print "steps.csv line " FNR ": field " i " negative"; bad = 1 }
    s = $5 + $6 + $7 + $8 + $9 + $10 + $11
    if (s - $12 > 1e-5 || $12 - s > 1e-5) { print "steps.csv line " FNR ": parts " s " vs step_s " $12; bad = 1 }
    if ($14 != "measured" && $14 != "stated" && $14 != "none") { print "steps.csv line " FNR ": energy " $14; bad = 1 }
    k = $1 "," $2
    if (k in hash && hash[k] != $16) { print "step " k ": boards hash " hash[k] " and " $16; bad = 1 }
    if (!(k in hash)) { hash[k] = $16; if ($16 in seen) { print "step " k ": the model did not change"; bad = 1 }; seen[$16] = 1 }
    got[$1 "," $3] += $4
  } END {
    for (k in alloc) if (got[k] != alloc[k]) { print "round,device " k ": steps trained " got[k] ", allocation " alloc[k]; bad = 1 }
    exit bad
  }' "$R/allocations.csv" "$R/steps.csv" >"$WORK/awk.txt" || fail "$(cat "$WORK/awk.txt")"
}
case $REGIME in
  ddp) REC=steps.csv ;;
  fedasync) REC=updates.csv ;;
  *) fail "regime $REGIME" ;;
esac
for f in $REC telemetry.csv allocations.csv server.csv run.json; do
  [ -s "$R/$f" ] || fail "$f missing"
done
[ ! -e "$R/rounds.csv" ] || fail "rounds.csv is pma's record"
[ "$(head -1 "$R/telemetry.csv")" = "round,device,time_s,energy_j,samples,comm_s" ] || fail "telemetry.csv header"
[ "$(head -1 "$R/allocations.csv")" = "round,device,samples" ] || fail "allocations.csv header"
for f in telemetry.csv allocations.csv; do
  n=$(($(wc -l <"$R/$f") - 1))
  [ "$n" -eq $((ROUNDS * BOARDS)) ] || fail "$f has $n rows, expected $((ROUNDS * BOARDS))"
done
grep -q "\"regime\": \"$REGIME\"" "$R/run.json" || fail "run.json regime"
if [ "$REGIME" = ddp ]; then
  check_ddp
else
  [ "$(head -1 "$R/updates.csv")" = "update,device,board_update,window,version,staleness,weight,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,energy_j,energy,loss,merged" ] \
    || fail "updates.csv header"
  [ $(($(wc -l <"$R/server.csv") - 1)) -eq $ROUNDS ] || fail "server.csv rows"
  BUDGET=$(sed -n 's/^  "samples_per_round": \([0-9]*\),$/\1/p' "$R/run.json")
  awk -F, -v budget="$BUDGET" -v rounds=$ROUNDS 'FNR == 1 { next }
  FILENAME ~ /telemetry/ { tel[$1 "," $2] = $5; tt[$1 "," $2] = $3; next } {
    if (NF != 18) { print "updates.csv line " FNR ": " NF " fields"; bad = 1 }
    for (i = 1; i <= NF; i++) if ($i == "") { print "updates.csv line " FNR ": field " i " empty"; bad = 1 }
    for (i = 9; i <= 14; i++) if ($i < 0) { print "updates.csv line " FNR ": field " i " negative"; bad = 1 }
    if (!($12 > 0) || !($8 > 0)) { print "updates.csv line " FNR ": no training"; bad = 1 }
    if ($16 != "measured" && $16 != "stated" && $16 != "none") { print "updates.csv line " FNR ": energy " $16; bad = 1 }
    if ($18 == 1) {
      merged += $8; win[$4 "," $2] += $8; wt[$4 "," $2] += $12
      # staleness: the versions merged since its download; weight: 0.6 (t + 1)^-0.5 (the polynomial of the scenario)
      if ($6 != versions - $5) { print "update " $1 ": staleness " $6 ", expected " versions - $5; bad = 1 }
      w = 0.6 * (($6 + 1) ^ -0.5); d = w - $7
      if (d > 1e-5 || d < -1e-5) { print "update " $1 ": weight " $7 ", expected " w; bad = 1 }
      versions++
    }
    else if ($4 != rounds) { print "update " $1 " abandoned in window " $4; bad = 1 }
  } END {
    if (merged < rounds * budget) { print "merged " merged " samples, budget " rounds * budget; bad = 1 }
    for (k in tel) {
      if (win[k] + 0 != tel[k]) { print "window,device " k ": updates " win[k] + 0 ", telemetry " tel[k]; bad = 1 }
      d = wt[k] - tt[k]; if (d > 1e-5 || d < -1e-5) { print "window,device " k ": train_s " wt[k] " vs telemetry " tt[k]; bad = 1 }
    }
    exit bad
  }' "$R/telemetry.csv" "$R/updates.csv" >"$WORK/awk.txt" || fail "$(cat "$WORK/awk.txt")"
fi
POLICY=$(sed -n 's/^  "policy": "\(.*\)",$/\1/p' "$R/run.json")
"$HETSIM" replay "$R/telemetry.csv" --policy "$POLICY" -o "$WORK/next.csv" || fail "replay exited $?"
awk -F, 'NR > 1 && $1 + 1 < '"$ROUNDS"' { print $1 + 1 "," $2 "," $3 }' "$WORK/next.csv" >"$WORK/replayed.csv"
awk -F, 'NR > 1 && $1 > 0 { print $1 "," $2 "," $3 }' "$R/allocations.csv" >"$WORK/used.csv"
cmp -s "$WORK/replayed.csv" "$WORK/used.csv" || fail "replay decided $(tr '\n' ' ' <"$WORK/replayed.csv"), the run used $(tr '\n' ' ' <"$WORK/used.csv")"
if [ "$REGIME" = ddp ]; then
  # the simulator's ddp learning of the same scenario (same seed, data, IID
  # parts, schedule and draw keys) trains the same model: the held-out loss and
  # accuracy agree (the runtime's gradients travel as float32, the
  # simulator's stay double: agreement to 1e-4, not bitwise)
  sed '$d' "$SCN" >"$WORK/sim.json"
  printf ',\n  "learning": {"mode": "real", "partition": "iid", "optimizer": "sgd", "max_samples": 4000}\n}\n' \
    >>"$WORK/sim.json"
  "$HETSIM" run "$WORK/sim.json" --out "$WORK/sim" -q || fail "hetsim run exited $?"
  SL=$(sed -n 's/^ *"final_test_loss": \([0-9.e+-]*\),$/\1/p' "$WORK/sim/summary.json")
  SA=$(sed -n 's/^ *"final_test_accuracy": \([0-9.e+-]*\),$/\1/p' "$WORK/sim/summary.json")
  RL=$(sed -n 's/^  "final_held_out_loss": \([0-9.e+-]*\),$/\1/p' "$R/run.json")
  RA=$(sed -n 's/^  "final_held_out_accuracy": \([0-9.e+-]*\),$/\1/p' "$R/run.json")
  awk -v sl="$SL" -v sa="$SA" -v rl="$RL" -v ra="$RA" 'BEGIN {
    d = sl - rl; if (d < 0) d = -d; e = sa - ra; if (e < 0) e = -e
    if (sl == "" || rl == "" || d > 1e-4 * sl || e > 1e-3) { print "simulator loss " sl " acc " sa ", runtime loss " rl " acc " ra; exit 1 }
  }' >"$WORK/awk.txt" || fail "the runtime's ddp and the simulator's trained different models: $(cat "$WORK/awk.txt")"
  # ema-batch sizes every step: the same records, and each step's batches add
  # up to the step's global batch (budget / S, one more for the first steps)
  sed 's/"kind": "equal"/"kind": "ema-batch"/' "$SCN" >"$WORK/ema.json"
  "$PROBE" box "$WORK/ema.json" --out "$WORK/ema" --max-samples 4000 --connect-timeout-s 60 --no-isolation \
    >"$WORK/ema.txt" || fail "the ema-batch run exited $?: $(cat "$WORK/ema.txt")"
  R="$WORK/ema"
  check_ddp
  BUDGET=$(sed -n 's/^  "samples_per_round": \([0-9]*\),$/\1/p' "$R/run.json")
  awk -F, -v budget="$BUDGET" -v S="$S" 'NR > 1 { sum[$1 "," $2] += $4; step[$1 "," $2] = $2 } END {
    for (k in sum) { want = int(budget / S) + (step[k] < budget % S); if (sum[k] != want) { print "step " k ": " sum[k] " samples, expected " want; bad = 1 } }
    exit bad
  }' "$R/steps.csv" >"$WORK/awk.txt" || fail "ema-batch: $(cat "$WORK/awk.txt")"
fi
echo "cluster_smoke_$REGIME: ok: records complete, replay of telemetry.csv gives the run's allocations"
