#!/bin/sh
# against.sh OLD_BIN NEW_BIN [RUNS]: the issue-22 speed check, old and new
# builds back to back on the same machine (Release builds of two commits).
# For each benchmark it runs old and new alternately RUNS times (default 3)
# and prints best / median of each (best: the least time, the greatest rate)
# and the change of the best, with the
# load average before and after (the machine is "busy" above ~0.5 on 2
# cores). Benchmarks, not tests: the figures go to sim/doc/performance.md.
#   hs-bench-pma 1000000:10            CPU s of 10 PMA rounds of 10^6 devices
#   hs-bench-engine 1000000            events per CPU s, hold model (M/s)
#   hs-bench-controller --cpu-time     balanced update at 10^6 participants (ms)
#   hetsim run population 10^6 x 5     user+sys s of the default outputs
set -u
old=$1 new=$2 runs=${3:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
load() { cut -d' ' -f1 /proc/loadavg; }
# A scenario of 10^6 devices: the 1k population scaled by count.
sed 's/"count": \([0-9]*\)/"count": \1000/' "$src/scenarios/population-1k-mnist-pma.json" \
  >"$tmp/pop1m.json" 2>/dev/null
stat() { # values on stdin -> "best / median" (best: the least, or the greatest for a rate)
  sort -g $rev | awk '{v[NR]=$1} END {printf "%.4g / %.4g", v[1], v[int((NR+1)/2)]}'
}
bench() { # name lower|higher command... ; $B is the bin dir
  name=$1 rev=
  [ "$2" = higher ] && rev=-r
  shift 2
  for b in old new; do : >"$tmp/$b"; done
  i=0
  while [ $i -lt "$runs" ]; do
    for b in old new; do
      eval "B=\$$b"
      "$@" >>"$tmp/$b" 2>/dev/null
    done
    i=$((i + 1))
  done
  o=$(stat <"$tmp/old") n=$(stat <"$tmp/new")
  om=$(sort -g $rev "$tmp/old" | head -1) nm=$(sort -g $rev "$tmp/new" | head -1)
  printf '%-34s old %-22s new %-22s best %+.1f %%\n' "$name" "$o" "$n" \
    "$(echo "$om $nm" | awk '{print ($2 - $1) / $1 * 100}')"
}
pma() { "$B/hs-bench-pma" 1000000:10 | sed -n 's/.* cpu_s=\([0-9.]*\).*/\1/p'; }
engine() { "$B/hs-bench-engine" 1000000 | awk '$1 == "hold" {for (i = 2; i <= NF; i++) if ($i ~ /^per_cpu_s=/) {sub(/.*=/, "", $i); print $i / 1e6}}'; }
ctl() { "$B/hs-bench-controller" --cpu-time --participants 1000000 | awk '$1 == 1000000 {print $3}' | head -1; }
run1m() {
  /usr/bin/time -f "%U %S" -o "$tmp/t" "$B/hetsim" run "$tmp/pop1m.json" --set rounds=5 \
    --set samples_per_round=100000000 \
    --out "$tmp/run-$$" --force --quiet >/dev/null 2>&1
  awk '{print $1 + $2}' "$tmp/t"
}
echo "load average before: $(load)   runs: $runs each, alternating old/new"
bench "hs-bench-pma 1000000:10 (CPU s)" lower pma
bench "hs-bench-engine hold 10^6 (M ev/s)" higher engine
bench "controller update 10^6 (ms)" lower ctl
bench "hetsim run 10^6 x 5 (CPU s)" lower run1m
echo "load average after: $(load)"
