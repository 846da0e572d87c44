#!/bin/sh
# tests/cluster/check_smoke.sh PROBE HETSIM SCENARIO WORKDIR: `hetsim check` on
# a real run. A real 2-board run of SCENARIO without isolation (any user; the
# boards run at this machine's speed), then the check of the simulator against
# it: the CSV has every row (round x device, per round, per device, total)
# with every compared figure filled in, the JSON is complete and says the
# verdict, an absurdly tight tolerance fails with exit 3 naming the figure,
# a loose one passes with exit 0, and a per-round tolerance is judged too.
set -eu
PROBE=$1 HETSIM=$2 SCN=$3 WORK=$4
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "check_smoke: FAIL: $*" >&2; exit 1; }
R="$WORK/run"
"$PROBE" box "$SCN" --out "$R" --no-isolation --quiet --max-samples 4000 || fail "the run exited $?"

# a tolerance of 1e-9: no prediction is that close; exit 3, one line naming the figure
set +e
"$HETSIM" check "$SCN" "$R" --tolerance 1e-9 --csv "$WORK/check.csv" --json "$WORK/check.json" \
  >"$WORK/tight.out" 2>"$WORK/tight.err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "--tolerance 1e-9 exited $rc, expected 3: $(cat "$WORK/tight.err")"
[ "$(wc -l <"$WORK/tight.err")" -eq 1 ] || fail "expected one line on stderr: $(cat "$WORK/tight.err")"
grep -q '^check: FAIL: total makespan error .* exceeds --tolerance 1e-09$' "$WORK/tight.err" \
  || fail "verdict: $(cat "$WORK/tight.err")"
grep -q '^total ' "$WORK/tight.out" || fail "no total block on stdout"
grep -q '^per round ' "$WORK/tight.out" || fail "no per-round block on stdout"
grep -q '^per device ' "$WORK/tight.out" || fail "no per-device block on stdout"

# check.csv: header + 2 rounds x (2 devices + 1) + 2 devices + 1 total = 10 lines, 24 fields
[ "$(wc -l <"$WORK/check.csv")" -eq 10 ] || fail "check.csv has $(wc -l <"$WORK/check.csv") lines, expected 10"
head -1 "$WORK/check.csv" | grep -q '^round,device,samples,makespan_pred_s,makespan_meas_s,makespan_err,compute_pred_s' \
  || fail "check.csv header: $(head -1 "$WORK/check.csv")"
awk -F, 'NR > 1 {
  if (NF != 24) { print "line " NR ": " NF " fields"; bad = 1 }
  for (i = 7; i <= 16; i++) if ($i == "") { print "line " NR ": field " i " empty"; bad = 1 }
  if ($2 == "") { for (i = 4; i <= 6; i++) if ($i == "") { print "line " NR ": no makespan"; bad = 1 }
                  if ($21 == "" || $22 == "" || $23 == "") { print "line " NR ": no worst device"; bad = 1 } }
  else if ($4 != "") { print "line " NR ": a device row with a makespan"; bad = 1 }
  if ($1 == "all" && $2 == "") total = 1
} END { if (!total) { print "no total row"; bad = 1 } exit bad }' "$WORK/check.csv" >"$WORK/awk.txt" \
  || fail "check.csv: $(cat "$WORK/awk.txt")"
# check.json: complete, and it says the run failed the tolerance
for key in '"pass": false' '"tolerance": 1e-09' '"per_round": \[' '"per_device": \[' '"worst_device": "' \
  '"makespan": {"predicted": '; do
  grep -q "$key" "$WORK/check.json" || fail "check.json lacks $key"
done
tail -1 "$WORK/check.json" | grep -q '^}$' || fail "check.json is not complete"
if command -v python3 >/dev/null 2>&1; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["per_round"]) == 2 and len(d["per_device"]) == 2' \
    "$WORK/check.json" || fail "check.json does not parse as the expected JSON"
fi
# the measured total is run.json's makespan_s
MK=$(sed -n 's/^  "makespan_s": \(.*\),$/\1/p' "$R/run.json")
awk -F, -v mk="$MK" '$1 == "all" && $2 == "" { if ($5 != mk) exit 1 }' "$WORK/check.csv" \
  || fail "the total's measured makespan is not run.json's $MK"

# a loose tolerance: exit 0, the verdict on stdout
"$HETSIM" check "$SCN" "$R" --tolerance 100 --quiet >"$WORK/loose.out" 2>"$WORK/loose.err" \
  || fail "--tolerance 100 exited $?: $(cat "$WORK/loose.err")"
grep -q '^check: ok: total makespan error .*within --tolerance 100$' "$WORK/loose.out" \
  || fail "loose verdict: $(cat "$WORK/loose.out")"
[ ! -s "$WORK/loose.err" ] || fail "stderr on success: $(cat "$WORK/loose.err")"
# per round: the first round's error breaks a tolerance of 1e-9
set +e
"$HETSIM" check "$SCN" "$R" --tolerance 100 --tolerance-round 1e-9 --quiet >/dev/null 2>"$WORK/round.err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "--tolerance-round 1e-9 exited $rc"
grep -q '^check: FAIL: round 0 makespan error .* exceeds --tolerance-round 1e-09$' "$WORK/round.err" \
  || fail "round verdict: $(cat "$WORK/round.err")"
echo "check_smoke: ok: $(sed -n 's/^check: FAIL: //p' "$WORK/tight.err")"
