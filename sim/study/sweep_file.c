/* sweep_file.c: the results file of a sweep: append while running, check and
 * resume after a crash, sort and aggregate at the end; the Pareto front.
 *
 * Crash safety without a journal: each row is one line, written by ONE
 * write(2) on an O_APPEND descriptor. A killed process leaves every line it
 * wrote whole (the kernel has the bytes); only a failing machine can leave a
 * torn last line, which has no '\n' and is cut off by --resume. Rows land in
 * completion order, so the file is appendable from any number of threads;
 * order is restored once, at the end, by a rewrite through a temporary file
 * and a rename, which makes the final bytes a function of the sweep alone.
 * Rejected: a rewrite after every row (O(rows^2) bytes) and an index side
 * file (two files that can disagree after a crash).
 *
 * Reading: one pass over the file text through hs_csv (RFC 4180; a NUL byte
 * anywhere is refused with its line), O(bytes); each row is checked against
 * the grid (the point's values and the seed must be what this sweep would
 * write), so rows from another sweep can never be mixed in. Seeds are found
 * by binary search over a sorted copy. Aggregates are computed from the
 * numbers as printed in the file (hs_fmt_double: the shortest text that
 * reads back to the same double, so the same numbers as in memory), so an
 * interrupted and resumed sweep aggregates exactly the same numbers. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_fmt.h"
#include "base/hs_assert.h"
#include "traces/hs_csv.h"
#include "sim/hs_metrics.h"
#include "traces/hs_outfile.h"
#include "sim/hs_sweep.h"

struct hs_sweep_file {
  int fd;
  char *path;
};

typedef struct seed_ix {
  uint64_t seed;
  size_t ix;
} seed_ix;

static int cmp_seed_ix(const void *a, const void *b) {
  uint64_t x = ((const seed_ix *)a)->seed, y = ((const seed_ix *)b)->seed;
  return (x > y) - (x < y);
}

/* Parsed view of a results file. line[row] points at the row's text (NULL:
 * absent); val[row * hs_metric_sweep_count() + m] its numbers. */
typedef struct scan_out {
  const char **line;
  size_t *linelen;
  double *val;
  size_t valid_len; /* bytes up to the end of the last complete line */
  bool fresh;       /* empty, or a torn header: start over */
} scan_out;

/* A whole field as a decimal uint64 (no sign, no spaces). */
static bool parse_u64(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (*s < '0' || *s > '9') return false;
  for (; *s >= '0' && *s <= '9'; s++) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return *s == '\0';
}

/* A whole field as a number, as hs_fmt_double printed it (no spaces around it). */
static bool parse_metric(const char *s, double *out) {
  if (!*s || *s == ' ' || *s == '\t') return false;
  char *e;
  *out = strtod(s, &e);
  return e != s && *e == '\0';
}

static hs_status scan(const hs_sweep *sw, const char *path, const char *buf, size_t len,
                      scan_out *o, hs_error *err) {
  const char *h1 = hs_sweep_header(sw), *h2 = hs_sweep_columns(sw);
  size_t n1 = strlen(h1), n2 = strlen(h2);
  o->fresh = false;
  o->valid_len = 0;
  /* Zero-filled blocks (a crash on some file systems) are refused, not read
   * as a shorter file; the reader checks the whole text before anything. */
  hs_csv *r = hs_csv_create(buf, len, path, 0, err);
  if (!r) return err ? err->status : HS_EPARSE;
  /* A header cut short by a crash (one write, but a machine may still fail). */
  if (len < n1 + n2 && !strncmp(buf, h1, len < n1 ? len : n1) &&
      (len <= n1 || !strncmp(buf + n1, h2, len - n1))) {
    o->fresh = true;
    hs_csv_destroy(r);
    return HS_OK;
  }
  const char *nl = memchr(buf, '\n', len);
  if (len < n1 || strncmp(buf, h1, n1)) {
    int l = nl ? (int)(nl - buf) : (int)len;
    if (l > 160) l = 160;
    hs_csv_destroy(r);
    return hs_error_set(err, HS_EINVAL,
                        "%s: line 1: written by a different sweep (\"%.*s\"); use the same "
                        "scenario, --set, --grid, --policies and --seeds, or another --out",
                        path, l, buf);
  }
  if (len < n1 + n2 || strncmp(buf + n1, h2, n2)) {
    hs_csv_destroy(r);
    return hs_error_set(err, HS_EINVAL, "%s: line 2: not the column header of this sweep", path);
  }
  /* Line 1 records the sweep (free text, compared above); line 2 is the
   * column header, also compared byte for byte: columns are this sweep's. */
  hs_csv_skip_line(r);
  hs_csv_skip_line(r);

  size_t nseeds = hs_sweep_nseeds(sw), naxes = hs_sweep_naxes(sw);
  size_t nm = hs_metric_sweep_count(), nfields = 1 + naxes + 1 + nm;
  seed_ix *six = hs_malloc(nseeds * sizeof *six);
  for (size_t s = 0; s < nseeds; s++) six[s] = (seed_ix){hs_sweep_seed_at(sw, s), s};
  qsort(six, nseeds, sizeof *six, cmp_seed_ix);

  hs_status st = HS_OK;
  const char *why = NULL;
  char expected[64];
  snprintf(expected, sizeof expected, "expected point,<grid values>,seed,<%zu numbers>", nm);
  int k;
  while ((k = hs_csv_next(r, err)) > 0) {
    if (!hs_csv_terminated(r)) break; /* torn last line: ignored, cut off on resume */
    size_t rawlen, end = hs_csv_end_offset(r);
    const char *line = hs_csv_raw(r, &rawlen);
    uint64_t point, seed;
    why = expected;
    /* rows are written with "\n" alone: "\r\n" is not this writer's line */
    if (hs_csv_nfields(r) != nfields || line[rawlen] == '\r' ||
        !parse_u64(hs_csv_field(r, 0), &point))
      goto bad;
    if (point >= hs_sweep_npoints(sw)) {
      why = "point index beyond this grid";
      goto bad;
    }
    for (size_t a = 0; a < naxes; a++) {
      if (strcmp(hs_csv_field(r, 1 + a), hs_sweep_value(sw, (size_t)point, a))) {
        why = "grid values differ from this sweep's point";
        goto bad;
      }
    }
    if (!parse_u64(hs_csv_field(r, 1 + naxes), &seed)) goto bad;
    seed_ix key = {seed, 0};
    const seed_ix *hit = bsearch(&key, six, nseeds, sizeof *six, cmp_seed_ix);
    if (!hit) {
      why = "seed not in this sweep";
      goto bad;
    }
    size_t row = (size_t)point * nseeds + hit->ix;
    double v[HS_SWEEP_NMETRICS];
    for (size_t m = 0; m < nm; m++)
      if (!parse_metric(hs_csv_field(r, 2 + naxes + m), &v[m])) goto bad;
    if (o->line && !o->line[row]) { /* a repeated row keeps its first copy */
      o->line[row] = line;
      o->linelen[row] = end - (size_t)(line - buf);
      memcpy(&o->val[row * nm], v, nm * sizeof *v);
    }
    o->valid_len = end;
  }
  if (k < 0) st = err ? err->status : HS_EPARSE;
  if (o->valid_len == 0) o->valid_len = n1 + n2;
  hs_free(six);
  hs_csv_destroy(r);
  return st;
bad:
  hs_free(six);
  st = hs_error_set(err, HS_EPARSE, "%s: line %zu: %s", path, hs_csv_line(r), why);
  hs_csv_destroy(r);
  return st;
}

static hs_status write_all(int fd, const char *s, size_t n, const char *path, hs_error *err) {
  while (n > 0) {
    ssize_t k = write(fd, s, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0)
      return hs_error_set(err, HS_EIO, "%s: cannot write: %s", path,
                          k < 0 ? strerror(errno) : "no space written");
    s += k;
    n -= (size_t)k;
  }
  return HS_OK;
}

hs_sweep_file *hs_sweep_file_open(const hs_sweep *sw, const char *path, bool resume, bool *done,
                                  hs_error *err) {
  size_t nrows = hs_sweep_nrows(sw);
  memset(done, 0, nrows * sizeof *done);
  struct stat stt;
  bool exists = stat(path, &stt) == 0;
  /* What it is comes first: --resume cannot help with a folder. */
  if (exists && S_ISDIR(stt.st_mode)) {
    hs_error_set(err, HS_EINVAL, "%s: a folder, not a results file (e.g. --out %s%sresults.csv)",
                 path, path, path[strlen(path) - 1] == '/' ? "" : "/");
    return NULL;
  }
  if (exists && !S_ISREG(stt.st_mode)) {
    hs_error_set(err, HS_EINVAL, "%s: not a regular file", path);
    return NULL;
  }
  if (exists && !resume) {
    hs_error_set(err, HS_EINVAL, "%s: exists: add --resume to continue it, or remove it", path);
    return NULL;
  }
  bool fresh = !exists;
  size_t keep = 0;
  if (exists) {
    size_t len;
    char *buf = hs_read_file(path, &len, err);
    if (!buf) return NULL;
    scan_out o = {0};
    o.line = hs_calloc(nrows, sizeof *o.line);
    o.linelen = hs_calloc(nrows, sizeof *o.linelen);
    o.val = hs_calloc(nrows, hs_metric_sweep_count() * sizeof *o.val);
    hs_status st = scan(sw, path, buf, len, &o, err);
    for (size_t r = 0; r < nrows; r++) done[r] = o.line[r] != NULL;
    hs_free(o.line);
    hs_free(o.linelen);
    hs_free(o.val);
    hs_free(buf);
    if (st != HS_OK) return NULL;
    fresh = o.fresh;
    keep = o.valid_len;
    if (!fresh && keep < len && truncate(path, (off_t)keep) != 0) {
      hs_error_set(err, HS_EIO, "%s: cannot cut off the torn last line: %s", path,
                   strerror(errno));
      return NULL;
    }
  }
  int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_CREAT;
  if (!exists) flags |= O_EXCL; /* two sweeps racing for one --out: one loses */
  else if (fresh) flags |= O_TRUNC;
  int fd = open(path, flags, 0644);
  if (fd < 0) {
    hs_error_set(err, errno == EACCES ? HS_EPERM : HS_EIO, "%s: cannot open: %s", path,
                 strerror(errno));
    return NULL;
  }
  hs_sweep_file *f = hs_malloc(sizeof *f);
  f->fd = fd;
  f->path = hs_strdup(path);
  if (fresh) {
    const char *h1 = hs_sweep_header(sw), *h2 = hs_sweep_columns(sw);
    size_t n1 = strlen(h1), n2 = strlen(h2);
    char *h = hs_malloc(n1 + n2);
    memcpy(h, h1, n1);
    memcpy(h + n1, h2, n2);
    hs_status st = write_all(fd, h, n1 + n2, path, err);
    hs_free(h);
    if (st != HS_OK) {
      hs_sweep_file_close(f, NULL);
      /* A full disk: no 0-byte RESULTS.csv that a rerun would refuse
       * ("exists: add --resume"); a fresh file held no rows to lose. */
      unlink(path);
      return NULL;
    }
  }
  return f;
}

hs_status hs_sweep_file_append(hs_sweep_file *f, const char *line, size_t len, hs_error *err) {
  HS_ASSERT(len > 0 && line[len - 1] == '\n', "a row is one whole line");
  return write_all(f->fd, line, len, f->path, err);
}

hs_status hs_sweep_file_sync(hs_sweep_file *f, hs_error *err) {
  if (fsync(f->fd) != 0 && errno != EINVAL)
    return hs_error_set(err, HS_EIO, "%s: fsync: %s", f->path, strerror(errno));
  return HS_OK;
}

hs_status hs_sweep_file_close(hs_sweep_file *f, hs_error *err) {
  if (!f) return HS_OK;
  hs_status st = hs_sweep_file_sync(f, err);
  if (close(f->fd) != 0 && st == HS_OK)
    st = hs_error_set(err, HS_EIO, "%s: close: %s", f->path, strerror(errno));
  hs_free(f->path);
  hs_free(f);
  return st;
}

/* --- the end: sort, aggregate, Pareto -------------------------------------- */

char *hs_sweep_points_path(const char *results_path) {
  size_t n = strlen(results_path);
  if (n > 4 && !strcmp(results_path + n - 4, ".csv")) n -= 4;
  char *p = hs_malloc(n + sizeof ".points.csv");
  memcpy(p, results_path, n);
  memcpy(p + n, ".points.csv", sizeof ".points.csv");
  return p;
}

typedef struct xy_ix {
  double x, y;
  size_t i;
} xy_ix;

static int cmp_xy(const void *a, const void *b) {
  const xy_ix *p = a, *q = b;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  if (p->y != q->y) return p->y < q->y ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

void hs_sweep_pareto(const double *x, const double *y, size_t n, bool *front) {
  xy_ix *v = hs_malloc((n ? n : 1) * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = (xy_ix){x[i], y[i], i};
  qsort(v, n, sizeof *v, cmp_xy);
  /* In (x, y) order, i is dominated iff an earlier point with a smaller x has
   * y <= y_i, or the first point of i's equal-x group has y < y_i. */
  double best_before = INFINITY; /* min y over strictly smaller x */
  for (size_t g = 0; g < n;) {
    size_t h = g;
    while (h < n && v[h].x == v[g].x) h++;
    double group_min = v[g].y;
    for (size_t k = g; k < h; k++)
      front[v[k].i] = !(best_before <= v[k].y) && !(group_min < v[k].y);
    if (group_min < best_before) best_before = group_min;
    g = h;
  }
  hs_free(v);
}

static hs_sweep_stat stat_of(const double *v, size_t n, double *tmp) {
  double o[HS_STAT_COUNT];
  hs_metric_stats(v, n, tmp, o);
  return (hs_sweep_stat){o[0], o[1], o[2], o[3], o[4], o[5], o[6]};
}

static hs_status write_points(const hs_sweep *sw, const char *path, hs_sweep_point *pt,
                              hs_error *err) {
  hs_outfile *of = hs_outfile_open(path, err);
  if (!of) return err ? err->status : HS_EIO;
  FILE *fp = hs_outfile_stream(of);
  fputs(hs_sweep_header(sw), fp);
  fputs(hs_sweep_point_columns(sw), fp);
  for (size_t p = 0; p < hs_sweep_npoints(sw); p++) {
    fprintf(fp, "%zu", p);
    for (size_t a = 0; a < hs_sweep_naxes(sw); a++) fprintf(fp, ",%s", hs_sweep_value(sw, p, a));
    fprintf(fp, ",%zu", hs_sweep_nseeds(sw));
    for (size_t m = 0; m < hs_metric_sweep_count(); m++) {
      const hs_sweep_stat *s = &pt[p].m[m];
      const double v[HS_STAT_COUNT] = {s->mean, s->median, s->min, s->max,
                                       s->sd,   s->ci95_lo, s->ci95_hi};
      unsigned stats = hs_metric_sweep_at(m)->stats;
      for (size_t k = 0; k < HS_STAT_COUNT; k++)
        if (stats & (1u << k)) {
          char b[HS_FMT_DOUBLE_MAX];
          hs_fmt_double(b, v[k]);
          fprintf(fp, ",%s", b);
        }
    }
    fprintf(fp, ",%d\n", pt[p].pareto ? 1 : 0);
  }
  return hs_outfile_commit(of, err);
}

hs_status hs_sweep_finalize(const hs_sweep *sw, const char *path, hs_sweep_point **points,
                            hs_error *err) {
  if (points) *points = NULL;
  size_t nrows = hs_sweep_nrows(sw), npoints = hs_sweep_npoints(sw), nseeds = hs_sweep_nseeds(sw);
  size_t len;
  char *buf = hs_read_file(path, &len, err);
  if (!buf) return err ? err->status : HS_EIO;
  scan_out o = {0};
  o.line = hs_calloc(nrows, sizeof *o.line);
  o.linelen = hs_calloc(nrows, sizeof *o.linelen);
  size_t nm = hs_metric_sweep_count();
  o.val = hs_calloc(nrows, nm * sizeof *o.val);
  hs_sweep_point *pt = NULL;
  hs_status st = scan(sw, path, buf, len, &o, err);
  size_t missing = 0;
  for (size_t r = 0; st == HS_OK && r < nrows; r++) missing += !o.line[r];
  if (st == HS_OK && (missing || o.fresh))
    st = hs_error_set(err, HS_ESTATE, "%s: %zu of %zu rows missing (run again with --resume)",
                      path, o.fresh ? nrows : missing, nrows);
  if (st == HS_OK) {
    hs_outfile *of = hs_outfile_open(path, err);
    if (!of) {
      st = err ? err->status : HS_EIO;
    } else {
      FILE *fp = hs_outfile_stream(of);
      fputs(hs_sweep_header(sw), fp);
      fputs(hs_sweep_columns(sw), fp);
      for (size_t r = 0; r < nrows; r++) fwrite(o.line[r], 1, o.linelen[r], fp);
      st = hs_outfile_commit(of, err);
    }
  }
  if (st == HS_OK) {
    pt = hs_calloc(npoints ? npoints : 1, sizeof *pt);
    double *col = hs_malloc(nseeds * sizeof *col), *tmp = hs_malloc(nseeds * sizeof *tmp);
    for (size_t p = 0; p < npoints; p++)
      for (size_t m = 0; m < nm; m++) {
        for (size_t s = 0; s < nseeds; s++) col[s] = o.val[(p * nseeds + s) * nm + m];
        pt[p].m[m] = stat_of(col, nseeds, tmp);
      }
    hs_free(col);
    hs_free(tmp);
    double *x = hs_malloc(npoints * sizeof *x), *y = hs_malloc(npoints * sizeof *y);
    bool *front = hs_malloc(npoints * sizeof *front);
    size_t mx = hs_metric_sweep_index("makespan_s"), my = hs_metric_sweep_index("energy_j");
    for (size_t p = 0; p < npoints; p++) {
      x[p] = pt[p].m[mx].mean;
      y[p] = pt[p].m[my].mean;
    }
    hs_sweep_pareto(x, y, npoints, front);
    for (size_t p = 0; p < npoints; p++) pt[p].pareto = front[p];
    hs_free(x);
    hs_free(y);
    hs_free(front);
    char *pp = hs_sweep_points_path(path);
    st = write_points(sw, pp, pt, err);
    hs_free(pp);
  }
  hs_free(o.line);
  hs_free(o.linelen);
  hs_free(o.val);
  hs_free(buf);
  if (st == HS_OK && points) *points = pt;
  else hs_free(pt);
  return st;
}
