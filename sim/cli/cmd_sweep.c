/* cmd_sweep.c: `hetsim sweep` (and, on the MPI transport, the same command
 * in `hetsim-mpi`): parse the grid, validate every point, run what the results
 * file lacks on -j threads (and on every rank of the transport), append each
 * row as it finishes, then sort the file and write the per-point aggregates.
 * The options it shares with optimize are cli_study_opt's (cli_opts.h).
 *
 * The CLI owns the process-wide things the library must not: the wall clock
 * (progress line, fsync pacing; neither touches the results), the terminal
 * check, and the test hook HETSIM_SWEEP_KILL_AFTER=N (SIGKILL this process
 * after N appended rows: a real kill at a known place, for the resume test).
 * fsync: at most once a second plus at the end; a killed process loses no
 * appended row anyway, fsync only bounds what a power cut can take.
 *
 * Before a long run (estimate above WARN_S), one line on stderr with the
 * estimated time (not with --quiet): the first row to run is simulated once
 * with rounds=1 (a sweep of that one point and seed, the same code path), its
 * wall time times the row's rounds times the rows to run, over the threads
 * and ranks. It only reads the clock: the rows and their bytes are the same
 * with or without it. Rejected: timing the first real row (for the long
 * sweeps that need the warning, that row alone can take a minute); a cost
 * model from devices x rounds (one constant per machine and regime to keep
 * true). */
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_opts.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "sim/hs_metrics.h"
#include "traces/hs_outfile.h"
#include "sim/hs_sweep.h"
#include "progress.h"
#include "sim/hs_transport.h"

static void sweep_usage(FILE *out, const char *prog) {
  fprintf(out,
          "usage: %s SCENARIO --grid KEY=VALUES [--grid ...] [--policies a,b]\n"
          "       [--seeds LIST] [--set key=value ...] [-j N] --out RESULTS.csv [--resume]\n"
          "       [--progress SECONDS] [--quiet]\n"
          "\n"
          "Run SCENARIO at every point of the Cartesian product of the grids, once per\n"
          "seed. Each point is the scenario with the grid values applied as --set\n"
          "overrides (validated like --set, all points BEFORE anything runs).\n"
          "\n"
          "  --grid KEY=v1,v2,...       a list of values (JSON or bare strings)\n"
          "  --grid KEY=start:stop:step a range; stop included; value i = start + i*step\n"
          "  --policies a,b             a grid over policy.kind (each resets the policy to\n"
          "                             its defaults). Sweeping policy.w_e needs the kind\n"
          "                             adaptive: --policies adaptive, or a scenario whose\n"
          "                             policy.kind is adaptive (presets fix w_e)\n"
          "  --seeds LIST               1-10, 1,2,5 or 1-3,7 (default: the scenario's seed)\n"
          "  --set key=value            override a key at every point\n"
          "  -j N, --jobs N             run N points at a time on threads (default 1)\n"
          "  --out RESULTS.csv          one row per (point, seed), appended as rows finish\n"
          "  --resume                   continue RESULTS.csv: run only the missing rows\n"
          "  --progress SECONDS         when stderr is not a terminal: a progress line\n"
          "                             every SECONDS (default 10; 0: none)\n"
          "  --quiet                    print nothing on success\n"
          "\n"
          "Writes RESULTS.csv: a line '# hetsim sweep v1 | ...' recording the sweep, then\n"
          "  point,<grid keys>,seed,makespan_s,energy_j,energy_compute_j,energy_comm_j,\n"
          "  energy_idle_j,compute_cv,wait_fraction\n"
          "and, when every row is there, sorts it by point and seed and writes\n"
          "RESULTS.points.csv: per point, <metric>_{mean,median,min,max,sd,ci95_lo,\n"
          "ci95_hi} over the seeds (sd with n - 1; the 95 %% Student-t interval of the\n"
          "mean; nan with one seed)\n"
          "and pareto_front (1: no other point has a mean makespan and a mean energy\n"
          "both lower or equal, one of them strictly; equal points are both on it).\n"
          "The final files are the same bytes whatever -j, MPI ranks or interruptions.\n"
          "Killed? Run the same command with --resume. A progress line goes to stderr:\n"
          "redrawn on a terminal; otherwise (a Slurm or CI log) one line every\n"
          "--progress SECONDS (default 10; 0: none) with done/total, rate and ETA.\n"
          "Progress never changes RESULTS or RESULTS.points.csv.\n"
          "\n"
          "Across machines: hetsim-mpi sweep ... under mpirun or srun (see README).\n"
          "\n"
          "exit status: 0 done; 1 cannot read or write, or not enough memory; 2 bad input\n"
          "(one line: the spec or file, the field, the reason)\n"
          "\n"
          "example:\n"
          "  hetsim sweep scenarios/testbed-mnist-pma.json --policies adaptive \\\n"
          "      --grid policy.w_e=0:1:0.25 --grid policy.deadband=0,0.05 --seeds 1-3 \\\n"
          "      -j 2 --out we.csv\n",
          prog);
}

typedef struct sweep_args {
  cli_study_opts c; /* scenario, --set, --out, -j, --resume, --quiet, --help */
  const char **grids;
  size_t ngrids;
  const char *policies, *seeds;
  double progress_s; /* --progress SECONDS (< 0: the default; 0: off) */
} sweep_args;

enum { OPT_GRID = 256, OPT_POLICIES, OPT_SEEDS, OPT_PROGRESS };

static const struct option sweep_longopts[] = {
    CLI_STUDY_LONGOPTS,
    {"grid", required_argument, NULL, OPT_GRID},
    {"policies", required_argument, NULL, OPT_POLICIES},
    {"policy", required_argument, NULL, OPT_POLICIES},
    {"seeds", required_argument, NULL, OPT_SEEDS},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {NULL, 0, NULL, 0}};

/* 0, or HS_EXIT_BADINPUT with the reason in why (the caller prints it). */
static int parse_args(sweep_args *o, const char *prog, int argc, char **argv, char *why,
                      size_t cap) {
  cli_study_init(&o->c, prog, "the results file", "results.csv", argc);
  o->grids = hs_calloc((size_t)argc + 1, sizeof *o->grids);
  o->progress_s = -1;
#define BAD(...)                          \
  do {                                    \
    snprintf(why, cap, __VA_ARGS__);      \
    return HS_EXIT_BADINPUT;              \
  } while (0)
  cli_parser p;
  cli_parser_init(&p, argc, argv, "hqj:", sweep_longopts);
  for (int c; (c = cli_next(&p)) != CLI_END;) {
    char *v = p.arg;
    int taken = cli_study_opt(&o->c, &p, c, why, cap);
    if (taken == HS_EXIT_BADINPUT) return taken;
    if (o->c.help) return 0;
    if (taken) continue;
    switch (c) {
    case OPT_GRID:
      if (!v || !*v) BAD("--grid: expected KEY=v1,v2 or KEY=start:stop:step");
      o->grids[o->ngrids++] = v;
      break;
    case OPT_POLICIES:
      o->policies = v;
      if (!o->policies || !*o->policies) BAD("--policies: expected a,b,... (policy names)");
      break;
    case OPT_SEEDS:
      o->seeds = v;
      if (!o->seeds || !*o->seeds) BAD("--seeds: expected a list like 1-10 or 1,2,5");
      break;
    default: { /* OPT_PROGRESS */
      char *end = NULL;
      double x = v && *v ? strtod(v, &end) : -1;
      if (!v || !*v || *end || !(x >= 0) || x > 1e9)
        BAD("--progress: expected a number >= 0 (got \"%.40s\")", v ? v : "");
      o->progress_s = x;
      break;
    }
    }
  }
#undef BAD
  int rc = cli_study_need_scenario(&o->c, why, cap);
  return rc ? rc : cli_study_need_out(&o->c, why, cap);
}

/* --- appending rows as they finish ----------------------------------------- */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct sink {
  const hs_sweep *sw;
  hs_sweep_file *file;
  size_t done, total, run_now, nrun;
  double t0, last_sync, last_progress;
  long kill_after;
  bool progress;
  cli_progress log; /* stderr not a terminal: a line every --progress seconds */
  hs_status st;
  hs_error err;
  char *buf;
  size_t cap;
} sink;

static void progress_line(sink *k, bool final) {
  double t = now_s();
  if (!final && t - k->last_progress < 0.2) return;
  k->last_progress = t;
  double el = t - k->t0, rate = el > 0 ? (double)k->nrun / el : 0;
  double left = rate > 0 ? (double)(k->run_now - k->nrun) / rate : 0;
  fprintf(stderr, "\rsweep: %zu/%zu rows  %.1f rows/s  %d:%02d left   ", k->done, k->total, rate,
          (int)(left / 60), (int)left % 60);
  if (final) fputc('\n', stderr);
  fflush(stderr);
}

#define WARN_S 60.0 /* estimated seconds above which a sweep says how long it will take */

/* Estimated wall seconds of one run of row `row`: that point and seed with
 * rounds=1, timed, times the point's rounds. NaN when it cannot tell (rounds
 * on the grid, a probe that fails): then nothing is printed. */
static double run_cost_s(const sweep_args *o, const hs_sweep *sw, size_t row) {
  size_t na = hs_sweep_naxes(sw), ns = hs_sweep_nseeds(sw), point = row / ns;
  hs_override *ovr = hs_calloc(o->c.nset + na + 1, sizeof *ovr);
  char **grids = hs_calloc(na + 1, sizeof *grids);
  memcpy(ovr, o->c.set, o->c.nset * sizeof *ovr);
  size_t n = o->c.nset;
  bool rounds_grid = false;
  for (size_t a = 0; a < na; a++) {
    const char *key = hs_sweep_axis_at(sw, a)->key, *v = hs_sweep_value(sw, point, a);
    rounds_grid |= !strcmp(key, "rounds");
    ovr[n++] = (hs_override){key, v};
    size_t len = strlen(key) + strlen(v) + 2;
    grids[a] = hs_malloc(len);
    snprintf(grids[a], len, "%s=%s", key, v);
  }
  double cost = NAN;
  hs_error err = {0};
  hs_scenario *sc = rounds_grid ? NULL : hs_scenario_load(o->c.scenario, ovr, n, &err);
  if (sc) {
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)hs_sweep_seed_at(sw, row % ns));
    ovr[o->c.nset] = (hs_override){"rounds", "1"};
    hs_sweep_spec spec = {o->c.scenario, ovr, o->c.nset + 1, NULL, (const char *const *)grids, na, seed};
    hs_sweep *probe = hs_sweep_create(&spec, &err);
    hs_sweep_result r;
    double t0 = now_s();
    if (probe && hs_sweep_run_row(probe, 0, &r, &err) == HS_OK) cost = (now_s() - t0) * sc->rounds;
    hs_sweep_destroy(probe);
    hs_scenario_destroy(sc);
  }
  for (size_t a = 0; a < na; a++) hs_free(grids[a]);
  hs_free(grids);
  hs_free(ovr);
  return cost;
}

static void warn_if_long(const sweep_args *o, const hs_sweep *sw, const size_t *todo, size_t ntodo,
                         int ranks) {
  if (o->c.quiet || ntodo == 0) return;
  double per = run_cost_s(o, sw, todo[0]);
  unsigned lanes = o->c.jobs * (unsigned)(ranks > 0 ? ranks : 1);
  double total = per * (double)ntodo / (double)(lanes < ntodo ? lanes : ntodo);
  if (!(total > WARN_S)) return;
  char when[32];
  if (total < 5400) snprintf(when, sizeof when, "%.0f min", total / 60);
  else snprintf(when, sizeof when, "%.1f h", total / 3600);
  fprintf(stderr,
          "hetsim sweep: %zu row%s to run, about %s on %u thread%s (one run about %.3g s); "
          "--quiet hides this line\n",
          ntodo, ntodo == 1 ? "" : "s", when, lanes, lanes == 1 ? "" : "s", per);
  fflush(stderr);
}

static bool on_row(size_t i, const hs_sweep_result *r, void *ud) {
  (void)i;
  sink *k = ud;
  if (k->st != HS_OK) return false;
  size_t n = hs_sweep_format_row(k->sw, r, k->buf, k->cap);
  if (n >= k->cap) {
    k->cap = 2 * n + 1;
    k->buf = hs_realloc(k->buf, k->cap);
    hs_sweep_format_row(k->sw, r, k->buf, k->cap);
  }
  k->st = hs_sweep_file_append(k->file, k->buf, n, &k->err);
  if (k->st != HS_OK) return false; /* rows that cannot be written are not worth running */
  k->done++;
  k->nrun++;
  if (k->kill_after > 0 && (long)k->nrun >= k->kill_after) raise(SIGKILL);
  double t = now_s();
  if (k->st == HS_OK && t - k->last_sync >= 1.0) {
    k->st = hs_sweep_file_sync(k->file, &k->err);
    k->last_sync = t;
  }
  if (k->progress) progress_line(k, false);
  cli_progress_tick(&k->log, k->done);
  return k->st == HS_OK;
}

static void print_points(const hs_sweep *sw, const hs_sweep_point *pt) {
  size_t np = hs_sweep_npoints(sw), na = hs_sweep_naxes(sw);
  bool all = np <= 60;
  if (!all) printf("(%zu points; the Pareto front only)\n", np);
  printf("%6s", "point");
  for (size_t a = 0; a < na; a++) printf("  %-*s", 16, hs_sweep_axis_at(sw, a)->key);
  printf("  %15s  %13s  %13s  %s\n", "makespan_s_mean", "energy_j_mean", "energy_j_max",
         "pareto_front");
  for (size_t p = 0; p < np; p++) {
    if (!all && !pt[p].pareto) continue;
    printf("%6zu", p);
    for (size_t a = 0; a < na; a++) printf("  %-16s", hs_sweep_value(sw, p, a));
    const hs_sweep_stat *mk = &pt[p].m[hs_metric_sweep_index("makespan_s")];
    const hs_sweep_stat *en = &pt[p].m[hs_metric_sweep_index("energy_j")];
    printf("  %15.3f  %13.1f  %13.1f  %s\n", mk->mean, en->mean, en->max, pt[p].pareto ? "*" : "");
  }
}

int hs_cmd_sweep_on(const hs_transport *t, int argc, char **argv) {
  int rank = t->rank();
  bool root = rank == 0;
  char prog[32];
  snprintf(prog, sizeof prog, "%s sweep", t->prog);
  sweep_args o = {0};
  char why[HS_ERROR_MSG_MAX + 64] = "";
  int rc = parse_args(&o, prog, argc, argv, why, sizeof why);
  hs_sweep *sw = NULL;
  hs_sweep_file *f = NULL;
  bool *done = NULL;
  size_t *todo = NULL;
  sink k = {0};
  hs_error err = {0};
  if (!rc && !o.c.help) {
    hs_sweep_spec spec = {o.c.scenario, o.c.set, o.c.nset, o.policies, o.grids, o.ngrids, o.seeds};
    sw = hs_sweep_create(&spec, &err);
    if (!sw) {
      /* 1 for a point too large for memory (issue 16 defect 4), else bad input */
      rc = err.status == HS_ENOMEM ? cli_exit_code(err.status) : HS_EXIT_BADINPUT;
      snprintf(why, sizeof why, "%s", err.msg);
    }
  }
  /* All ranks must have validated before rank 0 creates RESULTS. */
  rc = cli_ranks_agree(t, rc, why, sizeof why);
  if (rc) {
    if (why[0]) cli_bad_input("sweep", why);
    goto out;
  }
  if (o.c.help) {
    if (root) sweep_usage(stdout, prog);
    goto out;
  }
  size_t nrows = hs_sweep_nrows(sw), ntodo = 0;
  done = hs_calloc(nrows ? nrows : 1, sizeof *done);
  todo = hs_calloc(nrows ? nrows : 1, sizeof *todo);
  if (root) {
    const char *slash = strrchr(o.c.out, '/');
    if (slash && slash != o.c.out) { /* --out runs/we.csv: make runs/ */
      char *dir = hs_malloc((size_t)(slash - o.c.out) + 1);
      memcpy(dir, o.c.out, (size_t)(slash - o.c.out));
      dir[slash - o.c.out] = '\0';
      /* Its own reason (a read-only parent), not open's "No such file". */
      if (hs_mkdir_p(dir, &err) != HS_OK) rc = cli_fail("sweep", &err);
      hs_free(dir);
    }
    if (!rc) {
      f = hs_sweep_file_open(sw, o.c.out, o.c.resume, done, &err);
      if (!f) rc = cli_fail("sweep", &err);
    }
    for (size_t r = 0; r < nrows; r++)
      if (!done[r]) todo[ntodo++] = r;
  }
  rc = hs_transport_bcast_int(t, rc, 0);
  if (rc) goto out;
  const char *kill = getenv("HETSIM_SWEEP_KILL_AFTER");
  k = (sink){.sw = sw, .file = f, .done = nrows - ntodo, .total = nrows, .run_now = ntodo,
             .t0 = now_s(), .kill_after = kill ? atol(kill) : 0,
             .progress = root && !o.c.quiet && isatty(STDERR_FILENO), .st = HS_OK};
  k.last_sync = k.t0;
  /* Only the root reports; a terminal gets the redrawn line above instead.
   * --quiet silences the default, not an explicit --progress. */
  double every = !root || isatty(STDERR_FILENO) || (o.c.quiet && o.progress_s < 0) ? 0 : o.progress_s;
  cli_progress_init(&k.log, "sweep", "rows", nrows, nrows - ntodo, every, false);
  if (root) warn_if_long(&o, sw, todo, ntodo, t->size());
  hs_status st;
  st = hs_sweep_run_ranks(t, sw, todo, ntodo, o.c.jobs, on_row, &k, &err);
  if (k.progress && ntodo) progress_line(&k, true);
  hs_error cerr = {0};
  hs_status cst = hs_sweep_file_close(f, &cerr);
  f = NULL;
  if (st != HS_OK) {
    /* On ranks every rank returns the status; the rank whose row failed says why. */
    if (err.msg[0]) fprintf(stderr, "hetsim sweep: %s\n", err.msg);
    rc = cli_exit_code(err.status);
    goto out;
  }
  if (!root) goto out;
  if (k.st != HS_OK || cst != HS_OK) {
    fprintf(stderr, "hetsim sweep: %s\n", k.st != HS_OK ? k.err.msg : cerr.msg);
    rc = 1;
    goto out;
  }
  hs_sweep_point *pt = NULL;
  if (hs_sweep_finalize(sw, o.c.out, &pt, &err) != HS_OK) {
    fprintf(stderr, "hetsim sweep: %s\n", err.msg);
    rc = 1;
    goto out;
  }
  if (!o.c.quiet) {
    char *pp = hs_sweep_points_path(o.c.out);
    size_t np = hs_sweep_npoints(sw), ns = hs_sweep_nseeds(sw);
    printf("sweep %s: %zu point%s x %zu seed%s = %zu row%s (%zu run now, %zu already there)\n",
           o.c.scenario, np, np == 1 ? "" : "s", ns, ns == 1 ? "" : "s", nrows,
           nrows == 1 ? "" : "s", ntodo, nrows - ntodo);
    printf("rows    %s\npoints  %s\n", o.c.out, pp);
    print_points(sw, pt);
    hs_free(pp);
  }
  hs_free(pt);
out:
  if (f) hs_sweep_file_close(f, NULL);
  hs_free(k.buf);
  hs_free(done);
  hs_free(todo);
  hs_sweep_destroy(sw);
  hs_free(o.grids);
  cli_study_fini(&o.c);
  return rc;
}

int hs_cmd_sweep(int argc, char **argv) {
  return hs_cmd_sweep_on(hs_transport_local(), argc, argv);
}
