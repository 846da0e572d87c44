/* scenario_override.c: --set overrides, applied to the JSON tree before the
 * validating walk.
 *
 * Overrides go on the tree, not on the struct, so an override is validated by
 * exactly the code that validates the file, and an unknown key set with --set
 * is rejected like one written in the file. Each override leaves a mark (the
 * canonical path it wrote and the key as typed), so an error under that path
 * names the --set key. O(overrides x path length); overrides are few. */
#include <string.h>

#include "base/hs_alloc.h"
#include "scenario_internal.h"

static hs_status apply_one(ctx *c, cJSON *root, const hs_override *o, ovr_mark *mark) {
  sim_jseg *segs;
  size_t n;
  hs_error e = {0};
  char b[96];
  hs_status st = sim_jpath_parse(o->key, &segs, &n, &e);
  if (!st) {
    sim_jpath_format(segs, n, mark->path, sizeof mark->path);
    mark->key = o->key;
    hs_free(segs);
    st = sim_json_set(root, o->key, o->value, &e);
  }
  if (st)
    hs_error_set(c->err, st, "%s: --set %s: %s", c->origin, scn_shown(o->key, b, sizeof b),
                 e.msg);
  return st;
}

hs_status scn_apply_overrides(ctx *c, cJSON *root, const hs_override *ovr, size_t novr,
                              ovr_mark *marks) {
  if (!novr) return HS_OK;
  if (!cJSON_IsObject(root)) {
    sim_jpath_init(&c->path);
    return scn_need_object(c, root);
  }
  /* Optional sections exist implicitly, so "policy.w_e" works on a file that
   * relies on the default policy. */
  static const char *const sections[] = {"regime", "policy", "network", "telemetry", "learning"};
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (!scn_member(root, sections[i]))
      cJSON_AddItemToObject(root, sections[i], cJSON_CreateObject());
  size_t k = 0;
  /* policy.kind first: a new kind starts from its own defaults. */
  for (size_t i = 0; i < novr; i++) {
    if (strcmp(ovr[i].key, "policy.kind")) continue;
    cJSON *pol = scn_member(root, "policy");
    if (cJSON_IsObject(pol))
      while (pol->child) cJSON_Delete(cJSON_DetachItemViaPointer(pol, pol->child));
    hs_status st = apply_one(c, root, &ovr[i], &marks[k++]);
    if (st) return st;
  }
  for (size_t i = 0; i < novr; i++) {
    if (!strcmp(ovr[i].key, "policy.kind")) continue;
    hs_status st = apply_one(c, root, &ovr[i], &marks[k++]);
    if (st) return st;
  }
  c->nmarks = k;
  return HS_OK;
}

hs_status hs_override_parse(char *arg, hs_override *out, hs_error *err) {
  char *eq = strchr(arg, '=');
  char b[96];
  if (!eq || eq == arg)
    return hs_error_set(err, HS_EINVAL, "--set %s: expected key=value (e.g. policy.w_e=0.25)",
                        scn_shown(arg, b, sizeof b));
  *eq = '\0';
  out->key = arg;
  out->value = eq + 1;
  return HS_OK;
}
