/* cmd_optimize.c: `hetsim optimize` (and, on the MPI transport, the same
 * command in `hetsim-mpi`): parse the options, hand the search to the study
 * room (hs_opt_search.h: objectives from the metric table, the files,
 * resume, the ranks), print what it wrote.
 *
 * The CLI owns the process-wide things the library must not: the exit
 * codes, the wording of the options (shared with sweep: cli_study_opt), and
 * the test hook HETSIM_OPTIMIZE_KILL_AFTER=N (SIGKILL this process after N
 * lines appended to FILE: a real kill at a known place, for the resume
 * tests). Every rank parses and validates; the lowest failing rank alone
 * says why (cli_ranks_agree, as sweep does); every rank exits with rank 0's
 * status. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "cli_opts.h"
#include "commands.h"
#include "sim/hs_opt_search.h"
#include "sim/hs_transport.h"

static void usage(FILE *out, const hs_transport *t, const char *prog) {
  fprintf(out,
          "usage: %s SCENARIO --vary KEY=RANGE|SET [--vary ...]\n"
          "       --objective METRIC|pareto|pareto_system [--budget N]\n"
          "       [--weights W] [--algorithm NAME] [--seed S] [--set key=value ...]\n"
          "       [-j N] --out FILE.csv [--resume] [--quiet]\n"
          "\n"
          "Search scenario keys with NLopt (default: DIRECT-L, deterministic).\n"
          "  --vary KEY=LO:HI        a real number in [LO, HI]\n"
          "  --vary KEY=LO:HI:STEP   LO, LO+STEP, ... (integers: STEP 1)\n"
          "  --vary KEY=a,b,c        one of the values (categorical)\n"
          "  --objective             a sweep metric, minimised (maximised when higher is\n"
          "                          better: final_test_accuracy), by name or without\n"
          "                          its unit: makespan, energy, energy_system (a regime\n"
          "                          that reports it: fl), time_to_target (a scenario\n"
          "                          that learns), compute_cv, ...;\n"
          "                          or pareto (makespan vs energy_j; pareto_system:\n"
          "                          makespan vs energy_system_j, regime fl;\n"
          "                          W weighted sums, each an NLopt run, and the\n"
          "                          non-dominated set of every evaluation)\n"
          "  --budget N              evaluations in all (default 60)\n"
          "  --weights W             weighted sums for pareto (default 5)\n"
          "  --algorithm NAME        an NLopt global derivative-free algorithm (GN_*)\n"
          "  --seed S                the scenario's seed at every point; also seeds\n"
          "                          stochastic algorithms\n",
          prog);
  if (t->ranks)
    fputs("  -j N                    evaluations on N threads per rank (same output for\n"
          "                          any N and any number of ranks)\n",
          out);
  else
    fputs("  -j N                    sub-problems on N threads (same output for any N)\n", out);
  fprintf(out,
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
          "  %s S.json --vary policy.w_e=0:1 --vary 'devices[0].count=0:2:1' \\\n"
          "      --vary 'devices[2].count=0:1:1' --objective pareto --budget 61 --out opt.csv\n",
          prog);
  if (t->ranks)
    fputs("\nUnder mpirun or srun: rank 0 runs NLopt and alone writes the files; the\n"
          "points the weighted sums propose together are spread over the ranks. One\n"
          "objective proposes one point at a time (nothing to spread); weighted sums\n"
          "that agree propose the same points (a stochastic --algorithm such as\n"
          "GN_CRS2_LM diverges more). Killed? The same command with --resume.\n"
          "  mpirun -np 4 hetsim-mpi optimize S.json --vary policy.w_e=0:1 \\\n"
          "      --objective pareto --weights 8 --budget 201 --out opt.csv\n\n",
          out);
  else
    fputs("\nAcross machines: hetsim-mpi optimize ... under mpirun or srun (see README).\n\n", out);
  fputs("exit status: 0 done; 1 cannot read or write; 2 bad input (one line)\n", out);
}

typedef struct opt_args {
  cli_study_opts c; /* scenario, --set, --out, -j, --resume, --quiet, --help */
  hs_opt_job job;
  const char **vary;
} opt_args;

enum { O_VARY = 256, O_OBJ, O_BUDGET, O_WEIGHTS, O_ALG, O_SEED };
static const struct option longopts[] = {
    CLI_STUDY_LONGOPTS,
    {"vary", required_argument, NULL, O_VARY},       {"objective", required_argument, NULL, O_OBJ},
    {"budget", required_argument, NULL, O_BUDGET},   {"weights", required_argument, NULL, O_WEIGHTS},
    {"algorithm", required_argument, NULL, O_ALG},   {"seed", required_argument, NULL, O_SEED},
    {NULL, 0, NULL, 0}};

static bool parse_count(const char *v, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long x = v && *v ? strtol(v, &end, 10) : 0;
  if (!v || !*v || errno || *end || x < lo || x > hi) return false;
  *out = x;
  return true;
}

static int parse_args(opt_args *o, const char *prog, int argc, char **argv, char *why,
                      size_t cap) {
  cli_study_init(&o->c, prog, "the evaluations file", "opt.csv", argc);
  o->vary = hs_calloc((size_t)argc + 1, sizeof *o->vary);
  hs_opt_job *j = &o->job;
  *j = (hs_opt_job){.budget = 60, .weights = 5, .vary = o->vary};
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
    int taken = cli_study_opt(&o->c, &p, c, why, cap);
    if (taken == HS_EXIT_BADINPUT) return taken;
    if (o->c.help) return 0;
    if (taken) continue;
    switch (c) {
    case O_VARY:
      if (!v || !*v) BAD("--vary: expected KEY=LO:HI, KEY=LO:HI:STEP or KEY=a,b,...");
      o->vary[j->nvary++] = v;
      break;
    case O_OBJ:
      if (!v || !*v) BAD("--objective: expected a metric, pareto or pareto_system");
      j->objective = v;
      break;
    case O_BUDGET:
      if (!parse_count(v, 1, 1000000, &n)) BAD("--budget: expected a number in [1, 10^6]");
      j->budget = (size_t)n;
      break;
    case O_WEIGHTS:
      if (!parse_count(v, 2, 1000, &n)) BAD("--weights: expected a number in [2, 1000]");
      j->weights = (size_t)n;
      break;
    case O_ALG:
      if (!v || !*v) BAD("--algorithm: expected an NLopt name such as GN_DIRECT_L");
      j->algorithm = v;
      break;
    default: /* O_SEED */
      if (!parse_count(v, 0, 0x7fffffffffffffffL, &n)) BAD("--seed: expected a whole number >= 0");
      j->seed = v;
      break;
    }
  }
#undef BAD
  int rc = cli_study_need_scenario(&o->c, why, cap);
  if (rc) return rc;
  if (!j->nvary) {
    snprintf(why, cap, "--vary: at least one is required");
    return HS_EXIT_BADINPUT;
  }
  if (!j->objective) {
    snprintf(why, cap, "--objective: required (see %s --help for the objectives)", prog);
    return HS_EXIT_BADINPUT;
  }
  if ((rc = cli_study_need_out(&o->c, why, cap))) return rc;
  j->scenario = o->c.scenario;
  j->out = o->c.out;
  j->set = o->c.set;
  j->nset = o->c.nset;
  j->jobs = o->c.jobs;
  j->resume = o->c.resume;
  return 0;
}

/* HETSIM_OPTIMIZE_KILL_AFTER=N: killed after N appended lines. */
static void kill_hook(size_t n, void *ud) {
  long after = *(const long *)ud;
  if (after > 0 && (long)n >= after) kill(getpid(), SIGKILL);
}

static void print_report(const hs_opt_job *j, const hs_opt_report *r) {
  printf("%zu evaluations (%zu distinct points) in %s; front in %s (%zu row%s for %zu "
         "point%s: ties merged); history in %s\n",
         r->evaluations, r->distinct, j->out, r->front_path, r->front_rows,
         r->front_rows == 1 ? "" : "s", r->front_points, r->front_points == 1 ? "" : "s",
         r->history_path);
  if (!r->per_rank) return;
  printf("simulations per rank:");
  for (size_t k = 0; k < r->nranks; k++) printf(" %zu", r->per_rank[k]);
  printf("\n");
}

int hs_cmd_optimize_on(const hs_transport *t, int argc, char **argv) {
  char prog[32];
  snprintf(prog, sizeof prog, "%s optimize", t->prog);
  opt_args a = {0};
  char why[HS_ERROR_MSG_MAX + 128] = "";
  int rc = parse_args(&a, prog, argc, argv, why, sizeof why);
  const char *env = getenv("HETSIM_OPTIMIZE_KILL_AFTER");
  long kill_after = env ? atol(env) : 0;
  a.job.appended = kill_hook;
  a.job.ud = &kill_after;
  hs_opt_search *s = NULL;
  hs_error err = {0};
  if (rc == 0 && !a.c.help) {
    s = hs_opt_search_create(&a.job, &err);
    if (!s) {
      snprintf(why, sizeof why, "%s", err.msg);
      rc = cli_exit_code(err.status);
    }
  }
  rc = cli_ranks_agree(t, rc, why, sizeof why);
  if (rc == 0 && a.c.help && t->rank() == 0) usage(stdout, t, prog);
  if (rc == 0 && !a.c.help) {
    hs_opt_report rep;
    hs_status st = hs_opt_search_run(s, t, &rep, &err);
    if (st != HS_OK) {
      snprintf(why, sizeof why, "%s", err.msg);
      rc = cli_exit_code(st);
    } else if (t->rank() == 0 && !a.c.quiet) {
      print_report(&a.job, &rep);
    }
    hs_opt_report_fini(&rep);
  }
  hs_opt_search_destroy(s);
  hs_free(a.vary);
  cli_study_fini(&a.c);
  if (rc && why[0]) fprintf(stderr, "hetsim optimize: %s\n", why);
  return rc;
}

int hs_cmd_optimize(int argc, char **argv) {
  return hs_cmd_optimize_on(hs_transport_local(), argc, argv);
}
