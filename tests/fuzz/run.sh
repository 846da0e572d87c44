#!/bin/sh
# run.sh: build the libFuzzer harnesses (clang, -DHS_FUZZ=ON) in their own build
# folder and run their smoke tests (ctest -L fuzz): what .ci calls.
#   usage: tests/fuzz/run.sh [BUILD_DIR]        (default build-fuzz)
# Needs clang and libclang-rt-14-dev (the libFuzzer runtime), both in .ci/deps.
#
# Long runs (one reader at a time; new inputs go to the first folder, crash
# reproducers to the working folder):
#   mkdir -p fz/scenario && cd fz
#   ../build-fuzz/bin/fuzz_scenario -max_total_time=3600 -timeout=10 \
#       -rss_limit_mb=2048 -jobs=2 -workers=2 scenario ../scenarios ../tests/data/scenario \
#       ../tests/fuzz/seeds/scenario
#   (the seed folders of each reader: tests/fuzz/CMakeLists.txt, CORPUS lists).
# Replay a reproducer with any build: build/bin/fuzz-replay-<reader> FILE.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$src/build-fuzz}
cc=${HS_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "tests/fuzz/run.sh: $cc not found: install the Debian packages clang libclang-rt-14-dev" >&2
  exit 1
fi
cmake -S "$src" -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHS_FUZZ=ON -DHS_WERROR=OFF -DHS_WITH_MPI=OFF >/dev/null
cmake --build "$dir" --target hs_fuzz_all -j "${HS_FUZZ_JOBS:-2}" >/dev/null
cd "$dir" && ctest -L '^fuzz$' --output-on-failure -j "${HS_FUZZ_JOBS:-2}"
