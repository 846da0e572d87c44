/* optimize_files.c: the files of a search (hs_opt_search.h): FILE's header
 * and rows, resume (reading FILE back, cutting a torn last line), and the
 * writers of the sorted FILE, FILE.front.csv and FILE.history.csv.
 *
 * Invariants: FILE's rows are appended one write(2) each (O_APPEND), so a
 * kill leaves whole lines plus at most one torn line, which resume cuts;
 * a row read back must have exactly the columns of the header it follows
 * (sub, index, one text per variable, one number per sweep metric), else
 * resume refuses the file naming the line. The final three files are built
 * in memory and written with hs_write_file_atomic (temporary name, rename):
 * a reader sees the old file or the new one, never half. Cost: O(rows x
 * columns) to write, O(rows^2) for the front (hs_opt_front).
 * Rejected: rewriting FILE in place at the end (a kill during it would lose
 * the evaluations that resume needs). */
#include "optimize_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim/hs_metrics.h"
#include "traces/hs_outfile.h"

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

char *opt_header(const hs_opt_search *s) {
  const hs_opt_job *a = s->a;
  sbuf b = {0};
  const char *base = strrchr(a->scenario, '/');
  base = base ? base + 1 : a->scenario;
  char num[96];
  sb_str(&b, "# hetsim optimize v1 | scenario ");
  sb_str(&b, base);
  sb_str(&b, " | objective ");
  sb_str(&b, a->objective);
  snprintf(num, sizeof num, " | budget %zu | weights %zu | algorithm %s | seed %s", a->budget,
           a->weights, a->algorithm ? a->algorithm : "GN_DIRECT_L", a->seed ? a->seed : "scenario");
  sb_str(&b, num);
  for (size_t i = 0; i < a->nset; i++) {
    sb_str(&b, " | set ");
    sb_str(&b, a->set[i].key);
    sb_str(&b, "=");
    sb_str(&b, a->set[i].value);
  }
  for (size_t v = 0; v < s->nvars; v++) {
    sb_str(&b, " | vary ");
    sb_str(&b, s->vars[v].spec);
  }
  sb_str(&b, "\nsub,index");
  for (size_t v = 0; v < s->nvars; v++) {
    sb_str(&b, ",");
    sb_str(&b, s->vars[v].key);
  }
  for (size_t m = 0; m < hs_metric_sweep_count(); m++) {
    sb_str(&b, ",");
    sb_str(&b, hs_metric_sweep_at(m)->name);
  }
  sb_str(&b, "\n");
  return b.s;
}

size_t opt_format_eval(const hs_opt_search *s, const hs_opt_eval *e, char *buf, size_t cap) {
  size_t off = (size_t)snprintf(buf, cap, "%zu,%zu", e->sub, e->index);
  for (size_t v = 0; v < s->nvars && off < cap; v++)
    off += (size_t)snprintf(buf + off, cap - off, ",%s", e->text[v]);
  for (size_t m = 0; m < hs_metric_sweep_count() && off < cap; m++)
    off += (size_t)snprintf(buf + off, cap - off, ",%.17g", e->extra[m]);
  if (off < cap) off += (size_t)snprintf(buf + off, cap - off, "\n");
  return off < cap ? off : cap;
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

/* One row of FILE (NUL-terminated, no '\n') into e; false when it is not
 * a row of this search. */
static bool parse_row(const hs_opt_search *s, char *line, hs_opt_eval *e) {
  size_t nm = hs_metric_sweep_count();
  e->text = hs_calloc(s->nvars, sizeof *e->text);
  e->extra = hs_calloc(nm, sizeof *e->extra);
  char *save = NULL, *tok = strtok_r(line, ",", &save);
  bool ok = tok && sscanf(tok, "%zu", &e->sub) == 1;
  tok = ok ? strtok_r(NULL, ",", &save) : NULL;
  ok = tok && sscanf(tok, "%zu", &e->index) == 1;
  for (size_t v = 0; ok && v < s->nvars; v++) {
    tok = strtok_r(NULL, ",", &save);
    ok = tok != NULL;
    if (ok) e->text[v] = hs_strdup(tok);
  }
  for (size_t m = 0; ok && m < nm; m++) {
    tok = strtok_r(NULL, ",", &save);
    char *ep;
    ok = tok && (e->extra[m] = strtod(tok, &ep), *ep == '\0');
  }
  return ok && strtok_r(NULL, ",", &save) == NULL;
}

/* Parse FILE's rows (after the header hdr) into prior[]. Returns the length
 * of the whole-lines prefix to keep, or (size_t)-1 with err set. */
static size_t read_prior(const hs_opt_search *s, const char *text, size_t len, const char *hdr,
                         hs_opt_eval **prior, size_t *nprior, hs_error *err) {
  size_t hl = strlen(hdr);
  if (len < hl || memcmp(text, hdr, hl)) {
    hs_error_set(err, HS_EINVAL,
                 "%s: another search (its first two lines differ): remove it or change --out",
                 s->a->out);
    return (size_t)-1;
  }
  size_t cnt = 0, keep = hl;
  for (size_t i = hl; i < len; i++) cnt += text[i] == '\n';
  *prior = hs_calloc(cnt + 1, sizeof **prior);
  *nprior = 0;
  const char *p = text + hl, *end = text + len;
  for (size_t lineno = 3; p < end; lineno++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) break; /* torn last line: cut */
    char *line = hs_malloc((size_t)(nl - p) + 1);
    memcpy(line, p, (size_t)(nl - p));
    line[nl - p] = '\0';
    hs_opt_eval e = {0};
    bool ok = parse_row(s, line, &e);
    hs_free(line);
    if (ok)
      for (size_t k = 0; k < 2; k++) e.f[k] = s->sign[k] * e.extra[s->obj[k]];
    (*prior)[(*nprior)++] = e; /* freed with the others, whole or not */
    if (!ok) {
      hs_error_set(err, HS_EINVAL, "%s: line %zu: not an evaluation row of this search", s->a->out,
                   lineno);
      return (size_t)-1;
    }
    p = nl + 1;
    keep = (size_t)(p - text);
  }
  return keep;
}

hs_status opt_open_file(hs_opt_search *s, const char *hdr, hs_opt_eval **prior, size_t *nprior,
                        hs_error *err) {
  const hs_opt_job *a = s->a;
  hs_status st = HS_OK;
  size_t len = 0;
  char *old = slurp(a->out, &len);
  if (old && !a->resume) {
    st = hs_error_set(err, HS_EINVAL, "%s exists: add --resume to continue it, or remove it",
                      a->out);
  } else if (old && len > 0) {
    size_t keep = read_prior(s, old, len, hdr, prior, nprior, err);
    if (keep == (size_t)-1) st = HS_EINVAL;
    else if (keep < len && truncate(a->out, (off_t)keep) != 0)
      st = hs_error_set(err, HS_EIO, "%s: cannot cut its torn last line: %s", a->out,
                        strerror(errno));
  }
  hs_free(old);
  if (st != HS_OK) return st;
  s->fd = open(a->out, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (s->fd < 0) return hs_error_set(err, HS_EIO, "%s: cannot open: %s", a->out, strerror(errno));
  if (len == 0 && write(s->fd, hdr, strlen(hdr)) != (ssize_t)strlen(hdr))
    return hs_error_set(err, HS_EIO, "%s: cannot write", a->out);
  return HS_OK;
}

static const char *const stage_pct[] = {"25", "50", "75", "100"};

/* FILE.history.csv: the front after each quarter of the budget, its points
 * in increasing order of the first history column. */
static void write_history(const hs_opt_search *s, const hs_opt_spec *sp, const char *hdr,
                          const hs_opt_eval *ev, size_t n, size_t *tied, sbuf *hist) {
  const char *nl = strchr(hdr, '\n');
  char line[4096];
  sb_add(hist, hdr, (size_t)(nl - hdr) + 1);
  sb_str(hist, "stage,evaluations");
  for (size_t v = 0; v < s->nvars; v++) {
    sb_str(hist, ",");
    sb_str(hist, s->vars[v].key);
  }
  size_t h0 = s->hist[0], h1 = s->hist[1];
  sb_str(hist, ",");
  sb_str(hist, hs_metric_sweep_at(h0)->name);
  sb_str(hist, ",");
  sb_str(hist, hs_metric_sweep_at(h1)->name);
  sb_str(hist, ",tied_points\n");
  for (size_t st = 0; st < 4; st++) {
    double frac = (double)(st + 1) / 4.0;
    size_t used = hs_opt_front(sp, ev, n, frac, tied);
    for (;;) {
      size_t pick = n;
      for (size_t i = 0; i < n; i++)
        if (tied[i] && (pick == n || ev[i].extra[h0] < ev[pick].extra[h0])) pick = i;
      if (pick == n) break;
      int o = snprintf(line, sizeof line, "%s,%zu", stage_pct[st], used);
      for (size_t v = 0; v < s->nvars; v++)
        o += snprintf(line + o, sizeof line - (size_t)o, ",%s", ev[pick].text[v]);
      o += snprintf(line + o, sizeof line - (size_t)o, ",%.10g,%.10g,%zu\n", ev[pick].extra[h0],
                    ev[pick].extra[h1], tied[pick]);
      if (o > 0 && (size_t)o < sizeof line) sb_add(hist, line, (size_t)o); /* fits: as the rows */
      tied[pick] = 0;
    }
  }
}

static char *sibling(const char *out, const char *suffix) {
  size_t stem = strlen(out), cap = stem + strlen(suffix) + 1;
  if (stem > 4 && !strcmp(out + stem - 4, ".csv")) stem -= 4;
  char *p = hs_malloc(cap);
  snprintf(p, cap, "%.*s%s", (int)stem, out, suffix);
  return p;
}

hs_status opt_write_outputs(const hs_opt_search *s, const hs_opt_spec *sp, const char *hdr,
                            const hs_opt_eval *ev, size_t n, hs_opt_report *rep, hs_error *err) {
  sbuf all = {0}, front = {0}, hist = {0};
  char line[4096];
  sb_str(&all, hdr);
  for (size_t i = 0; i < n; i++) {
    size_t len = opt_format_eval(s, &ev[i], line, sizeof line);
    if (len >= sizeof line) {
      hs_free(all.s);
      return hs_error_set(err, HS_EINVAL,
                          "an evaluation row is longer than %zu bytes (values too long)",
                          sizeof line);
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
      size_t len = opt_format_eval(s, &ev[i], line, sizeof line); /* fits: above */
      int o = snprintf(line + len - 1, sizeof line - len + 1, ",%zu\n", tied[i]);
      if (o > 0 && len - 1 + (size_t)o < sizeof line) sb_add(&front, line, len - 1 + (size_t)o);
      rows++;
      tied_all += tied[i];
    }
  write_history(s, sp, hdr, ev, n, tied, &hist);
  hs_free(tied);
  char *fp = sibling(s->a->out, ".front.csv"), *hp = sibling(s->a->out, ".history.csv");
  hs_status st = hs_write_file_atomic(fp, front.s, front.len, err);
  if (st == HS_OK) st = hs_write_file_atomic(hp, hist.s, hist.len, err);
  if (st == HS_OK) st = hs_write_file_atomic(s->a->out, all.s, all.len, err);
  if (st == HS_OK) {
    *rep = (hs_opt_report){.evaluations = n, .distinct = distinct, .front_rows = rows,
                           .front_points = tied_all, .front_path = fp, .history_path = hp};
  } else {
    hs_free(fp);
    hs_free(hp);
  }
  hs_free(all.s);
  hs_free(front.s);
  hs_free(hist.s);
  return st;
}
