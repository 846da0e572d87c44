#!/bin/sh
# equal_bytes.sh: the results of a sweep are the same bytes whatever runs it:
# -j 1, -j 2, a run killed (SIGKILL, twice) and resumed with a torn last line,
# and, when hetsim-mpi is built, mpirun -np 2 (fresh and resuming).
#
# usage: equal_bytes.sh HETSIM SOURCE_DIR WORK_DIR [HETSIM_MPI MPIEXEC]
set -u
bin=$1 src=$2 work=$3 mpi=${4:-} mpiexec=${5:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
set -- "$src/tests/data/sweep/tiny.json" --grid policy.w_e=0:1:0.25 \
  --grid policy.deadband=0,0.1 --seeds 1-3
nrows=30
fail() { echo "FAIL: $*"; exit 1; }
same() { # results a, results b, what
  cmp "$1" "$2" || fail "$3: $1 and $2 differ"
  cmp "${1%.csv}.points.csv" "${2%.csv}.points.csv" || fail "$3: the .points.csv files differ"
  echo "ok   $3"
}

"$bin" sweep "$@" -j 1 --out j1.csv -q || fail "-j 1 sweep"
[ "$(($(wc -l <j1.csv) - 2))" = $nrows ] || fail "-j 1: expected $nrows rows"
"$bin" sweep "$@" -j 2 --out j2.csv -q || fail "-j 2 sweep"
same j1.csv j2.csv "-j 2 = -j 1"

# Killed after 7 rows (the hook sends SIGKILL to the process itself).
HETSIM_SWEEP_KILL_AFTER=7 "$bin" sweep "$@" -j 2 --out k.csv -q 2>/dev/null
[ $? -ne 0 ] || fail "the kill hook did not kill"
[ ! -e k.points.csv ] || fail "a killed sweep wrote k.points.csv"
got=$(($(wc -l <k.csv) - 2))
[ "$got" -ge 7 ] && [ "$got" -lt $nrows ] || fail "killed sweep holds $got rows"
cp k.csv kmpi.csv
# A torn half row, as a machine failing mid-write would leave.
printf '3,0.25,0.1,1,12.3' >>k.csv
"$bin" sweep "$@" --out k.csv -q 2>/dev/null && fail "an existing file was reused without --resume"
HETSIM_SWEEP_KILL_AFTER=5 "$bin" sweep "$@" -j 1 --out k.csv --resume -q 2>/dev/null
[ $? -ne 0 ] || fail "the second kill did not kill"
"$bin" sweep "$@" -j 2 --out k.csv --resume -q || fail "resume"
same j1.csv k.csv "killed twice + --resume = -j 1"
"$bin" sweep "$@" --out k.csv --resume -q || fail "resume of a complete file"
same j1.csv k.csv "--resume of a complete file changes nothing"
"$bin" sweep "$@" --seeds 1-2 --out k.csv --resume -q 2>/dev/null && fail "resume with another grid accepted"

if [ -z "$mpi" ] || [ -z "$mpiexec" ]; then
  echo "skip mpirun: hetsim-mpi not built (no MPI found by CMake)"
  exit 0
fi
# LeakSanitizer would report OpenMPI's own start-up allocations.
mpirun_() { ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 "$mpiexec" -np 2 --oversubscribe \
  --allow-run-as-root "$mpi" sweep "$@"; }
mpirun_ "$@" --out mpi.csv -q || fail "mpirun -np 2"
same j1.csv mpi.csv "mpirun -np 2 = -j 1"
mpirun_ "$@" -j 2 --out kmpi.csv --resume -q || fail "mpirun -np 2 -j 2 --resume"
same j1.csv kmpi.csv "killed -j 2 + mpirun --resume = -j 1"

# A rank that fails validation alone (its node has a broken rpi4 profile on
# HETSIM_PROFILE_PATH) stops every rank with its reason before RESULTS exists,
# instead of leaving rank 0 waiting forever in the first collective.
mkdir -p badprof && echo '{' >badprof/rpi4.json
ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 timeout 120 "$mpiexec" --oversubscribe \
  --allow-run-as-root -np 1 "$mpi" sweep "$@" --out lone.csv -q : \
  -np 1 -x HETSIM_PROFILE_PATH="$work/badprof" "$mpi" sweep "$@" --out lone.csv -q \
  >lone.out 2>&1
rc=$?
[ $rc -ne 124 ] || fail "a rank failing validation alone left the others waiting"
[ $rc -ne 0 ] || fail "a rank failing validation alone: exit 0"
grep -q "^hetsim sweep: rank 1: .*badprof/rpi4.json" lone.out || fail "no reason: $(cat lone.out)"
[ ! -e lone.csv ] || fail "lone.csv created although rank 1 failed validation"
echo "ok   a rank failing validation alone stops the sweep with its reason"
