# optimize_same.sh: sourced by optimize_bytes.sh and optimize_mpi.sh.
# fail MESSAGE: print it and exit 1.
# same A.csv B.csv WHAT: A.csv, A.front.csv, A.history.csv equal B's, byte for byte.
fail() { echo "FAIL: $*"; exit 1; }
same() {
  for s in "" .front .history; do
    cmp "${1%.csv}$s.csv" "${2%.csv}$s.csv" || fail "$3: ${1%.csv}$s.csv and ${2%.csv}$s.csv differ"
  done
  echo "ok   $3"
}
