#!/usr/bin/env python3
"""learning_options.py: what the learning options of issue 25 do to accuracy
(sim/doc/findings/learning.md, "Options against the defaults").

Runs the shipped Fashion-MNIST learning scenario
(scenarios/testbed-mnist-pma-learning.json) under the practitioner defaults
and under one option at a time, for the policies equal and time-only, seeds
1-3, 20 rounds with an evaluation every 2: every option under IID (target
0.70), the defaults and the server optimisers under Dirichlet 0.1 too
(target 0.60; the CPU budget left the rest out). And DDP on the same
devices (11 ranks x 32 = a 352-sample global batch), 10 rounds (40,000
samples, as issue 25's report), without and with the linear scaling of its
rate, and with it after a 5-round warm-up. Then prints the Markdown tables:
per cell, the final accuracy, the best evaluation and the time to a stable
target (summary.json's final_test_accuracy, learning.csv's test_accuracy,
summary.json's time_to_stable_target_s) as median [min, max] over the
seeds, "k/3" when only k seeds held the target; and the falls of more than
5 points between successive evaluations, summed over the seeds.

usage: learning_options.py HETSIM OUT_DIR [-j N] [--table-only]
  HETSIM   bin/hetsim of a Release build (the costs below are its)
  OUT_DIR  one folder per run; a run whose summary.json exists is kept
           (resumable), so a second call only prints the tables;
           --table-only prints them from the runs there, "not run" where
           a cell's runs are missing.
Every run is `nice -n 10`, one learner thread. Cost: ~16 s of CPU per
20-round run (Release), 60 of them and 9 DDP runs of 10 rounds, ~17 min of
CPU in all.
A benchmark script, not a test: its figures live in the findings page."""
import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SCN = "scenarios/testbed-mnist-pma-learning.json"
SEEDS = (1, 2, 3)
POLICIES = ("equal", "time-only")
PARTS = {
    "iid": ["learning.partition=iid", "learning.target_accuracy=0.7"],
    "dir": ["learning.partition=dirichlet", "learning.alpha=0.1", "learning.target_accuracy=0.6"],
}
# One option at a time against the defaults (constant rate, no decay, no
# clipping, no server optimiser; weights data, last_batch keep): its --set
# keys, the partitions it is run under. The values are the common ones: a
# step of x0.1 at half the run, cosine to 0, PyTorch's usual 5e-4 decay, a
# global norm of 1, FedAvgM's momentum 0.9 at server rate 1, FedAdam at 0.01.
OPTIONS = [
    ("defaults", [], ("iid", "dir")),
    ("lr_schedule step (10 rounds, x0.1)",
     ["learning.lr_schedule=step", "learning.lr_step_rounds=10", "learning.lr_gamma=0.1"], ("iid",)),
    ("lr_schedule cosine (to 0)", ["learning.lr_schedule=cosine"], ("iid",)),
    ("weight_decay 5e-4", ["learning.weight_decay=0.0005"], ("iid",)),
    ("clip_norm 1", ["learning.clip_norm=1"], ("iid",)),
    ("server fedavgm (lr 1, mu 0.9)", ["learning.server_optimizer=fedavgm"], ("iid", "dir")),
    ("server fedadam (lr 0.01)", ["learning.server_optimizer=fedadam"], ("iid", "dir")),
]
COMMON = ["rounds=20", "learning.eval_every=2", "learning.threads=1"]
DDP = [("ddp, lr_scaling none", []), ("ddp, lr_scaling linear (x11)", ["learning.lr_scaling=linear"]),
       ("ddp, linear + 5-round warm-up", ["learning.lr_scaling=linear", "learning.lr_warmup_rounds=5"])]
DDP_COMMON = ["regime.kind=ddp", "rounds=10", "learning.eval_every=1", "learning.threads=1"]


def slug(s):
    return "".join(c if c.isalnum() else "-" for c in s).strip("-")


# The order the runs are made in (an interrupted call has the first ones):
# the server optimisers, clipping, the schedules, the decay, then DDP.
ORDER = (5, 6, 4, 2, 1, 3, 0, 7, 8, 9)


def runs():
    """(folder name, --set list) of every run, in ORDER."""
    groups = []
    for name, sets, parts in OPTIONS:
        groups.append([(f"{slug(name)}.{part}.{pol}.s{seed}",
                        COMMON + PARTS[part] + [f"policy.kind={pol}", f"seed={seed}"] + sets)
                       for part in parts for pol in POLICIES for seed in SEEDS])
    for name, sets in DDP:
        groups.append([(f"{slug(name)}.iid.equal.s{seed}",
                        DDP_COMMON + PARTS["iid"] + ["policy.kind=equal", f"seed={seed}"] + sets)
                       for seed in SEEDS])
    return [run for k in ORDER for run in groups[k]]


def run_one(hetsim, out, name, sets):
    folder = os.path.join(out, name)
    if os.path.exists(os.path.join(folder, "summary.json")):
        return
    cmd = ["nice", "-n", "10", hetsim, "run", SCN, "--out", folder, "--quiet", "--force"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True)


def summary(out, name):
    """The run's summary.json; None when it was not run (an interrupted call)."""
    try:
        with open(os.path.join(out, name, "summary.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def cell(vals, fmt):
    """median [min, max] of the non-null values; k/3 when some are null."""
    got = sorted(v for v in vals if v is not None)
    if not got:
        return "never"
    med = got[len(got) // 2] if len(got) % 2 else (got[len(got) // 2 - 1] + got[len(got) // 2]) / 2
    s = f"{fmt % med} [{fmt % got[0]}, {fmt % got[-1]}]"
    return s if len(got) == len(vals) else f"{s} ({len(got)}/{len(vals)})"


def curve(out, name):
    """The run's held-out accuracies, in evaluation order (learning.csv)."""
    with open(os.path.join(out, name, "learning.csv")) as f:
        rows = list(csv.DictReader(f))
    return [float(r["test_accuracy"]) for r in rows]


def drops(accs):
    """Falls of more than 5 points between successive evaluations."""
    return sum(1 for a, b in zip(accs, accs[1:]) if a - b > 0.05)


def table(out, part, rows):
    target = "0.70" if part == "iid" else "0.60"
    print(f"| option | policy | final acc, median [min, max] | best acc | drops > 5 pts "
          f"| stable >= {target} s |")
    print("|---|---|---|---|---|---|")
    for label, prefix in rows:
        for pol in POLICIES if not prefix.startswith("ddp") else ("equal",):
            ss = [summary(out, f"{prefix}.{part}.{pol}.s{s}") for s in SEEDS]
            if None in ss:
                print(f"| {label} | {pol} | not run | | | not run |")
                continue
            acc = cell([x.get("final_test_accuracy") for x in ss], "%.3f")
            st = cell([x.get("time_to_stable_target_s") for x in ss], "%.1f")
            curves = [curve(out, f"{prefix}.{part}.{pol}.s{s}") for s in SEEDS]
            best = cell([max(c) for c in curves], "%.3f")
            nd = sum(drops(c) for c in curves)
            print(f"| {label} | {pol} | {acc} | {best} | {nd} | {st} |")
    print()


def main():
    args = sys.argv[1:]
    jobs = 1
    if "-j" in args:
        k = args.index("-j")
        jobs = int(args[k + 1])
        del args[k:k + 2]
    table_only = "--table-only" in args
    if table_only:
        args.remove("--table-only")
    if len(args) != 2:
        sys.exit("usage: learning_options.py HETSIM OUT_DIR [-j N] [--table-only]")
    hetsim, out = os.path.abspath(args[0]), os.path.abspath(args[1])
    os.makedirs(out, exist_ok=True)
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))  # SCN
    if not table_only:
        with ThreadPoolExecutor(max_workers=jobs) as ex:
            for f in [ex.submit(run_one, hetsim, out, n, s) for n, s in runs()]:
                f.result()
    for part in ("iid", "dir"):
        print(f"**{'IID' if part == 'iid' else 'Dirichlet 0.1'}**, 20 rounds:\n")
        table(out, part, [(n, slug(n)) for n, _, parts in OPTIONS if part in parts])
    print("**DDP** (11 ranks x batch 32 = 352 per step), IID, 10 rounds:\n")
    table(out, "iid", [(n, slug(n)) for n, _ in DDP])


if __name__ == "__main__":
    main()
