/* cmd_plot.c: `hetsim plot`: PNG and SVG figures of a sweep or of a run,
 * drawn by gnuplot.
 *
 * How: the data a figure needs is extracted here into plain whitespace-
 * separated temporary files (gnuplot's native input, no CSV quoting issues),
 * then a generated script sets the variables, the terminal and the output,
 * `load`s the figure's script from traces/plot/ (the look lives there, where
 * it can be edited without recompiling), switches to SVG and replots. gnuplot
 * runs as a child process (posix_spawnp), never through a shell, so no path
 * is ever interpreted. Rejected: a pipe to gnuplot's stdin (a failure midway
 * leaves no script to inspect; on failure the temporary folder is kept).
 *
 * Sweep (RESULTS.csv or RESULTS.points.csv): pareto.{png,svg} (energy against
 * makespan, coloured by policy.w_e or --color KEY, with the front) and
 * heatmap.{png,svg} (a metric over two grid keys; cells average the other
 * keys). Run folder (hetsim run --out DIR): allocation.{png,svg} from
 * devices.csv, gantt.{png,svg} from trace.json (hetsim run --trace) for
 * --rounds A-B. Reading is O(file size); the Gantt chart keeps only events
 * inside the chosen rounds. */
#include <errno.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_opts.h"
#include "commands.h"
#include "hs_alloc.h"
#include "hs_outfile.h"
#include "hs_sweep.h"

#ifndef HS_PLOT_DIR
#define HS_PLOT_DIR "traces/plot"
#endif

extern char **environ;

#define MAX_DEV_LEGEND 24
#define MAX_GANTT_DEV 64

static void plot_usage(FILE *out) {
  fprintf(out,
          "usage: hetsim plot SOURCE [--out DIR] [--x KEY] [--y KEY] [--z COLUMN]\n"
          "                   [--color KEY] [--rounds A-B] [--quiet]\n"
          "\n"
          "Draw figures with gnuplot, each as PNG and SVG, in DIR.\n"
          "\n"
          "SOURCE a sweep (RESULTS.csv or RESULTS.points.csv from hetsim sweep):\n"
          "  pareto.png/.svg   energy against makespan (means over seeds), coloured by\n"
          "                    --color KEY (default policy.w_e, else the first grid key\n"
          "                    with several values), the Pareto front drawn\n"
          "  heatmap.png/.svg  --z COLUMN of RESULTS.points.csv (default energy_j_mean)\n"
          "                    over grid keys --x and --y (default policy.w_e and\n"
          "                    policy.deadband, else the first two grid keys); a cell\n"
          "                    averages the points that differ in other keys only\n"
          "  DIR defaults to RESULTS-plots/\n"
          "SOURCE a run folder (hetsim run --out DIR [--trace]):\n"
          "  allocation.png/.svg  samples per device per round (devices.csv)\n"
          "  gantt.png/.svg       compute, communication and waiting per device for\n"
          "                       rounds A-B (default 0-2; needs trace.json: run with\n"
          "                       --trace)\n"
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

typedef struct plot_args {
  const char *source, *out, *x, *y, *z, *color, *rounds;
  bool quiet, help;
} plot_args;

/* --- small helpers ---------------------------------------------------------- */

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cli_bad_input("plot", msg);
}

/* A gnuplot single-quoted string: only ' needs escaping (doubled). */
static void gp_str(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s == '\n' ? ' ' : *s, f);
  }
  fputc('\'', f);
}

/* `set Xtics (" v0" 0, "v1" 1, ...)` as a gnuplot string variable to eval. */
static void gp_tics(FILE *f, const char *var, const char *axis, char **labels, size_t n) {
  /* The command goes inside a single-quoted string, labels inside double quotes. */
  fprintf(f, "%s = 'set %s (", var, axis);
  for (size_t i = 0; i < n; i++) {
    fputc('"', f);
    for (const char *s = labels[i]; *s; s++)
      if (*s != '"' && *s != '\'' && *s != '\\') fputc(*s, f);
    fprintf(f, "\" %zu%s", i, i + 1 < n ? ", " : "");
  }
  fprintf(f, ")'\n");
}

/* Split a CSV line in place (no quoting: hetsim writes none) into at most max
 * fields; returns the number of fields. With f NULL, only counts. */
static size_t split(char *line, char **f, size_t max) {
  line[strcspn(line, "\r")] = '\0';
  size_t n = 1;
  for (const char *c = line; *c; c++) n += *c == ',';
  if (!f) return n;
  char *p = line;
  for (size_t i = 0; i < n; i++) {
    char *c = strchr(p, ',');
    if (c) *c = '\0';
    if (i < max) f[i] = p;
    if (c) p = c + 1;
  }
  return n;
}

static long col_of(char **names, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return (long)i;
  return -1;
}

/* Distinct values in order of first appearance. */
typedef struct cats {
  char **v;
  size_t n;
} cats;

static size_t cat_index(cats *c, const char *s) {
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->v[i], s)) return i;
  c->v = hs_reallocarray(c->v, c->n + 1, sizeof *c->v);
  c->v[c->n] = hs_strdup(s);
  return c->n++;
}

static void cats_free(cats *c) {
  for (size_t i = 0; i < c->n; i++) hs_free(c->v[i]);
  hs_free(c->v);
  c->v = NULL;
  c->n = 0;
}

static char *path_join(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 2;
  char *p = hs_malloc(n);
  snprintf(p, n, "%s/%s", a, b);
  return p;
}

/* --- running gnuplot ---------------------------------------------------------- */

typedef struct plot_job {
  char tmp[512];    /* temporary folder for data and script */
  const char *out;  /* output folder */
  const char *gnuplot;
  const char *script_dir;
  bool keep;        /* gnuplot failed: leave the script for inspection */
} plot_job;

static FILE *tmp_file(plot_job *j, const char *name) {
  char *p = path_join(j->tmp, name);
  FILE *f = fopen(p, "w");
  hs_free(p);
  return f;
}

/* Close a figure's data files: `a`, and `b` when `two`. A NULL file is one
 * that failed to open. False, after the one-line message, if any open or
 * close failed. */
static bool close_data(const plot_job *j, FILE *a, FILE *b, bool two) {
  bool ok = a != NULL && (!two || b != NULL);
  if (a) ok &= fclose(a) == 0;
  if (b) ok &= fclose(b) == 0;
  if (!ok) fprintf(stderr, "hetsim plot: %s: cannot write temporary files\n", j->tmp);
  return ok;
}

static void remove_tmp(plot_job *j) {
  static const char *const names[] = {"data.dat", "front.dat", "bounds.dat", "script.gp"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *p = path_join(j->tmp, names[i]);
    unlink(p);
    hs_free(p);
  }
  rmdir(j->tmp);
}

/* Write script.gp: the variables (already in vars), then PNG, load, SVG, replot.
 * Returns the exit status for the command (0, or 1 with one line printed). */
static int render(plot_job *j, const char *vars, const char *figure, const char *stem,
                  bool quiet) {
  char *sp = path_join(j->tmp, "script.gp");
  FILE *f = fopen(sp, "w");
  if (!f) {
    fprintf(stderr, "hetsim plot: %s: cannot write: %s\n", sp, strerror(errno));
    hs_free(sp);
    return 1;
  }
  char *png = hs_malloc(strlen(j->out) + strlen(stem) + 8);
  char *svg = hs_malloc(strlen(j->out) + strlen(stem) + 8);
  sprintf(png, "%s/%s.png", j->out, stem);
  sprintf(svg, "%s/%s.svg", j->out, stem);
  char *fig = path_join(j->script_dir, figure);
  fputs(vars, f);
  fputs("set terminal pngcairo size 1100,720 noenhanced font 'Sans,11'\nset output ", f);
  gp_str(f, png);
  fputs("\nload ", f);
  gp_str(f, fig);
  fputs("\nset terminal svg size 1100,720 noenhanced font 'Sans,11' background rgb 'white'\n"
        "set output ", f);
  gp_str(f, svg);
  fputs("\nreplot\nunset output\n", f);
  int werr = ferror(f);
  if (fclose(f) != 0 || werr) {
    fprintf(stderr, "hetsim plot: %s: cannot write\n", sp);
    hs_free(sp), hs_free(png), hs_free(svg), hs_free(fig);
    return 1;
  }
  int rc = 0;
  if (access(fig, R_OK) != 0) {
    fprintf(stderr, "hetsim plot: %s: figure script missing (set HETSIM_PLOT_DIR to the "
                    "folder holding traces/plot/*.gp)\n", fig);
    rc = 1;
  } else {
    pid_t pid;
    char *argv[] = {(char *)(uintptr_t)j->gnuplot, sp, NULL};
    int e = posix_spawnp(&pid, j->gnuplot, NULL, NULL, argv, environ);
    int status = 0;
    if (e != 0) {
      fprintf(stderr, "hetsim plot: cannot run %s: %s (install the Debian package gnuplot-nox, "
                      "or set HETSIM_GNUPLOT to its path)\n", j->gnuplot, strerror(e));
      rc = 1;
    } else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
               WEXITSTATUS(status) != 0) {
      fprintf(stderr, "hetsim plot: gnuplot failed on %s (kept for inspection)\n", sp);
      j->keep = true;
      unlink(png); /* half-drawn figures must not pass for results */
      unlink(svg);
      rc = 1;
    } else if (!quiet) {
      printf("%s\n%s\n", png, svg);
    }
  }
  hs_free(sp), hs_free(png), hs_free(svg), hs_free(fig);
  return rc;
}

/* A growing text buffer for the variables part of a script. */
typedef struct vbuf {
  char *s;
  size_t len;
  FILE *f;
} vbuf;

static void vb_open(vbuf *v) {
  memset(v, 0, sizeof *v);
  v->f = open_memstream(&v->s, &v->len);
}

static const char *vb_text(vbuf *v) {
  fflush(v->f);
  return v->s;
}

static void vb_close(vbuf *v) {
  if (v->f) fclose(v->f);
  free(v->s); /* open_memstream memory is the C library's */
  memset(v, 0, sizeof *v);
}

/* --- sweeps ----------------------------------------------------------------- */

typedef struct table {
  char *text;
  char **col;      /* column names (into text) */
  size_t ncol;
  char ***row;     /* row[r][c] */
  size_t nrow;
  char *title;     /* from the "# hetsim sweep" line: the scenario */
} table;

static void table_free(table *t) {
  for (size_t r = 0; r < t->nrow; r++) hs_free(t->row[r]);
  hs_free(t->row);
  hs_free(t->col);
  hs_free(t->text);
  hs_free(t->title);
  memset(t, 0, sizeof *t);
}

/* Read a CSV with an optional leading '#' line; every row must have ncol fields. */
static int table_read(const char *path, table *t) {
  memset(t, 0, sizeof *t);
  hs_error err = {0};
  t->text = hs_read_file(path, NULL, &err);
  if (!t->text) return cli_bad_input("plot", err.msg);
  char *save = NULL, *line = strtok_r(t->text, "\n", &save);
  if (line && line[0] == '#') {
    const char *sc = strstr(line, "scenario ");
    if (sc) {
      sc += strlen("scenario ");
      size_t n = strcspn(sc, " |");
      t->title = hs_malloc(n + 1);
      memcpy(t->title, sc, n);
      t->title[n] = '\0';
    }
    line = strtok_r(NULL, "\n", &save);
  }
  if (!line) return bad("%s: no column header", path);
  size_t n = split(line, NULL, 0);
  t->col = hs_calloc(n, sizeof *t->col);
  t->ncol = split(line, t->col, n);
  size_t lineno = 2;
  for (line = strtok_r(NULL, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    lineno++;
    char **f = hs_calloc(t->ncol + 1, sizeof *f);
    size_t k = split(line, f, t->ncol + 1);
    if (k != t->ncol) {
      hs_free(f);
      char where[64];
      snprintf(where, sizeof where, "line %zu", lineno);
      return bad("%s: %s: wrong number of fields", path, where);
    }
    t->row = hs_reallocarray(t->row, t->nrow + 1, sizeof *t->row);
    t->row[t->nrow++] = f;
  }
  if (t->nrow == 0) return bad("%s: no rows", path);
  return 0;
}

static const char *unit_label(const char *col, char *buf, size_t cap) {
  const char *u = "";
  if (strstr(col, "makespan_s")) u = " (s)";
  else if (strstr(col, "_j_") || strstr(col, "energy_j")) u = " (J)";
  else if (strstr(col, "compute_cv")) u = " (dimensionless)";
  else if (strstr(col, "wait_fraction")) u = " (fraction of device-time)";
  snprintf(buf, cap, "%s%s", col, u);
  return buf;
}

static int plot_sweep(const plot_args *a, plot_job *j) {
  /* The per-point file: given directly, or next to RESULTS.csv. */
  size_t n = strlen(a->source);
  bool given_points = n > 11 && !strcmp(a->source + n - 11, ".points.csv");
  char *pp = given_points ? hs_strdup(a->source) : hs_sweep_points_path(a->source);
  if (access(pp, R_OK) != 0) {
    int rc = bad("%s: cannot read (%s; a sweep writes it when every row is done: run it again "
                 "with --resume)", pp, strerror(errno));
    hs_free(pp);
    return rc;
  }
  table t;
  int rc = table_read(pp, &t);
  long ci_seeds = rc ? -1 : col_of(t.col, t.ncol, "seeds");
  long ci_mk = rc ? -1 : col_of(t.col, t.ncol, "makespan_s_mean");
  long ci_e = rc ? -1 : col_of(t.col, t.ncol, "energy_j_mean");
  long ci_front = rc ? -1 : col_of(t.col, t.ncol, "pareto_front");
  if (!rc && (ci_seeds < 1 || ci_mk < 0 || ci_e < 0 || ci_front < 0 || strcmp(t.col[0], "point")))
    rc = bad("%s: line 2: not a hetsim sweep points header (point,<keys>,seeds,...)", pp);
  if (rc) {
    table_free(&t);
    hs_free(pp);
    return rc;
  }
  size_t nkeys = (size_t)ci_seeds - 1; /* grid keys are columns 1..nkeys */
  cats *kc = hs_calloc(nkeys + 1, sizeof *kc);
  for (size_t r = 0; r < t.nrow; r++)
    for (size_t k = 0; k < nkeys; k++) cat_index(&kc[k], t.row[r][1 + k]);
  char keys[512] = "";
  for (size_t k = 0; k < nkeys; k++)
    snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", k ? ", " : "", t.col[1 + k]);
  /* Choose colour, x and y keys. */
  long kcol = -1, kx = -1, ky = -1;
  if (a->color) {
    kcol = col_of(t.col + 1, nkeys, a->color);
    if (kcol < 0) rc = bad("--color %s: not a grid key of this sweep (keys: %s)", a->color, keys);
  } else {
    kcol = col_of(t.col + 1, nkeys, "policy.w_e");
    for (size_t k = 0; kcol < 0 && k < nkeys; k++)
      if (kc[k].n > 1) kcol = (long)k;
  }
  if (!rc && a->x && (kx = col_of(t.col + 1, nkeys, a->x)) < 0)
    rc = bad("--x %s: not a grid key of this sweep (keys: %s)", a->x, keys);
  if (!rc && a->y && (ky = col_of(t.col + 1, nkeys, a->y)) < 0)
    rc = bad("--y %s: not a grid key of this sweep (keys: %s)", a->y, keys);
  if (!rc && kx < 0) {
    kx = col_of(t.col + 1, nkeys, "policy.w_e");
    for (size_t k = 0; kx < 0 && k < nkeys; k++)
      if (kc[k].n > 1 && (long)k != ky) kx = (long)k;
    for (size_t k = 0; kx < 0 && k < nkeys; k++)
      if ((long)k != ky) kx = (long)k;
  }
  if (!rc && ky < 0) {
    if (kx != col_of(t.col + 1, nkeys, "policy.deadband"))
      ky = col_of(t.col + 1, nkeys, "policy.deadband");
    for (size_t k = 0; ky < 0 && k < nkeys; k++)
      if (kc[k].n > 1 && (long)k != kx) ky = (long)k;
    for (size_t k = 0; ky < 0 && k < nkeys; k++)
      if ((long)k != kx) ky = (long)k;
  }
  if (!rc && kx >= 0 && kx == ky) rc = bad("--x and --y: the same key %s", t.col[1 + kx]);
  const char *zname = a->z ? a->z : "energy_j_mean";
  long cz = col_of(t.col, t.ncol, zname);
  if (!rc && (cz <= ci_seeds || cz == ci_front))
    rc = bad("--z %s: not a metric column of %s (e.g. energy_j_mean, makespan_s_median)", zname, pp);
  hs_error merr = {0};
  if (!rc && hs_mkdir_p(j->out, &merr) != HS_OK) rc = bad("--out: %s", merr.msg);
  char title[600];
  snprintf(title, sizeof title, "sweep of %s", t.title ? t.title : pp);

  /* Figure 1: Pareto. */
  if (!rc) {
    FILE *d = tmp_file(j, "data.dat"), *fr = tmp_file(j, "front.dat");
    cats ccol = {0};
    double *fx = hs_malloc(t.nrow * sizeof *fx), *fy = hs_malloc(t.nrow * sizeof *fy);
    size_t nf = 0;
    for (size_t r = 0; d && r < t.nrow; r++) {
      size_t c = kcol >= 0 ? cat_index(&ccol, t.row[r][1 + kcol]) : 0;
      bool on = atoi(t.row[r][ci_front]) != 0;
      fprintf(d, "%s %s %zu %d\n", t.row[r][ci_mk], t.row[r][ci_e], c, on);
      if (on) {
        /* insertion by makespan: the front is small */
        double x = strtod(t.row[r][ci_mk], NULL), y = strtod(t.row[r][ci_e], NULL);
        size_t i = nf++;
        while (i > 0 && (fx[i - 1] > x || (fx[i - 1] == x && fy[i - 1] > y))) {
          fx[i] = fx[i - 1];
          fy[i] = fy[i - 1];
          i--;
        }
        fx[i] = x;
        fy[i] = y;
      }
    }
    for (size_t i = 0; fr && i < nf; i++) fprintf(fr, "%.10g %.10g\n", fx[i], fy[i]);
    hs_free(fx);
    hs_free(fy);
    if (!close_data(j, d, fr, true)) {
      rc = 1;
    } else {
      vbuf v;
      vb_open(&v);
      fputs("plot_title = ", v.f);
      gp_str(v.f, title);
      char *dp = path_join(j->tmp, "data.dat"), *fp = path_join(j->tmp, "front.dat");
      fputs("\ndatafile = ", v.f);
      gp_str(v.f, dp);
      fputs("\nfrontfile = ", v.f);
      gp_str(v.f, fp);
      fputs("\ncolorlabel = ", v.f);
      gp_str(v.f, kcol >= 0 ? t.col[1 + kcol] : "");
      bool categorical = false;
      for (size_t c = 0; c < ccol.n; c++) {
        char *end;
        strtod(ccol.v[c], &end);
        if (end == ccol.v[c] || *end) categorical = true;
      }
      fprintf(v.f, "\nncolors = %zu\ncategorical = %d\n", ccol.n ? ccol.n : 1, categorical);
      if (ccol.n) gp_tics(v.f, "cbtics_cmd", "cbtics", ccol.v, ccol.n);
      else fputs("cbtics_cmd = ''\n", v.f);
      rc = render(j, vb_text(&v), "sweep_pareto.gp", "pareto", a->quiet);
      vb_close(&v);
      hs_free(dp);
      hs_free(fp);
    }
    cats_free(&ccol);
  }

  /* Figure 2: heat map over (x, y). */
  if (!rc && (kx < 0 || ky < 0)) {
    if (!a->quiet) printf("heatmap skipped: the sweep has fewer than two grid keys (%s)\n", keys);
  } else if (!rc) {
    size_t nx = kc[kx].n, ny = kc[ky].n;
    double *sum = hs_calloc(nx * ny, sizeof *sum);
    size_t *cnt = hs_calloc(nx * ny, sizeof *cnt);
    for (size_t r = 0; r < t.nrow; r++) {
      size_t ix = cat_index(&kc[kx], t.row[r][1 + kx]), iy = cat_index(&kc[ky], t.row[r][1 + ky]);
      sum[ix * ny + iy] += strtod(t.row[r][cz], NULL);
      cnt[ix * ny + iy]++;
    }
    FILE *d = tmp_file(j, "data.dat");
    for (size_t ix = 0; d && ix < nx; ix++) {
      for (size_t iy = 0; iy < ny; iy++) {
        if (cnt[ix * ny + iy]) fprintf(d, "%zu %zu %.10g\n", ix, iy, sum[ix * ny + iy] / (double)cnt[ix * ny + iy]);
        else fprintf(d, "%zu %zu NaN\n", ix, iy);
      }
      fputc('\n', d);
    }
    hs_free(sum);
    hs_free(cnt);
    if (!close_data(j, d, NULL, false)) {
      rc = 1;
    } else {
      vbuf v;
      vb_open(&v);
      char zl[200], ht[800];
      bool averaged = nkeys > 2;
      snprintf(ht, sizeof ht, "%s: %s%s", title, zname,
               averaged ? " (cells average the other grid keys)" : "");
      fputs("plot_title = ", v.f);
      gp_str(v.f, ht);
      char *dp = path_join(j->tmp, "data.dat");
      fputs("\ndatafile = ", v.f);
      gp_str(v.f, dp);
      fputs("\nxlabel_text = ", v.f);
      gp_str(v.f, t.col[1 + kx]);
      fputs("\nylabel_text = ", v.f);
      gp_str(v.f, t.col[1 + ky]);
      fputs("\nzlabel_text = ", v.f);
      gp_str(v.f, unit_label(zname, zl, sizeof zl));
      fprintf(v.f, "\nnx = %zu\nny = %zu\nshow_labels = %d\nzfmt = '%%.4g'\n", nx, ny,
              nx * ny <= 120);
      gp_tics(v.f, "xtics_cmd", "xtics", kc[kx].v, nx);
      gp_tics(v.f, "ytics_cmd", "ytics", kc[ky].v, ny);
      rc = render(j, vb_text(&v), "sweep_heatmap.gp", "heatmap", a->quiet);
      vb_close(&v);
      hs_free(dp);
    }
  }
  for (size_t k = 0; k < nkeys; k++) cats_free(&kc[k]);
  hs_free(kc);
  table_free(&t);
  hs_free(pp);
  return rc;
}

/* --- runs ------------------------------------------------------------------- */

static char *run_title(const char *dir) {
  char *p = path_join(dir, "summary.json");
  char *text = hs_read_file(p, NULL, &(hs_error){0});
  hs_free(p);
  char buf[512];
  snprintf(buf, sizeof buf, "%s", dir);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  if (j) {
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "scenario");
    const cJSON *po = cJSON_GetObjectItemCaseSensitive(j, "policy");
    const cJSON *re = cJSON_GetObjectItemCaseSensitive(j, "regime");
    if (cJSON_IsString(sc) && cJSON_IsString(po))
      snprintf(buf, sizeof buf, "%s, %s, policy %s", sc->valuestring,
               cJSON_IsString(re) ? re->valuestring : "?", po->valuestring);
  }
  cJSON_Delete(j);
  hs_free(text);
  return hs_strdup(buf);
}

/* The run figures check everything they read first; with draw false they
 * stop there, so that a bad input found by the second figure (a --rounds
 * beyond the run) does not leave the first one drawn. */
static int plot_allocation(const plot_args *a, plot_job *j, const char *title, bool draw) {
  char *p = path_join(a->source, "devices.csv");
  table t;
  int rc = access(p, R_OK) ? bad("%s: cannot read (is %s a folder written by hetsim run --out?)",
                                 p, a->source)
                           : table_read(p, &t);
  if (rc) {
    hs_free(p);
    return rc;
  }
  long cr = col_of(t.col, t.ncol, "round"), cd = col_of(t.col, t.ncol, "device"),
       cs = col_of(t.col, t.ncol, "samples");
  if (cr < 0 || cd < 0 || cs < 0) {
    rc = bad("%s: line 1: expected the columns round, device, samples", p);
  } else if (draw) {
    cats dev = {0};
    long maxround = 0;
    for (size_t r = 0; r < t.nrow; r++) {
      cat_index(&dev, t.row[r][cd]);
      long rr = atol(t.row[r][cr]);
      if (rr > maxround) maxround = rr;
    }
    FILE *d = tmp_file(j, "data.dat");
    for (size_t k = 0; d && k < dev.n; k++) {
      for (size_t r = 0; r < t.nrow; r++)
        if (!strcmp(t.row[r][cd], dev.v[k])) fprintf(d, "%s %s\n", t.row[r][cr], t.row[r][cs]);
      fputs("\n\n", d);
    }
    if (!close_data(j, d, NULL, false)) {
      rc = 1;
    } else {
      vbuf v;
      vb_open(&v);
      char tt[700];
      snprintf(tt, sizeof tt, "allocation per device: %s", title);
      fputs("plot_title = ", v.f);
      gp_str(v.f, tt);
      char *dp = path_join(j->tmp, "data.dat");
      fputs("\ndatafile = ", v.f);
      gp_str(v.f, dp);
      fputs("\nnames = '", v.f);
      for (size_t k = 0; k < dev.n; k++) {
        for (const char *s = dev.v[k]; *s; s++) fputc(*s == '\'' || *s == ' ' ? '_' : *s, v.f);
        fputc(k + 1 < dev.n ? ' ' : '\'', v.f);
      }
      if (!dev.n) fputc('\'', v.f);
      fprintf(v.f, "\nshow_titles = %d\nnrounds = %ld\n", dev.n <= MAX_DEV_LEGEND, maxround + 1);
      rc = render(j, vb_text(&v), "run_allocation.gp", "allocation", a->quiet);
      vb_close(&v);
      hs_free(dp);
    }
    cats_free(&dev);
  }
  table_free(&t);
  hs_free(p);
  return rc;
}

static int plot_gantt(const plot_args *a, plot_job *j, const char *title, bool draw) {
  char *tp = path_join(a->source, "trace.json"), *rp = path_join(a->source, "rounds.csv");
  int rc = 0;
  table rt = {0};
  char *text = NULL;
  cJSON *root = NULL;
  if (access(tp, R_OK) != 0) {
    if (a->rounds)
      rc = bad("--rounds: %s: no trace to draw (run hetsim run with --trace)", tp);
    else if (draw && !a->quiet)
      printf("gantt skipped: no %s (run hetsim run with --trace)\n", tp);
    goto done;
  }
  long r0 = 0, r1 = 2;
  if (a->rounds) {
    char *e;
    r0 = strtol(a->rounds, &e, 10);
    r1 = *e == '-' ? strtol(e + 1, &e, 10) : r0;
    if (*e || r0 < 0 || r1 < r0) {
      rc = bad("--rounds %s: expected A-B or A (round numbers from 0, A <= B)", a->rounds);
      goto done;
    }
  }
  if ((rc = table_read(rp, &rt))) goto done;
  long cr = col_of(rt.col, rt.ncol, "round"), cs = col_of(rt.col, rt.ncol, "start_s"),
       ce = col_of(rt.col, rt.ncol, "end_s");
  if (cr < 0 || cs < 0 || ce < 0) {
    rc = bad("%s: line 1: expected the columns round, start_s, end_s", rp);
    goto done;
  }
  long last = (long)rt.nrow - 1;
  if (r0 > last) {
    char lim[32];
    snprintf(lim, sizeof lim, "%ld", last);
    rc = bad("--rounds: the run has rounds 0-%s only (%s)", lim, a->rounds ? a->rounds : "0-2");
    goto done;
  }
  if (r1 > last) r1 = last;
  double t0 = strtod(rt.row[r0][cs], NULL), t1 = strtod(rt.row[r1][ce], NULL);
  hs_error err = {0};
  text = hs_read_file(tp, NULL, &err);
  root = text ? cJSON_Parse(text) : NULL;
  const cJSON *ev = root ? cJSON_GetObjectItemCaseSensitive(root, "traceEvents") : NULL;
  if (!cJSON_IsArray(ev)) {
    rc = bad("%s: not a Chrome trace (expected an object with traceEvents)", tp);
    goto done;
  }
  if (!draw) goto done;
  /* Track names by tid. */
  size_t ndev = 0;
  char **names = NULL;
  const cJSON *e;
  cJSON_ArrayForEach(e, ev) {
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    if (!cJSON_IsString(ph) || !cJSON_IsNumber(tid) || tid->valuedouble < 0) continue;
    size_t id = (size_t)tid->valuedouble;
    if (id >= MAX_GANTT_DEV) continue;
    if (id >= ndev) {
      names = hs_reallocarray(names, id + 1, sizeof *names);
      for (size_t k = ndev; k <= id; k++) names[k] = NULL;
      ndev = id + 1;
    }
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *nm = args ? cJSON_GetObjectItemCaseSensitive(args, "name") : NULL;
    if (!strcmp(ph->valuestring, "M") && cJSON_IsString(nm) && !names[id])
      names[id] = hs_strdup(nm->valuestring);
  }
  FILE *d = tmp_file(j, "data.dat"), *b = tmp_file(j, "bounds.dat");
  static const char *const kinds[3] = {"compute", "comm", "wait"};
  for (int k = 0; d && k < 3; k++) {
    size_t nk = 0;
    cJSON_ArrayForEach(e, ev) {
      const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
      const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
      const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
      const cJSON *du = cJSON_GetObjectItemCaseSensitive(e, "dur");
      if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") || !cJSON_IsString(nm) ||
          strcmp(nm->valuestring, kinds[k]) || !cJSON_IsNumber(tid) || !cJSON_IsNumber(ts) ||
          !cJSON_IsNumber(du) || tid->valuedouble < 0 || tid->valuedouble >= (double)ndev)
        continue;
      double s = ts->valuedouble * 1e-6, f = s + du->valuedouble * 1e-6;
      if (f <= t0 || s >= t1) continue;
      if (s < t0) s = t0;
      if (f > t1) f = t1;
      fprintf(d, "%.9g %.0f %.9g 0.38\n", (s + f) / 2, tid->valuedouble, (f - s) / 2);
      nk++;
    }
    /* An empty block would make gnuplot stop: one invisible zero-width box. */
    if (!nk) fprintf(d, "%.9g 0 0 0\n", t0);
    fputs("\n\n", d);
  }
  for (long r = r0; b && r <= r1; r++)
    fprintf(b, "%s -0.6 0 %zu\n", rt.row[r][cs], ndev);
  if (b) fprintf(b, "%.9g -0.6 0 %zu\n", t1, ndev);
  if (!close_data(j, d, b, true)) {
    rc = 1;
  } else {
    vbuf v;
    vb_open(&v);
    char tt[800];
    snprintf(tt, sizeof tt, "rounds %ld-%ld: %s%s", r0, r1, title,
             ndev == MAX_GANTT_DEV ? " (first 64 devices)" : "");
    fputs("plot_title = ", v.f);
    gp_str(v.f, tt);
    char *dp = path_join(j->tmp, "data.dat"), *bp = path_join(j->tmp, "bounds.dat");
    fputs("\ndatafile = ", v.f);
    gp_str(v.f, dp);
    fputs("\nboundfile = ", v.f);
    gp_str(v.f, bp);
    fprintf(v.f, "\nndev = %zu\n", ndev ? ndev : 1);
    char **lab = hs_calloc(ndev + 1, sizeof *lab);
    for (size_t k = 0; k < ndev; k++) lab[k] = names[k] ? names[k] : (char *)"?";
    gp_tics(v.f, "ytics_cmd", "ytics", lab, ndev);
    hs_free(lab);
    rc = render(j, vb_text(&v), "run_gantt.gp", "gantt", a->quiet);
    vb_close(&v);
    hs_free(dp);
    hs_free(bp);
  }
  for (size_t k = 0; k < ndev; k++) hs_free(names[k]);
  hs_free(names);
done:
  cJSON_Delete(root);
  hs_free(text);
  table_free(&rt);
  hs_free(tp);
  hs_free(rp);
  return rc;
}

/* --- the command -------------------------------------------------------------- */


int hs_cmd_plot(int argc, char **argv) {
  plot_args a = {0};
  static const char *const valued[] = {"--out", "--x", "--y", "--z", "--color", "--rounds"};
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    bool matched = false;
    for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !matched; k++) {
      if (!cli_is_opt(s, valued[k])) continue;
      matched = true;
      const char *v = cli_opt_value(argc, argv, &i, valued[k]);
      if (!v || !*v) return bad("%s: expected a value (see hetsim plot --help)", valued[k]);
      const char **slot[] = {&a.out, &a.x, &a.y, &a.z, &a.color, &a.rounds};
      *slot[k] = v;
    }
    if (matched) continue;
    if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
      plot_usage(stdout);
      return 0;
    } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
      a.quiet = true;
    } else if (s[0] == '-' && s[1]) {
      return bad("unknown option \"%.100s\" (see hetsim plot --help)", s);
    } else if (a.source) {
      return bad("one source at a time (got \"%.200s\" and \"%.200s\")", a.source, s);
    } else {
      a.source = s;
    }
  }
  if (!a.source)
    return bad("expected a sweep's RESULTS.csv or a run folder (see hetsim plot --help)");
  struct stat st;
  if (stat(a.source, &st) != 0) return bad("%s: %s", a.source, strerror(errno));
  bool run = S_ISDIR(st.st_mode);
  if (run && (a.x || a.y || a.z || a.color))
    return bad("%s: a run folder: --x, --y, --z and --color are for sweeps", a.source);
  if (!run && a.rounds)
    return bad("%s: a sweep: --rounds is for run folders", a.source);

  plot_job j = {0};
  const char *tmpdir = getenv("TMPDIR");
  snprintf(j.tmp, sizeof j.tmp, "%s/hetsim-plot-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(j.tmp)) {
    fprintf(stderr, "hetsim plot: %s: cannot create a temporary folder: %s\n", j.tmp,
            strerror(errno));
    return 1;
  }
  j.gnuplot = getenv("HETSIM_GNUPLOT") && *getenv("HETSIM_GNUPLOT") ? getenv("HETSIM_GNUPLOT")
                                                                      : "gnuplot";
  j.script_dir = getenv("HETSIM_PLOT_DIR") && *getenv("HETSIM_PLOT_DIR") ? getenv("HETSIM_PLOT_DIR")
                                                                           : HS_PLOT_DIR;
  char *out = NULL;
  if (a.out) {
    out = hs_strdup(a.out);
  } else if (run) {
    out = path_join(a.source, "plots");
  } else {
    size_t n = strlen(a.source);
    size_t cut = n > 11 && !strcmp(a.source + n - 11, ".points.csv") ? n - 11
                 : n > 4 && !strcmp(a.source + n - 4, ".csv")      ? n - 4
                                                                   : n;
    out = hs_malloc(cut + 8);
    memcpy(out, a.source, cut);
    memcpy(out + cut, "-plots", 7);
  }
  j.out = out;
  int rc = 0;
  /* The output folder is made once the inputs are checked (for a sweep, in
   * plot_sweep): bad input leaves nothing behind. */
  if (run) {
    char *title = run_title(a.source);
    rc = plot_allocation(&a, &j, title, false);
    if (!rc) rc = plot_gantt(&a, &j, title, false);
    hs_error merr = {0};
    if (!rc && hs_mkdir_p(out, &merr) != HS_OK) rc = bad("--out: %s", merr.msg);
    if (!rc) rc = plot_allocation(&a, &j, title, true);
    if (!rc) rc = plot_gantt(&a, &j, title, true);
    hs_free(title);
  } else {
    rc = plot_sweep(&a, &j);
  }
  if (!j.keep) remove_tmp(&j);
  hs_free(out);
  return rc;
}
