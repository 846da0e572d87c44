#!/bin/sh
# meter_rows.sh: the meter scopes in every table with energy, on runs with
# report.meter_scopes (issue 25). Per row: wall = above-idle + idle baseline
# (to rounding) and training-only <= wall, in meter.csv (per device and
# round), rounds.csv (per round), device_profiles.csv (per profile and
# round), learning.csv (since t = 0, per evaluation) and agc.csv (per
# iteration); meter.csv's wall is devices.csv's energy_j,
# rounds.csv's scopes are meter.csv's summed per round, learning.csv's are
# rounds.csv's summed to its round, and every table's rows add up to
# summary.json's scopes. Without the key no table has the columns (the
# goldens' bytes). Fails when a scope is computed on another base than the
# ledger's, or drops a device or a round. fedasync reports an update in the
# window where it arrives, and an update may have started in an earlier
# window: there training <= wall holds per device over the run, not per
# window.
#
# usage: meter_rows.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# key -> its number in summary.json (the run's folder $1)
summ() { sed -n "s/^  \"$2\": \(.*\),\$/\1/p" "$1/summary.json"; }
close() { # a b: |a - b| <= 1e-6 (|b| + 1)
  awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
    exit !(a != "" && b != "" && d <= 1e-6 * (m + 1)) }'
}
# table cum: per row of a CSV with energy_j and the three scope columns
# (found by name), wall = baseline + above-idle and, unless cum is 1,
# training <= wall; prints the column sums "wall base above train".
scopes() {
  awk -F, -v cum="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
      if (!c["energy_j"] || !c["energy_idle_baseline_j"] || !c["energy_above_idle_j"] ||
          !c["energy_training_j"]) { print "no scope columns: " $0 > "/dev/stderr"; exit 1 }
      next }
    { w = $c["energy_j"]; b = $c["energy_idle_baseline_j"]; a = $c["energy_above_idle_j"]
      t = $c["energy_training_j"]
      if (w - (a + b) > 1e-9 * (w + 1) || (a + b) - w > 1e-9 * (w + 1)) {
        print "line " NR ": wall " w " != baseline " b " + above-idle " a > "/dev/stderr"; bad = 1 }
      if (!cum && t > w * (1 + 1e-12) + 1e-12) { print "line " NR ": training " t " > wall " w > "/dev/stderr"; bad = 1 }
      if (b < 0 || t < 0) { print "line " NR ": a negative scope" > "/dev/stderr"; bad = 1 }
      sw += w; sb += b; sa += a; st += t; lw = w; lb = b; la = a; lt = t }
    END { if (bad) exit 1
      if (last) printf "%.17g %.17g %.17g %.17g\n", lw, lb, la, lt
      else printf "%.17g %.17g %.17g %.17g\n", sw, sb, sa, st }' last="${3:-0}" "$1"
}
# folder sums: the four sums equal summary.json's energy_j and scopes
adds_up() {
  set -- "$1" $2
  close "$2" "$(summ "$1" energy_j)" || fail "$1: wall sums to $2, summary.json says $(summ "$1" energy_j)"
  close "$3" "$(summ "$1" energy_idle_baseline_j)" || fail "$1: baseline sums to $3"
  close "$4" "$(summ "$1" energy_above_idle_j)" || fail "$1: above-idle sums to $4"
  close "$5" "$(summ "$1" energy_training_j)" || fail "$1: training sums to $5"
}
n=0
for case in "pma testbed-mnist-pma.json" "ddp testbed-mnist-ddp.json" "dyn testbed-era5-pma-dynamic.json" \
  "fedasync testbed-mnist-pma.json --set regime.kind=fedasync"; do
  set -- $case
  name=$1 scn=$2 cum=0
  [ "$name" = fedasync ] && cum=1
  shift 2
  # shellcheck disable=SC2068
  "$bin" run "$src/scenarios/$scn" --policy time-only --set rounds=4 \
    --set 'report={"meter_scopes":true}' --out "$name" -q $@ || fail "$name: run"
  [ -s "$name/meter.csv" ] || fail "$name: no meter.csv"
  awk -F, 'NR > 1 {
      if ($3 - ($4 + $5) > 1e-9 * ($3 + 1) || ($4 + $5) - $3 > 1e-9 * ($3 + 1)) {
        print "line " NR ": wall " $3 " != baseline " $4 " + above-idle " $5; bad = 1 }
      if (!cum && $6 > $3 * (1 + 1e-12) + 1e-12) { print "line " NR ": training " $6 " > wall " $3; bad = 1 }
      w[$2] += $3; t[$2] += $6
      if ($4 < 0 || $6 < 0) { print "line " NR ": a negative scope"; bad = 1 }
    } END {
      for (d in w) if (t[d] > w[d] * (1 + 1e-12) + 1e-12) { print d ": training " t[d] " > wall " w[d]; bad = 1 }
      exit bad }' cum="$cum" "$name/meter.csv" || fail "$name: meter.csv breaks an identity"
  cut -d, -f1,2,7 "$name/devices.csv" | tail -n +2 >"$name/dev.e"
  cut -d, -f1,2,3 "$name/meter.csv" | tail -n +2 >"$name/meter.e"
  cmp -s "$name/dev.e" "$name/meter.e" || fail "$name: meter.csv's wall is not devices.csv's energy_j"
  # The rows add up to the summary's training-only scope.
  sum=$(awk -F, 'NR > 1 { t += $6 } END { printf "%.6e", t }' "$name/meter.csv")
  want=$(sed -n 's/^  "energy_training_j": \(.*\),$/\1/p' "$name/summary.json")
  awk -v a="$sum" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * (b + 1)) }' ||
    fail "$name: meter.csv's training sums to $sum, summary.json says $want"
  # rounds.csv: the identities per round, meter.csv summed per round, the summary.
  sums=$(scopes "$name/rounds.csv" "$cum") || fail "$name: rounds.csv breaks an identity"
  adds_up "$name" "$sums"
  awk -F, 'NR > 1 { b[$1] += $4; a[$1] += $5; t[$1] += $6 }
    END { for (r in b) printf "%s %.9e %.9e %.9e\n", r, b[r], a[r], t[r] }' "$name/meter.csv" |
    sort -n >"$name/meter.r"
  awk -F, 'NR > 1 { printf "%s %.9e %.9e %.9e\n", $1, $6, $7, $8 }' "$name/rounds.csv" |
    sort -n >"$name/rounds.r"
  awk 'NR == FNR { b[$1] = $2; a[$1] = $3; t[$1] = $4; next }
    { for (k = 2; k <= 4; k++) { m = k == 2 ? b[$1] : k == 3 ? a[$1] : t[$1]; d = $k - m
        if (d < 0) d = -d; if (d > 1e-6 * ($k + 1)) { print "round " $1 " column " k; bad = 1 } } }
    END { exit bad }' "$name/meter.r" "$name/rounds.r" || fail "$name: rounds.csv is not meter.csv summed per round"
  n=$((n + 1))
  echo "ok   $name: meter.csv and rounds.csv keep wall = above-idle + baseline, training <= wall"
done
# device_profiles.csv (no meter.csv there): per profile and round, its rows
# summed per round are rounds.csv's, and they add up to the summary.
"$bin" run "$src/scenarios/testbed-mnist-pma.json" --policy time-only --set rounds=3 --devices profiles \
  --set 'report={"meter_scopes":true}' --out prof -q || fail "prof: run"
[ ! -e prof/meter.csv ] || fail "prof: meter.csv beside device_profiles.csv"
adds_up prof "$(scopes prof/device_profiles.csv 0)" || fail "prof: device_profiles.csv breaks an identity"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { k = $1; b[k] += $c["energy_idle_baseline_j"]; t[k] += $c["energy_training_j"] }
  END { for (k in b) printf "%s %.9e %.9e\n", k, b[k], t[k] }' prof/device_profiles.csv | sort -n >prof/p.r
awk -F, 'NR > 1 { printf "%s %.9e %.9e\n", $1, $6, $8 }' prof/rounds.csv | sort -n >prof/r.r
awk 'NR == FNR { b[$1] = $2; t[$1] = $3; next }
  { d = ($2 - b[$1]) ^ 2 + ($3 - t[$1]) ^ 2; if (d > (1e-6 * ($2 + $3 + 1)) ^ 2) { print "round " $1; bad = 1 } }
  END { exit bad }' prof/p.r prof/r.r || fail "prof: device_profiles.csv is not rounds.csv per round"
n=$((n + 1))
echo "ok   prof: device_profiles.csv keeps the identities and adds up to rounds.csv and summary.json"
# learning.csv: since t = 0, so each row is rounds.csv summed to its round,
# and the last row (the last round) is the summary's.
"$bin" run "$src/scenarios/testbed-mnist-pma-learning.json" --policy time-only --set rounds=3 \
  --set samples_per_round=704 --set learning.eval_samples=100 --set learning.threads=1 \
  --set 'report={"meter_scopes":true}' --out learn -q || fail "learn: run"
scopes learn/learning.csv 0 >/dev/null || fail "learn: learning.csv breaks an identity"
adds_up learn "$(scopes learn/learning.csv 0 1)"
adds_up learn "$(scopes learn/rounds.csv 0)"
awk -F, 'NR == FNR { if (FNR > 1) { b += $6; a += $7; t += $8; cb[$1] = b; ca[$1] = a; ct[$1] = t }; next }
  FNR > 1 { if (!($1 in cb)) { print "round " $1 " not in rounds.csv"; bad = 1; next }
    d = ($4 - cb[$1]) ^ 2 + ($5 - ca[$1]) ^ 2 + ($6 - ct[$1]) ^ 2
    if (d > (1e-6 * ($4 + $5 + $6 + 1)) ^ 2) { print "round " $1 ": not rounds.csv summed"; bad = 1 } }
  END { exit bad }' learn/rounds.csv learn/learning.csv || fail "learn: learning.csv is not rounds.csv summed"
n=$((n + 1))
echo "ok   learn: learning.csv keeps the identities since t = 0 and adds up to summary.json"
# agc.csv: per iteration, without learning (the timeline is the same; the
# trainer's data would cost most of this test): the testbed, and the k = 50
# scenario whose deadline cuts most workers (training-only leaves out those
# cut while computing).
for case in "agc testbed-mnist-agc.json 55 tuned profile 1.4" "agc50 agc-k50-fmnist.json 250 measured model 0"; do
  set -- $case
  dl=
  [ "$6" != 0 ] && dl=", \"deadline_s\": $6"
  "$bin" run "$src/scenarios/$2" --set rounds=6 --set "regime={\"kind\": \"agc\", \"scheme\": \"proposed\", \"z_res\": $3, \"d_rule\": \"$4\", \"p_rule\": \"$5\"$dl}" \
    --set 'report={"meter_scopes":true}' --out "$1" -q || fail "$1: run"
  sums=$(scopes "$1/agc.csv" 0) || fail "$1: agc.csv breaks an identity"
  adds_up "$1" "$sums"
  adds_up "$1" "$(scopes "$1/rounds.csv" 0)"
  n=$((n + 1))
  echo "ok   $1: agc.csv keeps wall = above-idle + baseline, training <= wall, adds up to summary.json"
done
awk -F, 'NR > 1 && $7 > 0 { cut = 1 } END { exit !cut }' agc50/agc.csv || fail "agc50: no straggler was cut"
"$bin" run "$src/scenarios/testbed-mnist-pma.json" --set rounds=2 --out off -q || fail "run without scopes"
[ ! -e off/meter.csv ] || fail "meter.csv without report.meter_scopes"
"$bin" run "$src/scenarios/testbed-mnist-pma-learning.json" --set rounds=1 --set samples_per_round=352 \
  --set learning.eval_samples=100 --set learning.threads=1 --out offl -q || fail "learning run without scopes"
"$bin" run "$src/scenarios/agc-k50-fmnist.json" --set rounds=1 \
  --set 'regime={"kind": "agc", "scheme": "proposed", "z_res": 250, "d_rule": "measured", "p_rule": "model"}' \
  --out offa -q || fail "agc run without scopes"
"$bin" run "$src/scenarios/testbed-mnist-pma.json" --set rounds=1 --devices profiles --out offp -q ||
  fail "profiles run without scopes"
for f in off/rounds.csv offl/learning.csv offa/agc.csv offp/device_profiles.csv; do
  ! head -1 "$f" | grep -q energy_training_j || fail "$f has the meter scopes without report.meter_scopes"
done
echo "$n passed, 0 failed"
