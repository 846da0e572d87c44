#!/usr/bin/env python3
"""train_loop.py: a training loop that times its own batches and lets the
hetsim controller split the samples of each round.

Three "devices" train a small linear model by SGD on synthetic data, in this
process; device i is made (1 + i) times slower by repeating its work, as
heterogeneous boards are. Each round, every device trains the samples the
controller gave it; the loop times each device with time.perf_counter and
reports (time_s, energy_j, samples) back. There is no power meter here, so
energy_j is time_s x an assumed power (the --power list): put your meter's
reading there on a real board. With a PyTorch model, replace train() by your
forward/backward over the device's batches and keep the rest.

--state FILE keeps the controller's estimates across restarts: the state is
restored from FILE when it exists and saved there after every round
(temporary name, then rename).

  PYTHONPATH=<prefix>/lib/python3/dist-packages python3 train_loop.py --rounds 5

Prints one line per round: the allocation, the per-device times, the round's
makespan (the slowest device: everyone waits for it). Standard library only."""
import argparse
import os
import random
import sys
import time

import hetsim


def make_data(n, dim, seed):
    rng = random.Random(seed)
    w_true = [rng.uniform(-1, 1) for _ in range(dim)]
    xs = [[rng.uniform(-1, 1) for _ in range(dim)] for _ in range(n)]
    ys = [sum(a * b for a, b in zip(w_true, x)) for x in xs]
    return xs, ys


def train(w, xs, ys, start, count, slowdown, lr=0.01):
    """SGD on samples start..start+count (wrapping); slowdown repeats the
    gradient computation to emulate a slower device. Returns the mean loss."""
    loss = 0.0
    n = len(xs)
    for k in range(count):
        x, y = xs[(start + k) % n], ys[(start + k) % n]
        for _ in range(slowdown):
            err = sum(a * b for a, b in zip(w, x)) - y
        for j in range(len(w)):
            w[j] -= lr * err * x[j]
        loss += err * err
    return loss / max(count, 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--policy", default="time-only")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=3000, help="samples per round, all devices")
    ap.add_argument("--power", default="6,4,3", help="assumed busy power (W) per device")
    ap.add_argument("--state", help="save/restore the controller's state in this file")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a policy option, e.g. w_e=0.25 (with --policy adaptive)")
    a = ap.parse_args(argv)
    power = [float(p) for p in a.power.split(",")]
    n = len(power)
    options = dict(s.split("=", 1) for s in a.set)
    ctl = hetsim.Controller(a.policy, n, a.budget, **options)
    if a.state and os.path.exists(a.state):
        with open(a.state) as f:
            ctl.restore(f.read())
        print("restored %s after round %d: %s" % (a.state, ctl.rounds, ctl.allocation))
    xs, ys = make_data(2000, 48, seed=1)
    w = [[0.0] * 48 for _ in range(n)]
    start = 0
    for r in range(a.rounds):
        alloc = ctl.allocation
        times, energies, losses = [], [], []
        for i in range(n):
            t0 = time.perf_counter()
            losses.append(train(w[i], xs, ys, start, alloc[i], slowdown=1 + i))
            dt = time.perf_counter() - t0
            times.append(dt)
            energies.append(dt * power[i])
        start += a.budget
        ctl.update(times, energies, alloc)
        if a.state:
            tmp = a.state + ".tmp"
            with open(tmp, "w") as f:
                f.write(ctl.save())
            os.replace(tmp, a.state)
        print("round %d: allocation %s times %s makespan %.3f s loss %.4f" % (
            ctl.rounds, alloc, " ".join("%.3f" % t for t in times), max(times),
            sum(losses) / n))
    print("next allocation:", ctl.allocation)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except hetsim.HetsimError as e:
        print("train_loop: %s" % e, file=sys.stderr)
        sys.exit(2)
