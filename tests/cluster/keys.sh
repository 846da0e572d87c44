#!/bin/sh
# tests/cluster/keys.sh PROBE HETSIM SRC WORKDIR: the runtime reads the
# simulator's regime keys, no more and no fewer. For pma, ddp and fedasync:
# every key `hetsim reference scenario-keys` lists for the regime, set to its
# default, is either honoured (the server then waits for its boards and gives
# up after 0.2 s, exit 1) or refused by name as a key the runtime cannot
# honour (exit 2) -- never "not a key of regime"; a key the simulator does not
# list is refused as not a key; and every key in the runtime's descriptor
# tables (src/serve_*.c, *_KEYS) is one the simulator lists.
set -eu
PROBE=$1 HETSIM=$2 SRC=$3 WORK=$4
rm -rf "$WORK"
mkdir -p "$WORK"
fail() { echo "cluster_keys: FAIL: $*" >&2; exit 1; }
"$HETSIM" reference scenario-keys >"$WORK/keys.md" || fail "hetsim reference exited $?"
BASE="$SRC/tests/cluster/smoke-2boards.json"
run_with() { # REGIME BLOCK-TAIL: serve with regime {"kind": REGIME BLOCK-TAIL}; prints exit status
  sed "s/\"kind\": \"pma\"/\"kind\": \"$1\"$2/" "$BASE" >"$WORK/s.json"
  set +e
  "$PROBE" serve "$WORK/s.json" --out "$WORK/out" --port 0 --connect-timeout-s 0.2 --quiet 2>"$WORK/err.txt" >/dev/null
  echo $?
  set -e
}
checked=0
for R in pma ddp fedasync; do
  awk -v r="### \`$R\`" '$0 == r { f = 1; next } /^### / { f = 0 } f && /^\| `/' "$WORK/keys.md" >"$WORK/$R.rows"
  cut -d'`' -f2 "$WORK/$R.rows" >"$WORK/$R.keys"
  while IFS='|' read -r _ key def _; do
    key=$(echo "$key" | tr -d ' `')
    def=$(echo "$def" | sed 's/^ *//; s/ *$//')
    case $def in
      \`*\`) val="\"$(echo "$def" | tr -d '`')\"" ;;
      [0-9]*) val=$def ;;
      *) val=1 ;; # "see meaning": any value; the key's name is what is checked
    esac
    extra=""
    [ "$R" = ddp ] && [ "$key" != collective ] && extra=', "collective": "star"' # else that refusal comes first
    rc=$(run_with "$R" ", \"$key\": $val$extra")
    if grep -q "not a key of regime" "$WORK/err.txt"; then fail "$R: the simulator's key $key: $(cat "$WORK/err.txt")"; fi
    case $rc in
      1) grep -q "did not connect" "$WORK/err.txt" || fail "$R.$key=$val: exit 1: $(cat "$WORK/err.txt")" ;;
      2) grep -q "regime.$key" "$WORK/err.txt" || fail "$R.$key=$val refused without naming it: $(cat "$WORK/err.txt")" ;;
      *) fail "$R.$key=$val: exit $rc" ;;
    esac
    checked=$((checked + 1))
  done <"$WORK/$R.rows"
  rc=$(run_with "$R" ", \"no_such_key\": 1")
  [ "$rc" = 2 ] && grep -q "regime.no_such_key: not a key of regime \"$R\"" "$WORK/err.txt" \
    || fail "$R: an unknown key: exit $rc: $(cat "$WORK/err.txt")"
  # the runtime's own table for this regime
  tab=$(grep -h -A2 "\.name = \"$R\"" "$SRC"/devices/probe/src/serve_*.c | sed -n 's/.*\.keys = \([A-Z_]*\),.*/\1/p')
  [ -n "$tab" ] || fail "$R: no descriptor in devices/probe/src/serve_*.c"
  grep -h "$tab\[\] = {" "$SRC"/devices/probe/src/serve_*.c | sed 's/.*= {//; s/}.*//' | tr ',' '\n' | tr -d ' "' \
    | grep -v '^NULL$' | grep -v '^$' >"$WORK/$R.runtime" || true
  while read -r k; do
    grep -qx "$k" "$WORK/$R.keys" || fail "$R: the runtime's key $k is not one of the simulator's"
  done <"$WORK/$R.runtime"
done
[ "$checked" -ge 6 ] || fail "only $checked simulator keys found in the reference"
echo "cluster_keys: ok: $checked simulator keys honoured or refused by name, unknown keys refused, runtime tables within the simulator's"
