/* ledger.c: per-device energy integration over piecewise-constant power states.
 *
 * Per device, a 32-byte hot record (two per cache line): the time of the last
 * change and, for busy, comm and idle, the seconds spent; the current state in
 * a byte array of its own (1 MiB at 10^6 devices, so it stays cached); and a
 * cold record with the power in force per state, a per-state energy
 * correction and the seconds spent off. A switch closes the open interval
 * exactly, time[state] += t - t_last, and touches only the hot record and the
 * state byte. Energy is power x time plus the correction: when the power of a
 * state changes, the correction absorbs (old - new) x time spent so far, so
 * the energy already integrated is unchanged. OFF draws nothing.
 *
 * Why this shape: the ledger is touched at random by every state change (four
 * per device and PMA round), and at 10^5-10^6 devices each touch is a cache
 * miss. One 64-byte line per device (power in the hot record) made the 10^5
 * PMA benchmark ~10 % faster than two; 32 bytes (power moved out, since a
 * switch never reads it) took another ~10 % of CPU time off it and 15 B per
 * device. Reads at a time t add the open interval without closing it, so
 * reading never changes results; the arithmetic is the same as before, so
 * results are bit-identical. O(1) per switch and per read; totals over all
 * devices are O(devices). Rejected: storing every interval (memory grows with
 * events; the regimes only need totals and per-round differences, which callers
 * get by reading twice); the state packed into the hot record (it needs 33
 * bytes then, one line per device again). */
#include "sim/hs_ledger.h"

#include <math.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"

#define NON (HS_POWER_NSTATES - 1) /* states that draw power: busy, comm, idle */

/* What a switch touches: 32 bytes, two devices per cache line. */
typedef struct dev_hot {
  alignas(32) double t_last;
  double time_s[NON];
} dev_hot;

typedef struct dev_cold {
  double power_w[NON];
  double adjust_j[NON]; /* energy correction for power changes */
  double off_s;         /* seconds spent off */
} dev_cold;

struct hs_ledger {
  dev_hot *hot;
  uint8_t *state; /* hs_power_state per device: 1 byte, 10^6 devices in 1 MiB */
  dev_cold *cold;
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
  /* 32-byte aligned records: over-allocate and round the pointer up. */
  size_t n = ndevices ? ndevices : 1;
  l->raw = hs_calloc(n + 1, sizeof(dev_hot));
  l->hot = (dev_hot *)(((uintptr_t)l->raw + 31) & ~(uintptr_t)31);
  l->state = hs_malloc(n);
  memset(l->state, HS_POWER_OFF, n);
  l->cold = hs_calloc(n, sizeof *l->cold);
  return l;
}

void hs_ledger_destroy(hs_ledger *l) {
  if (!l) return;
  hs_free(l->raw);
  hs_free(l->state);
  hs_free(l->cold);
  hs_free(l);
}

size_t hs_ledger_devices(const hs_ledger *l) { return l->n; }

static void close_interval(hs_ledger *l, size_t dev, double t) {
  dev_hot *d = &l->hot[dev];
  HS_ASSERT(t >= d->t_last, "ledger time went backwards");
  unsigned st = l->state[dev];
  if (st == HS_POWER_OFF)
    l->cold[dev].off_s += t - d->t_last;
  else
    d->time_s[st] += t - d->t_last;
  d->t_last = t;
}

void hs_ledger_set_power(hs_ledger *l, size_t dev, hs_power_state st, double watts, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  HS_ASSERT(isfinite(watts) && watts >= 0, "power must be finite and >= 0");
  if (st == HS_POWER_OFF) {
    HS_ASSERT(watts == 0, "a device that is off draws nothing");
    return;
  }
  dev_cold *c = &l->cold[dev];
  if (l->state[dev] == st) close_interval(l, dev, t);
  c->adjust_j[st] += (c->power_w[st] - watts) * l->hot[dev].time_s[st];
  c->power_w[st] = watts;
}

double hs_ledger_get_power_of(const hs_ledger *l, size_t dev, hs_power_state st) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  return st == HS_POWER_OFF ? 0.0 : l->cold[dev].power_w[st];
}

void hs_ledger_switch(hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  close_interval(l, dev, t);
  l->state[dev] = (uint8_t)st;
}

hs_power_state hs_ledger_state(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  return (hs_power_state)l->state[dev];
}

double hs_ledger_power(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  unsigned st = l->state[dev];
  return st == HS_POWER_OFF ? 0.0 : l->cold[dev].power_w[st];
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
  double s = st == HS_POWER_OFF ? l->cold[dev].off_s : d->time_s[st];
  if (l->state[dev] == st) s += t - d->t_last;
  return s;
}

double hs_ledger_energy(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  if (st == HS_POWER_OFF) return 0.0;
  double s = hs_ledger_time_in(l, dev, st, t);
  return l->cold[dev].power_w[st] * s + l->cold[dev].adjust_j[st];
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
