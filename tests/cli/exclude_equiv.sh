#!/bin/sh
# exclude_equiv.sh: "count": 0 on a devices[] entry excludes it (issue 17).
# For every regime, a run with one entry's count set to 0 must write the same
# bytes as the run of the scenario with that entry deleted (--set
# 'devices[i]=null', plus whatever names the entry: silo members, agc's p
# list). Compared: every file of the run folder (rounds.csv, devices.csv or
# device_profiles.csv, trace.json, learning.csv, agc.csv, ...), and
# summary.json without the lines that describe the input rather than the run
# (hetsim_version, run_identity, sets, inputs, scenario_resolved: the
# excluded entry is still in the scenario, so they differ by design).
#
# usage: exclude_equiv.sh HETSIM_BIN SOURCE_DIR WORK_DIR
# Exit 0 when every case agrees, 1 otherwise (the first differing line shown).
set -u
bin=$1 src=$2 work=$3
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
rm -rf "$work"
mkdir -p "$work"
nrun=0 nfail=0

# What summary.json says about the input, not the run.
strip() {
  grep -v -e '^  "hetsim_version": ' -e '^  "run_identity": ' -e '^  "sets": ' \
    -e '^  "inputs": ' -e '^  "scenario_resolved": ' "$1"
}

# check NAME SCENARIO "COMMON ARGS" "EXCLUDE ARGS" "DELETE ARGS"
# (arguments split at spaces: no space inside a value)
check() {
  name=$1 scen=$2 common=$3 excl=$4 del=$5
  nrun=$((nrun + 1))
  a=$work/$name/excluded b=$work/$name/deleted
  # shellcheck disable=SC2086
  if ! (cd "$src" && "$bin" run "$scen" --quiet --progress 0 --out "$a" $common $excl) \
      2>"$work/$name.err"; then
    echo "FAIL $name: the run with count 0 failed: $(cat "$work/$name.err")"
    nfail=$((nfail + 1))
    return
  fi
  # shellcheck disable=SC2086
  if ! (cd "$src" && "$bin" run "$scen" --quiet --progress 0 --out "$b" $common $del) \
      2>"$work/$name.err"; then
    echo "FAIL $name: the run with the entry deleted failed: $(cat "$work/$name.err")"
    nfail=$((nfail + 1))
    return
  fi
  bad=0
  for f in "$a"/* "$b"/*; do
    base=${f##*/}
    if [ ! -e "$a/$base" ] || [ ! -e "$b/$base" ]; then
      echo "FAIL $name: $base is written by one run only"
      bad=1
      continue
    fi
    [ "$base" = summary.json ] && continue
    if ! cmp -s "$a/$base" "$b/$base"; then
      echo "FAIL $name: $base differs (excluded vs deleted):"
      diff "$a/$base" "$b/$base" | head -4 | cut -c1-200
      bad=1
    fi
  done
  strip "$a/summary.json" >"$work/$name/a.sum"
  strip "$b/summary.json" >"$work/$name/b.sum"
  if ! cmp -s "$work/$name/a.sum" "$work/$name/b.sum"; then
    echo "FAIL $name: summary.json figures differ (excluded vs deleted):"
    diff "$work/$name/a.sum" "$work/$name/b.sum" | head -4 | cut -c1-200
    bad=1
  fi
  # The excluded run still carries the entry, marked, in its resolved scenario.
  if ! grep -q '"count":0,"excluded":true' "$a/summary.json"; then
    echo "FAIL $name: scenario_resolved does not show the excluded entry"
    bad=1
  fi
  if [ "$bad" -eq 0 ]; then echo "ok $name"; else nfail=$((nfail + 1)); fi
}

T=tests/data/sweep/tiny.json
M=scenarios/testbed-mnist-pma.json
A100='"profile":"a100-sxm4-64gb"'

# pma: a count-1 entry in the middle (trace, devices.csv), a count-2 entry
# (device_profiles.csv), a selecting policy, the first entry, the last entry.
check pma-middle $T "--trace --devices full" "--set devices[1].count=0" "--set devices[1]=null"
check pma-count2-profiles $M "--policy time-only --devices profiles" \
  "--set devices[4].count=0" "--set devices[4]=null"
check pma-oort $M "--policy oort" "--set devices[0].count=0" "--set devices[0]=null"
check pma-last $M "--policy balanced" "--set devices[7].count=0" "--set devices[7]=null"
# pma with dynamics naming the excluded entry (n100 has a cotenant block: it
# names no device once excluded) and thermal throttling on the others.
check pma-dynamics scenarios/testbed-mnist-pma-dynamic.json "--policy time-only" \
  "--set devices[6].count=0" "--set devices[6]=null --set dynamics.devices.n100=null"
# learning in the loop, real mode: the iid partitions are over the devices left.
check pma-learning scenarios/testbed-mnist-pma-learning.json \
  "--set rounds=2 --set samples_per_round=2000 --set learning.max_samples=4000 --set learning.eval_samples=200" \
  "--set devices[1].count=0" "--set devices[1]=null"
check pma-learning-dirichlet scenarios/testbed-mnist-pma-learning.json \
  "--set rounds=2 --set samples_per_round=2000 --set learning.max_samples=4000 --set learning.eval_samples=200 --set learning.partition=dirichlet --set learning.alpha=0.5" \
  "--set devices[4].count=0" "--set devices[4]=null"
check pma-learning-curve $M \
  "--set learning.mode=curve --set learning.curve_profile=x86-fc-vm-epyc-2vcpu --set learning.target_loss=0.6 --set rounds=3" \
  "--set devices[0].count=0" "--set devices[0]=null"
check fedasync $M "--set regime.kind=fedasync --policy equal" \
  "--set devices[2].count=0" "--set devices[2]=null"
# ddp: one rank fewer; hfl-ddp: the silo keeps the member as written.
check ddp scenarios/testbed-mnist-ddp.json "--policy time-only" \
  "--set devices[2].count=0" "--set devices[2]=null"
check ddp-ema-batch scenarios/testbed-mnist-ddp.json "--policy ema-batch" \
  "--set devices[4].count=0" "--set devices[4]=null"
check hfl-ddp scenarios/testbed-mnist-hfl-ddp.json "--policy time-only" \
  "--set devices[2].count=0" "--set devices[2]=null --set regime.silos[0].members[2]=null"
check hfl-ddp-count2 scenarios/testbed-mnist-hfl-ddp.json "--policy equal" \
  "--set devices[4].count=0" "--set devices[4]=null --set regime.silos[1].members[1]=null"
# agc: n and the straggle list are over the devices left.
check agc tests/data/agc/small.json "--set regime.p=[0.1,0.3]" \
  "--set devices[1].count=0" "--set devices[1]=null"
# fl topologies.
check fl-star $T "--set regime.kind=fl" "--set devices[1].count=0" "--set devices[1]=null"
check fl-threshold $T "--set regime.kind=fl --set regime.topology=threshold --set regime.k=2" \
  "--set devices[2].count=0" "--set devices[2]=null"
check fl-hierarchical $M \
  "--set regime.kind=fl --set regime.topology=hierarchical --set regime.levels=[{\"fanout\":3,\"link\":\"gbe\",\"aggregator\":{\"s_per_update\":0.001}}]" \
  "--set devices[1].count=0" "--set devices[1]=null"
check fl-ring $T "--set regime.kind=fl --set regime.topology=ring" \
  "--set devices[0].count=0" "--set devices[0]=null"
# Sharded regimes: 512 GPUs as 256 + an excluded entry + 256.
SPLIT="--set devices[0].count=256"
for r in fsdp hsdp fl-fsdp fl-hsdp; do
  check "$r" "scenarios/gpu512-llama8b-$r.json" "$SPLIT" \
    "--set devices[1]={\"name\":\"spare\",$A100,\"count\":0} --set devices[2]={\"name\":\"gpu-b\",$A100,\"count\":256}" \
    "--set devices[1]={\"name\":\"gpu-b\",$A100,\"count\":256}"
done

# fl-hsdp learning for real (dirichlet partitions over the GPUs left): 8 + excluded + 8.
check fl-hsdp-learning scenarios/gpu16-mlp-fl-hsdp-learning.json \
  "--set rounds=1 --set learning.eval_samples=200 --set learning.max_samples=2000 --set devices[0].count=8" \
  "--set devices[1]={\"name\":\"spare\",$A100,\"count\":0} --set devices[2]={\"name\":\"gpu-b\",$A100,\"count\":8}" \
  "--set devices[1]={\"name\":\"gpu-b\",$A100,\"count\":8}"

echo "exclude_equiv: $((nrun - nfail)) passed, $nfail failed"
[ "$nfail" -eq 0 ]
