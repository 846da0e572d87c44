/* plot_core.c: the shared core of `hetsim plot` (see hs_plot.h): the driver
 * that walks the figure registry, CSV tables, gnuplot quoting, temporary
 * files, and running gnuplot.
 *
 * How a figure is drawn: its data is extracted into plain whitespace-
 * separated temporary files (gnuplot's native input, no CSV quoting issues),
 * then a generated script sets the variables, the terminal and the output,
 * `load`s the figure's script from traces/plot/ (the look lives there, where
 * it can be edited without recompiling), switches to SVG and replots. gnuplot
 * runs as a child process (posix_spawnp), never through a shell, so no path
 * is ever interpreted. Rejected: a pipe to gnuplot's stdin (a failure midway
 * leaves no script to inspect; on failure the temporary folder is kept).
 *
 * The driver checks every figure of the source's kind (draw false) before
 * the output folder is made, then draws them in registry order and stops at
 * the first failure: bad input never leaves a figure or a folder behind.
 * Tables are read with the one CSV reader (hs_csv.h: RFC 4180, NUL bytes
 * refused with their line), each row copied into one block: O(file size). */
#include "plot_core.h"

#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "traces/hs_csv.h"
#include "traces/hs_outfile.h"
#include "base/hs_util.h"

extern char **environ;

/* --- errors ------------------------------------------------------------------ */

int plot_error(plot_ctx *c, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  c->err->code = code;
  vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
  va_end(ap);
  return code;
}

/* --- tables and categories --------------------------------------------------- */

long plot_col(char **names, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(names[i], name)) return (long)i;
  return -1;
}

void plot_table_free(plot_table *t) {
  for (size_t r = 0; r < t->nrow; r++) hs_free(t->row[r]);
  hs_free(t->row);
  hs_free(t->col);
  hs_free(t->title);
  memset(t, 0, sizeof *t);
}

/* The current record's n fields as one block: n pointers, then the texts. */
static char **copy_record(const hs_csv *r, size_t n) {
  size_t bytes = n * sizeof(char *);
  for (size_t i = 0; i < n; i++) bytes += strlen(hs_csv_field(r, i)) + 1;
  char **f = hs_malloc(bytes);
  char *p = (char *)(f + n);
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(hs_csv_field(r, i)) + 1;
    memcpy(p, hs_csv_field(r, i), len);
    f[i] = p;
    p += len;
  }
  return f;
}

int plot_table_read(plot_ctx *c, const char *path, plot_table *t) {
  memset(t, 0, sizeof *t);
  hs_error err = {0};
  size_t len;
  char *text = hs_read_file(path, &len, &err);
  if (!text) return plot_bad(c, "%s", err.msg);
  int rc = 0;
  hs_csv *r = hs_csv_create(text, len, path, HS_CSV_SKIP_BLANK, &err);
  if (!r) {
    rc = plot_bad(c, "%s", err.msg);
    goto done;
  }
  if (text[0] == '#') { /* "# hetsim sweep v1 | scenario NAME ...": the title */
    size_t eol = strcspn(text, "\n");
    const char *sc = strstr(text, "scenario ");
    if (sc && (size_t)(sc - text) < eol) {
      sc += strlen("scenario ");
      size_t n = strcspn(sc, " |\r\n");
      t->title = hs_malloc(n + 1);
      memcpy(t->title, sc, n);
      t->title[n] = '\0';
    }
    hs_csv_skip_line(r);
  }
  int k = hs_csv_next(r, &err);
  if (k < 0) {
    rc = plot_bad(c, "%s", err.msg);
    goto done;
  }
  if (k == 0) {
    rc = plot_bad(c, "%s: no column header", path);
    goto done;
  }
  t->ncol = hs_csv_nfields(r);
  t->col = copy_record(r, t->ncol);
  while ((k = hs_csv_next(r, &err)) > 0) {
    if (hs_csv_nfields(r) != t->ncol) {
      rc = plot_bad(c, "%s: line %zu: wrong number of fields", path, hs_csv_line(r));
      goto done;
    }
    t->row = hs_reallocarray(t->row, t->nrow + 1, sizeof *t->row);
    t->row[t->nrow++] = copy_record(r, t->ncol);
  }
  if (k < 0) rc = plot_bad(c, "%s", err.msg);
  else if (t->nrow == 0) rc = plot_bad(c, "%s: no rows", path);
done:
  hs_csv_destroy(r);
  hs_free(text);
  return rc;
}

size_t plot_cat_index(plot_cats *c, const char *s) {
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->v[i], s)) return i;
  c->v = hs_reallocarray(c->v, c->n + 1, sizeof *c->v);
  c->v[c->n] = hs_strdup(s);
  return c->n++;
}

void plot_cats_free(plot_cats *c) {
  for (size_t i = 0; i < c->n; i++) hs_free(c->v[i]);
  hs_free(c->v);
  c->v = NULL;
  c->n = 0;
}

/* --- gnuplot text -------------------------------------------------------------- */

/* Only ' needs escaping (doubled) in a single-quoted gnuplot string. */
void plot_gp_str(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s == '\n' ? ' ' : *s, f);
  }
  fputc('\'', f);
}

void plot_gp_tics(FILE *f, const char *var, const char *axis, char **labels, size_t n) {
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

void plot_vars_open(const plot_ctx *c, plot_vars *v, const char *title) {
  memset(v, 0, sizeof *v);
  v->f = open_memstream(&v->s, &v->len);
  fputs("plot_title = ", v->f);
  plot_gp_str(v->f, title);
  char *dp = plot_tmp_path(c, "data.dat");
  fputs("\ndatafile = ", v->f);
  plot_gp_str(v->f, dp);
  hs_free(dp);
}

static void vars_close(plot_vars *v) {
  if (v->f) fclose(v->f);
  free(v->s); /* open_memstream memory is the C library's */
  memset(v, 0, sizeof *v);
}

/* --- temporary files ------------------------------------------------------------ */

char *plot_tmp_path(const plot_ctx *c, const char *name) { return hs_path_join(c->tmp, name); }

FILE *plot_tmp_file(const plot_ctx *c, const char *name) {
  char *p = plot_tmp_path(c, name);
  FILE *f = fopen(p, "w");
  hs_free(p);
  return f;
}

bool plot_close_data(plot_ctx *c, FILE *a, FILE *b, bool two) {
  bool ok = a != NULL && (!two || b != NULL);
  if (a) ok &= fclose(a) == 0;
  if (b) ok &= fclose(b) == 0;
  if (!ok) plot_fail(c, "%s: cannot write temporary files", c->tmp);
  return ok;
}

static void remove_tmp(plot_ctx *c) {
  static const char *const names[] = {"data.dat", "front.dat", "bounds.dat", "script.gp"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *p = plot_tmp_path(c, names[i]);
    unlink(p);
    hs_free(p);
  }
  rmdir(c->tmp);
}

/* --- rendering ------------------------------------------------------------------ */

int plot_render(plot_ctx *c, plot_vars *vars, const plot_figure *fig) {
  const char *out = c->a->out;
  fflush(vars->f);
  char *sp = plot_tmp_path(c, "script.gp");
  FILE *f = fopen(sp, "w");
  if (!f) {
    int rc = plot_fail(c, "%s: cannot write: %s", sp, strerror(errno));
    hs_free(sp);
    vars_close(vars);
    return rc;
  }
  char *png = hs_malloc(strlen(out) + strlen(fig->name) + 8);
  char *svg = hs_malloc(strlen(out) + strlen(fig->name) + 8);
  sprintf(png, "%s/%s.png", out, fig->name);
  sprintf(svg, "%s/%s.svg", out, fig->name);
  char *script = hs_path_join(c->a->script_dir, fig->script);
  fputs(vars->s, f);
  fputs("set terminal pngcairo size 1100,720 noenhanced font 'Sans,11'\nset output ", f);
  plot_gp_str(f, png);
  fputs("\nload ", f);
  plot_gp_str(f, script);
  fputs("\nset terminal svg size 1100,720 noenhanced font 'Sans,11' background rgb 'white'\n"
        "set output ", f);
  plot_gp_str(f, svg);
  fputs("\nreplot\nunset output\n", f);
  int werr = ferror(f);
  int rc = 0;
  if (fclose(f) != 0 || werr) {
    rc = plot_fail(c, "%s: cannot write", sp);
  } else if (access(script, R_OK) != 0) {
    rc = plot_fail(c, "%s: figure script missing (set HETSIM_PLOT_DIR to the folder holding "
                      "traces/plot/*.gp)", script);
  } else {
    pid_t pid;
    char *argv[] = {(char *)(uintptr_t)c->a->gnuplot, sp, NULL};
    int e = posix_spawnp(&pid, c->a->gnuplot, NULL, NULL, argv, environ);
    int status = 0;
    if (e != 0) {
      rc = plot_fail(c, "cannot run %s: %s (install the Debian package gnuplot-nox, or set "
                        "HETSIM_GNUPLOT to its path)", c->a->gnuplot, strerror(e));
    } else if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      rc = plot_fail(c, "gnuplot failed on %s (kept for inspection)", sp);
      c->keep = true;
      unlink(png); /* half-drawn figures must not pass for results */
      unlink(svg);
    } else if (!c->a->quiet) {
      printf("%s\n%s\n", png, svg);
    }
  }
  hs_free(sp), hs_free(png), hs_free(svg), hs_free(script);
  vars_close(vars);
  return rc;
}

/* --- the driver ------------------------------------------------------------------ */

int hs_plot(const hs_plot_args *a, hs_plot_error *err) {
  plot_ctx c = {.a = a, .err = err};
  err->code = 0;
  err->msg[0] = '\0';
  const char *tmpdir = getenv("TMPDIR");
  snprintf(c.tmp, sizeof c.tmp, "%s/hetsim-plot-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
  if (!mkdtemp(c.tmp))
    return plot_fail(&c, "%s: cannot create a temporary folder: %s", c.tmp, strerror(errno));
  HS_ASSERT(plot_nfigures <= sizeof c.fig_state / sizeof c.fig_state[0], "room for every figure");
  int rc = 0;
  if (a->kind == HS_PLOT_SWEEP) rc = plot_sweep_open(&c);
  else if (a->kind == HS_PLOT_RUN) c.run_title = plot_run_title(a->source);
  for (size_t i = 0; i < plot_nfigures && !rc; i++) {
    const plot_figure *f = plot_figures[i];
    if (f->kind != a->kind) continue;
    c.fig_state[i] = hs_calloc(1, f->state_size ? f->state_size : 1);
    rc = f->check(&c, c.fig_state[i]);
  }
  hs_error merr = {0};
  if (!rc && hs_mkdir_p(a->out, &merr) != HS_OK) rc = plot_fail(&c, "--out: %s", merr.msg);
  for (size_t i = 0; i < plot_nfigures && !rc; i++)
    if (plot_figures[i]->kind == a->kind)
      rc = plot_figures[i]->draw(&c, c.fig_state[i], plot_figures[i]);
  for (size_t i = 0; i < plot_nfigures; i++) {
    if (c.fig_state[i] && plot_figures[i]->fini) plot_figures[i]->fini(c.fig_state[i]);
    hs_free(c.fig_state[i]);
  }
  if (a->kind == HS_PLOT_SWEEP) plot_sweep_close(&c.sweep);
  hs_free(c.run_title);
  if (!c.keep) remove_tmp(&c);
  return rc;
}
