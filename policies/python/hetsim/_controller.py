"""hetsim.Controller: the C controller (hs_policy.h) through ctypes.

The same code the simulator drives and a board's trainer links: telemetry in,
allocation out. Every rule (equal split first, exact budget, deadband, floors)
is the library's; this class only converts types and turns a status into a
HetsimError carrying the library's message."""
import ctypes

from ._lib import (HS_POLICY_CAP_STEP_LEVEL, HetsimError, KEY_FN, PolicyConfig, Error, Telemetry,
                   check, lib)


def _text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same double
    return str(value)


def policies():
    """[(name, summary)] of every registered policy, in registry order."""
    L = lib()
    return [(L.hs_policy_name(i).decode(), L.hs_policy_summary(i).decode())
            for i in range(L.hs_policy_count())]


class Controller:
    """Controller(policy, n, budget, groups=None, **options)

    policy   a registered name (the list: hetsim.policies()), e.g. equal,
             time-only, round-time
    n        participants (devices), >= 1
    budget   samples per round for all of them
    groups   None, or n group ids (HFL-DDP silos: samples never cross groups)
    options  policy keys, e.g. w_e=0.25, ema=0.5, deadband=0, min_samples=8

    .allocation  the samples each participant trains this round (list of int)
    .update(time_s, energy_j, samples)  one round of measurements (sequences
                 of n numbers); returns the next allocation
    .save() / .restore(text)  the state as JSON text (hs_policy.h), so a
                 restarted trainer keeps its estimates
    .step_batches / .step_update(step_time_s)  DDP per-step batches, for a
                 policy with step-level sizing (ema-batch)
    Errors raise hetsim.HetsimError with the library's message; a refused
    update changes nothing."""

    def __init__(self, policy, n, budget, groups=None, **options):
        L = lib()
        self._L = L
        self._c = None
        err = Error()
        cfg = PolicyConfig()
        check(L.hs_policy_config_init(ctypes.byref(cfg), str(policy).encode(),
                                      ctypes.byref(err)), err)
        for key, value in options.items():
            check(L.hs_policy_config_set(ctypes.byref(cfg), key.encode(), _text(value).encode(),
                                         ctypes.byref(err)), err)
        n = int(n)
        if n < 1:
            raise HetsimError("participants: need at least one")
        if int(budget) < 0:
            raise HetsimError("budget: %d is negative" % int(budget))
        g = None
        if groups is not None:
            groups = list(groups)
            if len(groups) != n:
                raise HetsimError("groups: %d ids for %d participants" % (len(groups), n))
            g = (ctypes.c_uint32 * n)(*groups)
        c = L.hs_controller_create(ctypes.byref(cfg), n, g, int(budget), ctypes.byref(err))
        if not c:
            raise HetsimError(err.msg.decode("utf-8", "replace"), err.status)
        self._c = c
        self._n = n
        self._t = (Telemetry * n)()

    # --- lifecycle ---
    def close(self):
        """Free the C controller now (also done when the object is collected)."""
        if self._c:
            self._L.hs_controller_destroy(self._c)
            self._c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def _live(self):
        if not self._c:
            raise HetsimError("controller: closed")
        return self._c

    # --- what it says ---
    @property
    def allocation(self):
        a = self._L.hs_controller_allocation(self._live())
        return [int(a[i]) for i in range(self._n)]

    @property
    def n(self):
        return self._n

    @property
    def budget(self):
        return int(self._L.hs_controller_budget(self._live()))

    @property
    def rounds(self):
        """Successful updates so far."""
        return int(self._L.hs_controller_rounds(self._live()))

    @property
    def reallocated(self):
        """True when the last successful update changed the allocation."""
        return bool(self._L.hs_controller_reallocated(self._live()))

    @property
    def config(self):
        """{key: value} of every key of the policy, as the library has it: an
        int for an integer key (seed, min_samples, ...), a float for a real one
        (w_e, ema, deadband, ...), read through the library's typed getters."""
        cfg = self._L.hs_controller_config(self._live())
        keys = []

        def add(key, _value, _ud):
            keys.append(key.decode())

        self._L.hs_policy_config_foreach(cfg, KEY_FN(add), None)
        out = {}
        for key in keys:
            u, d, err = ctypes.c_uint64(), ctypes.c_double(), Error()
            if self._L.hs_policy_config_get_uint(cfg, key.encode(), ctypes.byref(u),
                                                 ctypes.byref(err)) == 0:
                out[key] = int(u.value)
            else:
                check(self._L.hs_policy_config_get(cfg, key.encode(), ctypes.byref(d),
                                                   ctypes.byref(err)), err)
                out[key] = float(d.value)
        return out

    @property
    def policy(self):
        return self._L.hs_controller_config(self._live()).contents.kind.decode()

    # --- what it is told ---
    def update(self, time_s, energy_j, samples, comm_s=None):
        """One round: time_s, energy_j and samples per participant (n each),
        and optionally comm_s, each participant's download plus upload time of
        the round in seconds (hs_controller_set_comm; round-time uses it).
        Returns the next allocation. Refused (HetsimError) with the library's
        message naming the participant and field; nothing changes then."""
        c = self._live()
        cols = (list(time_s), list(energy_j), list(samples))
        if comm_s is not None:
            comm = list(comm_s)
            if len(comm) != self._n:
                raise HetsimError("comm_s: %d values for %d participants" % (len(comm), self._n))
        for name, col in zip(("time_s", "energy_j", "samples"), cols):
            if len(col) != self._n:
                raise HetsimError("%s: %d values for %d participants" % (name, len(col), self._n))
        t = self._t
        for i in range(self._n):
            t[i].time_s = float(cols[0][i])
            t[i].energy_j = float(cols[1][i])
            s = cols[2][i]
            if int(s) != s:
                raise HetsimError("participant %d: samples: %r is not an integer" % (i, s))
            t[i].samples = int(s)
        err = Error()
        if comm_s is not None:
            arr = (ctypes.c_double * self._n)(*[float(x) for x in comm])
            check(self._L.hs_controller_set_comm(c, arr, self._n, ctypes.byref(err)), err)
        check(self._L.hs_controller_update(c, t, self._n, ctypes.byref(err)), err)
        return self.allocation

    def _step_level(self):
        if not self._L.hs_policy_caps(self.policy.encode()) & HS_POLICY_CAP_STEP_LEVEL:
            raise HetsimError("policy \"%s\": no step-level batches (ema-batch has them)"
                              % self.policy)
        return self._live()

    @property
    def step_batches(self):
        """The per-rank batches of the next optimiser step (ema-batch)."""
        b = self._L.hs_controller_step_batches(self._step_level())
        return [int(b[i]) for i in range(self._n)]

    def step_update(self, step_time_s):
        """The measured time of the last step on each rank (n values); returns
        the next step's batches. Refused (HetsimError) like update."""
        c = self._step_level()
        times = [float(x) for x in step_time_s]
        if len(times) != self._n:
            raise HetsimError("step_time_s: %d values for %d participants" % (len(times), self._n))
        arr = (ctypes.c_double * self._n)(*times)
        err = Error()
        check(self._L.hs_controller_step_update(c, arr, self._n, ctypes.byref(err)), err)
        return self.step_batches

    def save(self):
        """The controller's state as JSON text (format in hs_policy.h)."""
        err = Error()
        p = self._L.hs_controller_save(self._live(), ctypes.byref(err))
        if not p:
            raise HetsimError(err.msg.decode("utf-8", "replace"), err.status)
        try:
            return ctypes.string_at(p).decode()
        finally:
            self._L.hs_free(p)

    def restore(self, text):
        """Restore a state saved by a controller with the same policy, options,
        n, groups and budget; refused (HetsimError naming the field) otherwise,
        and nothing changes then."""
        err = Error()
        check(self._L.hs_controller_restore(self._live(), str(text).encode(), ctypes.byref(err)),
              err)

    def __repr__(self):
        if not self._c:
            return "<hetsim.Controller closed>"
        return "<hetsim.Controller %s n=%d budget=%d rounds=%d>" % (
            self.policy, self._n, self.budget, self.rounds)
