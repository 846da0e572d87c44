#!/bin/sh
# bad_input_matrix.sh: every command fed bad input (issue 16). Reads a case
# table and, for each case, checks the house rule for refusals:
#   - the exit status (2 bad input, 1 cannot read / write / allocate);
#   - exactly one line on stderr, containing each expected substring (a
#     substring, not the whole message: messages are being improved);
#   - nothing partial left behind: for a failing case, no file or folder
#     appears in the case's folder (or its tmpfs) that the set-up did not make,
#     and no *.tmp* file anywhere under it (plus any `absent:` path).
#
# usage: bad_input_matrix.sh --hetsim BIN --probe BIN --bridge BIN --src DIR
#                            --work DIR --table FILE [--only GLOB]
#
# Table: records start with "case NAME"; then "key: value" lines; '#' starts a
# comment line. Keys:
#   setup:   sh command run in the case folder before the case (repeatable)
#   run:     the command line, run by sh in the case folder (redirections ok)
#   exit:    expected status (required)
#   stderr:  substring the one stderr line must contain (repeatable)
#   absent:  path (relative to the case folder) that must not exist afterwards
#   allow:   path the command may leave behind (successful side effects)
#   lines:   expected stderr lines (default 1)
#   as:      nobody  (run as user nobody with setpriv; skipped when impossible)
#   tmpfs:   full | KB  (mount a 64 KiB tmpfs on ./fs; "full" fills it first;
#            skipped when mount is not permitted)
#   limit-as: KB  (ulimit -v for the command; skipped under AddressSanitizer,
#            which reserves terabytes of address space)
#   needs:   gnuplot | fashion-mnist  (skipped when gnuplot is not on PATH, or
#            when the Debian package dataset-fashion-mnist is not installed)
#   expect-defect N  (issue 16 defect N; no colon: a failure is reported as KNOWN and
#            does not fail the test; a pass is reported as FIXED so the lead
#            can remove the mark)
# Placeholders in setup/run/absent: @HETSIM@ @PROBE@ @BRIDGE@ @SRC@ @DATA@
# (= @SRC@/tests/data) @WORK@ (the case folder, also the working folder).
#
# Exit: 0 when every unmarked case passes; 1 otherwise. Rejected: one file per
# case like tests/cli/cases (120+ tiny files; a table reads as a matrix).
set -u

hetsim="" probe="" bridge="" src="" work="" table="" only="*"
while [ $# -gt 0 ]; do
  case $1 in
    --hetsim) hetsim=$2 ;; --probe) probe=$2 ;; --bridge) bridge=$2 ;;
    --src) src=$2 ;; --work) work=$2 ;; --table) table=$2 ;; --only) only=$2 ;;
    *) echo "bad_input_matrix: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
for v in hetsim probe bridge; do
  eval "b=\$$v"
  [ -x "$b" ] || { echo "bad_input_matrix: --$v $b: not an executable" >&2; exit 2; }
  case $b in /*) ;; *) eval "$v=\$(pwd)/\$b" ;; esac
done
[ -f "$table" ] || { echo "bad_input_matrix: --table $table: no such file" >&2; exit 2; }
src=$(cd "$src" && pwd) || exit 2
# A run killed in the middle of a tmpfs case (ctest timeout) leaves the mount:
# unmount whatever is still mounted under WORK before emptying it.
if [ -d "$work" ]; then
  work=$(cd "$work" && pwd) || exit 2
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/mounts 2>/dev/null |
    while IFS= read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
fi
rm -rf "$work" && mkdir -p "$work" && work=$(cd "$work" && pwd) || exit 2
cur_mount=""
trap '[ -n "$cur_mount" ] && umount -l "$cur_mount" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
# nobody must reach the case folders and the binaries (the build tree is o+rx
# on a normal checkout; cases that need more say so with setup: chmod).
chmod 755 "$work"
unset HETSIM_PROFILE_PATH

asan=no
if nm -an "$hetsim" 2>/dev/null | grep -q __asan_init; then asan=yes; fi
can_nobody=no
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
  setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
  can_nobody=yes
fi
can_mount=unknown
have_gnuplot=no
fmnist=/usr/share/datasets/fashion-mnist
command -v "${HETSIM_GNUPLOT:-gnuplot}" >/dev/null 2>&1 && have_gnuplot=yes

npass=0 nfail=0 nknown=0 nfixed=0 nskip=0
failed_names="" known_names="" fixed_names=""

subst() {
  printf '%s' "$1" | sed -e "s|@HETSIM@|$hetsim|g" -e "s|@PROBE@|$probe|g" \
    -e "s|@BRIDGE@|$bridge|g" -e "s|@DATA@|$src/tests/data|g" -e "s|@SRC@|$src|g" \
    -e "s|@WORK@|$cwork|g"
}

try_mount() { # $1 folder: 0 when a 64 KiB tmpfs is mounted there
  [ "$can_mount" = no ] && return 1
  if mount -t tmpfs -o size=64k,mode=0777 tmpfs "$1" 2>/dev/null; then
    can_mount=yes
    return 0
  fi
  can_mount=no
  return 1
}

run_case() {
  name=$1
  case $name in $only) ;; *) return ;; esac
  cwork=$work/$name
  mkdir -p "$cwork" && chmod 777 "$cwork"
  skip=""
  if [ "$c_as" = nobody ] && [ "$can_nobody" = no ]; then
    skip="needs root and setpriv to run as nobody"
  fi
  if [ -n "$c_limit" ] && [ "$asan" = yes ]; then
    skip="ulimit -v and AddressSanitizer do not mix"
  fi
  if [ "$c_needs" = gnuplot ] && [ "$have_gnuplot" = no ]; then
    skip="gnuplot not on PATH"
  fi
  if [ "$c_needs" = fashion-mnist ] && [ ! -f "$fmnist/train-images-idx3-ubyte.gz" ]; then
    skip="$fmnist not installed (Debian package dataset-fashion-mnist)"
  fi
  mounted=no
  if [ -z "$skip" ] && [ -n "$c_tmpfs" ]; then
    mkdir -p "$cwork/fs"
    if try_mount "$cwork/fs"; then
      mounted=yes cur_mount=$cwork/fs
    else
      skip="mount -t tmpfs not permitted here"
    fi
  fi
  if [ -n "$skip" ]; then
    echo "SKIP  $name: $skip"
    nskip=$((nskip + 1))
    return
  fi
  # set-up, in the case folder
  printf '%s\n' "$c_setup" | while IFS= read -r line; do
    [ -n "$line" ] || continue
    (cd "$cwork" && eval "$(subst "$line")") || echo "setup failed: $line" >>"$cwork.setup-err"
  done
  if [ "$c_tmpfs" = full ] && [ "$mounted" = yes ]; then
    dd if=/dev/zero of="$cwork/fs/filler" bs=4096 2>/dev/null
    dd if=/dev/zero of="$cwork/fs/filler2" bs=1 2>/dev/null
  fi
  (cd "$cwork" && find . -mindepth 1 -print | LC_ALL=C sort) >"$cwork.before"
  cmd=$(subst "$c_run")
  wrap=""
  [ "$c_as" = nobody ] && wrap="setpriv --reuid=nobody --regid=nogroup --clear-groups"
  (
    cd "$cwork" || exit 99
    [ -n "$c_limit" ] && ulimit -v "$c_limit"
    exec $wrap sh -c "$cmd" </dev/null
  ) >"$cwork.stdout" 2>"$cwork.stderr"
  got=$?
  (cd "$cwork" && find . -mindepth 1 -print | LC_ALL=C sort) >"$cwork.after"
  why=""
  [ -f "$cwork.setup-err" ] && why="$why; $(cat "$cwork.setup-err")"
  [ "$got" = "$c_exit" ] || why="$why; exit $got, want $c_exit"
  nl=$(wc -l <"$cwork.stderr" | tr -d ' ')
  # a last line without '\n' counts too
  [ -s "$cwork.stderr" ] && [ "$(tail -c 1 "$cwork.stderr" | od -An -c | tr -d ' ')" != '\n' ] &&
    nl=$((nl + 1))
  [ "$nl" = "$c_lines" ] || why="$why; $nl stderr lines, want $c_lines"
  printf '%s\n' "$c_stderr" | while IFS= read -r want; do
    [ -n "$want" ] || continue
    grep -qF -- "$(subst "$want")" "$cwork.stderr" || echo "x" >"$cwork.miss"
  done
  if [ -f "$cwork.miss" ]; then
    why="$why; stderr lacks one of: $(printf '%s' "$c_stderr" | tr '\n' '|')"
  fi
  if [ "$c_exit" != 0 ]; then
    new=$(LC_ALL=C comm -13 "$cwork.before" "$cwork.after")
    for a in $c_allow; do
      new=$(printf '%s\n' "$new" | grep -v -x -F "./$a" | grep -v "^\./$a/")
    done
    [ -z "$new" ] || why="$why; left behind: $(printf '%s' "$new" | tr '\n' ' ')"
  fi
  tmps=$(cd "$cwork" && find . -name '*.tmp*' -print | tr '\n' ' ')
  [ -z "$tmps" ] || why="$why; temporary files left: $tmps"
  for a in $c_absent; do
    [ ! -e "$cwork/$(subst "$a")" ] || why="$why; $a exists"
  done
  if [ "$mounted" = yes ]; then
    umount "$cwork/fs" 2>/dev/null || umount -l "$cwork/fs"
    cur_mount=""
  fi
  msg=$(head -c 300 "$cwork.stderr" | tr '\n' '|')
  if [ -z "$why" ]; then
    if [ -n "$c_defect" ]; then
      echo "FIXED $name (expect-defect $c_defect passes now: remove the mark)"
      nfixed=$((nfixed + 1)) fixed_names="$fixed_names $name"
    else
      npass=$((npass + 1))
    fi
  elif [ -n "$c_defect" ]; then
    echo "KNOWN $name (defect $c_defect)${why}"
    echo "      stderr: $msg"
    nknown=$((nknown + 1)) known_names="$known_names $name"
  else
    echo "FAIL  $name${why}"
    echo "      run: $cmd"
    echo "      stderr: $msg"
    nfail=$((nfail + 1)) failed_names="$failed_names $name"
  fi
}

reset_case() {
  c_name="" c_setup="" c_run="" c_exit="" c_stderr="" c_absent="" c_allow=""
  c_lines=1 c_as="" c_tmpfs="" c_limit="" c_needs="" c_defect=""
}
flush_case() {
  [ -n "$c_name" ] || return 0
  if [ -z "$c_run" ] || [ -z "$c_exit" ]; then
    echo "FAIL  $c_name: table entry without run: or exit:"
    nfail=$((nfail + 1)) failed_names="$failed_names $c_name"
    return 0
  fi
  run_case "$c_name"
}

ncases=0
reset_case
while IFS= read -r line || [ -n "$line" ]; do
  case $line in
    '#'* | '') continue ;;
    'expect-defect '*)
      c_defect=${line#expect-defect }
      continue ;;
    'case '*)
      flush_case
      reset_case
      c_name=${line#case }
      ncases=$((ncases + 1))
      continue ;;
  esac
  key=${line%%:*}
  val=${line#*:}
  val=${val# }
  case $key in
    setup) c_setup="$c_setup$val
" ;;
    run) c_run=$val ;;
    exit) c_exit=$val ;;
    stderr) c_stderr="$c_stderr$val
" ;;
    absent) c_absent="$c_absent $val" ;;
    allow) c_allow="$c_allow $val" ;;
    lines) c_lines=$val ;;
    as) c_as=$val ;;
    tmpfs) c_tmpfs=$val ;;
    limit-as) c_limit=$val ;;
    needs) c_needs=$val ;;
    expect-defect) c_defect=$val ;;
    *) echo "bad_input_matrix: $table: unknown key \"$key\" in case $c_name" >&2; exit 2 ;;
  esac
done <"$table"
flush_case

echo "bad-input matrix: $ncases cases: $npass pass, $nknown known defects, $nfixed fixed," \
  "$nskip skipped, $nfail FAILED"
[ -n "$known_names" ] && echo "known (expect-defect):$known_names"
[ -n "$fixed_names" ] && echo "fixed (remove expect-defect):$fixed_names"
[ -n "$failed_names" ] && echo "failed:$failed_names"
[ "$nfail" = 0 ]
