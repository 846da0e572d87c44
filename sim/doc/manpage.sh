#!/bin/sh
# manpage.sh: one manual page (man(7) source) from a program's own --help.
#
#   manpage.sh OUT PAGE VERSION SEEALSO PROGRAM [COMMAND]
#
# Runs `PROGRAM [COMMAND] --help` and writes OUT (through OUT.tmp and a
# rename): NAME (the command's line in `PROGRAM --help`, or the help's own
# first sentence), SYNOPSIS (the help's usage block), DESCRIPTION (the rest,
# laid out exactly as the help is: no filling, no hyphenation, so aligned
# option columns and example commands survive), EXIT STATUS and EXAMPLES
# (the help's "exit status:" and "example..." paragraphs), SEE ALSO
# (SEEALSO, comma-separated page names). Minus signs are written \- so that
# options copied from the rendered page are ASCII hyphens.
# Why not help2man: see sim/doc/building.md ("Manual pages").
# Exit 0 written; 1 the program failed or OUT cannot be written.
set -eu
out=$1 page=$2 version=$3 seealso=$4 prog=$5 cmd=${6:-}
help=$(if [ -n "$cmd" ]; then "$prog" "$cmd" --help; else "$prog" --help; fi) || {
  echo "manpage.sh: $prog $cmd --help failed" >&2; exit 1; }
desc=
if [ -n "$cmd" ]; then
  desc=$("$prog" --help | awk -v c="$cmd" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
fi
mkdir -p "$(dirname "$out")"
printf '%s\n' "$help" | awk -v page="$page" -v version="$version" -v desc="$desc" \
    -v seealso="$seealso" '
function esc(s) {
  gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
  if (s ~ /^[.\047]/) s = "\\&" s
  return s
}
function section(name) {
  if (innf) print ".fi"
  print ".SH " name; print ".nf"; innf = 1
}
{ line[NR] = $0 }
END {
  n = NR
  # the usage block: from the first line starting with "usage:" to a blank line
  u0 = 0
  for (i = 1; i <= n; i++) if (line[i] ~ /^usage:/) { u0 = i; break }
  u1 = u0
  if (u0) while (u1 < n && line[u1 + 1] != "") u1++
  if (desc == "") {
    if (line[1] ~ /^[A-Za-z0-9_-]+: / && line[1] !~ /^usage:/) { desc = line[1]; sub(/^[A-Za-z0-9_-]+: /, "", desc) }
    else for (i = u1 + 1; i <= n; i++) if (line[i] != "") { desc = line[i]; break }
    sub(/\.$/, "", desc)
  }
  up = toupper(page)
  print ".\\\" Generated from `" page " --help` by sim/doc/manpage.sh: edit the help, not this file."
  print ".TH " up " 1 \"\" \"hetsim " version "\" \"hetsim manual\""
  print ".nh"; print ".ad l"
  print ".SH NAME"; print esc(page) " \\- " esc(desc)
  if (u0) {
    print ".SH SYNOPSIS"; print ".nf"
    for (i = u0; i <= u1; i++) { s = line[i]; sub(/^usage: */, "", s); if (s != "") print esc(s) }
    print ".fi"
  }
  section("DESCRIPTION")
  for (i = 1; i <= n; i++) {
    if (u0 && i >= u0 && i <= u1) continue
    if (i == 1 && line[1] ~ /^[A-Za-z0-9_-]+: / && line[1] !~ /^usage:/) continue
    s = line[i]
    if (s ~ /^exit status:/) { section("EXIT STATUS"); sub(/^exit status: */, "", s); if (s == "") continue }
    else if (s ~ /^examples?( \(.*\))?:$/) {
      if (!inex) { section("EXAMPLES"); inex = 1 }
      s = s; sub(/^examples?:$/, "", s); if (s == "") continue
    }
    else if (s ~ /^[a-z][A-Za-z0-9 (),\/-]*:$/ && length(s) < 60) { print "\\fB" esc(s) "\\fR"; continue }
    print (s == "" ? "" : esc(s))
  }
  if (innf) print ".fi"
  if (seealso != "") {
    print ".SH SEE ALSO"
    m = split(seealso, a, ",")
    for (i = 1; i <= m; i++) printf "%s\\fB%s\\fR(1)", (i > 1 ? ",\n" : ""), esc(a[i])
    print ""
  }
}' > "$out.tmp" || { rm -f "$out.tmp"; echo "manpage.sh: cannot write $out" >&2; exit 1; }
mv "$out.tmp" "$out"
