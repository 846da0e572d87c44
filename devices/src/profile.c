/* profile.c: device profiles: strict loading and the per-round compute-time
 * sampler (the lookup on a search path is profile_find.c).
 *
 * Data structure: one hs_profile owns every string and array reachable from it;
 * tasks are a flat array in file order (a board carries a handful of tasks, so
 * hs_profile_task is a linear scan with strcmp: cheaper and simpler than a hash
 * for n < 10, and it keeps file order for free). The cJSON tree lives only
 * during parsing; nothing in a loaded profile points into it.
 *
 * Invariants of a loaded profile (asserted on use, enforced at load): every
 * number is finite and in its documented range, task names are unique, loss
 * curves have samples strictly ascending, and a task that claims
 * energy_measured has a provenance that is neither "estimated" nor
 * "hypothetical" (a made-up board for a what-if, never an estimate of a real
 * one: its sources say how its figures were chosen). An optional
 * thermal block (hs_thermal_profile) has 2..16 levels, level 0 at speed 1 and
 * busy factor 1, trip and recover points ascending, recover < trip, sources.
 *
 * Validation walks each object twice: once over its members against the list of
 * allowed keys (unknown and duplicate keys are errors: cJSON keeps duplicates,
 * and "last one wins" would silently ignore a figure), then once per expected
 * key. Objects have at most a dozen keys, so the O(k^2) walk costs nothing.
 * Rejected: a schema interpreter (more code than the handful of field shapes
 * here), and cJSON_Minify to allow comments (the probe writes plain JSON, and a
 * hand-edited comment would shift every line number in parse errors).
 *
 * The file is read with hetsim::status's reader (hs_read_file_as) under a
 * 16 MiB limit; the messages are this loader's own. */
#include "devices/hs_profile.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_cdf.h>

#include "base/hs_alloc.h"
#include "traces/hs_json_get.h"
#include "base/hs_util.h"
#include "profile_internal.h"


#define DEV_FILE_MAX (16u << 20)    /* a profile is a few KiB; refuse anything absurd (bytes) */
#define DEV_TAU_CV_MAX 10.0         /* beyond this the lognormal has no useful meaning */
#define DEV_WATTS_MAX 100000.0      /* 100 kW: a rack, not a board; catches mW/W mix-ups */
#define DEV_SECONDS_MAX 86400.0     /* per-sample time or per-round overhead above a day is a units error */

typedef struct dev_task {
  char *name;
  char *prov_kind; /* NULL: the profile's kind applies */
  double *loss_samples;
  double *loss_values;
} dev_task;

struct hs_profile {
  char *origin;
  char *name;
  char *board;
  char *arch;
  char *cpu;
  char *prov_kind;
  double idle_w;
  double comm_w;
  double hbm_bytes, opt_s_per_param; /* optional "gpu" block (0: absent) */
  hs_task_profile *tasks; /* public records; strings/arrays point into own[] */
  dev_task *own;
  size_t ntasks;
  hs_thermal_profile thermal; /* nlevels == 0: no thermal block */
  double *th_arrays;          /* speed, busy_factor, trip_c, recover_c: 4 x nlevels */
  char **th_sources;
};

/* The profile's wording of the shared getters' failures (hs_json_get.h). */
static const hs_json_words dev_words = {
    .top_level = NULL,
    .unknown_key = "unknown key (expected one of",
    .duplicate = "duplicate key",
    .missing = "missing required field",
    .not_string = "must be a string",
    .show_got = false,
    .empty_string = "must not be empty",
    .not_object = "must be an object",
    .not_bool = "must be true or false",
    .show_keys = false,
    .mark_cut = true,
};

/* Validation context: the origin for messages, the error record, the wording.
 * Paths are passed down as text and built with hs_json_join(_index), which
 * marks a cut path with "..." (dev_words.mark_cut): a message with a
 * shortened path beats no message. */
typedef hs_json_ctx dev_ctx;

static hs_status fail(const dev_ctx *c, hs_status st, const char *path, const char *reason) {
  return hs_json_fail(c, st, path ? path : "", "%s", reason);
}

/* Members of obj must be in allowed (NULL-terminated) and appear once. */
static hs_status check_keys(const dev_ctx *c, const cJSON *obj, const char *path,
                            const char *const *allowed) {
  return hs_json_check_keys(c, obj, path, allowed, NULL);
}

static const cJSON *member(const cJSON *obj, const char *key) { return hs_json_member(obj, key); }

/* A required (or optional, when *out may stay untouched) member of a type. */
static hs_status get(const dev_ctx *c, const cJSON *obj, const char *path, const char *key,
                     bool required, const cJSON **out) {
  *out = member(obj, key);
  if (!*out && required) return hs_json_missing(c, path, key);
  return HS_OK;
}

static hs_status want_string(const dev_ctx *c, const cJSON *v, const char *path, char **out) {
  return hs_json_string(c, v, path, out);
}

enum { RANGE_GT0, RANGE_GE0, RANGE_CV };

/* A finite number > 0, >= 0 or a CV, at most max. A value above max is
 * worded as a units mistake, except a CV (its "in [0, 10]" says the range);
 * a non-finite value fails like a non-number (HS_ETYPE). */
static hs_status want_number(const dev_ctx *c, const cJSON *v, const char *path, int range,
                             double max, double *out) {
  static const char *const want[] = {"must be a finite number > 0", "must be a finite number >= 0",
                                     "must be a finite number in [0, 10]"};
  char above[64];
  snprintf(above, sizeof above, "must be at most %g (check the units)", max);
  hs_json_num spec = {.lo = 0, .lo_open = range == RANGE_GT0, .hi = max, .want = want[range],
                      .above = range == RANGE_CV ? NULL : above, .non_finite = HS_ETYPE};
  return hs_json_number(c, v, path, &spec, out);
}

/* A whole number in [1, 2^32 - 1]; a non-finite value is out of range. */
static hs_status want_count(const dev_ctx *c, const cJSON *v, const char *path, uint32_t *out) {
  static const hs_json_num spec = {.lo = 1, .hi = (double)UINT32_MAX,
                                   .want = "must be an integer >= 1", .non_finite = HS_ERANGE};
  double x;
  hs_status st = hs_json_integer(c, v, path, &spec, &x);
  if (st == HS_OK) *out = (uint32_t)x;
  return st;
}

bool dev_name_ok(const char *s) {
  if (!s[0] || s[0] == '.') return false;
  for (const char *q = s; *q; q++)
    if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '.' || *q == '_' ||
          *q == '-'))
      return false;
  return true;
}

static bool arch_ok(const char *s) {
  for (const char *q = s; *q; q++)
    if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) return false;
  return s[0] != '\0';
}

static bool date_ok(const char *s) {
  /* YYYY-MM-DD with a plausible month and day; no calendar arithmetic. */
  if (strlen(s) != 10 || s[4] != '-' || s[7] != '-') return false;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return false;
  int mo = (s[5] - '0') * 10 + (s[6] - '0');
  int d = (s[8] - '0') * 10 + (s[9] - '0');
  return mo >= 1 && mo <= 12 && d >= 1 && d <= 31;
}

static const char *const prov_kinds[] = {"estimated", "measured", "mixed", "hypothetical", NULL};

/* Validate a provenance object; *kind_out receives a static kind string. */
static hs_status check_provenance(const dev_ctx *c, const cJSON *v, const char *path,
                                  const char **kind_out) {
  static const char *const keys[] = {"kind",  "sources", "sensor", "covers", "sample_hz",
                                     "runs",  "date",    "kernel", "notes",  NULL};
  char sub[HS_JSON_PATH_MAX];
  hs_status st;
  const cJSON *m;
  if ((st = hs_json_object(c, v, path))) return st;
  if ((st = check_keys(c, v, path, keys))) return st;

  if ((st = get(c, v, path, "kind", true, &m))) return st;
  hs_json_join(c, sub, path, "kind");
  if (!cJSON_IsString(m)) return fail(c, HS_ETYPE, sub, "must be a string");
  const char *kind = NULL;
  for (const char *const *k = prov_kinds; *k; k++)
    if (strcmp(m->valuestring, *k) == 0) kind = *k;
  if (!kind)
    return fail(c, HS_EINVAL, sub, "must be one of estimated, measured, mixed, hypothetical");
  bool measured = strcmp(kind, "measured") == 0;
  bool made_up = strcmp(kind, "hypothetical") == 0; /* no board: nothing was measured */

  if ((st = get(c, v, path, "sources", !measured, &m))) return st;
  if (m) {
    hs_json_join(c, sub, path, "sources");
    if (!cJSON_IsArray(m)) return fail(c, HS_ETYPE, sub, "must be an array of strings");
    if (!m->child && made_up)
      return fail(c, HS_EINVAL, sub, "must say how the hypothetical figures were chosen");
    if (!m->child && !measured)
      return fail(c, HS_EINVAL, sub, "must name at least one public figure for an estimate");
    size_t i = 0;
    for (const cJSON *s = m->child; s; s = s->next, i++) {
      char el[HS_JSON_PATH_MAX];
      hs_json_join_index(c, el, sub, i);
      if (!cJSON_IsString(s)) return fail(c, HS_ETYPE, el, "must be a string");
      if (!s->valuestring[0]) return fail(c, HS_EINVAL, el, "must not be empty");
    }
  }

  if ((st = get(c, v, path, "sensor", measured, &m))) return st;
  if (m) {
    hs_json_join(c, sub, path, "sensor");
    if (!cJSON_IsString(m)) return fail(c, HS_ETYPE, sub, "must be a string");
    if (!m->valuestring[0]) return fail(c, HS_EINVAL, sub, "must not be empty");
    if (strcmp(kind, "estimated") == 0)
      return fail(c, HS_EINVAL, sub, "an estimated profile has no sensor (use kind mixed or measured)");
    if (made_up) return fail(c, HS_EINVAL, sub, "a hypothetical profile has no sensor");
  }
  static const char *const strings[] = {"covers", "kernel", "notes", NULL};
  for (const char *const *k = strings; *k; k++) {
    if ((st = get(c, v, path, *k, false, &m))) return st;
    hs_json_join(c, sub, path, *k);
    if (m && !cJSON_IsString(m)) return fail(c, HS_ETYPE, sub, "must be a string");
  }
  if ((st = get(c, v, path, "date", false, &m))) return st;
  if (m) {
    hs_json_join(c, sub, path, "date");
    if (!cJSON_IsString(m)) return fail(c, HS_ETYPE, sub, "must be a string");
    if (!date_ok(m->valuestring)) return fail(c, HS_EINVAL, sub, "must be a date YYYY-MM-DD");
  }
  if ((st = get(c, v, path, "sample_hz", false, &m))) return st;
  if (m) {
    double hz;
    hs_json_join(c, sub, path, "sample_hz");
    if ((st = want_number(c, m, sub, RANGE_GT0, 1e9, &hz))) return st;
  }
  if ((st = get(c, v, path, "runs", false, &m))) return st;
  if (m) {
    uint32_t runs;
    hs_json_join(c, sub, path, "runs");
    if ((st = want_count(c, m, sub, &runs))) return st;
  }
  *kind_out = kind;
  return HS_OK;
}

static hs_status check_loss_curve(const dev_ctx *c, const cJSON *v, const char *path,
                                  dev_task *own, hs_task_profile *t) {
  if (!cJSON_IsArray(v)) return fail(c, HS_ETYPE, path, "must be an array of [samples, loss] pairs");
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (n == 0) return fail(c, HS_EINVAL, path, "must have at least one point (or be left out)");
  own->loss_samples = hs_reallocarray(NULL, n, sizeof(double));
  own->loss_values = hs_reallocarray(NULL, n, sizeof(double));
  size_t i = 0;
  char el[HS_JSON_PATH_MAX], sub[HS_JSON_PATH_MAX];
  for (const cJSON *p = v->child; p; p = p->next, i++) {
    hs_json_join_index(c, el, path, i);
    if (!cJSON_IsArray(p) || cJSON_GetArraySize(p) != 2)
      return fail(c, HS_ETYPE, el, "must be a [samples, loss] pair");
    static const hs_json_num samples = {.lo = 0, .hi = INFINITY,
                                        .want = "samples must be a finite number >= 0",
                                        .not_number = HS_ERANGE, .non_finite = HS_ERANGE};
    static const hs_json_num loss = {.lo = -INFINITY, .hi = INFINITY,
                                     .want = "loss must be a finite number",
                                     .non_finite = HS_ETYPE};
    hs_json_join_index(c, sub, el, 0);
    hs_status st = hs_json_number(c, p->child, sub, &samples, &own->loss_samples[i]);
    if (st) return st;
    if (i > 0 && !(own->loss_samples[i] > own->loss_samples[i - 1]))
      return fail(c, HS_EINVAL, sub, "samples must be strictly ascending along the curve");
    hs_json_join_index(c, sub, el, 1);
    if ((st = hs_json_number(c, p->child->next, sub, &loss, &own->loss_values[i]))) return st;
  }
  t->loss_points = n;
  t->loss_samples = own->loss_samples;
  t->loss_values = own->loss_values;
  return HS_OK;
}

static hs_status check_task(const dev_ctx *c, const cJSON *v, const char *path, double idle_w,
                            const char *profile_kind, dev_task *own, hs_task_profile *t) {
  static const char *const keys[] = {"tau_s",     "tau_cv",          "busy_w",     "overhead_s",
                                     "batch_size", "threads",        "energy_measured",
                                     "loss_curve", "provenance",      NULL};
  char sub[HS_JSON_PATH_MAX];
  hs_status st;
  const cJSON *m;
  if ((st = hs_json_object(c, v, path))) return st;
  if ((st = check_keys(c, v, path, keys))) return st;

  struct {
    const char *key;
    int range;
    double max;
    double *out;
  } nums[] = {{"tau_s", RANGE_GT0, DEV_SECONDS_MAX, &t->tau_s},
              {"tau_cv", RANGE_CV, DEV_TAU_CV_MAX, &t->tau_cv},
              {"busy_w", RANGE_GT0, DEV_WATTS_MAX, &t->busy_w},
              {"overhead_s", RANGE_GE0, DEV_SECONDS_MAX, &t->overhead_s}};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
    if ((st = get(c, v, path, nums[i].key, true, &m))) return st;
    hs_json_join(c, sub, path, nums[i].key);
    if ((st = want_number(c, m, sub, nums[i].range, nums[i].max, nums[i].out))) return st;
  }
  if (t->busy_w < idle_w) {
    /* Training below idle power is a units or field mix-up, and the energy
     * model (busy, comm and idle as whole-device power states) would then
     * reward work. */
    hs_json_join(c, sub, path, "busy_w");
    char reason[128];
    snprintf(reason, sizeof reason, "must be >= idle_w (%g W): training cannot draw less than idling",
             idle_w);
    return fail(c, HS_ERANGE, sub, reason);
  }
  if ((st = get(c, v, path, "batch_size", false, &m))) return st;
  hs_json_join(c, sub, path, "batch_size");
  if (m && (st = want_count(c, m, sub, &t->batch_size))) return st;
  if ((st = get(c, v, path, "threads", false, &m))) return st;
  hs_json_join(c, sub, path, "threads");
  if (m && (st = want_count(c, m, sub, &t->threads))) return st;

  const char *kind = profile_kind;
  if ((st = get(c, v, path, "provenance", false, &m))) return st;
  if (m) {
    hs_json_join(c, sub, path, "provenance");
    if ((st = check_provenance(c, m, sub, &kind))) return st;
    own->prov_kind = hs_strdup(kind);
  }
  if ((st = get(c, v, path, "energy_measured", false, &m))) return st;
  if (m) {
    hs_json_join(c, sub, path, "energy_measured");
    if ((st = hs_json_bool(c, m, sub, &t->energy_measured))) return st;
    if (t->energy_measured && strcmp(kind, "estimated") == 0)
      return fail(c, HS_EINVAL, sub, "is true but the provenance in force is \"estimated\"");
    if (t->energy_measured && strcmp(kind, "hypothetical") == 0)
      return fail(c, HS_EINVAL, sub, "is true but the provenance in force is \"hypothetical\"");
  }
  if ((st = get(c, v, path, "loss_curve", false, &m))) return st;
  if (m) {
    hs_json_join(c, sub, path, "loss_curve");
    if ((st = check_loss_curve(c, m, sub, own, t))) return st;
  }
  return HS_OK;
}

typedef struct dev_name_at {
  const char *name;
  size_t pos;
} dev_name_at;

static int dev_name_at_cmp(const void *a, const void *b) {
  const dev_name_at *x = a, *y = b;
  int k = strcmp(x->name, y->name);
  return k ? k : (x->pos > y->pos) - (x->pos < y->pos);
}

/* repeat[i] = 1 when task i has the name of an earlier task: one sort, since a
 * scan per task was quadratic (45 s for a 6 MB profile of 10^5 tasks). */
static unsigned char *task_repeats(const cJSON *tasks, size_t n) {
  dev_name_at *v = hs_calloc(n, sizeof *v);
  size_t i = 0;
  for (const cJSON *t = tasks->child; t; t = t->next, i++) v[i] = (dev_name_at){t->string, i};
  qsort(v, n, sizeof *v, dev_name_at_cmp);
  unsigned char *repeat = hs_calloc(n, 1);
  for (i = 1; i < n; i++)
    if (strcmp(v[i].name, v[i - 1].name) == 0) repeat[v[i].pos] = 1;
  hs_free(v);
  return repeat;
}

#define DEV_TEMP_MIN -50.0  /* deg C: a board colder than this is a units error */
#define DEV_TEMP_MAX 200.0  /* deg C: silicon is long dead above this */
#define DEV_LEVELS_MAX 16

/* A temperature in [DEV_TEMP_MIN, DEV_TEMP_MAX]. */
static hs_status want_temp(const dev_ctx *c, const cJSON *v, const char *path, double *out) {
  static const hs_json_num spec = {.lo = DEV_TEMP_MIN, .hi = DEV_TEMP_MAX,
                                   .want = "must be a temperature in [-50, 200] deg C",
                                   .not_number = HS_ERANGE, .non_finite = HS_ERANGE};
  return hs_json_number(c, v, path, &spec, out);
}

/* One level of the thermal block (k > 0 carries its trip and recover points). */
static hs_status check_level(const dev_ctx *c, const cJSON *v, const char *path, size_t k,
                             hs_profile *p) {
  static const char *const keys0[] = {"speed", "busy_factor", NULL};
  static const char *const keys[] = {"speed", "busy_factor", "trip_c", "recover_c", NULL};
  size_t n = p->thermal.nlevels;
  double *speed = p->th_arrays, *busy = speed + n, *trip = busy + n, *rec = trip + n;
  char sub[HS_JSON_PATH_MAX];
  const cJSON *m;
  hs_status st;
  if ((st = hs_json_object(c, v, path))) return st;
  if ((st = check_keys(c, v, path, k ? keys : keys0))) return st;
  hs_json_join(c, sub, path, "speed");
  if ((st = get(c, v, path, "speed", true, &m)) ||
      (st = want_number(c, m, sub, RANGE_GT0, 1.0, &speed[k])))
    return st;
  if (k == 0 && speed[0] != 1.0) return fail(c, HS_ERANGE, sub, "level 0 is the profile's speed: must be 1");
  if (k > 0 && speed[k] > speed[k - 1])
    return fail(c, HS_ERANGE, sub, "a throttled level is not faster than the level before it");
  hs_json_join(c, sub, path, "busy_factor");
  if ((st = get(c, v, path, "busy_factor", true, &m)) ||
      (st = want_number(c, m, sub, RANGE_GT0, 10.0, &busy[k])))
    return st;
  if (k == 0 && busy[0] != 1.0)
    return fail(c, HS_ERANGE, sub, "level 0 draws the task's busy_w: must be 1");
  trip[k] = rec[k] = NAN;
  if (k == 0) return HS_OK;
  hs_json_join(c, sub, path, "trip_c");
  if ((st = get(c, v, path, "trip_c", true, &m)) || (st = want_temp(c, m, sub, &trip[k]))) return st;
  if (k > 1 && !(trip[k] > trip[k - 1]))
    return fail(c, HS_ERANGE, sub, "must be above the trip point of the level before");
  hs_json_join(c, sub, path, "recover_c");
  if ((st = get(c, v, path, "recover_c", true, &m)) || (st = want_temp(c, m, sub, &rec[k]))) return st;
  if (!(rec[k] < trip[k])) return fail(c, HS_ERANGE, sub, "must be below this level's trip_c (hysteresis)");
  if (k > 1 && !(rec[k] > rec[k - 1]))
    return fail(c, HS_ERANGE, sub, "must be above the recover point of the level before");
  return HS_OK;
}

/* The optional thermal block (hs_profile.h: hs_thermal_profile). */
static hs_status check_thermal(const dev_ctx *c, const cJSON *v, hs_profile *p) {
  static const char *const keys[] = {"ambient_c", "r_c_per_w", "c_j_per_c", "levels", "sources", NULL};
  hs_thermal_profile *th = &p->thermal;
  const cJSON *m;
  hs_status st;
  if ((st = hs_json_object(c, v, "thermal"))) return st;
  if ((st = check_keys(c, v, "thermal", keys))) return st;
  if ((st = get(c, v, "thermal", "ambient_c", true, &m)) ||
      (st = want_temp(c, m, "thermal.ambient_c", &th->ambient_c)) ||
      (st = get(c, v, "thermal", "r_c_per_w", true, &m)) ||
      (st = want_number(c, m, "thermal.r_c_per_w", RANGE_GT0, 1000.0, &th->r_c_per_w)) ||
      (st = get(c, v, "thermal", "c_j_per_c", true, &m)) ||
      (st = want_number(c, m, "thermal.c_j_per_c", RANGE_GT0, 1e7, &th->c_j_per_c)) ||
      (st = get(c, v, "thermal", "levels", true, &m)))
    return st;
  size_t n = cJSON_IsArray(m) ? (size_t)cJSON_GetArraySize(m) : 0;
  if (n < 2 || n > DEV_LEVELS_MAX)
    return fail(c, HS_EINVAL, "thermal.levels", "must be an array of 2 to 16 levels (level 0 unthrottled)");
  th->nlevels = n;
  p->th_arrays = hs_calloc(4 * n, sizeof *p->th_arrays);
  size_t k = 0;
  char sub[HS_JSON_PATH_MAX];
  for (const cJSON *l = m->child; l; l = l->next, k++) {
    hs_json_join_index(c, sub, "thermal.levels", k);
    if ((st = check_level(c, l, sub, k, p))) return st;
  }
  th->speed = p->th_arrays;
  th->busy_factor = p->th_arrays + n;
  th->trip_c = p->th_arrays + 2 * n;
  th->recover_c = p->th_arrays + 3 * n;
  if ((st = get(c, v, "thermal", "sources", true, &m))) return st;
  size_t ns = cJSON_IsArray(m) ? (size_t)cJSON_GetArraySize(m) : 0;
  if (ns == 0) return fail(c, HS_EINVAL, "thermal.sources", "must be a non-empty array of strings (where each figure comes from)");
  p->th_sources = hs_calloc(ns, sizeof *p->th_sources);
  k = 0;
  for (const cJSON *s = m->child; s; s = s->next, k++) {
    hs_json_join_index(c, sub, "thermal.sources", k);
    if ((st = want_string(c, s, sub, &p->th_sources[k]))) return st;
    th->nsources = k + 1;
  }
  th->sources = (const char *const *)p->th_sources;
  return HS_OK;
}

/* Optional "gpu": {"hbm_bytes", "opt_s_per_param"} for the sharded regimes;
 * how the figures were derived goes in the provenance sources. */
static hs_status check_gpu(const dev_ctx *c, const cJSON *root, hs_profile *p) {
  static const char *const keys[] = {"hbm_bytes", "opt_s_per_param", NULL};
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "gpu"), *m;
  hs_status st;
  if (!g) return HS_OK;
  if ((st = hs_json_object(c, g, "gpu"))) return st;
  if ((st = check_keys(c, g, "gpu", keys))) return st;
  if ((st = get(c, g, "gpu", "hbm_bytes", true, &m)) ||
      (st = want_number(c, m, "gpu.hbm_bytes", RANGE_GT0, 1e15, &p->hbm_bytes)) ||
      (st = get(c, g, "gpu", "opt_s_per_param", true, &m)) ||
      (st = want_number(c, m, "gpu.opt_s_per_param", RANGE_GE0, 1, &p->opt_s_per_param)))
    return st;
  return HS_OK;
}

static hs_status check_profile(const dev_ctx *c, const cJSON *root, hs_profile *p) {
  static const char *const keys[] = {"format", "name",   "board",      "arch",  "cpu",
                                     "idle_w", "comm_w", "provenance", "tasks", "gpu",
                                     "thermal", NULL};
  hs_status st;
  const cJSON *m;
  if ((st = hs_json_object(c, root, "(top level)"))) return st;
  if ((st = check_keys(c, root, "", keys))) return st;

  if ((st = get(c, root, "", "format", true, &m))) return st;
  if (!cJSON_IsString(m)) return fail(c, HS_ETYPE, "format", "must be a string");
  if (strcmp(m->valuestring, HS_PROFILE_FORMAT) != 0)
    return fail(c, HS_EUNSUP, "format", "must be \"" HS_PROFILE_FORMAT "\"");

  if ((st = get(c, root, "", "name", true, &m))) return st;
  if ((st = want_string(c, m, "name", &p->name))) return st;
  if (!dev_name_ok(p->name)) return fail(c, HS_EINVAL, "name", "must match [a-z0-9._-]+ and not start with '.'");
  if ((st = get(c, root, "", "board", true, &m))) return st;
  if ((st = want_string(c, m, "board", &p->board))) return st;
  if ((st = get(c, root, "", "arch", true, &m))) return st;
  if ((st = want_string(c, m, "arch", &p->arch))) return st;
  if (!arch_ok(p->arch)) return fail(c, HS_EINVAL, "arch", "must be a uname -m name such as aarch64, riscv64, x86_64");
  if ((st = get(c, root, "", "cpu", true, &m))) return st;
  if ((st = want_string(c, m, "cpu", &p->cpu))) return st;
  if ((st = get(c, root, "", "idle_w", true, &m))) return st;
  if ((st = want_number(c, m, "idle_w", RANGE_GT0, DEV_WATTS_MAX, &p->idle_w))) return st;
  if ((st = get(c, root, "", "comm_w", true, &m))) return st;
  if ((st = want_number(c, m, "comm_w", RANGE_GT0, DEV_WATTS_MAX, &p->comm_w))) return st;

  if ((st = check_gpu(c, root, p))) return st;

  const char *kind = NULL;
  if ((st = get(c, root, "", "provenance", true, &m))) return st;
  if ((st = check_provenance(c, m, "provenance", &kind))) return st;
  p->prov_kind = hs_strdup(kind);

  if ((st = get(c, root, "", "tasks", true, &m))) return st;
  if (!cJSON_IsObject(m)) return fail(c, HS_ETYPE, "tasks", "must be an object {task: {...}}");
  size_t n = (size_t)cJSON_GetArraySize(m);
  if (n == 0) return fail(c, HS_EMISSING, "tasks", "must hold at least one task");
  p->tasks = hs_calloc(n, sizeof *p->tasks);
  p->own = hs_calloc(n, sizeof *p->own);
  p->ntasks = n;
  size_t i = 0;
  char sub[HS_JSON_PATH_MAX];
  unsigned char *repeat = task_repeats(m, n);
  for (const cJSON *t = m->child; t && st == HS_OK; t = t->next, i++) {
    hs_json_join(c, sub, "tasks", t->string);
    if (!t->string[0]) {
      st = fail(c, HS_EINVAL, sub, "task name must not be empty");
    } else if (repeat[i]) {
      st = fail(c, HS_EKEY, sub, "duplicate task");
    } else {
      p->own[i].name = hs_strdup(t->string);
      p->tasks[i].task = p->own[i].name;
      st = check_task(c, t, sub, p->idle_w, p->prov_kind, &p->own[i], &p->tasks[i]);
    }
  }
  hs_free(repeat);
  if (st == HS_OK && (m = member(root, "thermal")) != NULL) {
    st = check_thermal(c, m, p);
    if (st != HS_OK) p->thermal.nlevels = 0;
  }
  return st;
}

/* Line and column (1-based) of byte offset `at` in text, for parse errors. */
static void line_col(const char *text, const char *at, size_t *line, size_t *col) {
  *line = 1;
  *col = 1;
  for (const char *q = text; q < at && *q; q++) {
    if (*q == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

hs_profile *hs_profile_parse(const char *json_text, const char *origin, hs_error *err) {
  assert(json_text && origin);
  dev_ctx c = {origin, err, &dev_words, NULL, NULL};
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(json_text, &end, 1);
  if (!root) {
    size_t line, col;
    line_col(json_text, end ? end : json_text, &line, &col);
    hs_error_set(err, HS_EPARSE, "%s: line %zu, column %zu: malformed JSON", origin, line, col);
    return NULL;
  }
  hs_profile *p = hs_calloc(1, sizeof *p);
  p->origin = hs_strdup(origin);
  if (check_profile(&c, root, p) != HS_OK) goto fail;
  cJSON_Delete(root);
  return p;
fail:
  cJSON_Delete(root);
  hs_profile_destroy(p);
  return NULL;
}

/* Whole file into a NUL-terminated heap buffer (hs_read_file_as), in this
 * loader's words: a folder fails as the read error it is to stdio. */
static char *read_all(const char *path, hs_error *err) {
  hs_read_result r;
  char *buf = hs_read_file_as(path, DEV_FILE_MAX, &r);
  switch (r.fault) {
    case HS_READ_OK:
      break;
    case HS_READ_CANNOT_OPEN:
      hs_error_set(err, hs_read_open_status(r.errnum), "%s: cannot open: %s", path,
                   strerror(r.errnum));
      return NULL;
    case HS_READ_TOO_LARGE:
      hs_error_set(err, HS_ERANGE, "%s: larger than %u bytes: not a profile", path, DEV_FILE_MAX);
      return NULL;
    case HS_READ_FOLDER:
    case HS_READ_FAILED:
    default:
      hs_error_set(err, HS_EIO, "%s: read error", path);
      return NULL;
  }
  if (memchr(buf, '\0', r.len)) {
    hs_error_set(err, HS_EPARSE, "%s: contains a NUL byte: not a JSON text", path);
    hs_free(buf);
    return NULL;
  }
  return buf;
}

hs_profile *hs_profile_load(const char *path, hs_error *err) {
  assert(path);
  char *text = read_all(path, err);
  if (!text) return NULL;
  hs_profile *p = hs_profile_parse(text, path, err);
  hs_free(text);
  return p;
}

void hs_profile_destroy(hs_profile *p) {
  if (!p) return;
  for (size_t i = 0; i < p->ntasks; i++) {
    hs_free(p->own[i].name);
    hs_free(p->own[i].prov_kind);
    hs_free(p->own[i].loss_samples);
    hs_free(p->own[i].loss_values);
  }
  hs_free(p->own);
  hs_free(p->tasks);
  for (size_t i = 0; i < p->thermal.nsources; i++) hs_free(p->th_sources[i]);
  hs_free(p->th_sources);
  hs_free(p->th_arrays);
  hs_free(p->origin);
  hs_free(p->name);
  hs_free(p->board);
  hs_free(p->arch);
  hs_free(p->cpu);
  hs_free(p->prov_kind);
  hs_free(p);
}

const char *hs_profile_name(const hs_profile *p) { return p->name; }
const char *hs_profile_board(const hs_profile *p) { return p->board; }
const char *hs_profile_arch(const hs_profile *p) { return p->arch; }
const char *hs_profile_cpu(const hs_profile *p) { return p->cpu; }
const char *hs_profile_origin(const hs_profile *p) { return p->origin; }
const char *hs_profile_provenance_kind(const hs_profile *p) { return p->prov_kind; }
double hs_profile_idle_w(const hs_profile *p) { return p->idle_w; }
double hs_profile_comm_w(const hs_profile *p) { return p->comm_w; }
double hs_profile_hbm_bytes(const hs_profile *p) { return p->hbm_bytes; }
double hs_profile_opt_s_per_param(const hs_profile *p) { return p->opt_s_per_param; }
size_t hs_profile_task_count(const hs_profile *p) { return p->ntasks; }

const hs_task_profile *hs_profile_task_at(const hs_profile *p, size_t i) {
  assert(i < p->ntasks);
  return &p->tasks[i];
}

const hs_task_profile *hs_profile_task(const hs_profile *p, const char *task) {
  for (size_t i = 0; i < p->ntasks; i++)
    if (strcmp(p->tasks[i].task, task) == 0) return &p->tasks[i];
  return NULL;
}

const char *hs_profile_task_provenance_kind(const hs_profile *p, const char *task) {
  for (size_t i = 0; i < p->ntasks; i++)
    if (strcmp(p->tasks[i].task, task) == 0)
      return p->own[i].prov_kind ? p->own[i].prov_kind : p->prov_kind;
  return NULL;
}

/* --- lookup ---------------------------------------------------------------- */

const hs_thermal_profile *hs_profile_thermal(const hs_profile *p) {
  return p->thermal.nlevels ? &p->thermal : NULL;
}

/* --- sampling -------------------------------------------------------------- */

void hs_task_noise_init(hs_task_noise *n, double tau_cv) {
  assert(n && tau_cv >= 0);
  n->lognormal = tau_cv > 0;
  double s2 = n->lognormal ? log1p(tau_cv * tau_cv) : 0.0;
  n->sigma = n->lognormal ? sqrt(s2) : 0.0;
  n->half_s2 = 0.5 * s2;
}

/* One 64-bit draw, centred in its 2^-53 cell: never 0 or 1, so the inverse
 * CDF is finite and no rejection loop can consume a second draw. f's
 * exponent is sqrt(s2) * z - 0.5 * s2 with both operands taken from n: the
 * same two products and one difference as computing them here. */
double hs_task_compute_time_with(const hs_task_noise *n, double tau_s, double overhead_s,
                                 uint64_t samples, hs_rng *r) {
  assert(n && r && tau_s > 0 && overhead_s >= 0);
  double u = ((double)(hs_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
  double f = 1.0;
  if (n->lognormal) f = exp(n->sigma * gsl_cdf_ugaussian_Pinv(u) - n->half_s2);
  return overhead_s + (double)samples * tau_s * f;
}

double hs_task_compute_time(const hs_task_profile *t, uint64_t samples, hs_rng *r) {
  assert(t && r && t->tau_s > 0 && t->tau_cv >= 0 && t->overhead_s >= 0);
  hs_task_noise n;
  hs_task_noise_init(&n, t->tau_cv);
  return hs_task_compute_time_with(&n, t->tau_s, t->overhead_s, samples, r);
}
