"""hetsim.run and hetsim.sweep: the installed programs, driven from Python.

Each call runs `hetsim run` or `hetsim sweep` (found as hetsim._lib.program
says), waits, and reads what it wrote: summary.json as a dict and the CSV
tables as lists of dicts (numbers converted), or as pandas DataFrames when
pandas is installed (frame=None: auto; frame=False: never). A program that
refuses its input raises HetsimError with its one-line message and exit
status. Nothing here computes a result itself: the bytes are the program's."""
import csv
import json
import os
import shutil
import subprocess
import tempfile

from ._lib import HetsimError, program, share_path


def _cell(text):
    if text == "" or text == "null":
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def read_table(path, frame=None):
    """A hetsim CSV file (lines starting with '#' skipped) as a list of dicts
    with numbers converted, or a pandas DataFrame (frame=True, or None when
    pandas is installed)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    rows = [{k: _cell(v) for k, v in r.items()} for r in rows]
    return _frame(rows, frame)


def _frame(rows, frame):
    if frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if frame:
            raise HetsimError("frame=True: pandas is not installed") from None
        return rows
    return pandas.DataFrame(rows)


def scenario_path(scenario):
    """scenario as given when it is a file; otherwise a shipped scenario by
    name (<prefix>/share/hetsim/scenarios/<name>[.json])."""
    s = os.fspath(scenario)
    if os.path.exists(s):
        return s
    for name in (s, s + ".json"):
        cand = share_path("scenarios", name)
        if os.path.exists(cand):
            return cand
    raise HetsimError("%s: no such scenario file, and no shipped scenario of that name "
                      "(see %s)" % (s, share_path("scenarios")), 2)


def _sets(set):
    out = []
    for key, value in (set or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, dict)):
            value = json.dumps(value)
        out += ["--set", "%s=%s" % (key, value)]
    return out


def _run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        raise HetsimError(lines[-1] if lines else "%s: exit status %d" % (args[0], p.returncode),
                          p.returncode)
    return p


def _drive(args, out, tmp_prefix, tmp_name, read):
    """Runs args + ["--out", path] and returns (read(path), kept path or None).
    Without out, path is in a temporary folder that is removed afterwards."""
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix=tmp_prefix)
        path = os.path.join(tmp, tmp_name)
    else:
        path = os.fspath(out)
    try:
        _run(args + ["--out", path])
        return read(path), (None if tmp else path)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


class RunResult:
    """What `hetsim run` wrote: .summary (dict), .rounds and .devices (tables),
    .out (the folder, None when it was temporary and is gone)."""

    def __init__(self, summary, rounds, devices, out):
        self.summary, self.rounds, self.devices, self.out = summary, rounds, devices, out

    def __repr__(self):
        return "<hetsim.RunResult %s/%s makespan_s=%s energy_j=%s>" % (
            self.summary.get("scenario"), self.summary.get("policy"),
            self.summary.get("makespan_s"), self.summary.get("energy_j"))


def run(scenario="testbed-mnist-pma", policy=None, seed=None, set=None, out=None, trace=False,
        force=False, expect=None, rtol=None, frame=None, extra=()):
    """Simulate one scenario with one policy (`hetsim run`).

    scenario  a scenario file, or the name of a shipped one
    policy    a policy name (starts from its defaults; tune it with
              set={"policy.w_e": 0.25, ...})
    seed      the master seed (same input and seed: the same bytes)
    set       {key: value} scenario overrides (`hetsim validate --help`)
    out       keep the output folder there (default: a temporary one, removed)
    force     replace out even when it holds another run
    expect    a golden run folder: the outputs must equal it (rtol: numbers
              within that relative tolerance); a difference raises
              HetsimError with status 3 and the program's line naming the
              first difference (pin a controller's behaviour in a test)
    extra     more command-line arguments, passed as they are
    Returns a RunResult."""
    args = [program("hetsim"), "run", scenario_path(scenario), "--quiet"]
    if policy is not None:
        args += ["--policy", str(policy)]
    if seed is not None:
        args += ["--seed", str(int(seed))]
    args += _sets(set)
    if trace:
        args.append("--trace")
    if force:
        args.append("--force")
    if expect is not None:
        args += ["--expect", os.fspath(expect)]
        if rtol is not None:
            args += ["--rtol", repr(float(rtol))]
    args += list(extra)

    def read(folder):
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        return (summary, read_table(os.path.join(folder, "rounds.csv"), frame),
                read_table(os.path.join(folder, "devices.csv"), frame))

    (summary, rounds, devices), kept = _drive(args, out, "hetsim-run-", "run", read)
    return RunResult(summary, rounds, devices, kept)


class SweepResult:
    """What `hetsim sweep` wrote: .results (one row per point and seed), .points
    (per point: mean, median, min, max, ..., pareto_front), .out (the CSV
    path, None when it was temporary)."""

    def __init__(self, results, points, out):
        self.results, self.points, self.out = results, points, out

    def __repr__(self):
        return "<hetsim.SweepResult %d rows, %d points>" % (len(self.results), len(self.points))


def sweep(scenario="testbed-mnist-pma", grid=None, policies=None, seeds=None, set=None, jobs=1,
          out=None, frame=None, extra=()):
    """Run a scenario over a grid (`hetsim sweep`).

    grid      {key: [values]} or {key: "start:stop:step"} (each a --grid)
    policies  a list of policy names (a grid over policy.kind)
    seeds     a list of ints, or the program's text ("1-10", "1,2,5")
    set       {key: value} overrides at every point
    jobs      points at a time (threads); the files are the same bytes for any
    out       keep RESULTS.csv there (and RESULTS.points.csv beside it)
    Returns a SweepResult."""
    args = [program("hetsim"), "sweep", scenario_path(scenario), "--quiet", "-j", str(int(jobs))]
    for key, values in (grid or {}).items():
        if not isinstance(values, str):
            values = ",".join(json.dumps(v) if not isinstance(v, str) else v for v in values)
        args += ["--grid", "%s=%s" % (key, values)]
    if policies:
        args += ["--policies", ",".join(policies)]
    if seeds is not None:
        args += ["--seeds", seeds if isinstance(seeds, str) else ",".join(str(int(s)) for s in seeds)]
    args += _sets(set)
    args += list(extra)

    def read(path):
        stem = path[:-4] if path.endswith(".csv") else path
        return read_table(path, frame), read_table(stem + ".points.csv", frame)

    (results, points), kept = _drive(args, out, "hetsim-sweep-", "RESULTS.csv", read)
    return SweepResult(results, points, kept)
