#!/bin/sh
# plot.sh: hetsim plot draws non-empty PNG and SVG files for a small sweep and
# a small run. Skips (exit 77) when gnuplot is not installed.
#
# usage: plot.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
gp=${HETSIM_GNUPLOT:-gnuplot}
if ! command -v "$gp" >/dev/null 2>&1; then
  echo "skip: gnuplot not installed (Debian package gnuplot-nox)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
figure() { # file: exists, non-empty, and the right format
  [ -s "$1" ] || fail "$1 missing or empty"
  case $1 in
    *.png) [ "$(head -c 8 "$1" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] || fail "$1 is not a PNG" ;;
    *.svg) grep -q '<svg' "$1" || fail "$1 is not an SVG" ;;
  esac
  echo "ok   $1 ($(wc -c <"$1") bytes)"
}
"$bin" sweep "$src/tests/data/sweep/tiny.json" --policies adaptive --grid policy.w_e=0:1:0.5 \
  --grid policy.deadband=0,0.1 --seeds 1-2 -j 2 --out we.csv -q || fail "sweep"
"$bin" plot we.csv -q 2>we.err || fail "plot of a sweep"
[ ! -s we.err ] || fail "plot of a sweep: gnuplot warned: $(head -3 we.err)"
for f in pareto heatmap; do figure "we-plots/$f.png"; figure "we-plots/$f.svg"; done
"$bin" plot we.points.csv --out heat2 --x policy.deadband --y policy.w_e --z makespan_s_max -q ||
  fail "plot with --x/--y/--z"
figure heat2/heatmap.png
"$bin" run "$src/tests/data/sweep/tiny.json" --trace --out run -q || fail "run"
"$bin" plot run --rounds 1-2 -q || fail "plot of a run"
for f in allocation gantt; do figure "run/plots/$f.png"; figure "run/plots/$f.svg"; done
# Gantt device selection, in the order given.
"$bin" plot run --devices ryzen,rpi4 --out sel -q 2>sel.err || fail "plot --devices: $(cat sel.err)"
[ ! -s sel.err ] || fail "plot --devices: gnuplot warned: $(head -3 sel.err)"
figure sel/gantt.png
# A sweep over one grid key: the line figure (makespan and energy with 95 % CIs).
"$bin" sweep "$src/tests/data/sweep/tiny.json" --policies adaptive --grid policy.w_e=0:1:0.5 \
  --seeds 1-3 --out line.csv -q || fail "one-key sweep"
"$bin" plot line.csv -q 2>line.err || fail "plot of a one-key sweep: $(cat line.err)"
[ ! -s line.err ] || fail "plot of a one-key sweep: gnuplot warned: $(head -3 line.err)"
for f in pareto line; do figure "line-plots/$f.png"; figure "line-plots/$f.svg"; done
# Above 24 devices the allocation figure groups by profile.
"$bin" run "$src/scenarios/population-1k-mnist-pma.json" --set rounds=2 --out pop -q ||
  fail "run of 1000 devices"
"$bin" plot pop -q 2>pop.err || fail "plot of 1000 devices: $(cat pop.err)"
[ ! -s pop.err ] || fail "plot of 1000 devices: gnuplot warned: $(head -3 pop.err)"
figure pop/plots/allocation.png
# A --rounds beyond the run is bad input: found before any figure is drawn,
# so neither the allocation figure nor the output folder is left behind.
"$bin" plot run --rounds 5-9 --out badr -q 2>badr.err
rc=$?
[ $rc = 2 ] || fail "--rounds beyond the run: exit $rc"
[ ! -e badr ] || fail "--rounds beyond the run left badr/: $(ls badr)"
grep -q "the run has rounds 0-2 only" badr.err || fail "--rounds beyond the run: $(cat badr.err)"
echo "ok   --rounds beyond the run draws nothing"
# A grid with one value on a key: the heat map still fills its cells (gnuplot's
# `with image` drew nothing below 2 x 2 cells and warned), and a single
# makespan or energy gives gnuplot no empty range to warn about.
"$bin" sweep "$src/tests/data/sweep/tiny.json" --grid policy.w_e=0.5 --grid policy.deadband=0,0.1 \
  --out one.csv -q || fail "sweep with one w_e"
"$bin" plot one.csv -q 2>one.err || fail "plot of a grid with one value: $(cat one.err)"
[ ! -s one.err ] || fail "plot of a grid with one value: gnuplot warned: $(head -3 one.err)"
for f in pareto heatmap; do figure "one-plots/$f.png"; figure "one-plots/$f.svg"; done
# One round under the equal policy: one x value and one share for everyone;
# the allocation figure is drawn without gnuplot warning about empty ranges.
"$bin" run "$src/tests/data/sweep/tiny.json" --policy equal --set rounds=1 --out eq -q ||
  fail "run, equal policy, one round"
"$bin" plot eq -q 2>eq.err || fail "plot of a one-round run: $(cat eq.err)"
[ ! -s eq.err ] || fail "plot of a one-round run: gnuplot warned: $(head -3 eq.err)"
figure eq/plots/allocation.png
# Learning: a run folder beside unrelated siblings draws itself only, and a
# curve-mode run (loss only) draws no accuracy data set: gnuplot never warns.
mkdir -p lr || fail "mkdir lr"
for r in 2 3; do
  "$bin" run "$src/scenarios/testbed-mnist-pma.json" --set learning.mode=curve \
    --set learning.curve_profile=x86-fc-vm-epyc-2vcpu --set rounds=$r --set samples_per_round=6000 \
    --out lr/c$r -q || fail "curve-mode run"
done
"$bin" plot lr/c2 2>lr.err >lr.out || fail "plot of a learning run: $(cat lr.err)"
[ ! -s lr.err ] || fail "plot of a curve-mode run: gnuplot warned: $(head -3 lr.err)"
figure lr/c2/plots/learning.png
"$bin" plot lr/c2 --siblings --out lr/both -q 2>lr2.err || fail "plot --siblings: $(cat lr2.err)"
[ ! -s lr2.err ] || fail "plot --siblings: gnuplot warned: $(head -3 lr2.err)"
figure lr/both/learning.svg
"$bin" plot we.csv --siblings -q 2>sib.err
[ $? = 2 ] && grep -q -- "--siblings is for run folders" sib.err || fail "--siblings on a sweep: $(cat sib.err)"
echo "ok   learning figures of one run and of its siblings"
