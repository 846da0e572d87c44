/* fuzz_controller_state.c: libFuzzer harness for the controller state reader
 * (hs_controller_restore, policies/include/policies/hs_policy.h; policies/src/state.c).
 *
 * Input: the state text, offered to five controllers (balanced, static, oort,
 * ema-batch with 4 steps, round-time), each already fed two rounds (with
 * communication times, which only round-time keeps). Contract checked: a
 * refusal comes with a message and leaves the controller exactly as it was
 * (its saved text is unchanged); an accepted state saves back to the same text
 * a second restore accepts (round trip), keeps the allocation summing to the
 * budget, and the restored controller takes a valid update.
 * Seeds: seeds/controller_state/ (states saved by these five controllers). */
#include "fuzz_common.h"
#include "base/hs_alloc.h"
#include "policies/hs_policy.h"

typedef struct spec {
  const char *kind, *key, *value;
  size_t n;
  uint64_t budget;
} spec;

static const spec specs[] = {
    {"balanced", NULL, NULL, 3, 300},
    {"static", NULL, NULL, 3, 300},
    {"oort", "oort_pacer_window", "2", 4, 400},
    {"ema-batch", "steps_per_round", "4", 2, 120},
    {"round-time", NULL, NULL, 3, 300},
};

static void feed(hs_controller *c, double skew) {
  size_t n = hs_controller_size(c);
  const uint64_t *a = hs_controller_allocation(c);
  hs_telemetry t[4];
  double comm[4];
  for (size_t i = 0; i < n; i++) {
    comm[i] = 0.5 * skew * (double)i;
    t[i].samples = (int64_t)a[i];
    t[i].time_s = a[i] ? 0.01 * (double)a[i] * (1.0 + skew * (double)i) : 0;
    t[i].energy_j = a[i] ? 0.02 * (double)a[i] : 0;
  }
  hs_error err = {HS_OK, ""};
  FUZZ_CHECK(hs_controller_set_comm(c, comm, n, &err) == HS_OK, "comm refused: %s", err.msg);
  FUZZ_CHECK(hs_controller_update(c, t, n, &err) == HS_OK, "update refused: %s", err.msg);
}

static hs_controller *make(const spec *s) {
  hs_error err = {HS_OK, ""};
  hs_policy_config cfg;
  FUZZ_CHECK(hs_policy_config_init(&cfg, s->kind, &err) == HS_OK, "%s", err.msg);
  if (s->key) FUZZ_CHECK(hs_policy_config_set(&cfg, s->key, s->value, &err) == HS_OK, "%s", err.msg);
  hs_controller *c = hs_controller_create(&cfg, s->n, NULL, s->budget, &err);
  FUZZ_CHECK(c != NULL, "%s", err.msg);
  feed(c, 1.0);
  feed(c, 0.5);
  return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    hs_controller *c = make(&specs[k]);
    hs_error err = {HS_OK, ""};
    char *before = hs_controller_save(c, &err);
    FUZZ_CHECK(before != NULL, "%s: save: %s", specs[k].kind, err.msg);
    if (hs_controller_restore(c, text, &err) != HS_OK) {
      FUZZ_CHECK_MSG(err);
      char *after = hs_controller_save(c, &err);
      FUZZ_CHECK(strcmp(before, after) == 0, "%s: a refused restore changed the controller",
                 specs[k].kind);
      hs_free(after);
    } else {
      char *again = hs_controller_save(c, &err);
      hs_controller *d = make(&specs[k]);
      FUZZ_CHECK(hs_controller_restore(d, again, &err) == HS_OK, "%s: own save refused: %s",
                 specs[k].kind, err.msg);
      char *twice = hs_controller_save(d, &err);
      FUZZ_CHECK(strcmp(again, twice) == 0, "%s: save/restore/save differs", specs[k].kind);
      uint64_t sum = 0;
      const uint64_t *a = hs_controller_allocation(c);
      for (size_t i = 0; i < specs[k].n; i++) sum += a[i];
      FUZZ_CHECK(sum == specs[k].budget, "%s: restored allocation sums to %llu", specs[k].kind,
                 (unsigned long long)sum);
      feed(c, 0.25);
      hs_free(again);
      hs_free(twice);
      hs_controller_destroy(d);
    }
    hs_free(before);
    hs_controller_destroy(c);
  }
  free(text);
  return 0;
}
