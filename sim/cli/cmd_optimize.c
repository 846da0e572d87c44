/* cmd_optimize.c: `hetsim optimize`: an NLopt search (hs_optimize.h) whose
 * evaluations are one-point sweeps (hs_sweep_create + hs_sweep_run_row), so a
 * point is loaded, validated and run exactly as `hetsim sweep` would run it.
 *
 * Files (FILE from --out):
 *   FILE            every evaluation, appended as it finishes (one write(2) a
 *                   line, O_APPEND: a kill leaves whole lines, a torn last line
 *                   is cut by --resume), sorted by (sub, index) at the end.
 *                   Line 1 records the search; --resume refuses another.
 *                   Numbers with 17 significant digits: a resumed search
 *                   replays the very doubles NLopt saw.
 *   FILE.front.csv  the non-dominated evaluations (pareto: makespan_s and
 *                   energy_j minimised; pareto_system: makespan_s and
 *                   energy_system_j), or the best one (one objective):
 *                   FILE's columns plus tied_points. ONE ROW PER DISTINCT
 *                   OBJECTIVE VECTOR (hs_opt_front): points that differ only
 *                   in keys without effect (w_e with one board left) tie; the
 *                   first of them in FILE's order stands for them, tied_points
 *                   says how many distinct points it stands for. Rejected:
 *                   every tied point (1334 rows for 4 pairs on the MNIST
 *                   testbed); a tie broken by key values (needs an order).
 *   FILE.history.csv the front after 25, 50, 75 and 100 % of every
 *                   sub-problem's budget (stage,evaluations,<keys>,makespan_s,
 *                   energy_j or energy_system_j,tied_points): hetsim plot.
 * Validation before any run: every --vary key at both ends of its range (and
 * every value of a set) in one sweep, so a key that does not exist exits 2.
 * Test hook: HETSIM_OPTIMIZE_KILL_AFTER=N: killed after N appended lines.
 *
 * Under MPI (HS_SWEEP_MPI, in hetsim-mpi): every rank parses and validates
 * (the lowest failing rank alone says why, as `hetsim-mpi sweep` does); rank
 * 0 alone reads and writes the files and runs NLopt in batch mode
 * (hs_optimize.h, ranks x -j sub-problem threads); each batch (a point per
 * waiting sub-problem) is spread over the ranks by hs_opt_mpi_batch while
 * the others sit in hs_opt_mpi_serve (hs_optimize_mpi.h). Every rank exits
 * with rank 0's status. Why not every rank running NLopt in lockstep: resume
 * and files stay in one process (no shared file system needed), the other
 * ranks are stateless, NLopt's state never has to agree across nodes. The
 * "work queue across ranks" that once ruled MPI out is the batch: NLopt
 * proposes one point at a time, so a batch has at most one point per
 * sub-problem. Rejected: sub-problems sending points to idle ranks (a
 * scheduler and MPI_THREAD_MULTIPLE for batches no wider than the sums). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opts.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim/hs_metrics.h"
#include "sim/hs_optimize.h"
#include "traces/hs_outfile.h"
#include "sim/hs_sweep.h"
#ifdef HS_SWEEP_MPI
#include "sim/hs_optimize_mpi.h"
#include "sim/hs_sweep_mpi.h"
#define PROG "hetsim-mpi optimize"
int hs_cmd_optimize_mpi(int argc, char **argv); /* called by mpi_main.c */
#else
#define PROG "hetsim optimize"
#endif

#define CMD "optimize"

static void usage(FILE *out) {
  fprintf(out,
          "usage: " PROG " SCENARIO --vary KEY=RANGE|SET [--vary ...]\n"
          "       --objective makespan|energy|energy_system|time_to_target|pareto|pareto_system\n"
          "       [--budget N]\n"
          "       [--weights W] [--algorithm NAME] [--seed S] [--set key=value ...]\n"
          "       [-j N] --out FILE.csv [--resume] [--quiet]\n"
          "\n"
          "Search scenario keys with NLopt (default: DIRECT-L, deterministic).\n"
          "  --vary KEY=LO:HI        a real number in [LO, HI]\n"
          "  --vary KEY=LO:HI:STEP   LO, LO+STEP, ... (integers: STEP 1)\n"
          "  --vary KEY=a,b,c        one of the values (categorical)\n"
          "  --objective             makespan_s, energy_j, energy_system_j (regime fl),\n"
          "                          time_to_target_s (when the metric table has it)\n"
          "                          or pareto (makespan vs energy_j; pareto_system:\n"
          "                          makespan vs energy_system_j, regime fl;\n"
          "                          W weighted sums, each an NLopt run, and the\n"
          "                          non-dominated set of every evaluation)\n"
          "  --budget N              evaluations in all (default 60)\n"
          "  --weights W             weighted sums for pareto (default 5)\n"
          "  --algorithm NAME        an NLopt global derivative-free algorithm (GN_*)\n"
          "  --seed S                the scenario's seed at every point; also seeds\n"
          "                          stochastic algorithms\n"
#ifdef HS_SWEEP_MPI
          "  -j N                    evaluations on N threads per rank (same output for\n"
          "                          any N and any number of ranks)\n"
#else
          "  -j N                    sub-problems on N threads (same output for any N)\n"
#endif
          "  --out FILE.csv          every evaluation; FILE.front.csv, FILE.history.csv\n"
          "  --resume                continue FILE.csv after a kill: same bytes in the end\n"
          "\nFiles:\n"
          "  FILE.csv          every evaluation: sub,index,<keys>,<metrics> (pareto: sub 0\n"
          "                    is the box centre, 1..W the weighted sums)\n"
          "  FILE.front.csv    the front (pareto: non-dominated in makespan_s and energy_j)\n"
          "                    or the best point: FILE.csv's columns, then tied_points.\n"
          "                    One row per distinct value of the objectives: points with\n"
          "                    equal objectives tie (e.g. w_e does not matter when one\n"
          "                    board is left); the first of them in FILE.csv (lowest sub,\n"
          "                    then index) is the row, and tied_points counts the distinct\n"
          "                    points it stands for, itself included (1: no tie)\n"
          "  FILE.history.csv  the front after 25/50/75/100 %% of the budget\n"
          "                    (stage,evaluations,<keys>,makespan_s,energy_j,tied_points);\n"
          "                    hetsim plot FILE.csv draws it\n"
          "\nExample: which boards to include (count 0 excludes a board; keep one board\n"
          "fixed: a point with no device at all is refused before anything runs):\n"
          "  " PROG " S.json --vary policy.w_e=0:1 --vary 'devices[0].count=0:2:1' \\\n"
          "      --vary 'devices[2].count=0:1:1' --objective pareto --budget 61 --out opt.csv\n"
#ifdef HS_SWEEP_MPI
          "\nUnder mpirun or srun: rank 0 runs NLopt and alone writes the files; the\n"
          "points the weighted sums propose together are spread over the ranks. One\n"
          "objective proposes one point at a time (nothing to spread); weighted sums\n"
          "that agree propose the same points (a stochastic --algorithm such as\n"
          "GN_CRS2_LM diverges more). Killed? The same command with --resume.\n"
          "  mpirun -np 4 hetsim-mpi optimize S.json --vary policy.w_e=0:1 \\\n"
          "      --objective pareto --weights 8 --budget 201 --out opt.csv\n\n"
#else
          "\nAcross machines: hetsim-mpi optimize ... under mpirun or srun (see README).\n\n"
#endif
          "exit status: 0 done; 1 cannot read or write; 2 bad input (one line)\n");
}

typedef struct opt_args {
  const char *scenario, *out, *objective, *algorithm, *seed;
  const char **vary;
  size_t nvary;
  hs_override *set;
  size_t nset;
  size_t budget, weights;
  unsigned jobs;
  bool resume, quiet, help;
} opt_args;

enum { O_VARY = 256, O_OBJ, O_BUDGET, O_WEIGHTS, O_ALG, O_SEED, O_SET, O_OUT, O_RESUME };
static const struct option longopts[] = {
    {"help", no_argument, NULL, 'h'},          {"vary", required_argument, NULL, O_VARY},
    {"objective", required_argument, NULL, O_OBJ}, {"budget", required_argument, NULL, O_BUDGET},
    {"weights", required_argument, NULL, O_WEIGHTS}, {"algorithm", required_argument, NULL, O_ALG},
    {"seed", required_argument, NULL, O_SEED},  {"set", required_argument, NULL, O_SET},
    {"out", required_argument, NULL, O_OUT},    {"jobs", required_argument, NULL, 'j'},
    {"resume", no_argument, NULL, O_RESUME},    {"quiet", no_argument, NULL, 'q'},
    {NULL, 0, NULL, 0}};

static bool parse_count(const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long x = v && *v ? strtol(v, &end, 10) : 0;
  if (!v || !*v || errno || *end || x < lo || x > hi) return false;
  *out = x;
  return true;
}

static int parse_args(opt_args *o, int argc, char **argv, char *why, size_t cap) {
  o->vary = hs_calloc((size_t)argc + 1, sizeof *o->vary);
  o->set = hs_calloc((size_t)argc + 1, sizeof *o->set);
  o->jobs = 1;
  o->budget = 60;
  o->weights = 5;
#define BAD(...)                     \
  do {                               \
    snprintf(why, cap, __VA_ARGS__); \
    return HS_EXIT_BADINPUT;         \
  } while (0)
  cli_parser p;
  cli_parser_init(&p, argc, argv, "hqj:", longopts);
  long n;
  for (int c; (c = cli_next(&p)) != CLI_END;) {
    char *v = p.arg;
    switch (c) {
    case 'h':
      o->help = true;
      return 0;
    case O_VARY:
      if (!v || !*v) BAD("--vary: expected KEY=LO:HI, KEY=LO:HI:STEP or KEY=a,b,...");
      o->vary[o->nvary++] = v;
      break;
    case O_OBJ:
      if (!v || (strcmp(v, "makespan") && strcmp(v, "energy") && strcmp(v, "energy_system") &&
                 strcmp(v, "energy_system_j") && strcmp(v, "time_to_target") && strcmp(v, "pareto") &&
                 strcmp(v, "pareto_system")))
        BAD("--objective: expected makespan, energy, energy_system, time_to_target, pareto or "
            "pareto_system "
            "(got \"%.40s\")",
            v ? v : "");
      o->objective = v;
      break;
    case O_BUDGET:
      if (!parse_count(v, 1, 1000000, &n)) BAD("--budget: expected a number in [1, 10^6]");
      o->budget = (size_t)n;
      break;
    case O_WEIGHTS:
      if (!parse_count(v, 2, 1000, &n)) BAD("--weights: expected a number in [2, 1000]");
      o->weights = (size_t)n;
      break;
    case O_ALG:
      if (!v || !*v) BAD("--algorithm: expected an NLopt name such as GN_DIRECT_L");
      o->algorithm = v;
      break;
    case O_SEED:
      if (!parse_count(v, 0, 0x7fffffffffffffffL, &n)) BAD("--seed: expected a whole number >= 0");
      o->seed = v;
      break;
    case O_SET: {
      hs_error err = {0};
      if (!v) BAD("--set: expected key=value");
      if (hs_override_parse(v, &o->set[o->nset], &err) != HS_OK) BAD("%s", err.msg);
      o->nset++;
      break;
    }
    case O_OUT:
      if (!v || !*v) BAD("--out: expected a file name");
      o->out = v;
      break;
    case 'j':
      if (!parse_count(v, 1, 1024, &n)) BAD("-j: expected a number of threads in [1, 1024]");
      o->jobs = (unsigned)n;
      break;
    case O_RESUME:
      o->resume = true;
      break;
    case 'q':
      o->quiet = true;
      break;
    case CLI_OPERAND:
      if (o->scenario) BAD("one scenario at a time (got \"%.60s\" and \"%.60s\")", o->scenario, v);
      o->scenario = v;
      break;
    default:
      BAD("unknown option \"%.100s\" (see hetsim optimize --help)", p.text);
    }
  }
  if (!o->scenario) BAD("expected a scenario file (see hetsim optimize --help)");
  if (!o->nvary) BAD("--vary: at least one is required");
  if (!o->objective) BAD("--objective: required (see " PROG " --help for the objectives)");
  if (!o->out) BAD("--out: required: the evaluations file (e.g. --out opt.csv)");
#undef BAD
  return 0;
}

/* --- evaluation through the sweep machinery ------------------------------------ */

typedef struct ctx {
  const opt_args *a;
  const hs_opt_var *vars;
  size_t nvars;
  size_t obj[2]; /* sweep metric indexes of f[0], f[1] */
  int fd;
  size_t appended;
  long kill_after;
#ifdef HS_SWEEP_MPI
  hs_opt_mpi mpi;
  size_t *per_rank; /* rank 0: points each rank simulated (point k of a batch: rank k % size) */
#endif
} ctx;

static hs_sweep *point_sweep(const ctx *c, char **grids, hs_error *err) {
  hs_sweep_spec spec = {.scenario = c->a->scenario, .set = c->a->set, .nset = c->a->nset,
                        .grids = (const char *const *)grids, .ngrids = c->nvars,
                        .seeds = c->a->seed};
  return hs_sweep_create(&spec, err);
}

/* hs_sweep_create sets the metric table's process-wide "learning sweep" switch
 * (the same value for every point of one search): creations are serialised so
 * that threads never write it at once; the runs themselves are not. */
static pthread_mutex_t create_mu = PTHREAD_MUTEX_INITIALIZER;

static hs_status eval_fn(const char *const *text, double *f, double *extra, void *ud, hs_error *err) {
  ctx *c = ud;
  char **grids = hs_calloc(c->nvars, sizeof *grids);
  for (size_t v = 0; v < c->nvars; v++) {
    size_t len = strlen(c->vars[v].key) + strlen(text[v]) + 2;
    grids[v] = hs_malloc(len);
    snprintf(grids[v], len, "%s=%s", c->vars[v].key, text[v]);
  }
  pthread_mutex_lock(&create_mu);
  hs_sweep *sw = point_sweep(c, grids, err);
  pthread_mutex_unlock(&create_mu);
  hs_status st = sw ? HS_OK : err->status;
  hs_sweep_result r;
  if (sw) st = hs_sweep_run_row(sw, 0, &r, err);
  if (st == HS_OK) {
    f[0] = r.m[c->obj[0]];
    f[1] = r.m[c->obj[1]];
    for (size_t m = 0; m < hs_metric_sweep_count(); m++) extra[m] = r.m[m];
  }
  hs_sweep_destroy(sw);
  for (size_t v = 0; v < c->nvars; v++) hs_free(grids[v]);
  hs_free(grids);
  return st;
}

static size_t format_eval(const ctx *c, const hs_opt_eval *e, char *buf, size_t cap) {
  size_t off = (size_t)snprintf(buf, cap, "%zu,%zu", e->sub, e->index);
  for (size_t v = 0; v < c->nvars && off < cap; v++)
    off += (size_t)snprintf(buf + off, cap - off, ",%s", e->text[v]);
  for (size_t m = 0; m < hs_metric_sweep_count() && off < cap; m++)
    off += (size_t)snprintf(buf + off, cap - off, ",%.17g", e->extra[m]);
  if (off < cap) off += (size_t)snprintf(buf + off, cap - off, "\n");
  return off < cap ? off : cap; /* cap: did not fit (callers refuse it) */
}

static bool record_fn(const hs_opt_eval *e, void *ud) {
  ctx *c = ud;
  char buf[4096];
  size_t len = format_eval(c, e, buf, sizeof buf);
  if (len >= sizeof buf || write(c->fd, buf, len) != (ssize_t)len) return false;
  c->appended++;
  if (c->kill_after > 0 && (long)c->appended >= c->kill_after) kill(getpid(), SIGKILL);
  return true;
}

#ifdef HS_SWEEP_MPI
/* One point on an evaluating rank: the metrics in out (f is rank 0's). */
static hs_status mpi_point(const char *const *text, double *out, void *ud, hs_error *err) {
  double f[HS_OPT_MAXF];
  return eval_fn(text, f, out, ud, err);
}

/* Rank 0, batch mode: the batch across the ranks, f from the metrics. */
static hs_status mpi_batch(hs_opt_eval *const *pts, size_t n, size_t *failed, void *ud,
                           hs_error *err) {
  ctx *c = ud;
  size_t nm = hs_metric_sweep_count();
  const char **text = hs_calloc(n * c->nvars + 1, sizeof *text);
  double *out = hs_calloc(n * nm + 1, sizeof *out);
  for (size_t i = 0; i < n; i++)
    for (size_t v = 0; v < c->nvars; v++) text[i * c->nvars + v] = pts[i]->text[v];
  size_t size = (size_t)hs_sweep_mpi_size();
  for (size_t i = 0; i < n; i++) c->per_rank[i % size]++;
  hs_status st = hs_opt_mpi_batch(&c->mpi, text, n, out, failed, err);
  for (size_t i = 0; st == HS_OK && i < n; i++) {
    memcpy(pts[i]->extra, out + i * nm, nm * sizeof *out);
    pts[i]->f[0] = out[i * nm + c->obj[0]];
    pts[i]->f[1] = out[i * nm + c->obj[1]];
  }
  hs_free(text);
  hs_free(out);
  return st;
}
#endif

/* --- the files ------------------------------------------------------------------- */

typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf;
static void sb_add(sbuf *b, const char *s, size_t n) {
  HS_ASSERT(n < SIZE_MAX / 4, "a length, not a negative number cast");
  if (b->len + n + 1 > b->cap) {
    b->cap = 2 * (b->len + n + 1);
    b->s = hs_realloc(b->s, b->cap);
  }
  memcpy(b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}
static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static char *header(const ctx *c) {
  sbuf b = {0};
  const char *base = strrchr(c->a->scenario, '/');
  base = base ? base + 1 : c->a->scenario;
  char num[96];
  sb_str(&b, "# hetsim optimize v1 | scenario ");
  sb_str(&b, base);
  sb_str(&b, " | objective ");
  sb_str(&b, c->a->objective);
  snprintf(num, sizeof num, " | budget %zu | weights %zu | algorithm %s | seed %s", c->a->budget,
           c->a->weights, c->a->algorithm ? c->a->algorithm : "GN_DIRECT_L",
           c->a->seed ? c->a->seed : "scenario");
  sb_str(&b, num);
  for (size_t i = 0; i < c->a->nset; i++) {
    sb_str(&b, " | set ");
    sb_str(&b, c->a->set[i].key);
    sb_str(&b, "=");
    sb_str(&b, c->a->set[i].value);
  }
  for (size_t v = 0; v < c->nvars; v++) {
    sb_str(&b, " | vary ");
    sb_str(&b, c->vars[v].spec);
  }
  sb_str(&b, "\nsub,index");
  for (size_t v = 0; v < c->nvars; v++) {
    sb_str(&b, ",");
    sb_str(&b, c->vars[v].key);
  }
  for (size_t m = 0; m < hs_metric_sweep_count(); m++) {
    sb_str(&b, ",");
    sb_str(&b, hs_metric_sweep_at(m)->name);
  }
  sb_str(&b, "\n");
  return b.s;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  sbuf b = {0};
  char tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) sb_add(&b, tmp, n);
  fclose(f);
  if (!b.s) sb_add(&b, "", 0);
  *len = b.len;
  return b.s;
}

/* Parse FILE's rows (after the header hdr) into prior[]. Returns the length
 * of the whole-lines prefix to keep, or (size_t)-1 with why set. */
static size_t read_prior(const ctx *c, const char *text, size_t len, const char *hdr,
                         hs_opt_eval **prior, size_t *nprior, char *why, size_t cap) {
  size_t hl = strlen(hdr), nm = hs_metric_sweep_count();
  if (len < hl || memcmp(text, hdr, hl)) {
    snprintf(why, cap, "%s: another search (its first two lines differ): remove it or change --out",
             c->a->out);
    return (size_t)-1;
  }
  size_t cnt = 0, keep = hl;
  for (size_t i = hl; i < len; i++) cnt += text[i] == '\n';
  *prior = hs_calloc(cnt + 1, sizeof **prior);
  *nprior = 0;
  const char *p = text + hl, *end = text + len;
  size_t lineno = 3;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break; /* torn last line: cut */
    char *line = hs_malloc((size_t)(nl - p) + 1);
    memcpy(line, p, (size_t)(nl - p));
    line[nl - p] = '\0';
    hs_opt_eval e = {0};
    e.text = hs_calloc(c->nvars, sizeof *e.text);
    e.extra = hs_calloc(nm, sizeof *e.extra);
    char *save = NULL, *tok = strtok_r(line, ",", &save);
    bool ok = tok && sscanf(tok, "%zu", &e.sub) == 1;
    tok = ok ? strtok_r(NULL, ",", &save) : NULL;
    ok = tok && sscanf(tok, "%zu", &e.index) == 1;
    for (size_t v = 0; ok && v < c->nvars; v++) {
      tok = strtok_r(NULL, ",", &save);
      ok = tok != NULL;
      if (ok) e.text[v] = hs_strdup(tok);
    }
    for (size_t m = 0; ok && m < nm; m++) {
      tok = strtok_r(NULL, ",", &save);
      char *ep;
      ok = tok && (e.extra[m] = strtod(tok, &ep), *ep == '\0');
    }
    ok = ok && strtok_r(NULL, ",", &save) == NULL;
    hs_free(line);
    if (!ok) {
      (*prior)[(*nprior)++] = e;
      snprintf(why, cap, "%s: line %zu: not an evaluation row of this search", c->a->out, lineno);
      return (size_t)-1;
    }
    e.f[0] = e.extra[c->obj[0]];
    e.f[1] = e.extra[c->obj[1]];
    (*prior)[(*nprior)++] = e;
    p = nl + 1;
    keep = (size_t)(p - text);
    lineno++;
  }
  return keep;
}

static const char *const stage_pct[] = {"25", "50", "75", "100"};

static int write_outputs(const ctx *c, const hs_opt_spec *sp, const char *hdr,
                         const hs_opt_eval *ev, size_t n, char *why, size_t cap) {
  sbuf all = {0}, front = {0}, hist = {0};
  char line[4096];
  sb_str(&all, hdr);
  for (size_t i = 0; i < n; i++) {
    size_t len = format_eval(c, &ev[i], line, sizeof line);
    if (len >= sizeof line) {
      snprintf(why, cap, "an evaluation row is longer than %zu bytes (values too long)", sizeof line);
      hs_free(all.s);
      return HS_EXIT_BADINPUT;
    }
    sb_add(&all, line, len);
  }
  const char *nl = strchr(hdr, '\n');
  HS_ASSERT(nl != NULL, "the header ends its lines");
  /* the front: FILE.csv's columns and tied_points (hs_opt_front: one row per
   * distinct objective vector, the first point of FILE.csv that has it) */
  sb_add(&front, hdr, (size_t)(nl - hdr) + 1);
  sb_add(&front, nl + 1, strlen(nl + 1) - 1);
  sb_str(&front, ",tied_points\n");
  size_t *tied = hs_calloc(n + 1, sizeof *tied), rows = 0, tied_all = 0;
  size_t distinct = hs_opt_front(sp, ev, n, 1.0, tied);
  for (size_t i = 0; i < n; i++)
    if (tied[i]) {
      size_t len = format_eval(c, &ev[i], line, sizeof line); /* fits: above */
      int o = snprintf(line + len - 1, sizeof line - len + 1, ",%zu\n", tied[i]);
      if (o > 0 && len - 1 + (size_t)o < sizeof line) sb_add(&front, line, len - 1 + (size_t)o);
      rows++;
      tied_all += tied[i];
    }
  sb_add(&hist, hdr, (size_t)(nl - hdr) + 1);
  sb_str(&hist, "stage,evaluations");
  for (size_t v = 0; v < c->nvars; v++) {
    sb_str(&hist, ",");
    sb_str(&hist, c->vars[v].key);
  }
  const char *en = strcmp(c->a->objective, "pareto_system") ? "energy_j" : "energy_system_j";
  sb_str(&hist, ",makespan_s,");
  sb_str(&hist, en);
  sb_str(&hist, ",tied_points\n");
  size_t ims = hs_metric_sweep_index("makespan_s"), ie = hs_metric_sweep_index(en);
  for (size_t s = 0; s < 4; s++) {
    double frac = (double)(s + 1) / 4.0;
    size_t used = hs_opt_front(sp, ev, n, frac, tied);
    /* front points in increasing makespan */
    for (;;) {
      size_t pick = n;
      for (size_t i = 0; i < n; i++)
        if (tied[i] && (pick == n || ev[i].extra[ims] < ev[pick].extra[ims])) pick = i;
      if (pick == n) break;
      int o = snprintf(line, sizeof line, "%s,%zu", stage_pct[s], used);
      for (size_t v = 0; v < c->nvars; v++)
        o += snprintf(line + o, sizeof line - (size_t)o, ",%s", ev[pick].text[v]);
      o += snprintf(line + o, sizeof line - (size_t)o, ",%.10g,%.10g,%zu\n", ev[pick].extra[ims],
                    ev[pick].extra[ie], tied[pick]);
      if (o > 0 && (size_t)o < sizeof line) sb_add(&hist, line, (size_t)o); /* fits: as the rows */
      tied[pick] = 0;
    }
  }
  hs_free(tied);
  char *fp = hs_malloc(strlen(c->a->out) + 16), *hp = hs_malloc(strlen(c->a->out) + 16);
  size_t stem = strlen(c->a->out);
  if (stem > 4 && !strcmp(c->a->out + stem - 4, ".csv")) stem -= 4;
  snprintf(fp, strlen(c->a->out) + 16, "%.*s.front.csv", (int)stem, c->a->out);
  snprintf(hp, strlen(c->a->out) + 16, "%.*s.history.csv", (int)stem, c->a->out);
  hs_error err = {0};
  hs_status st = hs_write_file_atomic(fp, front.s, front.len, &err);
  if (st == HS_OK) st = hs_write_file_atomic(hp, hist.s, hist.len, &err);
  if (st == HS_OK) st = hs_write_file_atomic(c->a->out, all.s, all.len, &err);
  if (st != HS_OK) snprintf(why, cap, "%s", err.msg);
  if (st == HS_OK && !c->a->quiet)
    printf("%zu evaluations (%zu distinct points) in %s; front in %s (%zu row%s for %zu "
           "point%s: ties merged); history in %s\n",
           n, distinct, c->a->out, fp, rows, rows == 1 ? "" : "s", tied_all,
           tied_all == 1 ? "" : "s", hp);
  hs_free(fp);
  hs_free(hp);
  hs_free(all.s);
  hs_free(front.s);
  hs_free(hist.s);
  return st == HS_OK ? 0 : 1;
}

/* --- the command ----------------------------------------------------------------- */

/* The sweep column of metric `name`, or SIZE_MAX. */
static size_t sweep_metric(const char *name) {
  for (size_t k = 0; k < hs_metric_sweep_count(); k++)
    if (!strcmp(hs_metric_sweep_at(k)->name, name)) return k;
  return SIZE_MAX;
}

static hs_opt_spec spec_of(const ctx *c) {
  const opt_args *a = c->a;
  return (hs_opt_spec){.vars = c->vars, .nvars = c->nvars, .pareto = !strncmp(a->objective, "pareto", 6),
                       .budget = a->budget, .weights = a->weights, .algorithm = a->algorithm,
                       .seed = a->seed ? strtoul(a->seed, NULL, 10) : 0, .jobs = a->jobs,
                       .nextra = hs_metric_sweep_count()};
}

/* Validate the budget, the algorithm, every --vary key and the objective
 * (every rank), before any file is touched. */
static int check(ctx *c, char *why, size_t cap) {
  const opt_args *a = c->a;
  const hs_opt_var *vars = c->vars;
  const char *m0 = !strcmp(a->objective, "energy")           ? "energy_j"
                   : !strcmp(a->objective, "time_to_target") ? "time_to_target_s"
                   : !strncmp(a->objective, "energy_system", 13) ? "energy_system_j"
                                                             : "makespan_s";
  hs_opt_spec sp = spec_of(c);
  hs_error err = {0};
  if (hs_opt_check(&sp, &err) != HS_OK) {
    snprintf(why, cap, "%s", err.msg);
    return HS_EXIT_BADINPUT;
  }
  /* Validate every key at both ends (and every value of a set) before any run. */
  char **grids = hs_calloc(c->nvars, sizeof *grids);
  for (size_t v = 0; v < c->nvars; v++) {
    sbuf b = {0};
    sb_str(&b, vars[v].key);
    sb_str(&b, "=");
    char t0[256], t1[256];
    if (vars[v].kind == HS_OPT_SET) {
      for (size_t i = 0; i < vars[v].n; i++) {
        if (i) sb_str(&b, ",");
        sb_str(&b, vars[v].values[i]);
      }
    } else {
      hs_opt_var_text(&vars[v], 0, t0, sizeof t0);
      hs_opt_var_text(&vars[v], 1, t1, sizeof t1);
      sb_str(&b, t0);
      sb_str(&b, ",");
      sb_str(&b, t1);
    }
    grids[v] = b.s;
  }
  hs_sweep *sw = point_sweep(c, grids, &err);
  for (size_t v = 0; v < c->nvars; v++) hs_free(grids[v]);
  hs_free(grids);
  if (!sw) {
    /* the sweep words it "--grid KEY=<both ends>: ...": name the --vary spec */
    const char *g = strstr(err.msg, "--grid "), *rest = g ? strstr(g, ": ") : NULL;
    const hs_opt_var *hit = NULL;
    for (size_t v = 0; rest && v < c->nvars && !hit; v++) {
      size_t kl = strlen(vars[v].key);
      if (!strncmp(g + 7, vars[v].key, kl) && g[7 + kl] == '=') hit = &vars[v];
    }
    if (hit)
      snprintf(why, cap, "%.*s--vary %s%s", (int)(g - err.msg), err.msg, hit->spec, rest);
    else
      snprintf(why, cap, "%s", err.msg);
    return err.status == HS_EIO || err.status == HS_ENOENT ? 1 : HS_EXIT_BADINPUT;
  }
  hs_sweep_destroy(sw);
  /* The sweep columns are known now (learning metrics only when the scenario learns). */
  c->obj[0] = sweep_metric(m0);
  const char *m1 = !strcmp(a->objective, "pareto_system") ? "energy_system_j"
                   : !strcmp(a->objective, "pareto") ? "energy_j" : m0;
  if ((c->obj[1] = sweep_metric(m1)) == SIZE_MAX) m0 = m1; /* name the missing one */
  if (c->obj[0] == SIZE_MAX || c->obj[1] == SIZE_MAX) {
    snprintf(why, cap, "--objective %s: no metric %s in this search (%s)", a->objective, m0,
             !strcmp(m0, "time_to_target_s")  ? "it needs a scenario with a learning section"
             : !strcmp(m0, "energy_system_j") ? "it needs regime \"fl\", whose runs report it"
                                              : "not in the metric table");
    return HS_EXIT_BADINPUT;
  }
  return 0;
}

/* Rank 0 (every process without MPI): FILE checked (--resume: its rows read
 * into *prior) and opened for appending, the header written. */
static int open_file(ctx *c, const char *hdr, hs_opt_eval **prior, size_t *nprior, char *why,
                     size_t cap) {
  const opt_args *a = c->a;
  int rc = 0;
  size_t len = 0;
  char *old = slurp(a->out, &len);
  if (old && !a->resume) {
    snprintf(why, cap, "%s exists: add --resume to continue it, or remove it", a->out);
    rc = HS_EXIT_BADINPUT;
  } else if (old && len > 0) {
    size_t keep = read_prior(c, old, len, hdr, prior, nprior, why, cap);
    if (keep == (size_t)-1) rc = HS_EXIT_BADINPUT;
    else if (keep < len && truncate(a->out, (off_t)keep) != 0) {
      snprintf(why, cap, "%s: cannot cut its torn last line: %s", a->out, strerror(errno));
      rc = 1;
    }
  }
  hs_free(old);
  if (rc == 0) {
    c->fd = open(a->out, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (c->fd < 0) {
      snprintf(why, cap, "%s: cannot open: %s", a->out, strerror(errno));
      rc = 1;
    } else if (len == 0 && write(c->fd, hdr, strlen(hdr)) != (ssize_t)strlen(hdr)) {
      snprintf(why, cap, "%s: cannot write", a->out);
      rc = 1;
    }
  }
  return rc;
}

/* The search and its files (rank 0); under MPI the other ranks evaluate
 * their share of each batch meanwhile. Every rank returns rank 0's status. */
static int search(ctx *c, int rank, char *why, size_t cap) {
  char *hdr = header(c);
  hs_opt_eval *prior = NULL;
  size_t nprior = 0;
  int rc = rank == 0 ? open_file(c, hdr, &prior, &nprior, why, cap) : 0;
#ifdef HS_SWEEP_MPI
  rc = hs_sweep_mpi_bcast_int(rc);
  c->mpi = (hs_opt_mpi){.nvars = c->nvars, .nout = hs_metric_sweep_count(), .jobs = c->a->jobs,
                        .eval = mpi_point, .ud = c};
  if (rc == 0 && rank != 0) hs_opt_mpi_serve(&c->mpi);
#endif
  if (rc == 0 && rank == 0) {
    hs_opt_spec sp = spec_of(c);
    sp.prior = prior;
    sp.nprior = nprior;
#ifdef HS_SWEEP_MPI
    /* ranks x -j sub-problems at once: a batch can fill every evaluating thread */
    sp.jobs = c->a->jobs * (unsigned)hs_sweep_mpi_size();
    sp.batch = mpi_batch;
    c->per_rank = hs_calloc((size_t)hs_sweep_mpi_size(), sizeof *c->per_rank);
#endif
    hs_opt_eval *ev = NULL;
    size_t nev = 0;
    hs_error err = {0};
    hs_status st = hs_opt_run(&sp, eval_fn, record_fn, c, &ev, &nev, &err);
#ifdef HS_SWEEP_MPI
    hs_opt_mpi_stop();
#endif
    close(c->fd);
    c->fd = -1;
    if (st != HS_OK) {
      snprintf(why, cap, "%s", err.msg);
      rc = st == HS_EIO ? 1 : HS_EXIT_BADINPUT;
    } else {
      rc = write_outputs(c, &sp, hdr, ev, nev, why, cap);
    }
#ifdef HS_SWEEP_MPI
    if (rc == 0 && !c->a->quiet) {
      printf("simulations per rank:");
      for (int r = 0; r < hs_sweep_mpi_size(); r++) printf(" %zu", c->per_rank[r]);
      printf("\n");
    }
    hs_free(c->per_rank);
#endif
    hs_opt_evals_free(ev, nev, c->nvars);
  }
#ifdef HS_SWEEP_MPI
  rc = hs_sweep_mpi_bcast_int(rc);
#endif
  if (c->fd >= 0) close(c->fd);
  hs_opt_evals_free(prior, nprior, c->nvars);
  hs_free(hdr);
  return rc;
}

static int optimize_main(int argc, char **argv) {
#ifdef HS_SWEEP_MPI
  int rank = hs_sweep_mpi_rank();
#else
  int rank = 0;
#endif
  opt_args a = {0};
  char why[HS_ERROR_MSG_MAX + 128] = "";
  int rc = parse_args(&a, argc, argv, why, sizeof why);
  hs_opt_var *vars = hs_calloc(a.nvary + 1, sizeof *vars);
  size_t nv = 0;
  for (size_t i = 0; rc == 0 && !a.help && i < a.nvary; i++) {
    hs_error err = {0};
    if (hs_opt_var_parse(a.vary[i], &vars[nv], &err) != HS_OK) {
      snprintf(why, sizeof why, "%s", err.msg);
      rc = HS_EXIT_BADINPUT;
      break;
    }
    for (size_t j = 0; j < nv; j++)
      if (!strcmp(vars[j].key, vars[nv].key)) {
        snprintf(why, sizeof why, "--vary %.80s: key %s is already varied", a.vary[i],
                 vars[nv].key);
        rc = HS_EXIT_BADINPUT;
      }
    nv++;
  }
  ctx c = {.a = &a, .vars = vars, .nvars = nv, .fd = -1};
  const char *env = getenv("HETSIM_OPTIMIZE_KILL_AFTER");
  c.kill_after = env ? atol(env) : 0;
  if (rc == 0 && !a.help) rc = check(&c, why, sizeof why);
#ifdef HS_SWEEP_MPI
  /* Each rank reads the scenario and profiles from its own node: all must
   * have validated before rank 0 creates FILE, or a rank failing alone would
   * leave the others waiting in the next collective. The lowest failing rank
   * says why (once, whatever the number of ranks); all exit with its status. */
  int first = hs_sweep_mpi_first_failure(rc != 0);
  if (first >= 0) {
    rc = hs_opt_mpi_bcast_from(rc, first);
    if (first != rank) {
      why[0] = '\0';
    } else if (rank) {
      char msg[sizeof why];
      snprintf(msg, sizeof msg, "rank %d: %.600s", rank, why);
      memcpy(why, msg, sizeof why);
    }
  }
#endif
  if (rc == 0 && a.help && rank == 0) usage(stdout);
  if (rc == 0 && !a.help) rc = search(&c, rank, why, sizeof why);
  for (size_t i = 0; i < nv; i++) hs_opt_var_fini(&vars[i]);
  hs_free(vars);
  hs_free(a.set);
  hs_free(a.vary);
  if (rc && why[0]) fprintf(stderr, "hetsim " CMD ": %s\n", why);
  return rc;
}

#ifdef HS_SWEEP_MPI
int hs_cmd_optimize_mpi(int argc, char **argv) { return optimize_main(argc, argv); }
#else
int hs_cmd_optimize(int argc, char **argv) { return optimize_main(argc, argv); }
#endif
