#!/bin/sh
# telemetry_replay.sh: record once, check later. A run's own telemetry.csv,
# replayed through `hetsim replay` with the run's policy configuration (its
# summary.json policy_config), gives exactly the allocations the run used in
# its next rounds (devices.csv). Fails when telemetry.csv is not what the
# controller saw (e.g. the device's whole energy instead of its training
# energy, or a value that does not read back to the same double).
#
# usage: telemetry_replay.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
n=0
check() { # name scenario policy [--set ...]
  name=$1 scn=$2 pol=$3
  shift 3
  "$bin" run "$src/scenarios/$scn" --policy "$pol" --set rounds=6 --out "$name" -q "$@" ||
    fail "$name: run"
  [ -s "$name/telemetry.csv" ] || fail "$name: no telemetry.csv"
  # The policy's keys as --set arguments (kind and steps_per_round aside).
  sets=$(sed -n 's/^  "policy_config": {\(.*\)},$/\1/p' "$name/summary.json" | tr ',' '\n' |
    tr -d '"' | grep -v '^kind:\|^steps_per_round:' | sed 's/:/=/; s/^/--set /' | tr '\n' ' ')
  # shellcheck disable=SC2086
  "$bin" replay "$name/telemetry.csv" --policy "$pol" $sets -o "$name/next.csv" ||
    fail "$name: replay"
  last=$(tail -n 1 "$name/devices.csv" | cut -d, -f1)
  awk -F, 'NR > 1 && $1 > 0 { print $1 - 1 "," $2 "," $3 }' "$name/devices.csv" >"$name/want"
  awk -F, -v last="$last" 'NR > 1 && $1 < last { print $1 "," $2 "," $3 }' "$name/next.csv" \
    >"$name/got"
  [ -s "$name/want" ] || fail "$name: no rounds to compare"
  cmp -s "$name/want" "$name/got" ||
    fail "$name: replay differs from the run: $(diff "$name/want" "$name/got" | head -4)"
  n=$((n + 1))
  echo "ok   $name: replay of the run's telemetry.csv gives its allocations"
}
check time-only testbed-mnist-pma.json time-only
check balanced testbed-mnist-pma.json balanced --set policy.deadband=0
check adaptive testbed-era5-pma.json adaptive --set policy.w_e=0.3
check static testbed-imdb-pma.json static
check oort testbed-mnist-pma.json oort
check noisy testbed-mnist-pma.json low-energy --set telemetry.time_noise=0.05 \
  --set telemetry.energy_noise=0.05
check dynamic testbed-mnist-pma-dynamic.json time-only
# round-time reads comm_s: the replay must pass the column on to reproduce it
check round-time testbed-mnist-pma.json round-time --set policy.deadband=0
check round-time-dynamic testbed-mnist-pma-dynamic.json round-time
# Without comm_s (a file from before the column) it replays as time-only does.
cut -d, -f1-5 round-time/telemetry.csv >old.csv
"$bin" replay old.csv --policy round-time --set deadband=0 -o old-rt.csv || fail "old file: replay"
"$bin" replay old.csv --policy time-only --set deadband=0 -o old-to.csv || fail "old file: time-only"
cmp -s old-rt.csv old-to.csv || fail "round-time without comm_s is not time-only"
! cmp -s old-rt.csv round-time/next.csv || fail "round-time: comm_s changed no decision"
echo "ok   a telemetry.csv without comm_s replays, and round-time then is time-only"
# Above the device threshold there is no per-device output, and no telemetry.csv.
"$bin" run "$src/scenarios/population-1k-mnist-pma.json" --set rounds=1 --devices profiles \
  --out pop -q || fail "population run"
[ ! -e pop/telemetry.csv ] || fail "telemetry.csv beside device_profiles.csv"
echo "$n passed, 0 failed"
