/* ledger.c: per-device energy integration over piecewise-constant power states.
 *
 * Per device, one 64-byte record (one cache line): the time of the last change,
 * the current state, and for busy, comm and idle the seconds spent and the power
 * in force. A switch closes the open interval exactly: time[state] += t - t_last.
 * Energy is power x time, plus a per-state correction kept in a separate cold
 * array that only hs_ledger_set_power touches: when the power of a state
 * changes, the correction absorbs (old - new) x time spent so far, so the
 * energy already integrated is unchanged. OFF draws nothing.
 *
 * Why this shape: at 10^5 devices the ledger is touched at random by every
 * state change (four per device and PMA round), and each touch is a cache miss;
 * one line per device instead of two made the 10^5-device PMA benchmark ~10 %
 * faster. Reads at a time t add the open interval without closing it, so
 * reading never changes results. O(1) per switch and per read; totals over all
 * devices are O(devices). Rejected: storing every interval (memory grows with
 * events; the regimes only need totals and per-round differences, which callers
 * get by reading twice). */
#include "hs_ledger.h"

#include <math.h>
#include <stdalign.h>
#include <stdint.h>

#include "hs_alloc.h"
#include "hs_assert.h"

#define NON (HS_POWER_NSTATES - 1) /* states that draw power: busy, comm, idle */

typedef struct dev_account {
  alignas(64) double t_last;
  double time_s[NON];
  double power_w[NON];
  int32_t state;
} dev_account;

typedef struct dev_cold {
  double adjust_j[NON]; /* energy correction for power changes */
  double off_s;         /* seconds spent off */
} dev_cold;

struct hs_ledger {
  dev_account *dev;
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
  /* 64-byte aligned records: over-allocate and round the pointer up. */
  size_t n = ndevices ? ndevices : 1;
  l->raw = hs_calloc(n + 1, sizeof(dev_account));
  l->dev = (dev_account *)(((uintptr_t)l->raw + 63) & ~(uintptr_t)63);
  l->cold = hs_calloc(n, sizeof *l->cold);
  for (size_t i = 0; i < ndevices; i++) l->dev[i].state = HS_POWER_OFF;
  return l;
}

void hs_ledger_destroy(hs_ledger *l) {
  if (!l) return;
  hs_free(l->raw);
  hs_free(l->cold);
  hs_free(l);
}

size_t hs_ledger_devices(const hs_ledger *l) { return l->n; }

static void close_interval(hs_ledger *l, size_t dev, double t) {
  dev_account *d = &l->dev[dev];
  HS_ASSERT(t >= d->t_last, "ledger time went backwards");
  if (d->state == HS_POWER_OFF)
    l->cold[dev].off_s += t - d->t_last;
  else
    d->time_s[d->state] += t - d->t_last;
  d->t_last = t;
}

void hs_ledger_set_power(hs_ledger *l, size_t dev, hs_power_state st, double watts, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  HS_ASSERT(isfinite(watts) && watts >= 0, "power must be finite and >= 0");
  if (st == HS_POWER_OFF) {
    HS_ASSERT(watts == 0, "a device that is off draws nothing");
    return;
  }
  dev_account *d = &l->dev[dev];
  if (d->state == (int32_t)st) close_interval(l, dev, t);
  l->cold[dev].adjust_j[st] += (d->power_w[st] - watts) * d->time_s[st];
  d->power_w[st] = watts;
}

double hs_ledger_get_power_of(const hs_ledger *l, size_t dev, hs_power_state st) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  return st == HS_POWER_OFF ? 0.0 : l->dev[dev].power_w[st];
}

void hs_ledger_switch(hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  close_interval(l, dev, t);
  l->dev[dev].state = (int32_t)st;
}

hs_power_state hs_ledger_state(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  return (hs_power_state)l->dev[dev].state;
}

double hs_ledger_power(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  const dev_account *d = &l->dev[dev];
  return d->state == HS_POWER_OFF ? 0.0 : d->power_w[d->state];
}

double hs_ledger_total_power(const hs_ledger *l) {
  double p = 0;
  for (size_t i = 0; i < l->n; i++) p += hs_ledger_power(l, i);
  return p;
}

double hs_ledger_time_in(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  const dev_account *d = &l->dev[dev];
  HS_ASSERT(t >= d->t_last, "ledger read before the last change");
  double s = st == HS_POWER_OFF ? l->cold[dev].off_s : d->time_s[st];
  if (d->state == (int32_t)st) s += t - d->t_last;
  return s;
}

double hs_ledger_energy(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  if (st == HS_POWER_OFF) return 0.0;
  double s = hs_ledger_time_in(l, dev, st, t);
  return l->dev[dev].power_w[st] * s + l->cold[dev].adjust_j[st];
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
