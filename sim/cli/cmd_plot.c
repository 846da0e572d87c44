/* cmd_plot.c: `hetsim plot`: the options, parsed with getopt_long, into
 * hs_plot_args; the figures themselves are the plot module (traces/plot:
 * one fig_<name>.c per figure beside its gnuplot script, see hs_plot.h).
 *
 * Parsing is the commands' shared scanner (cli_next in cli_opts.c): options
 * and the source in order (a second source is refused where it stands,
 * before a later --help), long options in full (--ro is unknown), short ones
 * combinable (-qh), "--" ends the options; every error is one line naming
 * the option. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h> /* struct option */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_opts.h"
#include "cli_suggest.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "hs_plot.h"
#include "sim/hs_sweep.h"
#include "base/hs_util.h"

#ifndef HS_PLOT_DIR /* the shipped figure scripts, beside the program (hs_util.h) */
#define HS_PLOT_DIR hs_share_path("plot")
#endif

static void plot_usage(FILE *out) {
  fprintf(out,
          "usage: hetsim plot SOURCE [--out DIR] [--x KEY] [--y KEY] [--z COLUMN]\n"
          "                   [--color KEY] [--rounds A-B] [--devices a,b,...] [--siblings]\n"
          "                   [--quiet]\n"
          "\n"
          "Draw figures with gnuplot, each as PNG and SVG, in DIR.\n"
          "\n"
          "SOURCE a sweep (RESULTS.csv or RESULTS.points.csv from hetsim sweep):\n"
          "  pareto.png/.svg   energy against makespan (means over seeds), coloured by\n"
          "                    --color KEY (default policy.w_e, else the first grid key\n"
          "                    with several values), the Pareto front drawn, and the\n"
          "                    95 %% confidence intervals over seeds as error bars\n"
          "  line.png/.svg     a sweep over ONE grid key: makespan and energy (means,\n"
          "                    95 %% intervals) against that key's values\n"
          "  heatmap.png/.svg  --z COLUMN of RESULTS.points.csv (default energy_j_mean)\n"
          "                    over grid keys --x and --y (default policy.w_e and\n"
          "                    policy.deadband, else the first two grid keys); a cell\n"
          "                    averages the points that differ in other keys only\n"
          "  DIR defaults to RESULTS-plots/\n"
          "SOURCE a run folder (hetsim run --out DIR [--trace]):\n"
          "  allocation.png/.svg  samples per device per round (devices.csv); above 24\n"
          "                       devices, one line per profile: the mean per device\n"
          "  gantt.png/.svg       compute, communication and waiting per device for\n"
          "                       rounds A-B (default 0-2; needs trace.json: run with\n"
          "                       --trace); --devices a,b,... draws those devices only,\n"
          "                       in that order (default: the first 64)\n"
          "  learning.png/.svg    held-out loss and accuracy against simulated time and\n"
          "                       energy, when the run learned (learning.csv); this run\n"
          "                       only, or with --siblings also every sibling folder\n"
          "                       that holds a learning.csv (the policies of one\n"
          "                       `hetsim compare --out DIR`: plot DIR/equal --siblings)\n"
          "  DIR defaults to SOURCE/plots/\n"
          "\n"
          "gnuplot is found on PATH, or set HETSIM_GNUPLOT; the figure scripts are in\n"
          "%s (or HETSIM_PLOT_DIR).\n"
          "\n"
          "exit status: 0 done; 1 gnuplot missing or failing; 2 bad input (one line)\n"
          "\n"
          "examples:\n"
          "  hetsim sweep scenarios/testbed-mnist-pma.json --policies adaptive \\\n"
          "      --grid policy.w_e=0:1:0.25 --grid policy.deadband=0,0.05 --out we.csv\n"
          "  hetsim plot we.csv                 # we-plots/pareto.png, heatmap.png, .svg\n"
          "  hetsim run scenarios/testbed-mnist-pma.json --policy time-only --trace --out r\n"
          "  hetsim plot r --rounds 0-3         # r/plots/allocation.png, gantt.png, .svg\n",
          HS_PLOT_DIR);
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cli_bad_input("plot", msg);
}

static const char *env_or(const char *name, const char *dflt) {
  const char *v = getenv(name);
  return v && *v ? v : dflt;
}

/* The default output folder: SOURCE/plots for a run, RESULTS-plots for a
 * sweep (".points.csv" or ".csv" cut off). Heap. */
/* The FILE.history.csv of a `hetsim optimize` evaluations file (its line 1
 * starts "# hetsim optimize"), or the source itself when it is one; else NULL. */
static char *optimize_history(const char *source) {
  char line[20] = "";
  FILE *f = fopen(source, "r");
  if (f) {
    if (!fgets(line, sizeof line, f)) line[0] = '\0';
    fclose(f);
  }
  if (strncmp(line, "# hetsim optimize", 17)) return NULL;
  size_t n = strlen(source);
  if (n > 12 && !strcmp(source + n - 12, ".history.csv")) return hs_strdup(source);
  size_t stem = n > 4 && !strcmp(source + n - 4, ".csv") ? n - 4 : n;
  char *p = hs_malloc(stem + 13);
  memcpy(p, source, stem);
  memcpy(p + stem, ".history.csv", 13);
  return p;
}

/* A folder with no run of its own whose sub-folders are runs (what `hetsim
 * compare --out DIR` writes): the first run's name in name order and how many
 * there are, so the message can name the command that plots them. NULL when
 * DIR is a run, or holds none. */
static char *compare_child(const char *dir, size_t *nruns) {
  *nruns = 0;
  char *own = hs_path_join(dir, "summary.json");
  bool is_run = access(own, F_OK) == 0;
  hs_free(own);
  DIR *d = is_run ? NULL : opendir(dir);
  if (!d) return NULL;
  char *first = NULL;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char *sub = hs_path_join(dir, e->d_name), *sum = hs_path_join(sub, "summary.json");
    if (access(sum, F_OK) == 0) {
      ++*nruns;
      if (!first || strcmp(e->d_name, first) < 0) {
        hs_free(first);
        first = hs_strdup(e->d_name);
      }
    }
    hs_free(sum);
    hs_free(sub);
  }
  closedir(d);
  return first;
}

static char *default_out(const char *source, bool run) {
  if (run) return hs_path_join(source, "plots");
  size_t n = strlen(source);
  size_t cut = n > 11 && !strcmp(source + n - 11, ".points.csv") ? n - 11
               : n > 4 && !strcmp(source + n - 4, ".csv")      ? n - 4
                                                               : n;
  char *out = hs_malloc(cut + 8);
  memcpy(out, source, cut);
  memcpy(out + cut, "-plots", 7);
  return out;
}

enum { OPT_OUT = 256, OPT_X, OPT_Y, OPT_Z, OPT_COLOR, OPT_ROUNDS, OPT_DEVICES, OPT_SIBLINGS };

static const struct option long_opts[] = {
    {"out", required_argument, NULL, OPT_OUT},     {"x", required_argument, NULL, OPT_X},
    {"y", required_argument, NULL, OPT_Y},         {"z", required_argument, NULL, OPT_Z},
    {"color", required_argument, NULL, OPT_COLOR}, {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"siblings", no_argument, NULL, OPT_SIBLINGS},
    {"help", no_argument, NULL, 'h'},              {"quiet", no_argument, NULL, 'q'},
    {NULL, 0, NULL, 0}};

/* The option's name as the user spells it ("--out"), for messages. */
static const char *long_name(int val) {
  static char buf[32];
  for (const struct option *o = long_opts; o->name; o++)
    if (o->val == val) {
      snprintf(buf, sizeof buf, "--%s", o->name);
      return buf;
    }
  return "?";
}

int hs_cmd_plot(int argc, char **argv) {
  hs_plot_args a = {0};
  cli_parser p;
  cli_parser_init(&p, argc, argv, "hq", long_opts);
  for (int c; (c = cli_next(&p)) != CLI_END;) {
    const char **slot = NULL;
    switch (c) {
      case CLI_OPERAND:
        if (a.source)
          return bad("one source at a time (got \"%.200s\" and \"%.200s\")", a.source, p.arg);
        a.source = p.arg;
        break;
      case 'h':
        plot_usage(stdout);
        return 0;
      case 'q':
        a.quiet = true;
        break;
      case OPT_OUT: slot = &a.out; break;
      case OPT_X: slot = &a.x; break;
      case OPT_Y: slot = &a.y; break;
      case OPT_Z: slot = &a.z; break;
      case OPT_COLOR: slot = &a.color; break;
      case OPT_ROUNDS: slot = &a.rounds; break;
      case OPT_DEVICES: slot = &a.devices; break;
      case OPT_SIBLINGS: a.siblings = true; break;
      default: /* CLI_UNKNOWN */
        if (cli_nearest_option(p.text, long_opts))
          return bad("unknown option \"%.100s\" (did you mean \"--%s\"? see hetsim plot --help)",
                     p.text, cli_nearest_option(p.text, long_opts));
        return bad("unknown option \"%.100s\" (see hetsim plot --help)", p.text);
    }
    if (slot) {
      if (!p.arg || !*p.arg)
        return bad("%s: expected a value (see hetsim plot --help)", long_name(c));
      *slot = p.arg;
    }
  }
  if (!a.source)
    return bad("expected a sweep's RESULTS.csv or a run folder (see hetsim plot --help)");
  struct stat st;
  if (stat(a.source, &st) != 0) return bad("%s: %s", a.source, strerror(errno));
  bool run = S_ISDIR(st.st_mode);
  if (run && (a.x || a.y || a.z || a.color))
    return bad("%s: a run folder: --x, --y, --z and --color are for sweeps", a.source);
  if (!run && (a.rounds || a.devices || a.siblings))
    return bad("%s: a sweep: %s is for run folders", a.source,
               a.rounds ? "--rounds" : a.devices ? "--devices" : "--siblings");

  /* A file of a run folder (my/run1/rounds.csv): the folder is what plots. */
  char *dir = run ? NULL : hs_path_dir(a.source);
  char *summary = dir ? hs_path_join(dir, "summary.json") : NULL;
  bool in_run = summary && access(summary, F_OK) == 0;
  hs_free(summary);
  if (in_run) {
    int brc = bad("%s: a file of a run folder: a run folder is plotted by its folder: hetsim plot %s",
             a.source, dir);
    hs_free(dir);
    return brc;
  }
  hs_free(dir);
  size_t nruns = 0;
  char *child = run ? compare_child(a.source, &nruns) : NULL;
  if (child) {
    int brc = bad("%s: not a run folder but %zu runs (a `hetsim compare --out` folder): plot them side "
                  "by side with: hetsim plot %s/%s --siblings",
                  a.source, nruns, a.source, child);
    hs_free(child);
    return brc;
  }
  a.kind = run ? HS_PLOT_RUN : HS_PLOT_SWEEP;
  char *history = run ? NULL : optimize_history(a.source); /* `hetsim optimize` output */
  if (history) a.kind = HS_PLOT_OPTIMIZE;
  a.gnuplot = env_or("HETSIM_GNUPLOT", "gnuplot");
  a.script_dir = env_or("HETSIM_PLOT_DIR", HS_PLOT_DIR);
  char *out = a.out ? hs_strdup(a.out) : default_out(a.source, run);
  a.out = out;
  /* The per-point file: given directly, or next to RESULTS.csv. */
  size_t n = strlen(a.source);
  char *points = NULL;
  if (history)
    points = history;
  else if (!run)
    points = n > 11 && !strcmp(a.source + n - 11, ".points.csv") ? hs_strdup(a.source)
                                                                 : hs_sweep_points_path(a.source);
  a.points = points;
  hs_plot_error err;
  int rc = hs_plot(&a, &err);
  if (rc == HS_EXIT_BADINPUT) cli_bad_input("plot", err.msg);
  else if (rc) fprintf(stderr, "hetsim plot: %s\n", err.msg);
  hs_free(points);
  hs_free(out);
  return rc;
}
