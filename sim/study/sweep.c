/* sweep.c: a sweep as flat arrays, its validation, and the thread pool.
 *
 * Data: the scenario text (read once, so a file edited mid-sweep cannot mix
 * two scenarios into one results file), the axes with their expanded values,
 * a stride per axis (point -> value index in O(axes) by mixed-radix digits,
 * last axis fastest), and the seeds. Nothing per point is stored: a row's
 * overrides are built when it runs, so a 10^6-point grid costs its axes only.
 *
 * Validation loads every point once (with the first seed; seeds are checked
 * as numbers when parsed) before any run, so a bad value deep in a grid exits
 * at once rather than after hours. Rejected: checking each axis value alone,
 * which misses combinations (w_e is valid for adaptive, not for balanced).
 *
 * The pool: `jobs` threads take the next position in rows[] under one mutex
 * and report under the same mutex, so the callback never runs concurrently
 * and needs no locking of its own. hs_run is re-entrant (no globals), so the
 * rows themselves run without any lock. Dynamic hand-out rather than static
 * blocks, because rows differ in cost (a w_e = 1 point can run much longer). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_fmt.h"
#include "base/hs_assert.h"
#include "sim/hs_metrics.h"
#include "traces/hs_outfile.h"
#include "devices/hs_profile.h"
#include "sim/hs_run.h"
#include "sim/hs_sweep.h"
#include "base/hs_util.h"

#define SPEC_SHOWN 80 /* bytes of a spec that messages quote (as sweep_grid.c) */

/* How many bytes of s a message quotes: all of it up to SPEC_SHOWN, else a
 * prefix that leaves room for "..." and ends on a UTF-8 character boundary. */
static int spec_cut(const char *s) {
  size_t n = strlen(s);
  if (n <= SPEC_SHOWN) return (int)n;
  n = SPEC_SHOWN - 3;
  while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
  return (int)n;
}

struct hs_sweep {
  char *text;     /* the scenario JSON */
  char *origin;   /* its path, as given */
  char *dir;      /* its folder, for relative profile paths */
  hs_override *set;
  size_t nset;
  hs_sweep_axis *axes;
  size_t naxes;
  size_t *stride;
  size_t npoints;
  uint64_t *seeds;
  char **seed_text; /* NULL entries when the scenario's own seed is used */
  size_t nseeds;
  bool seeds_given;
  uint64_t hash; /* of the scenario text and the files it reads (inputs_hash) */
  char *header, *columns, *pcolumns;
};

/* --- small string builder ------------------------------------------------- */

typedef struct sbuf {
  char *s;
  size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
  va_end(ap);
  HS_ASSERT(n >= 0, "vsnprintf with a valid format");
  if (b->len + (size_t)n + 1 > b->cap) {
    b->cap = 2 * (b->len + (size_t)n + 1);
    b->s = hs_realloc(b->s, b->cap);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
  }
  b->len += (size_t)n;
}

/* Header text: control characters would split the line. */
static void sb_clean(sbuf *b, const char *s) {
  for (; *s; s++) sb_printf(b, "%c", (unsigned char)*s < 0x20 ? '?' : *s);
}

/* The files a loaded point reads besides the scenario: device profiles and
 * speed traces (resolved paths; added once each to *files). */
static void collect_inputs(const hs_scenario *sc, char ***files, size_t *n) {
  for (size_t i = 0; i < sc->ndevices; i++) {
    const char *f[2] = {hs_profile_origin(sc->devices[i].profile),
                        sc->devices[i].speed_trace_path};
    for (size_t k = 0; k < 2; k++) {
      bool seen = !f[k];
      for (size_t j = 0; j < *n && !seen; j++) seen = !strcmp((*files)[j], f[k]);
      if (seen) continue;
      *files = hs_reallocarray(*files, *n + 1, sizeof **files);
      (*files)[(*n)++] = hs_strdup(f[k]);
    }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The hash line 1 records: the scenario text, then the contents of every
 * profile and speed trace the points read, so that --resume refuses rows
 * computed from another calibration of a board (a profile edited, or found
 * elsewhere on HETSIM_PROFILE_PATH, between a kill and the resume). File
 * hashes are folded in sorted order: the same contents give the same line
 * wherever the files live, as on the nodes of an MPI run. */
static hs_status inputs_hash(hs_sweep *sw, char **files, size_t n, hs_error *err) {
  uint64_t *fh = hs_calloc(n ? n : 1, sizeof *fh);
  hs_status st = HS_OK;
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    hs_error e = {0};
    size_t len;
    char *text = hs_read_file(files[i], &len, &e);
    if (!text) st = hs_error_set(err, e.status, "%s (read again to record the sweep)", e.msg);
    else fh[i] = hs_fnv1a64(HS_FNV1A64_INIT, text, len);
    hs_free(text);
  }
  qsort(fh, n, sizeof *fh, cmp_u64);
  uint64_t h = hs_fnv1a64(HS_FNV1A64_INIT, sw->text, strlen(sw->text));
  for (size_t i = 0; i < n; i++) h = hs_fnv1a64(h, &fh[i], sizeof fh[i]);
  sw->hash = h;
  hs_free(fh);
  return st;
}

/* --- accessors ------------------------------------------------------------ */

size_t hs_sweep_naxes(const hs_sweep *sw) { return sw->naxes; }
const hs_sweep_axis *hs_sweep_axis_at(const hs_sweep *sw, size_t a) {
  HS_ASSERT(a < sw->naxes, "axis index in range");
  return &sw->axes[a];
}
size_t hs_sweep_npoints(const hs_sweep *sw) { return sw->npoints; }
size_t hs_sweep_nseeds(const hs_sweep *sw) { return sw->nseeds; }
size_t hs_sweep_nrows(const hs_sweep *sw) { return sw->npoints * sw->nseeds; }
uint64_t hs_sweep_seed_at(const hs_sweep *sw, size_t s) {
  HS_ASSERT(s < sw->nseeds, "seed index in range");
  return sw->seeds[s];
}
const char *hs_sweep_value(const hs_sweep *sw, size_t point, size_t a) {
  HS_ASSERT(point < sw->npoints && a < sw->naxes, "point and axis in range");
  return sw->axes[a].values[(point / sw->stride[a]) % sw->axes[a].nvalues];
}
const char *hs_sweep_header(const hs_sweep *sw) { return sw->header; }
const char *hs_sweep_columns(const hs_sweep *sw) { return sw->columns; }
const char *hs_sweep_point_columns(const hs_sweep *sw) { return sw->pcolumns; }

void hs_sweep_destroy(hs_sweep *sw) {
  if (!sw) return;
  hs_free(sw->text);
  hs_free(sw->origin);
  hs_free(sw->dir);
  for (size_t i = 0; i < sw->nset; i++) {
    hs_free((char *)(uintptr_t)sw->set[i].key);
    hs_free((char *)(uintptr_t)sw->set[i].value);
  }
  hs_free(sw->set);
  for (size_t a = 0; a < sw->naxes; a++) hs_sweep_axis_fini(&sw->axes[a]);
  hs_free(sw->axes);
  hs_free(sw->stride);
  for (size_t s = 0; s < sw->nseeds; s++) hs_free(sw->seed_text[s]);
  hs_free(sw->seed_text);
  hs_free(sw->seeds);
  hs_free(sw->header);
  hs_free(sw->columns);
  hs_free(sw->pcolumns);
  hs_free(sw);
}

/* --- loading one row ------------------------------------------------------- */

/* The overrides of (point, seed index): base --set, axis values, seed. */
static size_t row_overrides(const hs_sweep *sw, size_t point, size_t s, hs_override *ovr) {
  size_t n = 0;
  for (size_t i = 0; i < sw->nset; i++) ovr[n++] = sw->set[i];
  for (size_t a = 0; a < sw->naxes; a++)
    ovr[n++] = (hs_override){sw->axes[a].key, hs_sweep_value(sw, point, a)};
  if (sw->seed_text[s]) ovr[n++] = (hs_override){"seed", sw->seed_text[s]};
  return n;
}

static hs_scenario *load_row(const hs_sweep *sw, size_t point, size_t s, hs_error *err) {
  hs_override *ovr = hs_calloc(sw->nset + sw->naxes + 1, sizeof *ovr);
  size_t n = row_overrides(sw, point, s, ovr);
  hs_scenario *sc = hs_scenario_parse(sw->text, sw->origin, sw->dir, ovr, n, err);
  hs_free(ovr);
  return sc;
}

/* Does msg hold ": --set KEY: " (an override the loader could not apply)? */
static bool names_set_key(const char *msg, const char *key) {
  size_t n = strlen(key);
  for (const char *p = strstr(msg, ": --set "); p; p = strstr(p + 1, ": --set ")) {
    const char *k = p + strlen(": --set ");
    if (!strncmp(k, key, n) && !strncmp(k + n, ": ", 2)) return true;
  }
  return false;
}

/* Name the grid spec a point's load error came from: the loader ends a
 * message about an override's value with "(from --set KEY)", and writes
 * "<file>: --set KEY: <reason>" when the key itself cannot be set
 * (devices[9].count on four devices). */
static void explain_point_error(const hs_sweep *sw, const char *policies, size_t point,
                                hs_error *err) {
  const char *from = strstr(err->msg, "(from --set ");
  const hs_sweep_axis *ax = NULL;
  if (from) {
    const char *k = from + strlen("(from --set ");
    const char *end = strchr(k, ')');
    for (size_t a = 0; end && a < sw->naxes; a++)
      if (strlen(sw->axes[a].key) == (size_t)(end - k) &&
          !strncmp(sw->axes[a].key, k, (size_t)(end - k)))
        ax = &sw->axes[a];
  }
  for (size_t a = 0; !ax && a < sw->naxes; a++)
    if (names_set_key(err->msg, sw->axes[a].key)) ax = &sw->axes[a];
  char msg[HS_ERROR_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", err->msg);
  const char *hint = "";
  if (ax && !strcmp(ax->key, "policy.w_e") &&
      (strstr(msg, "fixes w_e") || strstr(msg, "does not apply")))
    hint = "; a w_e sweep needs --policies adaptive (or a scenario whose policy.kind is "
           "adaptive)";
  if (ax && !strcmp(ax->key, "policy.kind") && policies && sw->naxes &&
      ax == &sw->axes[0] && !strcmp(ax->spec, "policy.kind"))
    hs_error_set(err, err->status, "--policies %.*s%s: %s%s", spec_cut(policies), policies,
                 strlen(policies) > SPEC_SHOWN ? "..." : "", msg, hint);
  else if (ax)
    hs_error_set(err, err->status, "--grid %s: %s%s", ax->spec, msg, hint);
  else if (sw->naxes) {
    sbuf b = {0};
    for (size_t a = 0; a < sw->naxes; a++)
      sb_printf(&b, "%s%s=%s", a ? "," : "", sw->axes[a].key, hs_sweep_value(sw, point, a));
    /* Long keys or many axes must leave room for the reason. */
    hs_error_set(err, err->status, "at grid point %.*s%s: %s", spec_cut(b.s), b.s,
                 b.len > SPEC_SHOWN ? "..." : "", msg);
    hs_free(b.s);
  }
}

/* --- create ---------------------------------------------------------------- */

static hs_status add_axis(hs_sweep *sw, hs_sweep_axis *ax, hs_error *err) {
  for (size_t a = 0; a < sw->naxes; a++)
    if (!strcmp(sw->axes[a].key, ax->key)) {
      hs_status st = hs_error_set(err, HS_EINVAL, "--grid %s: key %s is already swept%s",
                                  ax->spec, ax->key,
                                  !strcmp(ax->key, "policy.kind") ? " (by --policies?)" : "");
      hs_sweep_axis_fini(ax);
      return st;
    }
  if (!strcmp(ax->key, "seed")) {
    hs_status st = hs_error_set(err, HS_EINVAL,
                                "--grid %s: sweep seeds with --seeds (e.g. --seeds 1-10), so "
                                "the results keep one seed column", ax->spec);
    hs_sweep_axis_fini(ax);
    return st;
  }
  sw->axes = hs_reallocarray(sw->axes, sw->naxes + 1, sizeof *sw->axes);
  sw->axes[sw->naxes++] = *ax;
  return HS_OK;
}

static void build_headers(hs_sweep *sw) {
  const char *slash = strrchr(sw->origin, '/');
  sbuf h = {0};
  sb_printf(&h, "# hetsim sweep v1 | scenario ");
  sb_clean(&h, slash ? slash + 1 : sw->origin);
  sb_printf(&h, " fnv1a64=%016llx", (unsigned long long)sw->hash);
  for (size_t i = 0; i < sw->nset; i++) {
    sb_printf(&h, " | set ");
    sb_clean(&h, sw->set[i].key);
    sb_printf(&h, "=");
    sb_clean(&h, sw->set[i].value);
  }
  for (size_t a = 0; a < sw->naxes; a++) {
    sb_printf(&h, " | grid %s=", sw->axes[a].key);
    for (size_t v = 0; v < sw->axes[a].nvalues; v++)
      sb_printf(&h, "%s%s", v ? "," : "", sw->axes[a].values[v]);
  }
  sb_printf(&h, " | seeds ");
  for (size_t s = 0; s < sw->nseeds; s++)
    sb_printf(&h, "%s%llu", s ? "," : "", (unsigned long long)sw->seeds[s]);
  sb_printf(&h, "\n");
  sw->header = h.s;

  sbuf c = {0}, p = {0};
  sb_printf(&c, "point");
  sb_printf(&p, "point");
  for (size_t a = 0; a < sw->naxes; a++) {
    sb_printf(&c, ",%s", sw->axes[a].key);
    sb_printf(&p, ",%s", sw->axes[a].key);
  }
  sb_printf(&c, ",seed");
  sb_printf(&p, ",seeds");
  for (size_t m = 0; m < hs_metric_sweep_count(); m++) {
    const hs_metric *mt = hs_metric_sweep_at(m);
    sb_printf(&c, ",%s", mt->name);
    for (size_t k = 0; k < HS_STAT_COUNT; k++)
      if (mt->stats & (1u << k)) sb_printf(&p, ",%s_%s", mt->name, hs_stat_names[k]);
  }
  sb_printf(&c, "\n");
  sb_printf(&p, ",pareto_front\n");
  sw->columns = c.s;
  sw->pcolumns = p.s;
}

hs_sweep *hs_sweep_create(const hs_sweep_spec *spec, hs_error *err) {
  hs_sweep *sw = hs_calloc(1, sizeof *sw);
  char **files = NULL; /* what the points read besides the scenario */
  size_t nfiles = 0;
  unsigned groups = 0; /* optional metric groups some point reports: their columns */
  hs_error e = {0};
  size_t text_len = 0;
  sw->origin = hs_scenario_find(spec->scenario, err); /* a file, or a shipped scenario's name */
  if (!sw->origin) goto fail;
  sw->text = hs_read_file(sw->origin, &text_len, &e);
  if (!sw->text || hs_text_check_nul(sw->text, text_len, sw->origin, &e) != HS_OK) {
    hs_error_set(err, e.status, "%s (scenario file)", e.msg);
    goto fail;
  }
  sw->dir = hs_path_dir(sw->origin);
  sw->set = hs_calloc(spec->nset + 1, sizeof *sw->set);
  for (size_t i = 0; i < spec->nset; i++) {
    sw->set[i].key = hs_strdup(spec->set[i].key);
    sw->set[i].value = hs_strdup(spec->set[i].value);
    sw->nset++;
  }
  if (spec->policies) {
    /* "policy.kind=<list>" parsed as a grid; spec "policy.kind" marks it. */
    size_t n = strlen(spec->policies);
    char *g = hs_malloc(n + 13);
    memcpy(g, "policy.kind=", 12);
    memcpy(g + 12, spec->policies, n + 1);
    hs_sweep_axis ax;
    hs_status st = hs_sweep_axis_parse(g, &ax, &e);
    hs_free(g);
    if (st != HS_OK) {
      const char *why = strstr(e.msg, ": ");
      hs_error_set(err, st, "--policies %.*s%s%s", spec_cut(spec->policies), spec->policies,
                   strlen(spec->policies) > SPEC_SHOWN ? "..." : "", why ? why : "");
      goto fail;
    }
    hs_free(ax.spec);
    ax.spec = hs_strdup("policy.kind");
    if (add_axis(sw, &ax, err) != HS_OK) goto fail;
  }
  for (size_t g = 0; g < spec->ngrids; g++) {
    hs_sweep_axis ax;
    if (hs_sweep_axis_parse(spec->grids[g], &ax, err) != HS_OK) goto fail;
    if (add_axis(sw, &ax, err) != HS_OK) goto fail;
  }
  sw->stride = hs_calloc(sw->naxes + 1, sizeof *sw->stride);
  sw->npoints = 1;
  for (size_t a = sw->naxes; a-- > 0;) {
    sw->stride[a] = sw->npoints;
    if (sw->axes[a].nvalues > SIZE_MAX / 64 / sw->npoints || sw->npoints * sw->axes[a].nvalues > 100000000) {
      hs_error_set(err, HS_EINVAL, "--grid %s: the grid has more than 10^8 points",
                   sw->axes[a].spec);
      goto fail;
    }
    sw->npoints *= sw->axes[a].nvalues;
  }
  if (spec->seeds) {
    if (hs_sweep_seeds_parse(spec->seeds, &sw->seeds, &sw->nseeds, err) != HS_OK) goto fail;
    sw->seeds_given = true;
    sw->seed_text = hs_calloc(sw->nseeds, sizeof *sw->seed_text);
    for (size_t s = 0; s < sw->nseeds; s++) {
      char buf[32];
      snprintf(buf, sizeof buf, "%llu", (unsigned long long)sw->seeds[s]);
      sw->seed_text[s] = hs_strdup(buf);
    }
    if ((double)sw->npoints * (double)sw->nseeds > 1e9) {
      hs_error_set(err, HS_EINVAL, "--seeds %s: more than 10^9 runs in all", spec->seeds);
      goto fail;
    }
  } else {
    sw->nseeds = 1;
    sw->seeds = hs_calloc(1, sizeof *sw->seeds);
    sw->seed_text = hs_calloc(1, sizeof *sw->seed_text);
  }
  for (size_t p = 0; p < sw->npoints; p++) {
    hs_scenario *sc = load_row(sw, p, 0, err);
    if (!sc) {
      explain_point_error(sw, spec->policies, p, err);
      goto fail;
    }
    /* No axis is "seed", so every point has the scenario's seed. */
    if (!sw->seeds_given) sw->seeds[0] = sc->seed;
    /* A point too large for memory is refused before RESULTS is written. */
    if (hs_run_check_memory(sc, err) != HS_OK) {
      hs_scenario_destroy(sc);
      goto fail;
    }
    groups |= hs_metric_run_groups(sc);
    collect_inputs(sc, &files, &nfiles);
    hs_scenario_destroy(sc);
  }
  if (inputs_hash(sw, files, nfiles, err) != HS_OK) goto fail;
  for (size_t i = 0; i < nfiles; i++) hs_free(files[i]);
  hs_free(files);
  hs_metric_sweep_groups(groups);
  build_headers(sw);
  return sw;
fail:
  for (size_t i = 0; i < nfiles; i++) hs_free(files[i]);
  hs_free(files);
  hs_sweep_destroy(sw);
  return NULL;
}

/* --- running --------------------------------------------------------------- */

hs_status hs_sweep_run_row(const hs_sweep *sw, size_t row, hs_sweep_result *out, hs_error *err) {
  HS_ASSERT(row < hs_sweep_nrows(sw), "row in range");
  size_t point = row / sw->nseeds, s = row % sw->nseeds;
  hs_error e = {0};
  hs_scenario *sc = load_row(sw, point, s, &e);
  hs_summary sum;
  hs_status st = sc ? hs_run(sc, NULL, &sum, &e) : e.status;
  hs_scenario_destroy(sc);
  if (st != HS_OK) {
    if (err) {
      *err = e;
      hs_error_prefix(err, "point %zu seed %llu", point, (unsigned long long)sw->seeds[s]);
    }
    return st;
  }
  memset(out, 0, sizeof *out);
  out->row = row;
  for (size_t m = 0; m < hs_metric_sweep_count(); m++)
    out->m[m] = hs_metric_value(hs_metric_sweep_at(m), &sum);
  return HS_OK;
}

typedef struct pool {
  const hs_sweep *sw;
  const size_t *rows;
  size_t n, next;
  bool stop;
  hs_status st;
  size_t fail_pos;
  hs_error fail_err;
  hs_sweep_done_fn fn;
  void *ud;
  pthread_mutex_t mu;
} pool;

static void *pool_worker(void *arg) {
  pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->mu);
    if (p->stop || p->next == p->n) {
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    size_t i = p->next++;
    pthread_mutex_unlock(&p->mu);
    hs_sweep_result r;
    hs_error e = {0};
    hs_status st = hs_sweep_run_row(p->sw, p->rows[i], &r, &e);
    pthread_mutex_lock(&p->mu);
    if (st != HS_OK) {
      if (p->st == HS_OK || i < p->fail_pos) {
        p->st = st;
        p->fail_pos = i;
        p->fail_err = e;
      }
      p->stop = true;
    } else if (!p->fn(i, &r, p->ud)) {
      p->stop = true; /* the caller cannot keep results: running on is waste */
    }
    pthread_mutex_unlock(&p->mu);
  }
}

hs_status hs_sweep_run_rows(const hs_sweep *sw, const size_t *rows, size_t n, unsigned jobs,
                            hs_sweep_done_fn fn, void *userdata, hs_error *err) {
  HS_ASSERT(jobs >= 1, "at least one job");
  pool p = {.sw = sw, .rows = rows, .n = n, .fn = fn, .ud = userdata, .st = HS_OK};
  pthread_mutex_init(&p.mu, NULL);
  size_t nt = jobs < n ? jobs : n;
  if (nt <= 1) {
    pool_worker(&p);
  } else {
    pthread_t *t = hs_calloc(nt, sizeof *t);
    size_t started = 0;
    for (; started < nt; started++)
      if (pthread_create(&t[started], NULL, pool_worker, &p) != 0) break;
    if (started == 0) pool_worker(&p); /* no thread at all: still finish the work */
    for (size_t k = 0; k < started; k++) pthread_join(t[k], NULL);
    hs_free(t);
  }
  pthread_mutex_destroy(&p.mu);
  if (p.st != HS_OK && err) *err = p.fail_err;
  return p.st;
}

size_t hs_sweep_format_row(const hs_sweep *sw, const hs_sweep_result *r, char *buf, size_t cap) {
  size_t point = r->row / sw->nseeds, s = r->row % sw->nseeds;
  size_t pos = 0;
#define PUT(...)                                                                        \
  do {                                                                                  \
    int k_ = snprintf(pos < cap ? buf + pos : NULL, pos < cap ? cap - pos : 0, __VA_ARGS__); \
    HS_ASSERT(k_ >= 0, "snprintf with a valid format");                                 \
    pos += (size_t)k_;                                                                  \
  } while (0)
  PUT("%zu", point);
  for (size_t a = 0; a < sw->naxes; a++) PUT(",%s", hs_sweep_value(sw, point, a));
  PUT(",%llu", (unsigned long long)sw->seeds[s]);
  for (size_t m = 0; m < hs_metric_sweep_count(); m++) {
    char b[HS_FMT_DOUBLE_MAX];
    hs_fmt_double(b, r->m[m]); /* exact; nan, inf, -inf as they are */
    PUT(",%s", b);
  }
  PUT("\n");
#undef PUT
  return pos;
}
