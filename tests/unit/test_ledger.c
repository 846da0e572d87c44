/* test_ledger.c: energy integrals against hand computation. */
#include <criterion/criterion.h>
#include <signal.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "sim/hs_ledger.h"

#define EPS 1e-9

static hs_ledger *one_device(void) {
  hs_ledger *l = hs_ledger_create(1);
  hs_ledger_set_power(l, 0, HS_POWER_BUSY, 6.0, 0);
  hs_ledger_set_power(l, 0, HS_POWER_COMM, 3.5, 0);
  hs_ledger_set_power(l, 0, HS_POWER_IDLE, 2.0, 0);
  return l;
}

Test(ledger, hand_computed_integral) {
  hs_ledger *l = one_device();
  hs_ledger_switch(l, 0, HS_POWER_IDLE, 0.0);
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 1.0);  /* idle 1 s  -> 2 J */
  hs_ledger_switch(l, 0, HS_POWER_COMM, 4.0);  /* busy 3 s  -> 18 J */
  hs_ledger_switch(l, 0, HS_POWER_IDLE, 4.5);  /* comm .5 s -> 1.75 J */
  hs_ledger_switch(l, 0, HS_POWER_OFF, 10.0);  /* idle 5.5 s -> 11 J */
  double t = 20.0;                             /* off: 0 W */
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_IDLE, t), 13.0, EPS);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, t), 18.0, EPS);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_COMM, t), 1.75, EPS);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_OFF, t), 0.0, EPS);
  cr_assert_float_eq(hs_ledger_device_energy(l, 0, t), 32.75, EPS);
  cr_assert_float_eq(hs_ledger_time_in(l, 0, HS_POWER_OFF, t), 10.0, EPS);
  cr_assert_float_eq(hs_ledger_time_in(l, 0, HS_POWER_IDLE, t), 6.5, EPS);
  hs_ledger_destroy(l);
}

Test(ledger, reads_include_the_open_interval_without_closing_it) {
  hs_ledger *l = one_device();
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 2.0);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, 3.0), 6.0, EPS);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, 5.0), 18.0, EPS);
  cr_assert_float_eq(hs_ledger_power(l, 0), 6.0, EPS);
  hs_ledger_switch(l, 0, HS_POWER_IDLE, 4.0);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, 9.0), 12.0, EPS);
  cr_assert_float_eq(hs_ledger_power(l, 0), 2.0, EPS);
  hs_ledger_destroy(l);
}

Test(ledger, zero_length_intervals_add_nothing) {
  hs_ledger *l = one_device();
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 1.0);
  hs_ledger_switch(l, 0, HS_POWER_COMM, 1.0);
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 1.0);
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 1.0);
  hs_ledger_switch(l, 0, HS_POWER_IDLE, 2.0);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_COMM, 2.0), 0.0, EPS);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, 2.0), 6.0, EPS);
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_OFF, 2.0), 0.0, EPS);
  hs_ledger_destroy(l);
}

Test(ledger, many_alternations_match_closed_form) {
  /* 100000 cycles of busy 0.01 s then comm 0.005 s: E = N*(6*0.01 + 3.5*0.005). */
  hs_ledger *l = one_device();
  const int n = 100000;
  for (int i = 0; i < n; i++) {
    hs_ledger_switch(l, 0, HS_POWER_BUSY, i * 0.015);
    hs_ledger_switch(l, 0, HS_POWER_COMM, i * 0.015 + 0.01);
  }
  double end = n * 0.015;
  double want = n * (6.0 * 0.01 + 3.5 * 0.005);
  cr_assert_float_eq(hs_ledger_device_energy(l, 0, end), want, 1e-6 * want);
  hs_ledger_destroy(l);
}

Test(ledger, power_change_inside_a_state_closes_the_interval) {
  hs_ledger *l = one_device();
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 0.0);
  hs_ledger_set_power(l, 0, HS_POWER_BUSY, 10.0, 2.0); /* 2 s at 6 W, then 10 W */
  cr_assert_float_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, 3.0), 22.0, EPS);
  hs_ledger_destroy(l);
}

Test(ledger, totals_over_devices) {
  hs_ledger *l = hs_ledger_create(3);
  for (size_t d = 0; d < 3; d++) {
    hs_ledger_set_power(l, d, HS_POWER_IDLE, (double)(d + 1), 0);
    hs_ledger_switch(l, d, HS_POWER_IDLE, 0.0);
  }
  cr_assert_float_eq(hs_ledger_total_power(l), 6.0, EPS);
  cr_assert_float_eq(hs_ledger_state_energy(l, HS_POWER_IDLE, 2.0), 12.0, EPS);
  cr_assert_str_eq(hs_power_state_name(HS_POWER_COMM), "comm");
  hs_ledger_destroy(l);
}

Test(ledger, time_going_backwards_asserts, .signal = SIGABRT) {
  hs_ledger *l = one_device();
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 5.0);
  hs_ledger_switch(l, 0, HS_POWER_IDLE, 4.0);
}

/* Neighbouring devices share a cache line (two 32-byte records per line) and
 * the states live in a byte array: random switches on adjacent devices must
 * stay independent, and match a per-device reference done in the same order
 * (so the comparison is exact, not within a tolerance). */
Test(ledger, random_switches_on_neighbours_match_a_reference) {
  enum { N = 7, STEPS = 20000 };
  hs_ledger *l = hs_ledger_create(N);
  double watts[N][3], t_last[N] = {0}, secs[N][4] = {{0}};
  int state[N];
  uint64_t x = 99;
  for (int d = 0; d < N; d++) {
    state[d] = HS_POWER_OFF;
    for (int s = 0; s < 3; s++) {
      watts[d][s] = 1.0 + d + 0.25 * s;
      hs_ledger_set_power(l, (size_t)d, (hs_power_state)s, watts[d][s], 0);
    }
  }
  double t = 0;
  for (int i = 0; i < STEPS; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int d = (int)(x % N), s = (int)((x >> 8) % 4);
    t += (double)((x >> 16) % 1000) * 1e-3;
    secs[d][state[d]] += t - t_last[d];
    t_last[d] = t;
    state[d] = s;
    hs_ledger_switch(l, (size_t)d, (hs_power_state)s, t);
  }
  for (int d = 0; d < N; d++) {
    cr_assert_eq(hs_ledger_state(l, (size_t)d), (hs_power_state)state[d]);
    double e = 0;
    for (int s = 0; s < 4; s++) {
      double want = secs[d][s] + (state[d] == s ? t - t_last[d] : 0);
      cr_assert_eq(hs_ledger_time_in(l, (size_t)d, (hs_power_state)s, t), want, "dev %d st %d", d,
                   s);
      if (s < 3) {
        cr_assert_eq(hs_ledger_energy(l, (size_t)d, (hs_power_state)s, t), watts[d][s] * want);
        e += watts[d][s] * want;
      }
    }
    cr_assert_eq(hs_ledger_device_energy(l, (size_t)d, t), e);
    double p = state[d] == HS_POWER_OFF ? 0.0 : watts[d][state[d]];
    cr_assert_eq(hs_ledger_power(l, (size_t)d), p);
  }
  hs_ledger_destroy(l);
}

/* The caller's bytes share the device's line but never its figures: filled
 * with ones between switches, they leave every integral exact; they start
 * zeroed, sit hs_ledger_user_stride apart, and keep what was written. */
Test(ledger, user_bytes_are_the_callers_and_leave_the_integrals_alone) {
  enum { N = 5 };
  hs_ledger *l = hs_ledger_create(N);
  size_t stride = hs_ledger_user_stride(l);
  cr_assert_geq(stride, HS_LEDGER_USER_BYTES);
  for (size_t d = 0; d < N; d++) {
    unsigned char *u = hs_ledger_user(l, d);
    cr_assert_eq((uintptr_t)u % 8, 0, "8-byte aligned");
    if (d) cr_assert_eq(u - (unsigned char *)hs_ledger_user(l, d - 1), (ptrdiff_t)stride);
    for (size_t k = 0; k < HS_LEDGER_USER_BYTES; k++) cr_assert_eq(u[k], 0);
    hs_ledger_set_power(l, d, HS_POWER_BUSY, 4.0, 0);
    hs_ledger_set_power(l, d, HS_POWER_IDLE, 1.0, 0);
  }
  for (size_t d = 0; d < N; d++) {
    hs_ledger_switch(l, d, HS_POWER_BUSY, 1.0);
    memset(hs_ledger_user(l, d), 0xff, HS_LEDGER_USER_BYTES);
    hs_ledger_switch(l, d, HS_POWER_IDLE, 3.0);
    memset(hs_ledger_user(l, d), (int)d, HS_LEDGER_USER_BYTES);
  }
  for (size_t d = 0; d < N; d++) {
    cr_assert_eq(hs_ledger_state(l, d), HS_POWER_IDLE);
    cr_assert_eq(hs_ledger_time_in(l, d, HS_POWER_OFF, 5.0), 1.0);
    cr_assert_eq(hs_ledger_time_in(l, d, HS_POWER_BUSY, 5.0), 2.0);
    cr_assert_eq(hs_ledger_device_energy(l, d, 5.0), 4.0 * 2.0 + 1.0 * 2.0);
    unsigned char *u = hs_ledger_user(l, d);
    for (size_t k = 0; k < HS_LEDGER_USER_BYTES; k++) cr_assert_eq(u[k], (unsigned char)d);
  }
  hs_ledger_destroy(l);
}

/* A correction exists only once a power changes after time was spent: a
 * power change on one device must not move another device's energy, before
 * or after the corrections are first needed. */
Test(ledger, a_power_change_corrects_only_its_device) {
  hs_ledger *l = hs_ledger_create(3);
  for (size_t d = 0; d < 3; d++) {
    hs_ledger_set_power(l, d, HS_POWER_BUSY, 6.0, 0);
    hs_ledger_switch(l, d, HS_POWER_BUSY, 0.0);
  }
  hs_ledger_set_power(l, 1, HS_POWER_BUSY, 0.5, 4.0); /* 4 s at 6 W, then 0.5 W */
  hs_ledger_switch(l, 2, HS_POWER_IDLE, 4.0);
  hs_ledger_set_power(l, 2, HS_POWER_BUSY, 9.0, 5.0); /* not busy now: the 4 s stay at 6 W */
  cr_assert_eq(hs_ledger_energy(l, 0, HS_POWER_BUSY, 8.0), 48.0);
  cr_assert_eq(hs_ledger_energy(l, 1, HS_POWER_BUSY, 8.0), 24.0 + 2.0);
  cr_assert_eq(hs_ledger_energy(l, 2, HS_POWER_BUSY, 8.0), 24.0);
  hs_ledger_destroy(l);
}

/* Power classes give the bits of the products set directly: two ledgers, one
 * with classes and one with hs_ledger_set_power, see the same random
 * switches, then the same direct power change mid-run (which makes the first
 * store every power), and agree exactly on every figure. */
Test(ledger, power_classes_equal_powers_set_directly) {
  enum { N = 9, STEPS = 5000 };
  static const double base[3][3] = {{6.1, 2.3, 1.7}, {11.9, 3.3, 0.9}, {0.37, 0.11, 0.07}};
  hs_ledger *a = hs_ledger_create(N), *b = hs_ledger_create(N);
  size_t cls[3];
  for (int c = 0; c < 3; c++) cls[c] = hs_ledger_add_class(a, base[c][0], base[c][1], base[c][2]);
  cr_assert_geq(cls[0], 1, "class 0 is the 0 W class");
  for (size_t d = 0; d < N; d++) {
    double f = exp(0.1 * (double)d - 0.3);
    int c = (int)(d % 3);
    hs_ledger_set_class(a, d, cls[c], f, 0);
    for (int s = 0; s < 3; s++) hs_ledger_set_power(b, d, (hs_power_state)s, base[c][s] * f, 0);
    cr_assert_eq(hs_ledger_factor(a, d), f);
    for (int s = 0; s < 3; s++)
      cr_assert_eq(hs_ledger_get_power_of(a, d, (hs_power_state)s), base[c][s] * f);
  }
  uint64_t x = 7;
  double t = 0;
  for (int i = 0; i < STEPS; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t d = x % N;
    hs_power_state s = (hs_power_state)((x >> 8) % 4);
    t += (double)((x >> 16) % 1000) * 1e-3;
    hs_ledger_switch(a, d, s, t);
    hs_ledger_switch(b, d, s, t);
    if (i == STEPS / 2) { /* a throttle: one device's busy power changes */
      hs_ledger_set_power(a, 4, HS_POWER_BUSY, 2.5, t);
      hs_ledger_set_power(b, 4, HS_POWER_BUSY, 2.5, t);
    }
  }
  for (size_t d = 0; d < N; d++) {
    cr_assert_eq(hs_ledger_power(a, d), hs_ledger_power(b, d));
    cr_assert_eq(hs_ledger_device_energy(a, d, t + 1), hs_ledger_device_energy(b, d, t + 1));
    for (int s = 0; s < 4; s++) {
      cr_assert_eq(hs_ledger_energy(a, d, (hs_power_state)s, t + 1),
                   hs_ledger_energy(b, d, (hs_power_state)s, t + 1), "dev %zu st %d", d, s);
      cr_assert_eq(hs_ledger_time_in(a, d, (hs_power_state)s, t + 1),
                   hs_ledger_time_in(b, d, (hs_power_state)s, t + 1));
    }
  }
  cr_assert_eq(hs_ledger_total_power(a), hs_ledger_total_power(b));
  hs_ledger_destroy(a);
  hs_ledger_destroy(b);
}

/* The mark reads back, bit for bit, what the reads at its instant gave, also
 * after a power change since (a throttle mid-round) and after a new mark. */
Test(ledger, the_mark_keeps_the_figures_of_its_instant) {
  enum { N = 4 };
  hs_ledger *l = hs_ledger_create(N);
  size_t c = hs_ledger_add_class(l, 7.3, 2.9, 1.1);
  for (size_t d = 0; d < N; d++) {
    hs_ledger_set_class(l, d, c, 1.0 + 0.1 * (double)d, 0);
    hs_ledger_switch(l, d, HS_POWER_IDLE, 0);
    hs_ledger_switch(l, d, HS_POWER_BUSY, 0.3 * (double)d);
  }
  for (int round = 0; round < 2; round++) {
    double t0 = 1.7 + round, e[N][4], s[N][3], dev_e[N];
    for (size_t d = 0; d < N; d++) {
      for (int st = 0; st < 4; st++) e[d][st] = hs_ledger_energy(l, d, (hs_power_state)st, t0);
      for (int st = 0; st < 3; st++) s[d][st] = hs_ledger_time_in(l, d, (hs_power_state)st, t0);
      dev_e[d] = hs_ledger_device_energy(l, d, t0);
    }
    hs_ledger_mark(l, t0);
    hs_ledger_switch(l, 1, HS_POWER_COMM, t0 + 0.25);
    hs_ledger_set_power(l, 2, HS_POWER_BUSY, 0.5 + round, t0 + 0.5); /* busy now: corrected */
    hs_ledger_set_power(l, 3, HS_POWER_IDLE, 4.0, t0 + 0.5);         /* idle before: corrected */
    for (size_t d = 0; d < N; d++) {
      for (int st = 0; st < 4; st++)
        cr_assert_eq(hs_ledger_mark_energy(l, d, (hs_power_state)st), e[d][st], "round %d dev %zu",
                     round, d);
      for (int st = 0; st < 3; st++)
        cr_assert_eq(hs_ledger_mark_time_in(l, d, (hs_power_state)st), s[d][st]);
      cr_assert_eq(hs_ledger_mark_device_energy(l, d), dev_e[d]);
    }
  }
  hs_ledger_destroy(l);
}

/* Bit equality (cr_assert_eq on doubles takes -0.0 for +0.0). */
static bool same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* hs_ledger_since_mark against the separate reads it replaces, bit for bit,
 * for every device at random instants of a random run: switches (zero-length
 * intervals and off time included), new marks, and, when `dynamics`, power
 * changes in and out of the state in force (corrections, stored powers and
 * the joules saved at the mark); `classes` picks power classes or powers set
 * directly. */
static void since_mark_matches_separate_reads(bool classes, bool dynamics, uint64_t seed) {
  enum { N = 11, STEPS = 6000 };
  hs_ledger *l = hs_ledger_create(N);
  size_t c[2] = {hs_ledger_add_class(l, 6.1, 2.3, 1.7), hs_ledger_add_class(l, 0.0, 0.37, 0.1)};
  for (size_t d = 0; d < N; d++) {
    double f = d == 3 ? 0.0 : exp(0.07 * (double)d - 0.3);
    if (classes) {
      hs_ledger_set_class(l, d, c[d % 2], f, 0);
    } else {
      for (int s = 0; s < 3; s++)
        hs_ledger_set_power(l, d, (hs_power_state)s, (1.0 + 0.3 * s + 0.1 * (double)d) * f, 0);
    }
  }
  uint64_t x = seed;
  double t = 0;
  bool marked = false;
  int checks = 0;
  for (int i = 0; i < STEPS; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t d = x % N;
    unsigned op = (unsigned)((x >> 8) % 64);
    if ((x >> 20) % 3) t += (double)((x >> 24) % 1000) * 1.7e-3; /* else a zero-length step */
    if (op < 50) {
      hs_ledger_switch(l, d, (hs_power_state)((x >> 32) % 4), t);
    } else if (op < 53) {
      hs_ledger_mark(l, t);
      marked = true;
    } else if (op < 56 && dynamics) {
      hs_power_state s = (hs_power_state)((x >> 32) % 3);
      hs_ledger_set_power(l, d, s, (double)((x >> 40) % 50) * 0.21, t);
    } else if (marked) {
      for (size_t k = 0; k < N; k++) {
        hs_ledger_since g;
        hs_ledger_since_mark(l, k, t, &g);
        for (int s = 0; s < 3; s++) {
          hs_power_state st = (hs_power_state)s;
          double ts = hs_ledger_time_in(l, k, st, t) - hs_ledger_mark_time_in(l, k, st);
          double ej = hs_ledger_energy(l, k, st, t) - hs_ledger_mark_energy(l, k, st);
          cr_assert(same_bits(g.time_s[s], ts), "step %d dev %zu st %d: %a vs %a", i, k, s,
                    g.time_s[s], ts);
          cr_assert(same_bits(g.energy_j[s], ej), "step %d dev %zu st %d: %a vs %a", i, k, s,
                    g.energy_j[s], ej);
        }
        double de = hs_ledger_device_energy(l, k, t) - hs_ledger_mark_device_energy(l, k);
        cr_assert(same_bits(g.device_j, de), "step %d dev %zu: %a vs %a", i, k, g.device_j, de);
        checks++;
      }
    }
  }
  cr_assert_gt(checks, 1000, "the run read the ledger (%d checks)", checks);
  hs_ledger_destroy(l);
}

Test(ledger, since_mark_equals_the_separate_reads_with_classes) {
  for (uint64_t seed = 1; seed <= 6; seed++) since_mark_matches_separate_reads(true, false, seed);
}

Test(ledger, since_mark_equals_the_separate_reads_with_stored_powers) {
  for (uint64_t seed = 11; seed <= 16; seed++)
    since_mark_matches_separate_reads(false, false, seed);
}

Test(ledger, since_mark_equals_the_separate_reads_with_power_changes) {
  for (uint64_t seed = 21; seed <= 26; seed++) since_mark_matches_separate_reads(true, true, seed);
  for (uint64_t seed = 31; seed <= 36; seed++)
    since_mark_matches_separate_reads(false, true, seed);
}

/* A known answer: 2 s idle, then 3 s busy and 1 s comm after the mark. */
Test(ledger, since_mark_known_answer) {
  hs_ledger *l = one_device();
  hs_ledger_switch(l, 0, HS_POWER_IDLE, 0.0);
  hs_ledger_mark(l, 2.0);
  hs_ledger_switch(l, 0, HS_POWER_BUSY, 2.0);
  hs_ledger_switch(l, 0, HS_POWER_COMM, 5.0);
  hs_ledger_since g;
  hs_ledger_since_mark(l, 0, 6.0, &g);
  cr_assert_eq(g.time_s[HS_POWER_BUSY], 3.0);
  cr_assert_eq(g.time_s[HS_POWER_COMM], 1.0);
  cr_assert_eq(g.time_s[HS_POWER_IDLE], 0.0);
  cr_assert_eq(g.energy_j[HS_POWER_BUSY], 18.0);
  cr_assert_eq(g.energy_j[HS_POWER_COMM], 3.5);
  cr_assert_eq(g.device_j, 21.5);
  hs_ledger_destroy(l);
}

Test(ledger, since_mark_without_a_mark_asserts, .signal = SIGABRT) {
  hs_ledger *l = one_device();
  hs_ledger_since g;
  hs_ledger_since_mark(l, 0, 1.0, &g);
}

/* The mark in the caller's storage: the same figures as the ledger's own
 * (a twin ledger sees the same switches, marks and throttles); the bytes of
 * a device the caller overwrote once measured do not leak into another
 * device's mark or into any integral, and the next mark writes them all. */
Test(ledger, a_mark_in_the_callers_storage_reads_as_its_own) {
  enum { N = 6 };
  hs_ledger *a = hs_ledger_create(N), *b = hs_ledger_create(N);
  double *buf = calloc(N, HS_LEDGER_MARK_BYTES);
  hs_ledger_mark_in(a, buf);
  for (size_t d = 0; d < N; d++)
    for (int s = 0; s < 3; s++) {
      hs_ledger_set_power(a, d, (hs_power_state)s, 1.5 + 0.5 * s + (double)d, 0);
      hs_ledger_set_power(b, d, (hs_power_state)s, 1.5 + 0.5 * s + (double)d, 0);
    }
  uint64_t x = 5;
  double t = 0;
  for (int round = 0; round < 40; round++) {
    hs_ledger_mark(a, t);
    hs_ledger_mark(b, t);
    for (int k = 0; k < 30; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      size_t d = x % N;
      t += (double)((x >> 16) % 100) * 1e-2;
      hs_ledger_switch(a, d, (hs_power_state)((x >> 8) % 4), t);
      hs_ledger_switch(b, d, (hs_power_state)((x >> 8) % 4), t);
      if (k == 7 && round % 3 == 0) {
        hs_ledger_set_power(a, d, HS_POWER_BUSY, 0.25 * (double)round, t);
        hs_ledger_set_power(b, d, HS_POWER_BUSY, 0.25 * (double)round, t);
      }
    }
    for (size_t d = 0; d < N; d++) {
      hs_ledger_since ga, gb;
      hs_ledger_since_mark(a, d, t, &ga);
      hs_ledger_since_mark(b, d, t, &gb);
      cr_assert_eq(memcmp(&ga, &gb, sizeof ga), 0, "round %d dev %zu", round, d);
      cr_assert(same_bits(hs_ledger_mark_device_energy(a, d), hs_ledger_mark_device_energy(b, d)));
      memset((unsigned char *)buf + d * HS_LEDGER_MARK_BYTES, 0x7f, HS_LEDGER_MARK_BYTES);
    }
    for (size_t d = 0; d < N; d++)
      cr_assert(same_bits(hs_ledger_device_energy(a, d, t), hs_ledger_device_energy(b, d, t)));
  }
  hs_ledger_destroy(a);
  hs_ledger_destroy(b);
  free(buf);
}

Test(ledger, a_mark_storage_after_the_first_mark_asserts, .signal = SIGABRT) {
  hs_ledger *l = one_device();
  double buf[3];
  hs_ledger_mark(l, 0);
  hs_ledger_mark_in(l, buf);
}

/* The mark is lazy (a device's figures are stored when its line first
 * changes after the mark, else read off the line) and its generations wrap
 * after 65535 marks: over 140000 marks, with one device switched only once
 * (its stored mark's generation comes round again) and one every 30000
 * marks, every mark reads what time_in gave at its instant. */
Test(ledger, lazy_marks_survive_the_generation_wrap) {
  enum { N = 3, MARKS = 140000 };
  hs_ledger *l = hs_ledger_create(N);
  for (size_t d = 0; d < N; d++) {
    hs_ledger_set_power(l, d, HS_POWER_BUSY, 3.0 + (double)d, 0);
    hs_ledger_set_power(l, d, HS_POWER_IDLE, 1.0, 0);
    hs_ledger_switch(l, d, HS_POWER_IDLE, 0);
  }
  double t = 0;
  for (int m = 0; m < MARKS; m++) {
    t += 0.5;
    double ref[N][3];
    for (size_t d = 0; d < N; d++)
      for (int s = 0; s < 3; s++) ref[d][s] = hs_ledger_time_in(l, d, (hs_power_state)s, t);
    hs_ledger_mark(l, t);
    hs_power_state st = m % 2 ? HS_POWER_BUSY : HS_POWER_IDLE;
    hs_ledger_switch(l, 0, st, t + 0.25);
    if (m % 30000 == 7) hs_ledger_switch(l, 1, st, t + 0.1);
    if (m == 5) hs_ledger_switch(l, 2, HS_POWER_BUSY, t + 0.2);
    if (m % 7 == 0 || (m > 65530 && m < 65545) || (m > 131065 && m < 131080))
      for (size_t d = 0; d < N; d++)
        for (int s = 0; s < 3; s++)
          cr_assert(same_bits(hs_ledger_mark_time_in(l, d, (hs_power_state)s), ref[d][s]),
                    "mark %d dev %zu st %d: %a vs %a", m, d, s,
                    hs_ledger_mark_time_in(l, d, (hs_power_state)s), ref[d][s]);
  }
  hs_ledger_destroy(l);
}
