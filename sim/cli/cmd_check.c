/* cmd_check.c: `hetsim check SCENARIO RUN_DIR`: does the simulator still
 * predict a real cluster run? (sim/doc/check.md)
 *
 * Reads the run's records (traces' hs_cluster_run: rounds.csv,
 * allocations.csv, server.csv, run.json), matches its boards to the
 * scenario's expanded devices by name, simulates the scenario with the run's
 * own allocation in every round (hs_run_opts.schedule: the controller's
 * decisions are set aside) and the compute noise off unless --noise, and
 * collects each device's simulated round through the run's observer
 * (hs_run_opts.on_device_round). The comparison, the verdict and the files
 * are traces' hs_check; this file matches, runs and prints. Files first,
 * then stdout, so a write that fails leaves no report claiming success.
 * O(rounds x devices) besides the run. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_opts.h"
#include "cli_suggest.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "sim/hs_run.h"
#include "sim/hs_scenario.h"
#include "traces/hs_check.h"
#include "traces/hs_cluster_run.h"

#define CHECK_EXIT_OUTSIDE 3 /* as run --expect: the figures are outside the tolerance */

static void usage(FILE *out) {
  fputs(
      "usage: hetsim check SCENARIO RUN_DIR [--tolerance F] [--tolerance-round F]\n"
      "                    [--csv FILE] [--json FILE] [--seed N] [--set key=value ...]\n"
      "                    [--noise] [--stated-energy] [--quiet]\n"
      "\n"
      "Holds the simulator against a real cluster run: RUN_DIR is the --out folder of\n"
      "hetsim-probe box/serve (rounds.csv, allocations.csv, server.csv, run.json). The\n"
      "scenario is simulated with the run's own allocation in every round (the\n"
      "controller's decisions are set aside, so a difference is the cost model's, not\n"
      "the policy's), and prediction and measurement are printed side by side: the\n"
      "total, each round, each device, with error = predicted / measured - 1.\n"
      "\n"
      "  makespan  round open to the next open: round_s + server_s (server.csv);\n"
      "            total: run.json's makespan_s\n"
      "  compute   train_s                 comm  download_s + upload_s\n"
      "  wait      wait_s + server_s (upload received to the next round's open)\n"
      "  energy    training energy, only where the records say `measured`\n"
      "  setup_s, pack_s and start_s are the runtime's own steps: in the makespan\n"
      "  only, shown as other_meas_s (a simulated round has none).\n"
      "The records' devices must be exactly the scenario's expanded devices (by name)\n"
      "and their rounds the scenario's rounds (--set rounds=N to match).\n"
      "\n"
      "options:\n"
      "  --tolerance F        fail (exit 3) when |total makespan error| > F (0.05 = 5 %)\n"
      "  --tolerance-round F  fail also when some round's |makespan error| > F\n"
      "                       (per-device figures are shown, never judged: a loopback\n"
      "                       transfer of a millisecond has no stable relative error)\n"
      "  --csv FILE           one row per round x device, per round, per device, total\n"
      "                       (columns: sim/doc/reference/columns.md, check.csv)\n"
      "  --json FILE          totals, per round, per device, tolerances and verdict\n"
      "  --noise              draw compute times with the scenario's noise (tau_cv) and\n"
      "                       seed; default off: the expectation, overhead_s + n tau_s,\n"
      "                       so the check does not depend on one random draw\n"
      "  --seed N             the master seed (population spread; with --noise, draws)\n"
      "  --set key=value      override a scenario key (see hetsim validate --help)\n"
      "  --stated-energy      also compare `stated` energy (busy_w x train_s of the\n"
      "                       profile, not a measurement), labelled stated\n"
      "  --quiet              print only the verdict line\n"
      "\n"
      "exit status: 0 within the tolerances (or none given); 1 a file that cannot be\n"
      "read or written; 2 bad input (one line: file, row or field, reason); 3 outside\n"
      "a tolerance (the verdict line on stderr names the figure)\n"
      "\n"
      "example:\n"
      "  hetsim-probe box tests/cluster/smoke-2boards.json --out run --no-isolation\n"
      "  hetsim check tests/cluster/smoke-2boards.json run --tolerance 0.10 \\\n"
      "      --csv run/check.csv --json run/check.json\n",
      out);
}

static int bad(const char *msg) { return cli_bad_input("check", msg); }

/* A fraction >= 0. */
static int parse_fraction(const char *opt, const char *v, double *out) {
  char *end = NULL;
  double x = v && *v ? strtod(v, &end) : NAN;
  if (!v || !*v || *end || !isfinite(x) || x < 0) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected a fraction >= 0, e.g. 0.05 for 5 %% (got \"%.60s\")",
             opt, v ? v : "");
    return bad(msg);
  }
  *out = x;
  return 0;
}

/* What the run's observers collect, in the records' board order. */
typedef struct collect {
  size_t nboards;
  const size_t *board_of; /* scenario device -> board */
  double *compute_s, *comm_s, *wait_s, *train_j, *round_s;
} collect;

static void on_device(void *ud, const hs_run_device_round *d) {
  collect *c = ud;
  size_t k = (size_t)d->round * c->nboards + c->board_of[d->device];
  c->compute_s[k] = d->compute_s;
  c->comm_s[k] = d->comm_s;
  c->wait_s[k] = d->wait_s;
  c->train_j[k] = d->train_j;
}

static void on_round(void *ud, uint32_t round, double start_s, double end_s) {
  ((collect *)ud)->round_s[round] = end_s - start_s;
}

/* The records' boards are the scenario's devices: each board names one, and
 * each device has a board. board_of[i] for scenario device i; 0 or the exit
 * code after one line. */
static int match_devices(const hs_scenario *sc, const hs_cluster_run *run, size_t *board_of,
                         uint64_t *schedule) {
  char msg[HS_ERROR_MSG_MAX + 256];
  size_t n = sc->total_devices, miss = SIZE_MAX;
  for (size_t i = 0; i < n; i++) board_of[i] = SIZE_MAX;
  for (size_t b = 0; b < run->nboards; b++) {
    size_t i = hs_scenario_find_device(sc, run->boards[b]);
    if (i == SIZE_MAX && miss == SIZE_MAX) miss = b;
    if (i != SIZE_MAX) board_of[i] = b;
  }
  if (miss != SIZE_MAX) {
    /* the nearest of the scenario's devices that no board has claimed */
    const char **names = hs_calloc(n ? n : 1, sizeof *names);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (board_of[i] == SIZE_MAX) names[k++] = hs_scenario_device_name(sc, i);
    const char *near = hs_nearest(run->boards[miss], names, k);
    snprintf(msg, sizeof msg, "%s/rounds.csv: line %zu: device: no device \"%s\" in %s%s%s%s",
             run->dir, hs_cluster_run_row(run, 0, miss)->line, run->boards[miss], sc->path,
             near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
    hs_free(names);
    return bad(msg);
  }
  for (size_t i = 0; i < n; i++) {
    if (board_of[i] != SIZE_MAX) continue;
    snprintf(msg, sizeof msg,
             "%s/rounds.csv: device: no rows for device \"%s\" of %s (the records have %zu "
             "devices, the scenario %zu)",
             run->dir, hs_scenario_device_name(sc, i), sc->path, run->nboards, n);
    return bad(msg);
  }
  for (uint32_t r = 0; r < run->rounds; r++)
    for (size_t i = 0; i < n; i++)
      schedule[(size_t)r * n + i] = hs_cluster_run_row(run, r, board_of[i])->samples;
  return 0;
}

/* The three columns of a figure: predicted, measured, error (10 + 10 + 9). */
static void fig_cells(FILE *f, const hs_check_fig *g) {
  fprintf(f, " %10.5g %10.5g", g->pred, g->meas);
  if (isnan(g->err))
    fprintf(f, " %9s", "n/a");
  else
    fprintf(f, " %+8.2f%%", 100 * g->err);
}

static void worst_text(char *b, size_t cap, const hs_check *c, const hs_check_fig *g) {
  if (g->worst == SIZE_MAX)
    snprintf(b, cap, "-");
  else
    snprintf(b, cap, "%s %+.1f%%", c->run->boards[g->worst], 100 * g->worst_err);
}

static void print_report(FILE *f, const hs_scenario *sc, const hs_cluster_run *run,
                         const hs_check *c, bool noise) {
  static const char *const label[HS_CHECK_NFIG] = {"makespan_s", "compute_s", "comm_s", "wait_s",
                                                   "energy_j"};
  fprintf(f, "check %s (%s) against %s\n", sc->name, sc->path, run->dir);
  fprintf(f, "  %u rounds x %zu devices with the run's allocations; compute noise %s; seed %llu\n",
          run->rounds, run->nboards, noise ? "on (the scenario's tau_cv)" : "off (the expectation)",
          (unsigned long long)sc->seed);
  fprintf(f,
          "  error = predicted / measured - 1; compute, comm, wait and energy summed over "
          "devices\n\n");
  fprintf(f, "%-24s %10s %10s %9s  %s\n", "total", "predicted", "measured", "error",
          "worst device");
  for (int k = 0; k < HS_CHECK_NFIG; k++) {
    const hs_check_fig *g = &c->total.fig[k];
    if (k == HS_CHECK_ENERGY && c->total.energy == HS_CHECK_ENERGY_OFF) {
      fprintf(f, "  %-22s not compared (no row says measured%s)\n", label[k],
              c->stated_energy ? "" : "; --stated-energy compares stated rows");
      continue;
    }
    char lb[64], w[96] = "";
    snprintf(lb, sizeof lb, "%s%s%s%s", label[k], k == HS_CHECK_ENERGY ? " (" : "",
             k == HS_CHECK_ENERGY ? hs_check_energy_label(c->total.energy) : "",
             k == HS_CHECK_ENERGY ? ")" : "");
    fprintf(f, "  %-22s", lb);
    fig_cells(f, g);
    if (k != HS_CHECK_MAKESPAN) worst_text(w, sizeof w, c, g);
    fprintf(f, "%s%s\n", *w ? "  " : "", w);
  }
  fprintf(f, "  %-22s %10s %10.5g            (start + setup + pack: not simulated)\n",
          "other_meas_s", "-", c->total.other_meas_s);

  fprintf(f, "\n%-9s%32s  %-20s  %-20s  %s\n", "per round", "makespan_s: pred, meas, error",
          "worst compute", "worst comm", "worst wait");
  for (uint32_t r = 0; r < run->rounds; r++) {
    const hs_check_cell *x = &c->round[r];
    fprintf(f, "  %-7u", r);
    fig_cells(f, &x->fig[HS_CHECK_MAKESPAN]);
    for (int k = HS_CHECK_COMPUTE; k <= HS_CHECK_WAIT; k++) {
      char w[96];
      worst_text(w, sizeof w, c, &x->fig[k]);
      fprintf(f, k == HS_CHECK_WAIT ? "  %s" : "  %-20s", w);
    }
    fputc('\n', f);
  }

  int wide = 6;
  for (size_t b = 0; b < run->nboards; b++)
    if ((int)strlen(run->boards[b]) > wide) wide = (int)strlen(run->boards[b]);
  fprintf(f, "\n%-*s", wide + 4, "per device");
  for (int k = HS_CHECK_COMPUTE; k <= HS_CHECK_WAIT; k++) {
    char h[48];
    snprintf(h, sizeof h, "%s: pred, meas, error", label[k]);
    fprintf(f, " %31s", h);
  }
  fputs("  (all rounds)\n", f);
  for (size_t b = 0; b < run->nboards; b++) {
    const hs_check_cell *x = &c->board[b];
    bool worst = false;
    for (int k = HS_CHECK_COMPUTE; k < HS_CHECK_NFIG; k++) worst |= c->total.fig[k].worst == b;
    fprintf(f, "  %-*s%s", wide, run->boards[b], worst ? " *" : "  ");
    for (int k = HS_CHECK_COMPUTE; k <= HS_CHECK_WAIT; k++) fig_cells(f, &x->fig[k]);
    fputc('\n', f);
  }
  fprintf(f, "  (* the worst device of a figure of the total)\n");
}

enum { O_TOL = 256, O_TOL_ROUND, O_CSV, O_JSON, O_SEED, O_SET, O_NOISE, O_STATED };

int hs_cmd_check(int argc, char **argv) {
  static const struct option longopts[] = {
      {"help", no_argument, NULL, 'h'},
      {"tolerance", required_argument, NULL, O_TOL},
      {"tolerance-round", required_argument, NULL, O_TOL_ROUND},
      {"csv", required_argument, NULL, O_CSV},
      {"json", required_argument, NULL, O_JSON},
      {"seed", required_argument, NULL, O_SEED},
      {"set", required_argument, NULL, O_SET},
      {"noise", no_argument, NULL, O_NOISE},
      {"stated-energy", no_argument, NULL, O_STATED},
      {"quiet", no_argument, NULL, 'q'},
      {NULL, 0, NULL, 0}};
  const char *scn = NULL, *dir = NULL, *csv = NULL, *json = NULL;
  double tol = -1, tol_round = -1;
  bool noise = false, stated = false, quiet = false;
  char seed[24] = "", msg[HS_ERROR_MSG_MAX + 128];
  hs_override *ovr = hs_calloc((size_t)argc + 1, sizeof *ovr);
  size_t novr = 0;
  int rc = 0;
  hs_error err = {0};
  hs_cluster_run *run = NULL;
  hs_scenario *sc = NULL;
  hs_check *chk = NULL;
  size_t *board_of = NULL;
  uint64_t *schedule = NULL;
  collect col = {0};
  char *buf = NULL;
  size_t buflen = 0;
  FILE *mem = NULL;

  cli_parser p;
  cli_parser_init(&p, argc, argv, "hq", longopts);
  for (int c; (c = cli_next(&p)) != CLI_END;) {
    switch (c) {
      case 'h':
        usage(stdout);
        goto done;
      case 'q':
        quiet = true;
        break;
      case O_NOISE:
        noise = true;
        break;
      case O_STATED:
        stated = true;
        break;
      case O_TOL:
        if ((rc = parse_fraction("--tolerance", p.arg, &tol))) goto done;
        break;
      case O_TOL_ROUND:
        if ((rc = parse_fraction("--tolerance-round", p.arg, &tol_round))) goto done;
        break;
      case O_CSV:
      case O_JSON:
        if (!p.arg || !*p.arg) {
          rc = bad(c == O_CSV ? "--csv: expected a file name" : "--json: expected a file name");
          goto done;
        }
        if (c == O_CSV)
          csv = p.arg;
        else
          json = p.arg;
        break;
      case O_SEED:
        if ((rc = cli_seed_arg("check", p.arg, seed))) goto done;
        ovr[novr++] = (hs_override){"seed", seed};
        break;
      case O_SET:
        if (!p.arg) {
          rc = bad("--set: expected key=value (e.g. --set rounds=3)");
          goto done;
        }
        if (hs_override_parse(p.arg, &ovr[novr], &err) != HS_OK) {
          rc = bad(err.msg);
          goto done;
        }
        novr++;
        break;
      case CLI_OPERAND:
        if (!scn)
          scn = p.arg;
        else if (!dir)
          dir = p.arg;
        else {
          snprintf(msg, sizeof msg,
                   "%.200s: one scenario and one run folder only (see hetsim check --help)", p.arg);
          rc = bad(msg);
          goto done;
        }
        break;
      default: {
        const char *near = cli_nearest_option(p.text, longopts);
        if (near)
          snprintf(msg, sizeof msg,
                   "%s: unknown option (did you mean \"--%s\"? see hetsim check --help)", p.text,
                   near);
        else
          snprintf(msg, sizeof msg, "%s: unknown option (see hetsim check --help)", p.text);
        rc = bad(msg);
        goto done;
      }
    }
  }
  if (!scn || !dir) {
    rc = bad(!scn ? "missing SCENARIO and RUN_DIR (see hetsim check --help)"
                  : "missing RUN_DIR, the records' folder (see hetsim check --help)");
    goto done;
  }

  if (!(sc = hs_scenario_load(scn, ovr, novr, &err))) {
    rc = cli_fail("check", &err);
    goto done;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(msg, sizeof msg,
             "%.300s: not a folder (expected a real run's records: the --out folder of "
             "hetsim-probe box or serve)",
             dir);
    rc = bad(msg);
    goto done;
  }
  if (!(run = hs_cluster_run_read(dir, &err))) {
    rc = cli_fail("check", &err);
    goto done;
  }
  if (sc->rounds != run->rounds) {
    snprintf(msg, sizeof msg,
             "%s/rounds.csv: round: %u rounds recorded, %s runs %u (rounds: --set rounds=%u "
             "to match)",
             dir, run->rounds, sc->path, sc->rounds, run->rounds);
    rc = bad(msg);
    goto done;
  }
  size_t n = sc->total_devices;
  board_of = hs_calloc(n ? n : 1, sizeof *board_of);
  size_t slots = (size_t)run->rounds * n;
  schedule = hs_calloc(slots > 0 ? slots : 1, sizeof *schedule);
  if ((rc = match_devices(sc, run, board_of, schedule))) goto done;

  size_t cells = (size_t)run->rounds * run->nboards;
  col = (collect){run->nboards,
                  board_of,
                  hs_calloc(cells, sizeof(double)),
                  hs_calloc(cells, sizeof(double)),
                  hs_calloc(cells, sizeof(double)),
                  hs_calloc(cells, sizeof(double)),
                  hs_calloc(run->rounds, sizeof(double))};
  hs_run_opts ro = {.schedule = schedule,
                    .schedule_rounds = run->rounds,
                    .no_compute_noise = !noise,
                    .on_device_round = on_device,
                    .on_round_end = on_round,
                    .userdata = &col};
  hs_summary sum;
  if (hs_run(sc, &ro, &sum, &err) != HS_OK) {
    rc = cli_fail("check", &err);
    goto done;
  }
  hs_check_input in = {col.compute_s, col.comm_s,     col.wait_s, col.train_j,
                       col.round_s,   sum.makespan_s, stated};
  chk = hs_check_create(run, &in);
  hs_check_verdict v;
  hs_check_judge(chk, tol, tol_round, &v);
  hs_check_meta meta = {sc->path, dir, sc->seed, noise};
  if (csv && hs_check_write_csv(chk, csv, &err) != HS_OK) {
    rc = cli_fail("check", &err);
    goto done;
  }
  if (json && hs_check_write_json(chk, &meta, &v, json, &err) != HS_OK) {
    rc = cli_fail("check", &err);
    goto done;
  }
  if (!(mem = open_memstream(&buf, &buflen))) {
    fputs("hetsim check: cannot open an output buffer\n", stderr);
    rc = 1;
    goto done;
  }
  if (!quiet) {
    print_report(mem, sc, run, chk, noise);
    fputc('\n', mem);
  }
  if (v.pass) fprintf(mem, "%s\n", v.line);
  if ((rc = cli_close_buffer("check", &mem)) || (rc = cli_write_stdout("check", buf, buflen)))
    goto done;
  if (!v.pass) {
    fprintf(stderr, "%s\n", v.line);
    rc = CHECK_EXIT_OUTSIDE;
  }
done:
  if (mem) fclose(mem);
  free(buf);
  hs_free(col.compute_s);
  hs_free(col.comm_s);
  hs_free(col.wait_s);
  hs_free(col.train_j);
  hs_free(col.round_s);
  hs_check_destroy(chk);
  hs_free(schedule);
  hs_free(board_of);
  hs_scenario_destroy(sc);
  hs_cluster_run_destroy(run);
  hs_free(ovr);
  return rc;
}
