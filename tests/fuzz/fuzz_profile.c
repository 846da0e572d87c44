/* fuzz_profile.c: libFuzzer harness for the device profile reader
 * (hs_profile_parse, devices/include/devices/hs_profile.h).
 *
 * Input: profile JSON text. Contract checked: NULL comes with a one-line
 * message; an accepted profile has idle_w, comm_w > 0, at least one task, and
 * per task tau_s > 0, tau_cv in [0, 10], busy_w > 0, overhead_s >= 0 and loss
 * samples strictly ascending; one compute-time sample is finite and >= 0.
 * Seeds: devices/profiles/ and tests/data/.../profiles/. */
#include <math.h>

#include "fuzz_common.h"
#include "devices/hs_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  hs_error err = {HS_OK, ""};
  hs_profile *p = hs_profile_parse(text, "fuzz.json", &err);
  if (!p) {
    FUZZ_CHECK_MSG(err);
  } else {
    FUZZ_CHECK(hs_profile_idle_w(p) > 0 && hs_profile_comm_w(p) > 0, "accepted watts <= 0");
    size_t n = hs_profile_task_count(p);
    FUZZ_CHECK(n >= 1, "accepted a profile without tasks");
    hs_rng rng;
    hs_rng_init(&rng, 1, 0, 0);
    for (size_t i = 0; i < n; i++) {
      const hs_task_profile *t = hs_profile_task_at(p, i);
      FUZZ_CHECK(t->tau_s > 0 && isfinite(t->tau_s), "task %zu tau_s %g", i, t->tau_s);
      FUZZ_CHECK(t->tau_cv >= 0 && t->tau_cv <= 10, "task %zu tau_cv %g", i, t->tau_cv);
      FUZZ_CHECK(t->busy_w > 0 && t->overhead_s >= 0, "task %zu watts/overhead", i);
      for (size_t k = 1; k < t->loss_points; k++)
        FUZZ_CHECK(t->loss_samples[k] > t->loss_samples[k - 1], "task %zu loss not ascending", i);
      FUZZ_CHECK(hs_profile_task(p, t->task) != NULL, "task %s not found by name", t->task);
      double c = hs_task_compute_time(t, 100, &rng);
      FUZZ_CHECK(c >= 0 && !isnan(c), "task %zu compute time %g", i, c);
    }
    hs_profile_destroy(p);
  }
  free(text);
  return 0;
}
