/* ledger.c: per-device energy integration over piecewise-constant power states.
 *
 * Per device: the power table (one value per state), the current state, the
 * time of the last change, and accumulated joules and seconds per state. A
 * switch closes the open interval exactly: E[s] += P[s] * (t - t_last). Reads
 * at a time t add the open interval without closing it, so reading never
 * changes results. Arrays of structs, one per device: O(1) per switch and per
 * read; totals over all devices are O(devices) and only asked for at the end.
 * Rejected: storing every interval (memory grows with events; the regimes only
 * need totals and per-round differences, which callers get by reading twice). */
#include "hs_ledger.h"

#include <math.h>

#include "hs_alloc.h"
#include "hs_assert.h"

typedef struct dev_account {
  double power_w[HS_POWER_NSTATES];
  double energy_j[HS_POWER_NSTATES];
  double time_s[HS_POWER_NSTATES];
  double t_last;
  hs_power_state state;
} dev_account;

struct hs_ledger {
  dev_account *dev;
  size_t n;
};

static const char *const state_names[HS_POWER_NSTATES] = {"busy", "comm", "idle", "off"};

const char *hs_power_state_name(hs_power_state st) {
  return (unsigned)st < HS_POWER_NSTATES ? state_names[st] : "invalid";
}

hs_ledger *hs_ledger_create(size_t ndevices) {
  hs_ledger *l = hs_malloc(sizeof *l);
  l->n = ndevices;
  l->dev = hs_calloc(ndevices ? ndevices : 1, sizeof *l->dev);
  for (size_t i = 0; i < ndevices; i++) l->dev[i].state = HS_POWER_OFF;
  return l;
}

void hs_ledger_destroy(hs_ledger *l) {
  if (!l) return;
  hs_free(l->dev);
  hs_free(l);
}

size_t hs_ledger_devices(const hs_ledger *l) { return l->n; }

static void close_interval(dev_account *d, double t) {
  HS_ASSERT(t >= d->t_last, "ledger time went backwards");
  double dt = t - d->t_last;
  d->energy_j[d->state] += d->power_w[d->state] * dt;
  d->time_s[d->state] += dt;
  d->t_last = t;
}

void hs_ledger_set_power(hs_ledger *l, size_t dev, hs_power_state st, double watts, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  HS_ASSERT(isfinite(watts) && watts >= 0, "power must be finite and >= 0");
  dev_account *d = &l->dev[dev];
  if (d->state == st) close_interval(d, t);
  d->power_w[st] = watts;
}

double hs_ledger_get_power_of(const hs_ledger *l, size_t dev, hs_power_state st) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  return l->dev[dev].power_w[st];
}

void hs_ledger_switch(hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  dev_account *d = &l->dev[dev];
  close_interval(d, t);
  d->state = st;
}

hs_power_state hs_ledger_state(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  return l->dev[dev].state;
}

double hs_ledger_power(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  const dev_account *d = &l->dev[dev];
  return d->power_w[d->state];
}

double hs_ledger_total_power(const hs_ledger *l) {
  double p = 0;
  for (size_t i = 0; i < l->n; i++) p += l->dev[i].power_w[l->dev[i].state];
  return p;
}

double hs_ledger_energy(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  const dev_account *d = &l->dev[dev];
  HS_ASSERT(t >= d->t_last, "ledger read before the last change");
  double e = d->energy_j[st];
  if (d->state == st) e += d->power_w[st] * (t - d->t_last);
  return e;
}

double hs_ledger_device_energy(const hs_ledger *l, size_t dev, double t) {
  double e = 0;
  for (int s = 0; s < HS_POWER_NSTATES; s++) e += hs_ledger_energy(l, dev, (hs_power_state)s, t);
  return e;
}

double hs_ledger_state_energy(const hs_ledger *l, hs_power_state st, double t) {
  double e = 0;
  for (size_t i = 0; i < l->n; i++) e += hs_ledger_energy(l, i, st, t);
  return e;
}

double hs_ledger_time_in(const hs_ledger *l, size_t dev, hs_power_state st, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  const dev_account *d = &l->dev[dev];
  HS_ASSERT(t >= d->t_last, "ledger read before the last change");
  double s = d->time_s[st];
  if (d->state == st) s += t - d->t_last;
  return s;
}
