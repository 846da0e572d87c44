/* trainer.c: a small training loop linked against an INSTALLED hetsim
 * controller (tests/install): once through pkg-config, once through
 * find_package(hetsim). It is what a trainer on a board does: three
 * participants whose per-sample times are 1, 2 and 4 ms (energy 5, 3 and 1 mJ
 * per sample), 700 samples per round, the time-only policy with ema 0 and no
 * deadband, so after one round the allocation is the inverse-time split
 * 400/200/100 (hs_policy.h: shares proportional to 1/tau, largest remainder).
 * It also calls the AGC planner (hs_agc.h, same library) for the closed form
 * omega(z) = D / (2^(z-1) - 1)^2 at z = 3: D / 9.
 *
 * Prints "rounds=R allocation=a b c" and exits 0 when every check holds;
 * exit 1 with one line naming the check otherwise. No Criterion: this program
 * must build with nothing but the installed prefix and a C compiler. */
#include <math.h>
#include <stdio.h>

#include "policies/hs_agc.h"
#include "policies/hs_policy.h"

static int fail(const char *what) {
  fprintf(stderr, "trainer: %s\n", what);
  return 1;
}

int main(void) {
  hs_error err = {0};
  hs_policy_config cfg;
  if (hs_policy_config_init(&cfg, "time-only", &err) != HS_OK) return fail(err.msg);
  if (hs_policy_config_set(&cfg, "ema", "0", &err) != HS_OK) return fail(err.msg);
  if (hs_policy_config_set(&cfg, "deadband", "0", &err) != HS_OK) return fail(err.msg);
  hs_controller *c = hs_controller_create(&cfg, 3, NULL, 700, &err);
  if (!c) return fail(err.msg);
  const double tau[3] = {0.001, 0.002, 0.004}, eps[3] = {0.005, 0.003, 0.001};
  for (int round = 0; round < 3; round++) {
    const uint64_t *a = hs_controller_allocation(c);
    hs_telemetry t[3];
    for (int i = 0; i < 3; i++) {
      /* "train" a[i] samples and time them */
      t[i].samples = (int64_t)a[i];
      t[i].time_s = tau[i] * (double)a[i];
      t[i].energy_j = eps[i] * (double)a[i];
    }
    if (hs_controller_update(c, t, 3, &err) != HS_OK) return fail(err.msg);
  }
  const uint64_t *a = hs_controller_allocation(c);
  if (a[0] != 400 || a[1] != 200 || a[2] != 100) return fail("allocation is not 400 200 100");
  /* a bad record is refused with the library's message and changes nothing */
  hs_telemetry bad[3] = {{-1, 0, 1}, {1, 0, 1}, {1, 0, 1}};
  if (hs_controller_update(c, bad, 3, &err) == HS_OK) return fail("negative time accepted");
  if (hs_controller_rounds(c) != 3) return fail("a refused update counted as a round");
  if (fabs(hs_agc_omega(1.0, 3) - 1.0 / 9.0) > 1e-15) return fail("hs_agc_omega(1, 3) != 1/9");
  printf("rounds=%llu allocation=%llu %llu %llu\n", (unsigned long long)hs_controller_rounds(c),
         (unsigned long long)a[0], (unsigned long long)a[1], (unsigned long long)a[2]);
  hs_controller_destroy(c);
  return 0;
}
