"""The installed controller library, loaded with ctypes (hetsim._lib).

Where things are, first match wins:
  library   $HETSIM_LIBRARY (a path to libhetsim-policies.so), then
            <prefix>/<libdir>/libhetsim-policies.so.0 (or .so) where <prefix>
            is $HETSIM_PREFIX or, in an install, found from this package's own
            folder (_paths.py, written by `cmake --install`), then the system's
            search path (ctypes.util.find_library).
  programs  $HETSIM_BIN (a folder), then <prefix>/<bindir>, then $PATH.
Nothing is compiled in: a moved install keeps working.
"""
import ctypes
import ctypes.util
import os
import shutil

try:
    from . import _paths
except ImportError:  # the source tree: no install, set HETSIM_PREFIX
    _paths = None

HERE = os.path.dirname(os.path.abspath(__file__))
LIBNAME = "libhetsim-policies.so"


class HetsimError(Exception):
    """An error from the controller library or a hetsim program.

    str(e) is the library's (or program's) one-line message; .status is the
    library's status code (negative) or the program's exit status."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = status


def prefix():
    """The install prefix this package belongs to, or None."""
    env = os.environ.get("HETSIM_PREFIX")
    if env:
        return os.path.abspath(env)
    if _paths is not None:
        return os.path.normpath(os.path.join(HERE, _paths.TO_PREFIX))
    return None


def _libdir():
    return _paths.LIBDIR if _paths is not None else "lib"


def _bindir():
    return _paths.BINDIR if _paths is not None else "bin"


def library_path():
    """The path of the shared library that will be (or was) loaded."""
    env = os.environ.get("HETSIM_LIBRARY")
    if env:
        return env
    p = prefix()
    if p:
        for name in (LIBNAME + ".0", LIBNAME):
            cand = os.path.join(p, _libdir(), name)
            if os.path.exists(cand):
                return cand
    found = ctypes.util.find_library("hetsim-policies")
    if found:
        return found
    raise HetsimError(
        "libhetsim-policies.so not found: install hetsim (cmake --install build "
        "--prefix P) and import hetsim from P, or set HETSIM_PREFIX or HETSIM_LIBRARY")


def program(name="hetsim"):
    """The path of an installed hetsim program (hetsim, hs-policy-bridge)."""
    env = os.environ.get("HETSIM_BIN")
    if env:
        return os.path.join(env, name)
    p = prefix()
    if p:
        cand = os.path.join(p, _bindir(), name)
        if os.path.exists(cand):
            return cand
    found = shutil.which(name)
    if found:
        return found
    raise HetsimError("%s not found: install hetsim, or set HETSIM_PREFIX or HETSIM_BIN" % name)


def share_path(*parts):
    """A path under <prefix>/share/hetsim (scenarios, profiles, plot)."""
    p = prefix()
    if p is None:
        exe = program("hetsim")
        p = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    return os.path.join(p, "share", "hetsim", *parts)


# --- the C API (hs_policy.h) ------------------------------------------------------

HS_POLICY_NAME_MAX = 32
HS_POLICY_VALUES_MAX = 16
HS_ERROR_MSG_MAX = 512
HS_POLICY_CAP_SELECTS = 1 << 0
HS_POLICY_CAP_STEP_LEVEL = 1 << 1
HS_POLICY_CAP_GROUPS = 1 << 2


class PolicyValue(ctypes.Union):
    _fields_ = [("real", ctypes.c_double), ("uint", ctypes.c_uint64)]


class PolicyConfig(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_char * HS_POLICY_NAME_MAX),
                ("seed", ctypes.c_uint64),
                ("steps_per_round", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32),
                ("value", PolicyValue * HS_POLICY_VALUES_MAX)]


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("msg", ctypes.c_char * HS_ERROR_MSG_MAX)]


class Telemetry(ctypes.Structure):
    _fields_ = [("time_s", ctypes.c_double), ("energy_j", ctypes.c_double),
                ("samples", ctypes.c_int64)]


KEY_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p)

_lib = None


def lib():
    """The loaded library with its prototypes (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    path = library_path()
    try:
        L = ctypes.CDLL(path)
    except OSError as e:
        raise HetsimError("%s: cannot load: %s" % (path, e)) from None
    P, E, C = ctypes.POINTER(PolicyConfig), ctypes.POINTER(Error), ctypes.c_void_p
    sig = {
        "hs_policy_count": (ctypes.c_size_t, []),
        "hs_policy_name": (ctypes.c_char_p, [ctypes.c_size_t]),
        "hs_policy_summary": (ctypes.c_char_p, [ctypes.c_size_t]),
        "hs_policy_caps": (ctypes.c_uint, [ctypes.c_char_p]),
        "hs_policy_key_doc": (ctypes.c_char_p, [ctypes.c_char_p, ctypes.c_char_p]),
        "hs_policy_config_init": (ctypes.c_int, [P, ctypes.c_char_p, E]),
        "hs_policy_config_set": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.c_char_p, E]),
        "hs_policy_config_foreach": (ctypes.c_size_t, [P, KEY_FN, ctypes.c_void_p]),
        "hs_policy_config_get": (ctypes.c_int, [P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double),
                                                E]),
        "hs_policy_config_get_uint": (ctypes.c_int, [P, ctypes.c_char_p,
                                                     ctypes.POINTER(ctypes.c_uint64), E]),
        "hs_controller_create": (C, [P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint32),
                                     ctypes.c_uint64, E]),
        "hs_controller_destroy": (None, [C]),
        "hs_controller_allocation": (ctypes.POINTER(ctypes.c_uint64), [C]),
        "hs_controller_update": (ctypes.c_int, [C, ctypes.POINTER(Telemetry), ctypes.c_size_t, E]),
        "hs_controller_set_comm": (ctypes.c_int, [C, ctypes.POINTER(ctypes.c_double),
                                                  ctypes.c_size_t, E]),
        "hs_controller_reallocated": (ctypes.c_bool, [C]),
        "hs_controller_size": (ctypes.c_size_t, [C]),
        "hs_controller_budget": (ctypes.c_uint64, [C]),
        "hs_controller_rounds": (ctypes.c_uint64, [C]),
        "hs_controller_config": (P, [C]),
        "hs_controller_step_batches": (ctypes.POINTER(ctypes.c_uint64), [C]),
        "hs_controller_step_update": (ctypes.c_int, [C, ctypes.POINTER(ctypes.c_double),
                                                     ctypes.c_size_t, E]),
        "hs_controller_save": (ctypes.c_void_p, [C, E]),
        "hs_controller_restore": (ctypes.c_int, [C, ctypes.c_char_p, E]),
        "hs_free": (None, [ctypes.c_void_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype = res
        f.argtypes = args
    _lib = L
    return L


def check(status, err):
    """Raise HetsimError with the library's message unless status is HS_OK."""
    if status != 0:
        raise HetsimError(err.msg.decode("utf-8", "replace"), status)
