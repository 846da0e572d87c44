#!/bin/sh
# meter_rows.sh: meter.csv, per device and round, on runs with
# report.meter_scopes: wall = above-idle + idle baseline (to rounding),
# training-only <= wall, its wall column is devices.csv's energy_j, and the
# rows add up to summary.json's scopes. Fails when a scope is computed on
# another base than the ledger's, or drops a device. fedasync reports an
# update in the window where it arrives, and an update may have started in an
# earlier window: there training <= wall holds per device over the run, not
# per window.
#
# usage: meter_rows.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
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
  n=$((n + 1))
  echo "ok   $name: meter.csv keeps wall = above-idle + baseline, training <= wall"
done
"$bin" run "$src/scenarios/testbed-mnist-pma.json" --set rounds=2 --out off -q || fail "run without scopes"
[ ! -e off/meter.csv ] || fail "meter.csv without report.meter_scopes"
echo "$n passed, 0 failed"
