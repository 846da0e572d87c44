#!/bin/sh
# run_install_test.sh: hetsim as an installed package, tested from outside the
# build tree (tests/install.cmake registers each step with ctest).
#
#   run_install_test.sh install  BUILD PREFIX LIBDIR SRC
#       cmake --install into a fresh PREFIX; no path of the build machine in
#       any installed program or library (strings); the controller library
#       needs libc and libm only (readelf NEEDED), names no GSL symbol and
#       exports the public API (hs_*) only (nm); a copy of the prefix elsewhere
#       runs its default scenario and its .pc file points into the copy; a
#       manual page per command is installed in share/man/man1, renders with
#       `man -l`, and `man hetsim-sweep` finds it through MANPATH.
#   run_install_test.sh pkgconfig PREFIX LIBDIR SRC WORK [CFLAGS...]
#       cc trainer.c $(pkg-config --cflags --libs hetsim-policies): links, the
#       program does not load GSL (ldd), and it prints the expected allocation;
#       the installed example bridge.c builds the same way and answers.
#   run_install_test.sh cmake PREFIX LIBDIR SRC WORK [CFLAGS...]
#       a project that calls find_package(hetsim) links hetsim::policies and
#       hetsim::policies_static; both trainers print the expected allocation.
# Exit 0 when every check holds; otherwise 1 with a line naming the check.
set -eu
say() { printf 'install test: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
want='rounds=3 allocation=400 200 100'

mode=$1; shift
case $mode in
install)
  build=$1 prefix=$2 libdir=$3 src=$4
  rm -rf "$prefix"
  cmake --install "$build" --prefix "$prefix" >/dev/null || die "cmake --install failed"
  for f in bin/hetsim bin/hs-policy-bridge bin/hetsim-probe "$libdir/libhetsim-policies.so" \
           "$libdir/libhetsim-policies.a" include/hetsim/policies/hs_policy.h include/hetsim/policies/hs_agc.h \
           "$libdir/pkgconfig/hetsim-policies.pc" "$libdir/cmake/hetsim/hetsimConfig.cmake" \
           share/hetsim/scenarios/testbed-mnist-pma.json share/hetsim/profiles/rpi4.json \
           share/hetsim/plot/run_allocation.gp; do
    [ -e "$prefix/$f" ] || die "$f: not installed"
  done
  # manual pages: one per program and per command that `hetsim --help` lists
  # (but version), made from --help at build time; the list in
  # sim/doc/man.cmake must follow sim/cli/commands.c, and this is its check
  cmds=$("$prefix/bin/hetsim" --help | awk '/^commands:/ { on = 1; next } on && NF == 0 { exit }
                                            on && $1 != "version" { print "hetsim-" $1 }')
  [ -n "$cmds" ] || die "hetsim --help lists no commands"
  for p in hetsim $cmds hetsim-probe; do
    [ -s "$prefix/share/man/man1/$p.1" ] || die "share/man/man1/$p.1: not installed"
  done
  command -v man >/dev/null 2>&1 || die "man not found: install the Debian package man-db (.ci/deps)"
  page=$(MANWIDTH=100 man -l "$prefix/share/man/man1/hetsim-sweep.1" 2>&1) \
    || die "man -l hetsim-sweep.1 failed: $page"
  for want_text in 'HETSIM-SWEEP(1)' SYNOPSIS 'hetsim sweep SCENARIO --grid KEY=VALUES' \
                   '--grid KEY=start:stop:step a range' 'EXIT STATUS' EXAMPLES; do
    printf '%s\n' "$page" | grep -q -F -e "$want_text" \
      || die "man -l hetsim-sweep.1: the page lacks '$want_text'"
  done
  page=$(MANPATH="$prefix/share/man" MANWIDTH=100 man hetsim-run 2>&1) \
    || die "MANPATH=<prefix>/share/man man hetsim-run failed: $page"
  printf '%s\n' "$page" | grep -q -F 'hetsim run [SCENARIO] [--policy NAME]' \
    || die "man hetsim-run (through MANPATH) does not show the run command's usage"
  # no path of the build machine in what was installed (a sanitizer build,
  # HS_INSTALL_SANITIZE=1, is exempt: ASan and UBSan record absolute source
  # names that -ffile-prefix-map does not rewrite; it is never distributed)
  binaries="$prefix/bin/* $prefix/$libdir/libhetsim-policies.*"
  [ "${HS_INSTALL_SANITIZE:-0}" = 1 ] && binaries=
  for f in $binaries; do
    [ -L "$f" ] && continue
    for p in "$src" "$build"; do
      if strings -a "$f" | grep -F -q "$p"; then die "$f: contains the build path $p"; fi
    done
  done
  for p in "$src" "$build"; do
    if grep -r -F -l "$p" "$prefix/$libdir/pkgconfig" "$prefix/$libdir/cmake" "$prefix/include" \
        "$prefix/lib/python3" 2>/dev/null; then die "a text file names the build path $p"; fi
  done
  so="$prefix/$libdir/libhetsim-policies.so"
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
  for lib in $needed; do
    case $lib in
      libc.so.*|libm.so.*) ;;
      libasan.so.*|libubsan.so.*) ;;  # the sanitizer build
      *) die "libhetsim-policies.so needs $lib (libc and libm only)";;
    esac
  done
  if nm -D "$so" | grep -q -i 'gsl_'; then die "libhetsim-policies.so names a GSL symbol"; fi
  other=$(nm -D --defined-only "$so" | awk '$3 !~ /^hs_/ {print $3}' | head -3 | tr '\n' ' ')
  [ -z "$other" ] || die "libhetsim-policies.so exports more than hs_*: $other"
  nm -D --defined-only "$so" | grep -q ' hs_controller_save$' || die "hs_controller_save not exported"
  if nm "$prefix/$libdir/libhetsim-policies.a" 2>/dev/null | grep -q -i ' U gsl_'; then
    die "libhetsim-policies.a needs a GSL symbol"
  fi
  # relocatable: a copy of the prefix elsewhere runs the default scenario
  # (found beside the program, with its profiles) from any working folder
  moved="$prefix-moved"
  rm -rf "$moved" && cp -a "$prefix" "$moved"
  mv "$prefix/share" "$prefix/share.hidden"   # only the copy's data can be found
  rc=0
  (cd "$moved/share" && "$moved/bin/hetsim" run --set rounds=1 --out "$moved/run" --quiet) || rc=$?
  mv "$prefix/share.hidden" "$prefix/share"
  [ "$rc" = 0 ] || die "the moved install cannot run its default scenario"
  [ -s "$moved/run/summary.json" ] || die "the moved install wrote no summary.json"
  PKG_CONFIG_PATH="$moved/$libdir/pkgconfig" pkg-config --cflags hetsim-policies | grep -q -F "$moved" \
    || die "the moved .pc file does not point into the moved prefix"
  rm -rf "$moved"
  echo "installed into $prefix; NEEDED: $needed"
  ;;
pkgconfig)
  prefix=$1 libdir=$2 src=$3 work=$4; shift 4
  rm -rf "$work" && mkdir -p "$work"
  PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
  export PKG_CONFIG_PATH
  flags=$(pkg-config --cflags --libs hetsim-policies) || die "pkg-config does not know hetsim-policies"
  case $flags in *gsl*) die "pkg-config flags name GSL: $flags";; esac
  # shellcheck disable=SC2086
  cc "$@" -o "$work/trainer" "$src/tests/install/trainer.c" $flags || die "the trainer does not link"
  out=$(LD_LIBRARY_PATH="$prefix/$libdir" "$work/trainer") || die "the trainer failed"
  [ "$out" = "$want" ] || die "trainer printed '$out', expected '$want'"
  if LD_LIBRARY_PATH="$prefix/$libdir" ldd "$work/trainer" | grep -q gsl; then
    die "the trainer loads GSL"
  fi
  LD_LIBRARY_PATH="$prefix/$libdir" ldd "$work/trainer" | grep -q "$prefix" \
    || die "the trainer does not load the installed libhetsim-policies.so"
  # the bridge, built from the installed example source alone
  # shellcheck disable=SC2086
  cc "$@" -o "$work/bridge" "$prefix/share/hetsim/examples/bridge.c" $flags \
    || die "the installed bridge.c does not build against the prefix"
  out2=$(printf '1.0 5 100 2.0 6 100 4.0 9 100\nbad\n' | LD_LIBRARY_PATH="$prefix/$libdir" \
    "$work/bridge" --policy time-only --participants 3 --budget 300 2>/dev/null) && rc=0 || rc=$?
  [ "$rc" = 2 ] || die "bridge: exit status $rc after a bad line, expected 2"
  want2=$(printf '100 100 100\n171 86 43\nerror: stdin: line 2: participant 0: time_s: "bad" is not a number')
  [ "$out2" = "$want2" ] || die "bridge printed '$out2'"
  echo "pkg-config: $flags -> $out; bridge.c builds and answers"
  ;;
cmake)
  prefix=$1 libdir=$2 src=$3 work=$4; shift 4
  rm -rf "$work"
  cmake -S "$src/tests/install" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="$*" -DCMAKE_EXE_LINKER_FLAGS="$*" >"$work.log" 2>&1 \
    || { cat "$work.log" >&2; die "find_package(hetsim) failed"; }
  cmake --build "$work" >>"$work.log" 2>&1 || { cat "$work.log" >&2; die "the consumer does not build"; }
  for t in trainer_shared trainer_static; do
    out=$("$work/$t") || die "$t failed"
    [ "$out" = "$want" ] || die "$t printed '$out', expected '$want'"
    if ldd "$work/$t" | grep -q gsl; then die "$t loads GSL"; fi
  done
  ldd "$work/trainer_static" | grep -q libhetsim && die "trainer_static loads a shared hetsim library"
  echo "find_package(hetsim): trainer_shared, trainer_static -> $out"
  ;;
*) die "unknown mode $mode";;
esac
