#!/bin/sh
# optimize_mpi.sh: `mpirun -np R hetsim-mpi optimize` writes the same bytes as
# `hetsim optimize` (every output file) for R = 1, 2, 3 and any -j; a job
# killed (SIGKILL of rank 0, twice, once with a torn last line) and resumed
# under mpirun equals an uninterrupted one, and so does a threaded run killed
# and resumed under mpirun; bad input is one line and exit 2 once, whatever
# the number of ranks (also when one rank alone fails validation); a file
# that cannot be written is exit 1; both --help texts teach the command.
#
# usage: optimize_mpi.sh HETSIM SOURCE_DIR WORK_DIR HETSIM_MPI MPIEXEC
# (exits 77, skipped, when hetsim-mpi was not built)
set -u
bin=$1 src=$2 work=$3 mpi=${4:-} mpiexec=${5:-}
if [ -z "$mpi" ] || [ -z "$mpiexec" ]; then
  echo "skip: hetsim-mpi not built (no MPI found by CMake)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
scn="$src/tests/data/sweep/tiny.json"
# Makespan and energy pull apart here (more boards: faster, hungrier), so the
# weighted sums propose different points and batches span several ranks.
set -- "$scn" --vary policy.w_e=0:1 --vary 'devices[0].count=1:3:1' --vary 'devices[2].count=1:3:1' \
  --objective pareto --budget 61 --weights 4 --seed 4
. "$src/tests/sweep/optimize_same.sh" # fail, same
# -q: no OpenMPI banner, so stderr holds only what hetsim says. LeakSanitizer
# would report OpenMPI's own start-up allocations (as in equal_bytes.sh).
run() { # ranks, then hetsim-mpi's arguments
  np=$1
  shift
  ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 timeout 120 "$mpiexec" -q -np "$np" --oversubscribe \
    --allow-run-as-root -x HETSIM_OPTIMIZE_KILL_AFTER "$mpi" "$@"
}
export HETSIM_OPTIMIZE_KILL_AFTER=0

"$bin" optimize "$@" -j 1 --out ref.csv -q || fail "hetsim optimize -j 1"
[ "$(($(wc -l <ref.csv) - 2))" = 61 ] || fail "expected 61 evaluations"
for rj in 1:1 2:2 3:1; do
  r=${rj%:*} j=${rj#*:}
  run "$r" optimize "$@" -j "$j" --out "m$r-$j.csv" >"m$r-$j.out" || fail "mpirun -np $r -j $j"
  same ref.csv "m$r-$j.csv" "mpirun -np $r -j $j = hetsim optimize -j 1"
done
# Not a vacuous equality: ranks 1 and 2 simulated points of their own.
grep -Eq '^simulations per rank: [1-9][0-9]* [1-9][0-9]* [1-9][0-9]*$' m3-1.out ||
  fail "-np 3: a rank simulated nothing: $(cat m3-1.out)"
echo "ok   -np 3: every rank simulated points ($(grep '^simulations' m3-1.out))"
"$bin" optimize "$scn" --vary policy.w_e=0:1 --vary 'devices[0].count=1:3:1' --objective makespan \
  --budget 12 --out one.csv -q || fail "one objective, threads"
run 2 optimize "$scn" --vary policy.w_e=0:1 --vary 'devices[0].count=1:3:1' --objective makespan \
  --budget 12 --out one-mpi.csv -q || fail "one objective, mpirun"
same one.csv one-mpi.csv "one objective: mpirun -np 2 = hetsim optimize"
# A front with ties (points that leave the rpi4 alone tie whatever w_e): one
# row per distinct objective vector, the same rows and tied_points under MPI.
T="--vary policy.w_e=0:1 --vary devices[1].count=0:1:1 --vary devices[2].count=0:1:1 --vary devices[3].count=0:1:1"
"$bin" optimize "$scn" $T --objective pareto --budget 61 --weights 3 --out tie.csv -q || fail "ties, threads"
run 2 optimize "$scn" $T --objective pareto --budget 61 --weights 3 --out tie-mpi.csv -q ||
  fail "ties, mpirun"
awk -F, 'FNR > 2 && $NF > 1 { t = 1 } END { exit !t }' tie.front.csv || fail "no tie in tie.front.csv"
same tie.csv tie-mpi.csv "a front with ties: mpirun -np 2 = hetsim optimize"
# A stochastic algorithm (seeded per sub-problem; its weighted sums diverge).
"$bin" optimize "$@" --algorithm GN_CRS2_LM -j 2 --out crs.csv -q || fail "GN_CRS2_LM, threads"
run 3 optimize "$@" --algorithm GN_CRS2_LM --out crs-mpi.csv -q || fail "GN_CRS2_LM, mpirun"
same crs.csv crs-mpi.csv "GN_CRS2_LM: mpirun -np 3 = hetsim optimize -j 2"

# Killed: rank 0 sends itself SIGKILL after 9 appended evaluations; mpirun
# takes the other ranks down.
HETSIM_OPTIMIZE_KILL_AFTER=9 run 2 optimize "$@" -j 2 --out k.csv -q 2>/dev/null
[ $? -ne 0 ] || fail "the kill hook did not kill the job"
[ ! -e k.front.csv ] || fail "a killed job wrote k.front.csv"
got=$(($(wc -l <k.csv) - 2))
[ "$got" -ge 9 ] && [ "$got" -lt 61 ] || fail "killed job holds $got evaluations"
printf '2,7,0.5,2' >>k.csv # a torn last line
HETSIM_OPTIMIZE_KILL_AFTER=6 run 3 optimize "$@" --out k.csv --resume -q 2>/dev/null
[ $? -ne 0 ] || fail "the second kill did not kill the job"
[ "$(($(wc -l <k.csv) - 2))" -gt "$got" ] || fail "the resumed job added nothing before its kill"
run 2 optimize "$@" -j 2 --out k.csv --resume -q || fail "mpirun --resume"
same ref.csv k.csv "killed twice under mpirun + mpirun --resume = uninterrupted"
HETSIM_OPTIMIZE_KILL_AFTER=20 "$bin" optimize "$@" -j 3 --out kt.csv -q 2>/dev/null
[ $? -ne 0 ] || fail "the kill hook did not kill hetsim optimize"
run 3 optimize "$@" --out kt.csv --resume -q || fail "mpirun --resume of a threaded file"
same ref.csv kt.csv "killed threaded run + mpirun --resume = uninterrupted"

# Bad input: one line, exit 2, from one rank only; no file.
one_line() { # file, what, pattern
  [ "$(wc -l <"$1")" = 1 ] || fail "$2: expected one line, got: $(cat "$1")"
  grep -q "$3" "$1" || fail "$2: unexpected message: $(cat "$1")"
}
run 3 optimize "$scn" --vary policy.w_x=0:1 --objective makespan --out bad.csv -q 2>bad.err
[ $? -eq 2 ] || fail "unknown --vary key under mpirun: exit $? (expected 2)"
one_line bad.err "unknown --vary key" "^hetsim optimize: --vary policy.w_x=0:1: .*unknown policy key"
run 2 optimize "$scn" --vary policy.w_e=1:0 --objective makespan --out bad.csv -q 2>bad.err
[ $? -eq 2 ] || fail "empty --vary range under mpirun: exit $? (expected 2)"
one_line bad.err "empty --vary range" "^hetsim optimize: --vary policy.w_e=1:0: empty range"
[ ! -e bad.csv ] || fail "bad input created bad.csv"
echo "ok   bad input under mpirun: exit 2, one line, no file"
# One rank alone fails validation (its node has a broken rpi4 profile): it
# says why, once; every rank exits 2; no file.
mkdir -p badprof && echo '{' >badprof/rpi4.json
ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 timeout 120 "$mpiexec" -q --oversubscribe \
  --allow-run-as-root -np 1 "$mpi" optimize "$@" --out lone.csv -q : \
  -np 1 -x HETSIM_PROFILE_PATH="$work/badprof" "$mpi" optimize "$@" --out lone.csv -q 2>lone.err
rc=$?
[ $rc -eq 2 ] || fail "a rank failing validation alone: exit $rc (expected 2)"
one_line lone.err "a rank failing validation alone" "^hetsim optimize: rank 1: .*badprof/rpi4.json"
[ ! -e lone.csv ] || fail "lone.csv created although rank 1 failed validation"
echo "ok   a rank failing validation alone: its reason once, exit 2"
# Rank 0 cannot create the file: exit 1, one line.
run 2 optimize "$@" --out "$work/no/such/dir/o.csv" -q 2>nowrite.err
[ $? -eq 1 ] || fail "an unwritable --out under mpirun: expected exit 1"
one_line nowrite.err "an unwritable --out" "^hetsim optimize: .*no/such/dir/o.csv: cannot open"
echo "ok   an unwritable --out under mpirun: exit 1, one line"

# The help texts, once whatever the number of ranks.
run 2 --help >help.out || fail "hetsim-mpi --help"
[ "$(grep -c '^usage: mpirun -np N hetsim-mpi sweep' help.out)" = 1 ] || fail "hetsim-mpi --help: $(cat help.out)"
grep -q 'hetsim-mpi optimize SCENARIO --vary' help.out || fail "hetsim-mpi --help does not teach optimize"
run 2 optimize --help >ohelp.out || fail "hetsim-mpi optimize --help"
[ "$(grep -c '^usage: hetsim-mpi optimize SCENARIO' ohelp.out)" = 1 ] || fail "optimize --help: $(cat ohelp.out)"
grep -q 'threads per rank' ohelp.out && grep -q 'mpirun -np' ohelp.out || fail "optimize --help: no MPI usage"
echo "ok   hetsim-mpi --help and hetsim-mpi optimize --help"
