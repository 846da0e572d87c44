/* test_policy_state.c: hs_controller_save / hs_controller_restore (state.c).
 *
 * Properties: for every registered policy, a controller restored from a saved
 * state answers the same telemetry with the same allocations as the original,
 * and saving it again gives the same text; with groups too. A known answer
 * for the text of a small equal controller. Refusals (malformed text, another
 * configuration, out-of-range values, a wrong allocation sum) name the field
 * and leave the controller exactly as it was. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "base/hs_rng.h"

static hs_controller *make(const char *kind, size_t n, const uint32_t *groups, uint64_t budget) {
  hs_error err = {0};
  hs_policy_config cfg;
  cr_assert_eq(hs_policy_config_init(&cfg, kind, &err), HS_OK, "%s", err.msg);
  if (hs_policy_caps(kind) & HS_POLICY_CAP_SELECTS) {
    cr_assert_eq(hs_policy_config_set(&cfg, "oort_pacer_window", "2", &err), HS_OK, "%s", err.msg);
  }
  hs_controller *c = hs_controller_create(&cfg, n, groups, budget, &err);
  cr_assert_not_null(c, "%s: %s", kind, err.msg);
  return c;
}

/* One round of telemetry for c's allocation: device i costs (1 + i) ms per
 * sample with a seeded +-20 % jitter; energy the other way round. */
static void feed(hs_controller *c, hs_rng *r) {
  size_t n = hs_controller_size(c);
  const uint64_t *a = hs_controller_allocation(c);
  hs_telemetry t[16];
  for (size_t i = 0; i < n; i++) {
    double jit = 0.8 + 0.4 * hs_rng_uniform(r);
    t[i].samples = (int64_t)a[i];
    t[i].time_s = a[i] ? 0.001 * (double)(1 + i) * (double)a[i] * jit : 0;
    t[i].energy_j = a[i] ? 0.002 * (double)(n - i) * (double)a[i] : 0;
  }
  hs_error err = {0};
  cr_assert_eq(hs_controller_update(c, t, n, &err), HS_OK, "%s", err.msg);
}

static void same_future(const char *kind, const uint32_t *groups) {
  enum { N = 6, B = 6000 };
  hs_controller *a = make(kind, N, groups, B);
  hs_rng r;
  hs_rng_init(&r, 11, 0, HS_RNG_BENCH);
  for (int k = 0; k < 7; k++) feed(a, &r);
  hs_error err = {0};
  char *text = hs_controller_save(a, &err);
  cr_assert_not_null(text, "%s: %s", kind, err.msg);
  hs_controller *b = make(kind, N, groups, B);
  cr_assert_eq(hs_controller_restore(b, text, &err), HS_OK, "%s: %s", kind, err.msg);
  cr_expect_eq(hs_controller_rounds(b), 7);
  hs_rng ra = r, rb = r;
  for (int k = 0; k < 9; k++) {
    feed(a, &ra);
    feed(b, &rb);
    cr_assert_arr_eq(hs_controller_allocation(a), hs_controller_allocation(b), N * sizeof(uint64_t),
                     "%s: round %d after the restore differs", kind, 8 + k);
    cr_assert_eq(hs_controller_reallocated(a), hs_controller_reallocated(b));
  }
  char *ta = hs_controller_save(a, &err), *tb = hs_controller_save(b, &err);
  cr_expect_str_eq(ta, tb, "%s: saved again, the texts differ", kind);
  hs_free(text);
  hs_free(ta);
  hs_free(tb);
  hs_controller_destroy(a);
  hs_controller_destroy(b);
}

Test(policy_state, every_policy_continues_exactly_after_a_restore) {
  for (size_t i = 0; i < hs_policy_count(); i++) same_future(hs_policy_name(i), NULL);
}

Test(policy_state, groups_continue_exactly_after_a_restore) {
  const uint32_t g[6] = {7, 3, 7, 3, 3, 9};
  for (size_t i = 0; i < hs_policy_count(); i++)
    if (hs_policy_caps(hs_policy_name(i)) & HS_POLICY_CAP_GROUPS) same_future(hs_policy_name(i), g);
}

Test(policy_state, known_text_of_an_equal_controller) {
  hs_controller *c = make("equal", 2, NULL, 5);
  hs_error err = {0};
  char *text = hs_controller_save(c, &err);
  cr_assert_not_null(text);
  cr_expect_str_eq(text, "{\n"
                         "  \"format\": \"hetsim-controller-state\",\n"
                         "  \"version\": 1,\n"
                         "  \"kind\": \"equal\",\n"
                         "  \"participants\": 2,\n"
                         "  \"budget\": 5,\n"
                         "  \"groups\": null,\n"
                         "  \"config\": {\"seed\": 0, \"steps_per_round\": 1},\n"
                         "  \"rounds\": 0,\n"
                         "  \"reallocated\": false,\n"
                         "  \"allocation\": [3, 2],\n"
                         "  \"state\": {}\n"
                         "}\n");
  hs_free(text);
  hs_controller_destroy(c);
}

/* Restoring `text` into c fails with status st and a message containing
 * `what`; c's saved text is the same before and after. */
static void refused(hs_controller *c, const char *text, hs_status st, const char *what) {
  hs_error err = {0};
  char *before = hs_controller_save(c, &err);
  cr_assert_eq(hs_controller_restore(c, text, &err), st, "got: %s", err.msg);
  cr_expect(strstr(err.msg, what) != NULL, "message \"%s\" lacks \"%s\"", err.msg, what);
  char *after = hs_controller_save(c, &err);
  cr_expect_str_eq(before, after, "a refused restore changed the controller");
  hs_free(before);
  hs_free(after);
}

/* text with the first occurrence of from replaced by to (heap). */
static char *subst(const char *text, const char *from, const char *to) {
  const char *p = strstr(text, from);
  cr_assert_not_null(p, "\"%s\" not in the saved text", from);
  size_t lt = strlen(text), lf = strlen(from), lto = strlen(to);
  char *out = hs_malloc(lt - lf + lto + 1);
  memcpy(out, text, (size_t)(p - text));
  memcpy(out + (p - text), to, lto);
  strcpy(out + (p - text) + lto, p + lf);
  return out;
}

/* The saved text of a `kind` controller after `rounds` rounds of feed();
 * *r is left where the rounds left it. Heap. */
static char *saved_after(const char *kind, size_t n, uint64_t budget, int rounds, hs_rng *r) {
  hs_controller *a = make(kind, n, NULL, budget);
  for (int k = 0; k < rounds; k++) feed(a, r);
  hs_error err = {0};
  char *text = hs_controller_save(a, &err);
  cr_assert_not_null(text, "%s", err.msg);
  hs_controller_destroy(a);
  return text;
}

Test(policy_state, refusals_name_the_field_and_change_nothing) {
  hs_rng r;
  hs_rng_init(&r, 5, 0, HS_RNG_BENCH);
  char *text = saved_after("balanced", 3, 300, 3, &r);
  hs_error err = {0};
  hs_controller *b = make("balanced", 3, NULL, 300);
  feed(b, &r);

  char *cut = hs_strdup(text);
  cut[strlen(cut) / 2] = '\0';
  refused(b, cut, HS_EPARSE, "state: byte");
  refused(b, "", HS_EPARSE, "expected a value");
  refused(b, "[1, 2]", HS_ETYPE, "expected a JSON object");
  /* one edit of the saved text each: what it breaks, how it is refused */
  static const struct {
    const char *from, *to;
    hs_status st;
    const char *what;
  } edits[] = {
      {"\"w_e\": 0.5", "\"w_e\": 0.25", HS_EINVAL, "config.w_e: saved 0.25, this controller 0.5"},
      {"\"tau\": [", "\"tau\": [-1, ", HS_EINVAL, "state.tau: 4 values, expected 3"},
      {"\"tau\": [", "\"tau\": [-1", HS_ERANGE, "state.tau[0]: -10.00"},
      {"\"budget\": 300", "\"budget\": 301", HS_EINVAL, "budget: saved 301, this controller 300"},
      {"\"version\": 1", "\"version\": 2", HS_EUNSUP, "version: 2"},
      {"\"have\"", "\"had\"", HS_EMISSING, "state.have: missing"},
  };
  for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
    char *t = subst(text, edits[k].from, edits[k].to);
    refused(b, t, edits[k].st, edits[k].what);
    hs_free(t);
  }
  char *t7 = hs_strdup(text); /* the first count set to 0: the sum falls short */
  char *v = strstr(t7, "\"allocation\": [") + strlen("\"allocation\": [");
  char *vend = strchr(v, ',');
  *v = '0';
  memmove(v + 1, vend, strlen(vend) + 1);
  refused(b, t7, HS_EINVAL, "allocation: group 0 sums to");
  hs_controller *e = make("time-only", 3, NULL, 300);
  refused(e, text, HS_EINVAL, "kind: saved \"balanced\"");

  char *b4 = hs_controller_save(b, &err);
  cr_assert_eq(hs_controller_restore(b, text, &err), HS_OK, "%s", err.msg);
  char *b5 = hs_controller_save(b, &err);
  cr_expect_str_eq(b5, text);
  cr_expect_str_neq(b4, text);
  char *ts[] = {text, cut, t7, b4, b5};
  for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) hs_free(ts[i]);
  hs_controller_destroy(b);
  hs_controller_destroy(e);
}

Test(policy_state, oort_history_must_cover_the_rounds) {
  hs_rng r;
  hs_rng_init(&r, 9, 0, HS_RNG_BENCH);
  char *text = saved_after("oort", 6, 600, 3, &r);
  /* window 2: the ring holds 2W = 4 values; one is too few for round 3 */
  const char *h = strstr(text, "\"hist\": [");
  cr_assert_not_null(h);
  char *t1 = hs_strdup(text);
  char *p = t1 + (h - text) + strlen("\"hist\": [");
  char *close = strchr(p, ']');
  char *comma = strchr(p, ',');
  cr_assert(comma && comma < close);
  memmove(comma, close, strlen(close) + 1);
  hs_controller *b = make("oort", 6, NULL, 600);
  refused(b, t1, HS_EINVAL, "state.hist: 1 values for round 3");
  hs_free(t1);
  hs_free(text);
  hs_controller_destroy(b);
}
