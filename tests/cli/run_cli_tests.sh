#!/bin/sh
# run_cli_tests.sh: run `hetsim` command lines from case files and check what
# they do. One case per file in tests/cli/cases/NAME.case; CTest runs a glob of
# them (see tests/scenario.cmake), so each command's owner adds files, not code.
#
# usage: run_cli_tests.sh HETSIM_BIN SOURCE_DIR WORK_DIR PATTERN...
#   PATTERN: shell globs over case names, e.g. 'validate-*'
#
# Case file: "key: value" lines; '#' starts a comment line. Keys:
#   args:         the arguments after `hetsim`, in sh quoting ('...' and "...")
#   exit:         expected exit status (default 0)
#   stderr:       text stderr must contain (repeat the key: all must appear)
#   stdout:       text stdout must contain (repeatable)
#   not-stdout:   text stdout must not contain (repeatable)
#   stderr-lines: exact number of stderr lines (default 1 when exit is 2: the
#                 house rule "one line naming file, field and reason")
#   stdout-empty: yes | no (default yes when exit is 2: no half-written output)
#   exists:       path that must exist afterwards (repeatable)
#   absent:       path that must not exist afterwards (repeatable)
#   env:          NAME=VALUE set for the command (repeatable)
# In args, exists and absent: @SRC@ is the source tree, @DATA@ its tests/data,
# @WORK@ a fresh empty folder for the case, which is also the working folder;
# relative exists/absent paths are relative to @WORK@.
#
# Example (tests/cli/cases/validate-unknown-key.case):
#   args: validate @DATA@/scenario/bad-unknown-key.json
#   exit: 2
#   stderr: bad-unknown-key.json: regime.stepz: unknown key
set -u

if [ $# -lt 4 ]; then
  echo "usage: $0 HETSIM_BIN SOURCE_DIR WORK_DIR PATTERN..." >&2
  exit 2
fi
bin=$1 src=$2 work=$3
shift 3
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $work in /*) ;; *) work=$(pwd)/$work ;; esac
src=$(cd "$src" && pwd) || exit 2
[ -x "$bin" ] || { echo "run_cli_tests: $bin: not an executable" >&2; exit 2; }
cases=$src/tests/cli/cases
# Cases see the shipped profiles only, whatever the caller's environment holds
# (a case that needs another search path sets it with env:).
unset HETSIM_PROFILE_PATH
mkdir -p "$work" || exit 2

subst() { # placeholders -> paths
  printf '%s' "$1" | sed -e "s|@SRC@|$src|g" -e "s|@DATA@|$src/tests/data|g" -e "s|@WORK@|$cwork|g"
}

nrun=0 nfail=0
for pat in "$@"; do
  for file in "$cases"/$pat.case; do
    [ -f "$file" ] || continue
    name=$(basename "$file" .case)
    nrun=$((nrun + 1))
    cwork=$work/$name
    rm -rf "$cwork" && mkdir -p "$cwork"
    args="" want_exit=0 lines="" empty="" envs=""
    : >"$cwork.stderr-want"; : >"$cwork.stdout-want"; : >"$cwork.stdout-not"
    : >"$cwork.exists"; : >"$cwork.absent"
    while IFS= read -r line || [ -n "$line" ]; do
      case $line in '#'* | '') continue ;; esac
      key=${line%%:*}
      val=${line#*:}
      val=${val# }
      case $key in
        args) args=$val ;;
        exit) want_exit=$val ;;
        stderr) printf '%s\n' "$val" >>"$cwork.stderr-want" ;;
        stdout) printf '%s\n' "$val" >>"$cwork.stdout-want" ;;
        not-stdout) printf '%s\n' "$val" >>"$cwork.stdout-not" ;;
        stderr-lines) lines=$val ;;
        stdout-empty) empty=$val ;;
        exists) printf '%s\n' "$val" >>"$cwork.exists" ;;
        absent) printf '%s\n' "$val" >>"$cwork.absent" ;;
        env) envs="$envs $val" ;;
        *) echo "FAIL $name: unknown key \"$key\" in $file"; nfail=$((nfail + 1)); continue 2 ;;
      esac
    done <"$file"
    [ -n "$lines" ] || { [ "$want_exit" = 2 ] && lines=1; }
    [ -n "$empty" ] || { [ "$want_exit" = 2 ] && empty=yes || empty=no; }
    cmdline=$(subst "$args")
    # shellcheck disable=SC2086
    (cd "$cwork" && eval "set -- $cmdline" && env $envs "$bin" "$@" \
      >"$cwork.stdout" 2>"$cwork.stderr" </dev/null)
    got=$?
    why=""
    [ "$got" = "$want_exit" ] || why="exit status $got, expected $want_exit"
    if [ -z "$why" ]; then
      while IFS= read -r s; do
        grep -qF -- "$s" "$cwork.stderr" || { why="stderr lacks \"$s\""; break; }
      done <"$cwork.stderr-want"
    fi
    if [ -z "$why" ]; then
      while IFS= read -r s; do
        grep -qF -- "$s" "$cwork.stdout" || { why="stdout lacks \"$s\""; break; }
      done <"$cwork.stdout-want"
    fi
    if [ -z "$why" ]; then
      while IFS= read -r s; do
        ! grep -qF -- "$s" "$cwork.stdout" || { why="stdout contains \"$s\""; break; }
      done <"$cwork.stdout-not"
    fi
    if [ -z "$why" ] && [ -n "$lines" ]; then
      n=$(wc -l <"$cwork.stderr" | tr -d ' ')
      [ "$n" = "$lines" ] || why="$n lines on stderr, expected $lines"
    fi
    if [ -z "$why" ] && [ "$empty" = yes ] && [ -s "$cwork.stdout" ]; then
      why="stdout is not empty"
    fi
    if [ -z "$why" ]; then
      while IFS= read -r p; do
        p=$(subst "$p")
        case $p in /*) ;; *) p=$cwork/$p ;; esac
        [ -e "$p" ] || { why="$p does not exist"; break; }
      done <"$cwork.exists"
    fi
    if [ -z "$why" ]; then
      while IFS= read -r p; do
        p=$(subst "$p")
        case $p in /*) ;; *) p=$cwork/$p ;; esac
        [ ! -e "$p" ] || { why="$p exists"; break; }
      done <"$cwork.absent"
    fi
    if [ -z "$why" ]; then
      echo "ok   $name"
    else
      nfail=$((nfail + 1))
      echo "FAIL $name: $why"
      echo "     hetsim $cmdline"
      sed 's/^/     stderr: /' "$cwork.stderr" | head -20
      sed 's/^/     stdout: /' "$cwork.stdout" | head -20
    fi
  done
done
if [ "$nrun" = 0 ]; then
  echo "run_cli_tests: no case matched $* in $cases" >&2
  exit 1
fi
echo "$((nrun - nfail))/$nrun cases passed"
[ "$nfail" = 0 ]
