/* ledger.c: per-device energy integration over piecewise-constant power states.
 *
 * Per device, a 64-byte record (one cache line, 64-byte aligned): the time of
 * the last change, the seconds spent in busy, comm and idle, the current
 * state, and HS_LEDGER_USER_BYTES bytes that belong to the caller (the run
 * keeps there what the events of a device read and write: PMA's planned work,
 * switch times and participation byte; hs_ledger_user), and the generation
 * of the device's stored mark (below). The power in force per state is a power
 * class (a few per run: the scenario's entries) times the device's factor
 * (its power spread): 4 bytes in the line and 8 in a cold array, not 24, and
 * the same product the caller would have passed (so the same bits). Once a
 * caller sets a power of its own (throttling, DVFS), every device gets its
 * three powers stored (24 B each). Two arrays exist only once needed: the
 * seconds spent off, once a device stays off for a nonzero time, and a
 * per-state energy correction, once a power changes after time was spent in
 * that state. A switch closes the open interval exactly, time[state] += t -
 * t_last, and touches only the device's line (and the off array when it
 * leaves OFF after a nonzero time). Energy is power x time plus the
 * correction: when the power of a state changes, the correction absorbs
 * (old - new) x time spent so far, so the energy already integrated is
 * unchanged. OFF draws nothing.
 *
 * The mark (hs_ledger_mark): every device's seconds per powered state at one
 * instant (the round start), 24 B per device; the joules at the mark are
 * derived from them with the powers and corrections in force, which is the
 * arithmetic the reads at the mark did, as long as neither has changed; a
 * power change first saves the device's joules at the mark (an array made
 * when first needed). So per-round differences cost the run no snapshot.
 * The mark is lazy: hs_ledger_mark stores only its instant and bumps a
 * generation; a device's seconds are stored (the same time_in arithmetic)
 * when its line first changes after the mark (a switch, a power change),
 * and until then read off the line, which holds them unchanged. The line
 * keeps the generation of the mark it stored (16 bits; when they wrap, once
 * in 65535 marks, every line starts over). So a mark costs no pass over the
 * devices (it was one pass over 10^6 lines per PMA round), and the store is
 * made where the line is touched anyway.
 * The mark's 24 B may be the caller's (hs_ledger_mark_in): the run lends
 * them to its telemetry once a device's round is measured, so the two share
 * 24 B per device (the mark is dead from then to the next round's mark).
 * hs_ledger_since_mark reads a device's line and mark once for all of its
 * round's differences, with the separate reads' arithmetic (same bits).
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
 * adds exactly as the stored +0.0 did), so results are bit-identical. O(1)
 * per switch and per read; totals over all devices and the mark are
 * O(devices). Rejected: storing every interval (memory grows with events;
 * the regimes only need totals and per-round differences); a log of switches
 * inside the ledger, replayed before any read (every read would need a
 * flush; PMA defers its switches itself, where it knows no read comes before
 * the round close: regimes/fl/regime_fl_round.c). */
#include "sim/hs_ledger.h"

#include <math.h>
#include <stdalign.h>
#include <stdbool.h>
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
  uint16_t mark_gen; /* == l->mark_gen: mark_s holds the device's mark; else the line has
                        not changed since the mark, which is read off it (lazy mark) */
  uint32_t cls;      /* power class (0: none, 0 W) */
} dev_hot;
_Static_assert(sizeof(dev_hot) == 64, "one cache line per device");

typedef struct dev_power {
  double w[NON];
} dev_power;
_Static_assert(sizeof(dev_power) == HS_LEDGER_MARK_BYTES,
               "a device's mark is its seconds per state");

struct hs_ledger {
  dev_hot *hot;
  dev_power *cls_w;  /* power classes; [0] is 0 W */
  size_t ncls, capcls;
  double *factor;    /* per device, times its class; NULL until a class is set */
  dev_power *power;  /* per device, stored powers; NULL until a power is set directly */
  dev_power *adjust; /* energy corrections for power changes; NULL until one is nonzero */
  double *off_s;     /* seconds spent off; NULL until one is nonzero */
  dev_power *mark_s; /* per device, seconds per powered state at the mark; NULL before one
                        (or the caller's: hs_ledger_mark_in) */
  bool marked;       /* a mark was made */
  uint16_t mark_gen; /* the current mark's generation (1..UINT16_MAX), 0 before one */
  double mark_t;     /* its instant */
  bool mark_lent;    /* mark_s is the caller's (not freed here) */
  dev_power *mark_j; /* per device, joules per state at the mark, saved before a power
                        change moves them (w[0] NaN: not saved); NULL until one is */
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
  l->capcls = 8;
  l->cls_w = hs_calloc(l->capcls, sizeof *l->cls_w);
  l->ncls = 1;
  l->factor = NULL;
  l->power = NULL;
  l->adjust = NULL;
  l->off_s = NULL;
  l->mark_s = NULL;
  l->marked = l->mark_lent = false;
  l->mark_gen = 0;
  l->mark_t = 0;
  l->mark_j = NULL;
  return l;
}

void hs_ledger_destroy(hs_ledger *l) {
  if (!l) return;
  hs_free(l->raw);
  hs_free(l->cls_w);
  hs_free(l->factor);
  hs_free(l->power);
  hs_free(l->adjust);
  hs_free(l->off_s);
  if (!l->mark_lent) hs_free(l->mark_s);
  hs_free(l->mark_j);
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

static void mark_keep(hs_ledger *l, dev_hot *d);

static void close_interval(hs_ledger *l, dev_hot *d, double t) {
  HS_ASSERT(t >= d->t_last, "ledger time went backwards");
  mark_keep(l, d); /* the line is about to change: its mark first */
  double dt = t - d->t_last;
  if (d->state != HS_POWER_OFF) {
    d->time_s[d->state] += dt;
  } else if (dt != 0 || l->off_s) { /* +0.0 + +0.0 leaves a missing off time +0.0 */
    if (!l->off_s) l->off_s = hs_calloc(l->n ? l->n : 1, sizeof *l->off_s);
    l->off_s[d - l->hot] += dt;
  }
  d->t_last = t;
}

/* The power of dev in a powered state st. */
static double pw(const hs_ledger *l, size_t dev, unsigned st) {
  if (l->power) return l->power[dev].w[st];
  return l->factor ? l->cls_w[l->hot[dev].cls].w[st] * l->factor[dev] : 0.0;
}

size_t hs_ledger_add_class(hs_ledger *l, double busy_w, double comm_w, double idle_w) {
  HS_ASSERT(isfinite(busy_w) && busy_w >= 0 && isfinite(comm_w) && comm_w >= 0 &&
                isfinite(idle_w) && idle_w >= 0,
            "power must be finite and >= 0");
  HS_ASSERT(l->ncls < UINT32_MAX, "too many power classes");
  if (l->ncls == l->capcls) {
    l->capcls *= 2;
    l->cls_w = hs_reallocarray(l->cls_w, l->capcls, sizeof *l->cls_w);
  }
  dev_power *c = &l->cls_w[l->ncls];
  c->w[HS_POWER_BUSY] = busy_w;
  c->w[HS_POWER_COMM] = comm_w;
  c->w[HS_POWER_IDLE] = idle_w;
  return l->ncls++;
}

void hs_ledger_set_class(hs_ledger *l, size_t dev, size_t cls, double factor, double t) {
  HS_ASSERT(dev < l->n && cls < l->ncls, "device or class out of range");
  HS_ASSERT(isfinite(factor) && factor >= 0, "factor must be finite and >= 0");
  dev_hot *d = &l->hot[dev];
  bool fresh = true; /* no time in a powered state yet: nothing to correct */
  for (int s = 0; s < NON; s++) fresh &= d->time_s[s] == 0 && !(d->state == s && t > d->t_last);
  if (!fresh || l->power) {
    for (int s = 0; s < NON; s++)
      hs_ledger_set_power(l, dev, (hs_power_state)s, l->cls_w[cls].w[s] * factor, t);
    return;
  }
  if (!l->factor) l->factor = hs_calloc(l->n ? l->n : 1, sizeof *l->factor);
  d->cls = (uint32_t)cls;
  l->factor[dev] = factor;
}

double hs_ledger_factor(const hs_ledger *l, size_t dev) {
  HS_ASSERT(dev < l->n, "device out of range");
  return l->factor ? l->factor[dev] : 0.0;
}

/* The line's seconds per powered state at the mark's instant, read off the
 * line (the arithmetic of hs_ledger_time_in there): right while the line has
 * not changed since the mark. */
static void line_at_mark(const hs_ledger *l, const dev_hot *d, double out[NON]) {
  HS_ASSERT(l->mark_t >= d->t_last, "a mark before the device's last change");
  for (unsigned s = 0; s < NON; s++) {
    double x = d->time_s[s];
    if (d->state == s) x += l->mark_t - d->t_last;
    out[s] = x;
  }
}

/* Device dev's seconds per powered state at the mark: stored once its line
 * changed after the mark, else read off the line, which has not changed
 * since. */
static void mark_secs(const hs_ledger *l, size_t dev, double out[NON]) {
  const dev_hot *d = &l->hot[dev];
  if (d->mark_gen == l->mark_gen) {
    for (int s = 0; s < NON; s++) out[s] = l->mark_s[dev].w[s];
    return;
  }
  line_at_mark(l, d, out);
}

/* Store the device's mark before its line changes (a switch, a power change
 * after the mark). */
static void mark_keep(hs_ledger *l, dev_hot *d) {
  if (d->mark_gen == l->mark_gen) return; /* stored, or no mark (both 0) */
  line_at_mark(l, d, l->mark_s[d - l->hot].w);
  d->mark_gen = l->mark_gen;
}

/* Joules of dev in powered state s at the mark, from the marked seconds and
 * the power and correction in force: the arithmetic of hs_ledger_energy. */
static double mark_joules(const hs_ledger *l, size_t dev, unsigned s) {
  double m[NON];
  mark_secs(l, dev, m);
  return pw(l, dev, s) * m[s] + (l->adjust ? l->adjust[dev].w[s] : 0.0);
}

void hs_ledger_set_power(hs_ledger *l, size_t dev, hs_power_state st, double watts, double t) {
  HS_ASSERT(dev < l->n && (unsigned)st < HS_POWER_NSTATES, "device or state out of range");
  HS_ASSERT(isfinite(watts) && watts >= 0, "power must be finite and >= 0");
  if (st == HS_POWER_OFF) {
    HS_ASSERT(watts == 0, "a device that is off draws nothing");
    return;
  }
  if (l->marked) { /* keep the energies at the mark before the power moves them */
    mark_keep(l, &l->hot[dev]);
    if (!l->mark_j) {
      l->mark_j = hs_malloc((l->n ? l->n : 1) * sizeof *l->mark_j);
      for (size_t i = 0; i < l->n; i++) l->mark_j[i].w[0] = NAN;
    }
    if (isnan(l->mark_j[dev].w[0]))
      for (int s = 0; s < NON; s++) l->mark_j[dev].w[s] = mark_joules(l, dev, (unsigned)s);
  }
  if (!l->power) { /* from classes to stored powers, each the same product */
    dev_power *p = hs_calloc(l->n ? l->n : 1, sizeof *p);
    for (size_t i = 0; i < l->n; i++)
      for (int s = 0; s < NON; s++) p[i].w[s] = pw(l, i, (unsigned)s);
    l->power = p;
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
  return st == HS_POWER_OFF ? 0.0 : pw(l, dev, st);
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
  return st == HS_POWER_OFF ? 0.0 : pw(l, dev, st);
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
  return pw(l, dev, st) * s + (l->adjust ? l->adjust[dev].w[st] : 0.0);
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

/* --- the mark: figures at a past instant, for per-round differences --------- */

void hs_ledger_mark_in(hs_ledger *l, void *buf) {
  HS_ASSERT(!l->mark_s && buf && (uintptr_t)buf % alignof(double) == 0,
            "before the first mark, 8-byte aligned storage");
  l->mark_s = buf;
  l->mark_lent = true;
}

void hs_ledger_mark(hs_ledger *l, double t) {
  if (!l->mark_s) l->mark_s = hs_malloc((l->n ? l->n : 1) * sizeof *l->mark_s);
  l->marked = true;
  l->mark_t = t;
  if (l->mark_gen < UINT16_MAX) {
    l->mark_gen++; /* every line's mark is now the line itself, until it changes */
  } else {
    /* The generations wrap (once in 65535 marks): no line may keep a
     * generation that comes round again, so every line starts over (0: its
     * mark is the line itself, as after any mark). */
    l->mark_gen = 1;
    for (size_t i = 0; i < l->n; i++) l->hot[i].mark_gen = 0;
  }
  if (l->mark_j)
    for (size_t i = 0; i < l->n; i++) l->mark_j[i].w[0] = NAN;
}

double hs_ledger_mark_time_in(const hs_ledger *l, size_t dev, hs_power_state st) {
  HS_ASSERT(l->marked && dev < l->n && (unsigned)st < NON, "a mark, a device, a powered state");
  double m[NON];
  mark_secs(l, dev, m);
  return m[st];
}

double hs_ledger_mark_energy(const hs_ledger *l, size_t dev, hs_power_state st) {
  HS_ASSERT(l->marked && dev < l->n && (unsigned)st < HS_POWER_NSTATES, "a mark, a device");
  if (st == HS_POWER_OFF) return 0.0;
  if (l->mark_j && !isnan(l->mark_j[dev].w[0])) return l->mark_j[dev].w[st];
  return mark_joules(l, dev, st);
}

double hs_ledger_mark_device_energy(const hs_ledger *l, size_t dev) {
  double e = 0;
  for (int s = 0; s < NON; s++) e += hs_ledger_mark_energy(l, dev, (hs_power_state)s);
  return e;
}

/* The separate reads' arithmetic, each operation in the same order on the
 * same operands (so the same bits), with the line, the powers, the
 * corrections and the mark read once: time_in is the stored seconds plus the
 * open interval in the current state; energy is power x seconds + the
 * correction (+0.0 when none); device energies add the three states to a
 * +0.0 in state order, as hs_ledger_device_energy's loop does. */
void hs_ledger_since_mark(const hs_ledger *l, size_t dev, double t, hs_ledger_since *out) {
  HS_ASSERT(l->marked && dev < l->n, "a mark, a device");
  const dev_hot *d = &l->hot[dev];
  HS_ASSERT(t >= d->t_last, "ledger read before the last change");
  const double *adj = l->adjust ? l->adjust[dev].w : NULL;
  double ms[NON];
  mark_secs(l, dev, ms);
  const double *mj = l->mark_j && !isnan(l->mark_j[dev].w[0]) ? l->mark_j[dev].w : NULL;
  double w3[NON]; /* pw's products, made once (the loop then has no branch on the powers) */
  if (l->power) {
    for (unsigned s = 0; s < NON; s++) w3[s] = l->power[dev].w[s];
  } else if (l->factor) {
    const double *c = l->cls_w[d->cls].w, f = l->factor[dev];
    for (unsigned s = 0; s < NON; s++) w3[s] = c[s] * f;
  } else {
    for (unsigned s = 0; s < NON; s++) w3[s] = 0.0;
  }
  double e_now = 0, e_mark = 0;
  for (unsigned s = 0; s < NON; s++) {
    double w = w3[s];
    double a = adj ? adj[s] : 0.0;
    double sec = d->time_s[s];
    if (d->state == s) sec += t - d->t_last;
    double now_j = w * sec + a;
    double mark_j = mj ? mj[s] : w * ms[s] + a;
    out->time_s[s] = sec - ms[s];
    out->energy_j[s] = now_j - mark_j;
    e_now += now_j;
    e_mark += mark_j;
  }
  out->device_j = e_now - e_mark;
}
