#!/bin/sh
# smoke.sh: one deterministic libFuzzer smoke run (a ctest test, tests/fuzz).
#   usage: smoke.sh FUZZER WORKDIR RUNS CORPUS_FOLDER...
# WORKDIR is emptied and receives the new inputs (libFuzzer writes to its first
# corpus folder; the shipped seed folders are only read). Fixed -seed and -runs,
# so the same inputs run every time; -max_total_time only guards a slow machine.
# A crash leaves its reproducer in WORKDIR (crash-*, timeout-*, oom-*), named in
# the output; replay it with `FUZZER FILE`.
set -eu
fuzzer=$1 work=$2 runs=$3
shift 3
rm -rf "$work"
mkdir -p "$work/corpus"
cd "$work"
exec "$fuzzer" -seed=1 -runs="$runs" -max_total_time=60 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$work/corpus" "$@"
