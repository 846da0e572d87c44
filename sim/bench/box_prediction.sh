#!/bin/sh
# sim/bench/box_prediction.sh BIN [RUNS] [OUT]: the prediction error of issue
# 24, measured on the testbed in a box. A benchmark, not a test (root; about
# 2 minutes per run of RUNS on a quiet machine).
#
# 1. Real runs with `hetsim-probe box` of devices/probe/bench/box-mnist-pma-5.json
#    (5 boards at 6/9/13/19/28 % of one core, links 20-200 Mbit/s, 15 PMA
#    rounds): one separate calibration run (policy equal), then RUNS runs per
#    policy (equal, time-only, and round-time where the build has it).
# 2. Profiles from the runs' records with `hetsim-probe import`, one per board
#    (train_s and samples of each round as the timing log), two ways:
#      before: tau_cv is each board's whole per-round CV, no shared factor, no
#              overhead, no server time (what a calibration gave before issue 24);
#      after:  tau_cv is each board's own part of the noise (--run-times: the
#              other boards' logs of the same runs), the shared per-round factor
#              goes to the scenario's dynamics.shared_slowdown, each board's
#              set-up + packing per round goes to overhead_s and the server's
#              work per round to regime.server.
#    and from two sources: the separate calibration run, and the predicted
#    policy's own runs (pooled).
# 3. hetsim run of each policy with each set of profiles, mean makespan over
#    SEEDS simulated draws, against the real mean; the time-only cut.
# Prints the table and the load average before and after (the machine is
# busy above ~0.5 on 2 cores). Records stay in OUT (box-prediction/).
set -eu
BIN=$(cd "$1" && pwd) RUNS=${2:-3} OUT=${3:-box-prediction}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
SCN=$SRC/devices/probe/bench/box-mnist-pma-5.json
SEEDS=${HS_PREDICT_SEEDS:-1 2 3 4 5 6 7 8}
CPU_SEND_MS_PER_MB=4.55 # the box's fit of CPU per sent MB (sim/doc/engine-and-network.md)
BOARDS="b06 b09 b13 b19 b28"
QUOTAS="--quota b06=0.06 --quota b09=0.09 --quota b13=0.13 --quota b19=0.19 --quota b28=0.28"
POLICIES="equal time-only"
"$BIN/hetsim" run --help | grep -q round-time && POLICIES="$POLICIES round-time"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
say() { printf '%s\n' "$*" >&2; }
num() { sed -n "s/^  \"$1\": \([^,]*\),*$/\1/p" "$2" | head -1; }

# --- 1. the real runs --------------------------------------------------------
scn_for() { # policy -> the box scenario with that policy
  sed "s/\"kind\": \"equal\"/\"kind\": \"$1\"/" "$SCN" >"$OUT/scn-$1.json"
  echo "$OUT/scn-$1.json"
}
box() { # policy dir
  [ -f "$2/run.json" ] && return 0 # resumable: a finished run is kept
  # shellcheck disable=SC2086
  "$BIN/hetsim-probe" box "$(scn_for "$1")" --out "$2" $QUOTAS --quiet
}
say "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
load_before=$(cut -d' ' -f1 /proc/loadavg)
box equal "$OUT/calib"
for p in $POLICIES; do
  for k in $(seq 1 "$RUNS"); do box "$p" "$OUT/$p-$k"; done
done
load_after=$(cut -d' ' -f1 /proc/loadavg)
say "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- 2. profiles from records ------------------------------------------------
# calibrate NAME MODE RUN_DIR... -> $OUT/prof-NAME-MODE/{b06..}.json and
# $OUT/prof-NAME-MODE/sets (the --set lines of the prediction scenario)
calibrate() {
  name=$1 mode=$2
  shift 2
  d=$OUT/prof-$name-$mode
  rm -rf "$d"
  mkdir -p "$d"
  for b in $BOARDS; do
    k=0
    echo "round,samples,time_s" >"$d/t_$b.csv"
    for run in "$@"; do
      awk -F, -v b="$b" -v k="$k" 'NR > 1 && $2 == b { print k * 1000 + $1 "," $3 "," $7 }' \
        "$run/rounds.csv" >>"$d/t_$b.csv"
      k=$((k + 1))
    done
  done
  : >"$d/sets"
  shared=0 loads="" k=0
  for b in $BOARDS; do
    others=""
    if [ "$mode" = after ]; then
      others="--shared loadings"
      for o in $BOARDS; do [ "$o" = "$b" ] || others="$others --run-times $d/t_$o.csv"; done
    fi
    # shellcheck disable=SC2086
    "$BIN/hetsim-probe" import --task mnist --times "$d/t_$b.csv" $others --threads 1 \
      --busy-w 7.2 --busy-w-source "stated: the rpi4 profile's busy_w (itself an estimate from public figures); the box's boards are processes on a VM, not measured" \
      --idle-w 2.7 --idle-w-source "stated: the rpi4 profile's idle_w; not measured" \
      --out "$d/$b.json" >"$d/import-$b.txt"
    if [ "$mode" = after ]; then
      shared=$(sed -n 's/.*shared factor CV \([0-9.e+-]*\).*/\1/p' "$d/import-$b.txt")
      ld=$(sed -n 's/.*"shared_loading": \([0-9.e+-]*\).*/\1/p' "$d/import-$b.txt")
      loads="$loads${loads:+,}\"$b\":{\"shared_loading\":$ld}"
      # the CPU quota's stall before an upload (sim/doc/engine-and-network.md's fit)
      q=$(echo "$QUOTAS" | sed -n "s/.*--quota $b=\([0-9.]*\).*/\1/p")
      echo "devices[$k].cpu={\"share\":$q,\"send_ms_per_mb\":$CPU_SEND_MS_PER_MB}" >>"$d/sets"
      # the board's own per-round work outside training: set-up + packing
      ov=$(for run in "$@"; do awk -F, -v b="$b" 'NR > 1 && $2 == b { print $6 + $8 }' "$run/rounds.csv"; done |
        awk '{ s += $1 } END { printf "%.6g", s / NR }')
      sed -i "s/\"overhead_s\": 0,/\"overhead_s\": $ov,/" "$d/$b.json"
    fi
    k=$((k + 1))
  done
  if [ "$mode" = after ]; then
    srv=$(for run in "$@"; do awk -F, 'NR > 1 { print $3 }' "$run/server.csv"; done |
      awk -v n=5 '{ s += $1 } END { printf "%.6g", s / NR / n }')
    echo "dynamics={\"shared_slowdown\":{\"cv\":$shared},\"devices\":{$loads}}" >>"$d/sets"
    echo "regime.server={\"s_per_update\":$srv}" >>"$d/sets"
  fi
}

# --- 3. predictions ----------------------------------------------------------
pred_scn=$OUT/predict.json
awk '/"name": "b[0-9]*"/ { n = $2; gsub(/[",]/, "", n) }
     /"profile": "rpi4"/ { sub(/"rpi4"/, "\"" n "\"") } { print }' "$SCN" >"$pred_scn"
predict() { # prof_dir policy -> mean makespan over SEEDS, and mean reallocations
  prof=$1 pol=$2
  set --
  while IFS= read -r kv; do set -- "$@" --set "$kv"; done <"$prof/sets"
  for s in $SEEDS; do
    o=$prof/sim-$pol-$s
    HETSIM_PROFILE_PATH=$prof "$BIN/hetsim" run "$pred_scn" --policy "$pol" --seed "$s" "$@" \
      --out "$o" --force --quiet
    printf '%s %s\n' "$(num makespan_s "$o/summary.json")" \
      "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "reallocated") c = i } NR > 1 { r += $c } END { print r + 0 }' "$o/rounds.csv")"
  done | awk '{ m += $1; r += $2 } END { printf "%.3f %.1f", m / NR, r / NR }'
}
real_stats() { # policy -> "mean min median max reallocations"
  for k in $(seq 1 "$RUNS"); do
    printf '%s %s\n' "$(num makespan_s "$OUT/$1-$k/run.json")" \
      "$(awk -F, 'NR > 1 { r += $7 } END { print r + 0 }' "$OUT/$1-$k/server.csv")"
  done | sort -g | awk '{ v[NR] = $1; m += $1; r += $2 }
    END { printf "%.3f %.3f %.3f %.3f %.1f", m / NR, v[1], v[int((NR + 1) / 2)], v[NR], r / NR }'
}

for mode in before after; do calibrate calib "$mode" "$OUT/calib"; done
for p in $POLICIES; do
  runs=""
  for k in $(seq 1 "$RUNS"); do runs="$runs $OUT/$p-$k"; done
  # shellcheck disable=SC2086
  for mode in before after; do calibrate "own-$p" "$mode" $runs; done
done

printf '\nreal: %s runs per policy, makespan mean [min / median / max], reallocations per run\n' "$RUNS"
printf 'predicted: hetsim run, mean over %s seeds; error = predicted / real mean - 1\n\n' "$(echo $SEEDS | wc -w)"
printf '%-10s | %-32s | %-22s | %-22s | %-22s | %-22s\n' policy real "calib before" "calib after" "own before" "own after"
for p in $POLICIES; do
  set -- $(real_stats "$p")
  rm_=$1
  line=$(printf '%-10s | %7.2f s [%.2f / %.2f / %.2f] %4.1f' "$p" "$1" "$2" "$3" "$4" "$5")
  for src in calib "own-$p"; do
    for mode in before after; do
      set -- $(predict "$OUT/prof-$src-$mode" "$p")
      line="$line | $(printf '%7.2f s %+6.1f %% %4.1f' "$1" "$(echo "$1 $rm_" | awk '{ print 100 * ($1 / $2 - 1) }')" "$2")"
      echo "$p $src $mode $1" >>"$OUT/predicted.txt.tmp"
    done
  done
  echo "$line"
  echo "$p real $rm_" >>"$OUT/predicted.txt.tmp"
done
mv "$OUT/predicted.txt.tmp" "$OUT/predicted.txt"
printf '\ncut against equal (1 - policy / equal), percentage points of the real cut in brackets:\n'
awk '{ k = ($2 ~ /^own/ ? "own" : $2) "-" $3; if ($2 == "real") k = "real"; v[$1, k] = $NF; ks[k] = 1; ps[$1] = 1 }
END {
  for (p in ps) if (p != "equal") {
    printf "%-10s real %.1f %%", p, 100 * (1 - v[p, "real"] / v["equal", "real"])
    split("calib-before calib-after own-before own-after", order, " ")
    for (i = 1; i <= 4; i++) { k = order[i]; c = 100 * (1 - v[p, k] / v["equal", k])
      printf " | %s %.1f %% (%+.1f)", k, c, c - 100 * (1 - v[p, "real"] / v["equal", "real"]) }
    printf "\n"
  }
}' "$OUT/predicted.txt"
printf '\nmachine: load average %s before the real runs, %s after (2 cores; busy above ~0.5)\n' "$load_before" "$load_after"

# --- 4. hetsim check: each real run against the simulation with its own allocations
printf '\nhetsim check (each run simulated with its real allocations, compute noise off), total makespan error:\n'
for p in $POLICIES; do
  line=$(printf '%-10s' "$p")
  for src in calib own; do
    [ "$src" = own ] && src=own-$p
    for mode in before after; do
      prof=$OUT/prof-$src-$mode
      set --
      while IFS= read -r kv; do set -- "$@" --set "$kv"; done <"$prof/sets"
      errs=""
      for k in $(seq 1 "$RUNS"); do
        HETSIM_PROFILE_PATH=$prof "$BIN/hetsim" check "$pred_scn" "$OUT/$p-$k" "$@" \
          --json "$prof/check-$p-$k.json" >/dev/null 2>&1 || true
        e=$(sed -n 's/.*"makespan": {[^}]*"error": \([^,}]*\).*/\1/p' "$prof/check-$p-$k.json" | head -1)
        errs="$errs $(echo "$e" | awk '{ printf "%+.1f", 100 * $1 }')"
      done
      line="$line | ${src%-$p} $mode:$errs %"
    done
  done
  echo "$line"
done
