#!/bin/sh
# optimize_front.sh: the front file's tie rule on a search whose front is
# known to have ties. On tests/data/sweep/tiny.json, with which of three
# boards take part (vf2, n100, ryzen: count 0 or 1; rpi4 always) and
# policy.w_e varied, every point that leaves the rpi4 alone gives the same
# run whatever w_e (one device gets everything), so several points share one
# (makespan_s, energy_j), on the front (the least energy). Checked from
# FILE.csv with awk, independently of hetsim's code:
# - FILE.front.csv has one row per distinct (makespan_s, energy_j) on the
#   front; the row is the first point of FILE.csv with those objectives;
#   tied_points is the number of distinct points (value texts) of FILE.csv
#   with them; at least one row ties (the rpi4 alone);
# - the front rows are the non-dominated distinct objective vectors, all of them;
# - FILE.history.csv's last stage is the front (same vectors, same tied_points);
# - the same bytes for -j 1 and -j 2; one objective: one row, with its ties;
# - hetsim plot still draws the history (when gnuplot is there).
#
# usage: optimize_front.sh HETSIM SOURCE_DIR WORK_DIR
set -u
bin=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
. "$src/tests/sweep/optimize_same.sh" # fail, same
scn="$src/tests/data/sweep/tiny.json"
set -- "$scn" --vary policy.w_e=0:1 --vary 'devices[1].count=0:1:1' --vary 'devices[2].count=0:1:1' \
  --vary 'devices[3].count=0:1:1'
"$bin" optimize "$@" --objective pareto --budget 61 --weights 3 -j 1 --out j1.csv -q || fail "-j 1"
"$bin" optimize "$@" --objective pareto --budget 61 --weights 3 -j 2 --out j2.csv -q || fail "-j 2"
same j1.csv j2.csv "ties: -j 2 = -j 1"

# Columns: sub,index,4 keys,makespan_s (7),energy_j (8),...; the front adds tied_points last.
[ "$(sed -n 2p j1.csv),tied_points" = "$(sed -n 2p j1.front.csv)" ] ||
  fail "the front's header is not FILE.csv's plus tied_points"
# expect.csv: what the front must be, from FILE.csv alone.
awk -F, 'FNR <= 2 { next }
  { pt = $3 "," $4 "," $5 "," $6; ob = $7 "," $8 }
  !(pt in seen) { seen[pt] = 1; if (!(ob in first)) { first[ob] = $0; order[++n] = ob; mk[n] = $7 + 0; en[n] = $8 + 0 } tie[ob]++ }
  END { for (i = 1; i <= n; i++) { dom = 0
          for (j = 1; j <= n; j++) if (mk[j] <= mk[i] && en[j] <= en[i] && (mk[j] < mk[i] || en[j] < en[i])) dom = 1
          if (!dom) print first[order[i]] "," tie[order[i]] } }' j1.csv | sort >expect.csv
tail -n +3 j1.front.csv | sort >got.csv
cmp -s expect.csv got.csv || { diff expect.csv got.csv; fail "the front is not one row per distinct objective vector, first kept, with its tie count"; }
rows=$(wc -l <got.csv)
[ "$rows" -ge 2 ] || fail "expected a front of at least 2 rows (got $rows)"
awk -F, '$NF > 1 { t = 1 } END { exit !t }' got.csv || fail "no tie on a front known to have one"
alone=$(awk -F, '$4 == 0 && $5 == 0 && $6 == 0 { print $NF }' got.csv)
[ -n "$alone" ] && [ "$alone" -gt 1 ] || fail "the rpi4 alone should stand for several w_e (tied_points '$alone')"
echo "ok   front: $rows rows, one per distinct (makespan, energy), first kept; rpi4 alone ties $alone points"

# The history's 100 % stage: the same vectors and tie counts as the front.
[ "$(sed -n 2p j1.history.csv)" = "stage,evaluations,policy.w_e,devices[1].count,devices[2].count,devices[3].count,makespan_s,energy_j,tied_points" ] ||
  fail "history header"
awk -F, '$1 == 100 { print $3 "," $4 "," $5 "," $6 "," $9 }' j1.history.csv | sort >h.txt
awk -F, '{ print $3 "," $4 "," $5 "," $6 "," $NF }' got.csv | sort >f.txt
cmp -s h.txt f.txt || fail "history stage 100 is not the front"
echo "ok   history: stage 100 = the front, with tied_points"

# One objective: one row, the first point of least energy, with its ties.
"$bin" optimize "$@" --objective energy --budget 30 --out e.csv -q || fail "--objective energy"
awk -F, 'FNR <= 2 { next } { pt = $3 "," $4 "," $5 "," $6 }
  !(pt in seen) { seen[pt] = 1; v[++n] = $0; e[n] = $8 + 0 }
  END { b = 1; for (i = 2; i <= n; i++) if (e[i] < e[b]) b = i
        for (i = 1; i <= n; i++) if (e[i] == e[b]) t++
        print v[b] "," t }' e.csv >expect1.csv
tail -n +3 e.front.csv >got1.csv
cmp -s expect1.csv got1.csv || { diff expect1.csv got1.csv; fail "one objective: not the first best point with its tie count"; }
echo "ok   one objective: the first best point, tied_points $(awk -F, '{ print $NF }' got1.csv)"

# pareto_system (regime fl): the front is non-dominated in makespan_s and
# energy_system_j (columns found by name), which the history names; refused
# where no run reports whole-system energy.
"$bin" optimize "$@" --set regime.kind=fl --objective pareto_system --budget 61 --weights 3 \
  --out s.csv -q || fail "--objective pareto_system"
awk -F, 'FNR == 2 { for (i = 1; i <= NF; i++) { if ($i == "makespan_s") m = i; if ($i == "energy_system_j") e = i }; next }
  FNR <= 2 { next }
  { pt = $3 "," $4 "," $5 "," $6; ob = $m "," $e }
  !(pt in seen) { seen[pt] = 1; if (!(ob in first)) { first[ob] = $0; order[++n] = ob; mk[n] = $m + 0; en[n] = $e + 0 } tie[ob]++ }
  END { for (i = 1; i <= n; i++) { dom = 0
          for (j = 1; j <= n; j++) if (mk[j] <= mk[i] && en[j] <= en[i] && (mk[j] < mk[i] || en[j] < en[i])) dom = 1
          if (!dom) print first[order[i]] "," tie[order[i]] } }' s.csv | sort >expect_s.csv
tail -n +3 s.front.csv | sort >got_s.csv
cmp -s expect_s.csv got_s.csv || { diff expect_s.csv got_s.csv; fail "pareto_system: not the front in makespan_s and energy_system_j"; }
sed -n 2p s.history.csv | grep -q ',makespan_s,energy_system_j,tied_points$' || fail "pareto_system: history header"
"$bin" optimize "$@" --objective pareto_system --budget 61 --out bad.csv -q 2>err.txt
rc=$?
[ $rc -eq 2 ] && [ ! -e bad.csv ] && grep -q 'no metric energy_system_j' err.txt ||
  fail "pareto_system without regime fl: exit $rc, $(cat err.txt)"
echo "ok   pareto_system: $(($(wc -l <got_s.csv))) front rows in makespan_s and energy_system_j; refused without regime fl"

if command -v gnuplot >/dev/null 2>&1; then
  "$bin" plot s.csv --out splots -q || fail "hetsim plot of a pareto_system history"
  [ -s splots/front_history.png ] || fail "no front_history figure for pareto_system"
  "$bin" plot j1.csv --out plots -q || fail "hetsim plot of a front with ties"
  [ -s plots/front_history.png ] && [ -s plots/front_history.svg ] || fail "no front_history figure"
  echo "ok   front_history.png and .svg"
fi
