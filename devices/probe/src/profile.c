/* profile.c: render one calibrated task as a hetsim-profile/1 document
 * (devices/profiles/README.md), merged into an existing profile when there is
 * one, and check it the way the simulator's loader does before anything is
 * written.
 *
 * Merge rules: the file must be for the same board (name, board, arch equal;
 * else refused, since one profile describes one board type). The task is
 * inserted or replaced in place; other tasks are kept verbatim. The
 * top-level idle_w, comm_w and provenance become this run's; a kept task that
 * had no provenance of its own first receives a copy of the old top-level one,
 * so no figure ever changes its stated origin. Every task this harness writes
 * carries its own provenance for the same reason.
 * The check mirrors the loader's contract: unknown keys, wrong types and
 * out-of-range values are errors with the JSON path. */
#include "probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool pc_in(const char *key, const char *const *allowed) {
  for (; *allowed; allowed++)
    if (strcmp(key, *allowed) == 0) return true;
  return false;
}

static hs_status pc_keys(const probe_json *o, const char *path, const char *const *allowed, hs_error *err) {
  for (size_t k = 0; k < o->n; k++)
    if (!pc_in(o->keys[k], allowed))
      return hs_error_set(err, HS_EKEY, "%s%s%s: unknown key", path, path[0] ? "." : "", o->keys[k]);
  return HS_OK;
}

/* The loader's bounds (devices/src/profile.c: DEV_WATTS_MAX, DEV_SECONDS_MAX,
 * the sample_hz limit, uint32 counts): the harness has no business writing a
 * file the simulator then refuses. */
#define PC_WATTS_MAX 100000.0
#define PC_SECONDS_MAX 86400.0
#define PC_HZ_MAX 1e9
#define PC_COUNT_MAX 4294967295.0

static hs_status pc_num(const probe_json *o, const char *path, const char *key, bool required, double lo,
                           bool lo_open, double hi, bool whole, hs_error *err) {
  const probe_json *v = probe_json_get(o, key);
  if (!v) return required ? hs_error_set(err, HS_EMISSING, "%s.%s: missing", path, key) : HS_OK;
  if (v->type != PJ_NUM) return hs_error_set(err, HS_ETYPE, "%s.%s: must be a number", path, key);
  if (!isfinite(v->num) || (lo_open ? v->num <= lo : v->num < lo) || v->num > hi)
    return hs_error_set(err, HS_ERANGE, "%s.%s: %s out of range (%s %g, <= %g)", path, key, v->str,
                         lo_open ? ">" : ">=", lo, hi);
  if (whole && v->num != floor(v->num))
    return hs_error_set(err, HS_ERANGE, "%s.%s: %s is not a whole number", path, key, v->str);
  return HS_OK;
}

static hs_status pc_str(const probe_json *o, const char *path, const char *key, bool required, hs_error *err) {
  const probe_json *v = probe_json_get(o, key);
  if (!v) return required ? hs_error_set(err, HS_EMISSING, "%s%s%s: missing", path, path[0] ? "." : "", key) : HS_OK;
  if (v->type != PJ_STR) return hs_error_set(err, HS_ETYPE, "%s%s%s: must be a string", path, path[0] ? "." : "", key);
  return HS_OK;
}

static hs_status pc_prov(const probe_json *p, const char *path, hs_error *err) {
  static const char *const keys[] = {"kind", "sources", "sensor", "covers", "sample_hz", "runs",
                                     "date", "kernel", "notes", NULL};
  if (p->type != PJ_OBJ) return hs_error_set(err, HS_ETYPE, "%s: must be an object", path);
  hs_status st = pc_keys(p, path, keys, err);
  if (st == HS_OK) st = pc_str(p, path, "kind", true, err);
  if (st != HS_OK) return st;
  const char *kind = probe_json_get(p, "kind")->str;
  if (strcmp(kind, "measured") && strcmp(kind, "mixed") && strcmp(kind, "estimated"))
    return hs_error_set(err, HS_EINVAL, "%s.kind: \"%s\" is not measured, mixed or estimated", path, kind);
  const probe_json *s = probe_json_get(p, "sources");
  if (!s && strcmp(kind, "measured") != 0)
    return hs_error_set(err, HS_EMISSING, "%s.sources: required when kind is %s", path, kind);
  if (s) {
    if (s->type != PJ_ARR) return hs_error_set(err, HS_ETYPE, "%s.sources: must be an array of strings", path);
    if (s->n == 0 && strcmp(kind, "measured") != 0)
      return hs_error_set(err, HS_EINVAL, "%s.sources: empty, but kind is %s", path, kind);
    for (size_t k = 0; k < s->n; k++)
      if (s->kids[k]->type != PJ_STR || !s->kids[k]->str[0])
        return hs_error_set(err, HS_ETYPE, "%s.sources[%zu]: must be a non-empty string", path, k);
  }
  const probe_json *sn = probe_json_get(p, "sensor");
  if (sn && sn->type == PJ_STR && (!sn->str[0] || strcmp(kind, "estimated") == 0))
    return hs_error_set(err, HS_EINVAL, "%s.sensor: empty, or given for an estimated profile", path);
  if (!sn && strcmp(kind, "measured") == 0)
    return hs_error_set(err, HS_EMISSING, "%s.sensor: required when kind is measured", path);
  const probe_json *dt = probe_json_get(p, "date");
  if (dt && dt->type == PJ_STR) {
    unsigned y = 0, mo = 0, d = 0;
    char tail = 0;
    if (strlen(dt->str) != 10 || strspn(dt->str, "0123456789-") != 10 || dt->str[4] != '-' || dt->str[7] != '-' ||
        sscanf(dt->str, "%4u-%2u-%2u%c", &y, &mo, &d, &tail) != 3 || mo < 1 || mo > 12 || d < 1 || d > 31)
      return hs_error_set(err, HS_EINVAL, "%s.date: \"%s\" is not YYYY-MM-DD", path, dt->str);
  }
  static const char *const strs[] = {"sensor", "covers", "date", "kernel", "notes"};
  for (int k = 0; k < 5 && st == HS_OK; k++) st = pc_str(p, path, strs[k], false, err);
  if (st == HS_OK) st = pc_num(p, path, "sample_hz", false, 0, true, PC_HZ_MAX, false, err);
  if (st == HS_OK) st = pc_num(p, path, "runs", false, 1, false, PC_COUNT_MAX, true, err);
  return st;
}

static hs_status pc_task(const probe_json *t, const char *path, double idle_w, hs_error *err) {
  static const char *const keys[] = {"tau_s", "tau_cv", "busy_w", "overhead_s", "batch_size", "threads",
                                     "energy_measured", "loss_curve", "provenance", NULL};
  if (t->type != PJ_OBJ) return hs_error_set(err, HS_ETYPE, "%s: must be an object", path);
  hs_status st = pc_keys(t, path, keys, err);
  if (st == HS_OK) st = pc_num(t, path, "tau_s", true, 0, true, PC_SECONDS_MAX, false, err);
  if (st == HS_OK) st = pc_num(t, path, "tau_cv", true, 0, false, 10, false, err);
  if (st == HS_OK) st = pc_num(t, path, "busy_w", true, 0, true, PC_WATTS_MAX, false, err);
  if (st == HS_OK) st = pc_num(t, path, "overhead_s", true, 0, false, PC_SECONDS_MAX, false, err);
  if (st == HS_OK) st = pc_num(t, path, "batch_size", false, 1, false, PC_COUNT_MAX, true, err);
  if (st == HS_OK) st = pc_num(t, path, "threads", false, 1, false, PC_COUNT_MAX, true, err);
  if (st != HS_OK) return st;
  double busy = probe_json_get(t, "busy_w")->num;
  if (busy < idle_w)
    return hs_error_set(err, HS_ERANGE, "%s.busy_w: %s W is below idle_w %g W (the loader refuses training below idle)",
                         path, probe_json_get(t, "busy_w")->str, idle_w);
  const probe_json *e = probe_json_get(t, "energy_measured");
  if (e && e->type != PJ_BOOL) return hs_error_set(err, HS_ETYPE, "%s.energy_measured: must be true or false", path);
  const probe_json *lc = probe_json_get(t, "loss_curve");
  if (lc) {
    if (lc->type != PJ_ARR || lc->n == 0)
      return hs_error_set(err, HS_ETYPE, "%s.loss_curve: must be a non-empty array", path);
    double prev = -1;
    for (size_t k = 0; k < lc->n; k++) {
      const probe_json *pt = lc->kids[k];
      if (pt->type != PJ_ARR || pt->n != 2 || pt->kids[0]->type != PJ_NUM || pt->kids[1]->type != PJ_NUM)
        return hs_error_set(err, HS_ETYPE, "%s.loss_curve[%zu]: must be [samples, loss]", path, k);
      if (!(pt->kids[0]->num >= 0) || !(pt->kids[0]->num > prev))
        return hs_error_set(err, HS_ERANGE, "%s.loss_curve[%zu]: samples must be >= 0 and ascending", path, k);
      if (!isfinite(pt->kids[1]->num))
        return hs_error_set(err, HS_ERANGE, "%s.loss_curve[%zu]: loss must be finite", path, k);
      prev = pt->kids[0]->num;
    }
  }
  const probe_json *p = probe_json_get(t, "provenance");
  if (p) {
    char pp[160];
    snprintf(pp, sizeof pp, "%s.provenance", path);
    return pc_prov(p, pp, err);
  }
  return HS_OK;
}

/* The optional thermal block, by the loader's rules (hs_profile.h,
 * hs_thermal_profile): 2..16 levels, level 0 at speed 1 and busy factor 1,
 * speeds non-increasing, trip and recover ascending, recover < trip. */
static hs_status pc_thermal(const probe_json *th, hs_error *err) {
  static const char *const keys[] = {"ambient_c", "r_c_per_w", "c_j_per_c", "levels", "sources", NULL};
  static const char *const lk[] = {"speed", "busy_factor", "trip_c", "recover_c", NULL};
  if (th->type != PJ_OBJ) return hs_error_set(err, HS_ETYPE, "thermal: must be an object");
  hs_status st = pc_keys(th, "thermal", keys, err);
  if (!st) st = pc_num(th, "thermal", "ambient_c", true, -50, false, 200, false, err);
  if (!st) st = pc_num(th, "thermal", "r_c_per_w", true, 0, true, 1000, false, err);
  if (!st) st = pc_num(th, "thermal", "c_j_per_c", true, 0, true, 1e7, false, err);
  if (st) return st;
  const probe_json *lv = probe_json_get(th, "levels"), *src = probe_json_get(th, "sources");
  if (!lv || lv->type != PJ_ARR || lv->n < 2 || lv->n > 16)
    return hs_error_set(err, HS_EINVAL, "thermal.levels: must be an array of 2 to 16 levels");
  if (!src || src->type != PJ_ARR || src->n == 0)
    return hs_error_set(err, HS_EINVAL, "thermal.sources: must be a non-empty array of strings");
  for (size_t k = 0; k < src->n; k++)
    if (src->kids[k]->type != PJ_STR || !src->kids[k]->str[0])
      return hs_error_set(err, HS_ETYPE, "thermal.sources[%zu]: must be a non-empty string", k);
  double prev_speed = 1, prev_trip = -INFINITY, prev_rec = -INFINITY;
  for (size_t k = 0; k < lv->n; k++) {
    const probe_json *l = lv->kids[k];
    char path[64];
    snprintf(path, sizeof path, "thermal.levels[%zu]", k);
    if (l->type != PJ_OBJ) return hs_error_set(err, HS_ETYPE, "%s: must be an object", path);
    if ((st = pc_keys(l, path, lk, err)) || (st = pc_num(l, path, "speed", true, 0, true, 1, false, err)) ||
        (st = pc_num(l, path, "busy_factor", true, 0, true, 10, false, err)))
      return st;
    double sp = probe_json_get(l, "speed")->num, bf = probe_json_get(l, "busy_factor")->num;
    const probe_json *tr = probe_json_get(l, "trip_c"), *rc = probe_json_get(l, "recover_c");
    if (k == 0) {
      if (sp != 1 || bf != 1 || tr || rc)
        return hs_error_set(err, HS_EINVAL, "%s: level 0 has speed 1, busy_factor 1 and no trip points", path);
      continue;
    }
    if (sp > prev_speed) return hs_error_set(err, HS_ERANGE, "%s.speed: faster than the level before", path);
    if ((st = pc_num(l, path, "trip_c", true, -50, false, 200, false, err)) ||
        (st = pc_num(l, path, "recover_c", true, -50, false, 200, false, err)))
      return st;
    if (!(tr->num > prev_trip) || !(rc->num > prev_rec) || !(rc->num < tr->num))
      return hs_error_set(err, HS_ERANGE, "%s: trip_c and recover_c must ascend with the level, recover_c < trip_c",
                          path);
    prev_speed = sp;
    prev_trip = tr->num;
    prev_rec = rc->num;
  }
  return HS_OK;
}

hs_status probe_profile_check(const probe_json *root, hs_error *err) {
  static const char *const keys[] = {"format", "name", "board", "arch", "cpu", "idle_w",
                                     "comm_w", "provenance", "tasks", "thermal", NULL};
  if (root->type != PJ_OBJ) return hs_error_set(err, HS_ETYPE, "(top): must be an object");
  hs_status st = pc_keys(root, "", keys, err);
  static const char *const strs[] = {"format", "name", "board", "arch", "cpu"};
  for (int k = 0; k < 5 && st == HS_OK; k++) st = pc_str(root, "", strs[k], true, err);
  if (st != HS_OK) return st;
  if (strcmp(probe_json_get(root, "format")->str, "hetsim-profile/1") != 0)
    return hs_error_set(err, HS_EUNSUP, "format: \"%s\" is not hetsim-profile/1", probe_json_get(root, "format")->str);
  for (int k = 1; k < 5; k++)
    if (!probe_json_get(root, strs[k])->str[0]) return hs_error_set(err, HS_EINVAL, "%s: must not be empty", strs[k]);
  const char *arch = probe_json_get(root, "arch")->str;
  if (strspn(arch, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(arch))
    return hs_error_set(err, HS_EINVAL, "arch: \"%s\" is not a uname -m name such as aarch64, riscv64, x86_64", arch);
  const char *name = probe_json_get(root, "name")->str;
  if (!name[0] || name[0] == '.' || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(name))
    return hs_error_set(err, HS_EINVAL, "name: \"%s\" must match [a-z0-9._-]+ and not start with '.'", name);
  if ((st = pc_num(root, "(top)", "idle_w", true, 0, true, PC_WATTS_MAX, false, err)) != HS_OK) return st;
  if ((st = pc_num(root, "(top)", "comm_w", true, 0, true, PC_WATTS_MAX, false, err)) != HS_OK) return st;
  const probe_json *p = probe_json_get(root, "provenance");
  if (!p) return hs_error_set(err, HS_EMISSING, "provenance: missing");
  if ((st = pc_prov(p, "provenance", err)) != HS_OK) return st;
  const probe_json *t = probe_json_get(root, "tasks");
  if (!t) return hs_error_set(err, HS_EMISSING, "tasks: missing");
  if (t->type != PJ_OBJ || t->n == 0) return hs_error_set(err, HS_ETYPE, "tasks: must be an object with at least one task");
  double idle_w = probe_json_get(root, "idle_w")->num;
  for (size_t k = 0; k < t->n && st == HS_OK; k++) {
    char path[128];
    snprintf(path, sizeof path, "tasks.%.100s", t->keys[k]);
    if (!t->keys[k][0]) return hs_error_set(err, HS_EINVAL, "tasks.: a task name must not be empty");
    st = pc_task(t->kids[k], path, idle_w, err);
  }
  const probe_json *th = probe_json_get(root, "thermal");
  if (st == HS_OK && th) st = pc_thermal(th, err);
  return st;
}

static probe_json *pr_prov(const probe_profile_in *in) {
  probe_json *p = probe_json_new(PJ_OBJ);
  probe_json_set(p, "kind", probe_json_str(in->kind));
  if (in->sources && in->sources[0]) {
    probe_json *s = probe_json_new(PJ_ARR);
    for (const char *const *x = in->sources; *x; x++) probe_json_push(s, probe_json_str(*x));
    probe_json_set(p, "sources", s);
  }
  probe_json_set(p, "sensor", probe_json_str(in->sensor ? in->sensor : "none"));
  probe_json_set(p, "covers", probe_json_str(in->covers ? in->covers : "nothing: no sensor used; energy not measured"));
  if (in->sample_hz > 0) probe_json_set(p, "sample_hz", probe_json_num(in->sample_hz));
  probe_json_set(p, "runs", probe_json_num(in->task->runs));
  probe_json_set(p, "date", probe_json_str(in->date));
  probe_json_set(p, "kernel", probe_json_str(in->kernel));
  char *notes = probe_xasprintf("%s%s%s", in->notes ? in->notes : "", in->notes && in->notes[0] ? " | " : "",
                                in->task->notes);
  probe_json_set(p, "notes", probe_json_str(notes));
  free(notes);
  return p;
}

static probe_json *pr_task(const probe_profile_in *in) {
  const probe_task_result *r = in->task;
  probe_json *t = probe_json_new(PJ_OBJ);
  probe_json_set(t, "tau_s", probe_json_num(r->tau_s));
  probe_json_set(t, "tau_cv", probe_json_num(r->tau_cv));
  probe_json_set(t, "busy_w", probe_json_num(r->busy_w));
  probe_json_set(t, "overhead_s", probe_json_num(r->overhead_s));
  probe_json_set(t, "batch_size", probe_json_num(r->batch));
  probe_json_set(t, "threads", probe_json_num(r->threads));
  probe_json_set(t, "energy_measured", probe_json_bool(r->energy_measured));
  if (r->loss_n) {
    probe_json *lc = probe_json_new(PJ_ARR);
    for (size_t k = 0; k < r->loss_n; k++) {
      probe_json *pt = probe_json_new(PJ_ARR);
      probe_json_push(pt, probe_json_num(r->loss_samples[k]));
      probe_json_push(pt, probe_json_num(r->loss_values[k]));
      probe_json_push(lc, pt);
    }
    probe_json_set(t, "loss_curve", lc);
  }
  probe_json_set(t, "provenance", pr_prov(in));
  return t;
}

/* Deep copy (for moving the old top-level provenance into kept tasks). */
static probe_json *pr_copy(const probe_json *j) {
  probe_json *c = probe_json_new(j->type);
  c->b = j->b;
  c->num = j->num;
  c->str = j->str ? hs_strdup(j->str) : NULL;
  for (size_t k = 0; k < j->n; k++) {
    if (j->type == PJ_OBJ) probe_json_set(c, j->keys[k], pr_copy(j->kids[k]));
    else probe_json_push(c, pr_copy(j->kids[k]));
  }
  return c;
}

char *probe_profile_render(const probe_profile_in *in, const char *existing, size_t existing_len, hs_error *err) {
  probe_json *root = NULL;
  if (existing) {
    root = probe_json_parse(existing, existing_len, err);
    if (!root) return NULL;
    if (probe_profile_check(root, err) != HS_OK) {
      hs_error_prefix(err, "existing profile is invalid, not merging into it");
      probe_json_destroy(root);
      return NULL;
    }
    static const char *const same[] = {"name", "arch", "board"};
    const char *mine[] = {in->name, in->arch, in->board};
    for (int k = 0; k < 3; k++) {
      const char *theirs = probe_json_get(root, same[k])->str;
      if (strcmp(theirs, mine[k]) != 0) {
        hs_error_set(err, HS_EINVAL,
                      "%s: the file says \"%s\", this run \"%s\": one profile describes one board type "
                      "(write to another file, or pass --name/--board to match)",
                      same[k], theirs, mine[k]);
        probe_json_destroy(root);
        return NULL;
      }
    }
    probe_json *tasks = probe_json_get(root, "tasks"), *old = probe_json_get(root, "provenance");
    for (size_t k = 0; k < tasks->n; k++)
      if (!probe_json_get(tasks->kids[k], "provenance")) probe_json_set(tasks->kids[k], "provenance", pr_copy(old));
  } else {
    root = probe_json_new(PJ_OBJ);
    probe_json_set(root, "format", probe_json_str("hetsim-profile/1"));
    probe_json_set(root, "name", probe_json_str(in->name));
    probe_json_set(root, "board", probe_json_str(in->board));
    probe_json_set(root, "arch", probe_json_str(in->arch));
  }
  probe_json_set(root, "cpu", probe_json_str(in->cpu));
  probe_json_set(root, "idle_w", probe_json_num(in->idle_w));
  probe_json_set(root, "comm_w", probe_json_num(in->comm_w));
  probe_json_set(root, "provenance", pr_prov(in));
  if (!probe_json_get(root, "tasks")) probe_json_set(root, "tasks", probe_json_new(PJ_OBJ));
  probe_json_set(probe_json_get(root, "tasks"), in->task->task, pr_task(in));
  char *text = NULL;
  if (probe_profile_check(root, err) == HS_OK) text = probe_json_write(root);
  else hs_error_prefix(err, "refusing to write a profile the simulator would reject");
  probe_json_destroy(root);
  return text;
}
