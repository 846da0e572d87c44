"""hetsim: the hetsim controller and simulator from Python (standard library
only; pandas is used for tables when it is installed).

    import hetsim
    c = hetsim.Controller("balanced", n=3, budget=300)
    c.allocation                          # [100, 100, 100]
    c.update(time_s=[1.0, 2.0, 4.0], energy_j=[5, 6, 9], samples=[100, 100, 100])
    r = hetsim.run("testbed-mnist-pma", policy="time-only", seed=7, set={"rounds": 5})
    r.summary["makespan_s"], r.rounds     # dict, table
    s = hetsim.sweep("testbed-mnist-pma", policies=["equal", "time-only"], seeds=[1, 2])

Controller is the C library libhetsim-policies.so (the same code the
simulator drives) through ctypes; run and sweep drive the installed `hetsim`
program. Errors raise HetsimError with the library's or program's message.
Where the library and programs are found: hetsim._lib (install-relative, or
$HETSIM_PREFIX, $HETSIM_LIBRARY, $HETSIM_BIN)."""
from ._lib import HetsimError, library_path, prefix, program, share_path
from ._controller import Controller, policies
from ._cli import RunResult, SweepResult, read_table, run, scenario_path, sweep

try:
    from ._paths import VERSION as __version__
except ImportError:
    __version__ = None

__all__ = ["Controller", "HetsimError", "RunResult", "SweepResult", "library_path", "policies",
           "prefix", "program", "read_table", "run", "scenario_path", "share_path", "sweep"]
