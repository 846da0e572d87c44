/* ledger.c: per-device energy integration over piecewise-constant power states.
 *
 * Per device, a 64-byte record (one cache line, 64-byte aligned): the time of
 * the last change, the seconds spent in busy, comm and idle, the current
 * state, and HS_LEDGER_USER_BYTES bytes that belong to the caller (the run
 * keeps there what the events of a device read and write: PMA's planned work
 * and switch times; hs_ledger_user). A cold array holds the power in force
 * per state. Two arrays exist only once needed (most runs never need them):
 * the seconds spent off, once a device stays off for a nonzero time, and a
 * per-state energy correction, once a power changes after time was spent in
 * that state. A switch closes the open interval exactly, time[state] += t -
 * t_last, and touches only the device's line (and the off array when it
 * leaves OFF after a nonzero time). Energy is power x time plus the correction: when
 * the power of a state changes, the correction absorbs (old - new) x time
 * spent so far, so the energy already integrated is unchanged. OFF draws
 * nothing.
 *
 * Why this shape: the ledger is touched at random by every state change (four
 * per device and PMA round), and at 10^5-10^6 devices each touch is a cache
 * miss; so is the caller's own per-device record, which the same event reads.
 * One line holding both (the user bytes) makes an event of the PMA round one
 * miss instead of three (device record, ledger record, state byte). Earlier
 * shapes: a 64-byte record with the power (one line, no caller bytes), then
 * 32 bytes with the state in a byte array (two devices per line, but the
 * caller's record a second miss). Reads at a time t add the open interval
 * without closing it, so reading never changes results; the arithmetic is
 * the same as before (a missing correction or off time reads as +0.0, which
 * adds exactly as the stored +0.0 did), so results are bit-identical. O(1) per switch and
 * per read; totals over all devices are O(devices). Rejected: storing every
 * interval (memory grows with events; the regimes only need totals and
 * per-round differences, which callers get by reading twice); a log of
 * switches replayed at the round end (the record is touched by the event
 * anyway, once the caller's fields share its line, so deferring saves
 * nothing and adds a flush before every read). */
#include "sim/hs_ledger.h"

#include <math.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"

#define NON (HS_POWER_NSTATES - 1) /* states that draw power: busy, comm, idle */

/* What a switch touches: one cache line per device. */
typedef struct dev_hot {
  alignas(64) double t_last;
  double time_s[NON]; /* busy, comm, idle (off: l->off_s) */
  unsigned char user[HS_LEDGER_USER_BYTES];
  uint8_t state;
  unsigned char pad[64 - 8 - 8 * NON - HS_LEDGER_USER_BYTES - 1];
} dev_hot;
_Static_assert(sizeof(dev_hot) == 64, "one cache line per device");

typedef struct dev_power {
  double w[NON];
} dev_power;

struct hs_ledger {
  dev_hot *hot;
  dev_power *power;
  dev_power *adjust; /* energy corrections for power changes; NULL until one is nonzero */
  double *off_s;     /* seconds spent off; NULL until one is nonzero */
  void *raw;
  size_t n;
};

static const char *const state_names[HS_POWER_NSTATES] = {"busy", "comm", "idle", "off"};

const char *hs_power_state_name(hs_power_state st) {
  return (unsigned)st < HS_POWER_NSTATES ? state_names[st] : "invalid";
}

hs_ledger *hs_ledger_create(size_t ndevices) {
  hs_ledger *l = hs_malloc(sizeof *l);
  l->n = ndevices;
  /* 64-byte aligned records: over-allocate and round the pointer up. */
  size_t n = ndevices ? ndevices : 1;
  l->raw = hs_calloc(n + 1, sizeof(dev_hot));
  l->hot = (dev_hot *)(((uintptr_t)l->raw + 63) & ~(uintptr_t)63);
  for (size_t i = 0; i < ndevices; i++) l->hot[i].state = HS_POWER_OFF;
  l->power = hs_calloc(n, sizeof *l->power);
  l->adjust = NULL;
  l->off_s = NULL;
  return l;
}

void hs_ledger_destroy(hs_ledger *l) {
  if (!l) return;
  hs_free(l->raw);
  hs_free(l->power);
  hs_free(l->adjust);
  hs_free(l->off_s);
  hs_free(l);
}

size_t hs_ledger_devices(const hs_ledger *l) { return l->n; }

void *hs_ledger_user(hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  return l->hot[dev].user;
}

size_t hs_ledger_user_stride(const hs_ledger *l) {
  (void)l;
  return sizeof(dev_hot);
}

static void close_interval(hs_ledger *l, dev_hot *d, double t) {
  HS_ASSERT(t >= d->t_last, "ledger time went backwards");
  double dt = t - d->t_last;
  if (d->state != HS_POWER_OFF) {
    d->time_s[d->state] += dt;
  } else if (dt != 0 || l->off_s) { /* +0.0 + +0.0 leaves a missing off time +0.0 */
    if (!l->off_s) l->off_s = hs_calloc(l->n ? l->n : 1, sizeof *l->off_s);
    l->off_s[d - l->hot] += dt;
  }
  d->t_last = t;
}

void hs_ledger_set_power(hs_ledger *l, size_t dev, hs_power_state st, double watts, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  HS_ASSERT(isfinite(watts) && watts >= 0, "power must be finite and >= 0");
  if (st == HS_POWER_OFF) {
    HS_ASSERT(watts == 0, "a device that is off draws nothing");
    return;
  }
  dev_hot *d = &l->hot[dev];
  if (d->state == st) close_interval(l, d, t);
  double fix = (l->power[dev].w[st] - watts) * d->time_s[st];
  /* +0.0 + fix: the correction a record without one would hold. Nonzero
   * (or -0.0, which +0.0 + -0.0 turns into +0.0 anyway) needs the array. */
  if (l->adjust || fix != 0) {
    if (!l->adjust) l->adjust = hs_calloc(l->n ? l->n : 1, sizeof *l->adjust);
    l->adjust[dev].w[st] += fix;
  }
  l->power[dev].w[st] = watts;
}

double hs_ledger_get_power_of(const hs_ledger *l, size_t dev, hs_power_state st) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  return st == HS_POWER_OFF ? 0.0 : l->power[dev].w[st];
}

void hs_ledger_switch(hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  dev_hot *d = &l->hot[dev];
  close_interval(l, d, t);
  d->state = (uint8_t)st;
}

hs_power_state hs_ledger_state(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  return (hs_power_state)l->hot[dev].state;
}

double hs_ledger_power(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  unsigned st = l->hot[dev].state;
  return st == HS_POWER_OFF ? 0.0 : l->power[dev].w[st];
}

double hs_ledger_total_power(const hs_ledger *l) {
  double p = 0;
  for (size_t i = 0; i < l->n; i++) p += hs_ledger_power(l, i);
  return p;
}

double hs_ledger_time_in(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  const dev_hot *d = &l->hot[dev];
  HS_ASSERT(t >= d->t_last, "ledger read before the last change");
  double s = st != HS_POWER_OFF ? d->time_s[st] : l->off_s ? l->off_s[dev] : 0.0;
  if (d->state == st) s += t - d->t_last;
  return s;
}

double hs_ledger_energy(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  if (st == HS_POWER_OFF) return 0.0;
  double s = hs_ledger_time_in(l, dev, st, t);
  return l->power[dev].w[st] * s + (l->adjust ? l->adjust[dev].w[st] : 0.0);
}

double hs_ledger_device_energy(const hs_ledger *l, size_t dev, double t) {
  double e = 0;
  for (int s = 0; s < NON; s++) e += hs_ledger_energy(l, dev, (hs_power_state)s, t);
  return e;
}

double hs_ledger_state_energy(const hs_ledger *l, hs_power_state st, double t) {
  double e = 0;
  for (size_t i = 0; i < l->n; i++) e += hs_ledger_energy(l, i, st, t);
  return e;
}
