/* [sim/kernel/include/sim -> hetsim::sim; not installed]
 * hs_ledger.h: the energy ledger.
 *
 * Each device is in exactly one power state at a time; each state has a constant
 * power in watts for that device. Energy is integrated exactly at every state
 * change: E[state] += P(state) * (t - t_last). Totals per device and state, per
 * state over all devices, and the instantaneous power are readable at any time t
 * (reads at t include the open interval since the last change, without closing it).
 *
 * Time must not go backwards for a device (asserted). A device starts OFF at time
 * 0 unless hs_ledger_switch is called; OFF always draws 0 W. */
#ifndef HS_LEDGER_H
#define HS_LEDGER_H

#include <stddef.h>

typedef enum hs_power_state {
  HS_POWER_BUSY = 0, /* training (compute) */
  HS_POWER_COMM,     /* sending or receiving */
  HS_POWER_IDLE,     /* on, waiting */
  HS_POWER_OFF,      /* switched off */
  HS_POWER_NSTATES
} hs_power_state;

const char *hs_power_state_name(hs_power_state st); /* "busy", "comm", "idle", "off" */

typedef struct hs_ledger hs_ledger;

hs_ledger *hs_ledger_create(size_t ndevices);
void hs_ledger_destroy(hs_ledger *l);
size_t hs_ledger_devices(const hs_ledger *l);

/* Per device, HS_LEDGER_USER_BYTES bytes of the caller's (zeroed at create,
 * 8-byte aligned) in the same cache line as the device's ledger record, so a
 * caller that reads its own per-device fields where it switches the device's
 * state pays one cache miss, not two. The user areas of consecutive devices
 * are hs_ledger_user_stride bytes apart. Owned by the ledger. */
#define HS_LEDGER_USER_BYTES 25
void *hs_ledger_user(hs_ledger *l, size_t dev);
size_t hs_ledger_user_stride(const hs_ledger *l);

/* Power of `dev` in state `st` (OFF: only 0 is allowed). Changing it while the
 * device is in that state first closes the interval at time t at the old power;
 * energy integrated before the change is kept. */
void hs_ledger_set_power(hs_ledger *l, size_t dev, hs_power_state st, double watts, double t);
double hs_ledger_get_power_of(const hs_ledger *l, size_t dev, hs_power_state st);

/* Power classes, for many devices that draw a few base powers times a factor
 * of their own: 12 bytes per device instead of 24. A class holds the busy,
 * comm and idle watts (id >= 1; class 0 draws nothing); hs_ledger_set_class
 * gives dev the class's watts times factor in every powered state, exactly
 * the products hs_ledger_set_power would have been passed (so the same
 * results), and hs_ledger_factor returns the factor (0 when none was set).
 * hs_ledger_set_power still works on any device at any time (the ledger then
 * stores every device's three powers). */
size_t hs_ledger_add_class(hs_ledger *l, double busy_w, double comm_w, double idle_w);
void hs_ledger_set_class(hs_ledger *l, size_t dev, size_t cls, double factor, double t);
double hs_ledger_factor(const hs_ledger *l, size_t dev);

/* Switch `dev` to `st` at time t (>= its last change). Switching to the same
 * state is allowed and just closes the interval. */
void hs_ledger_switch(hs_ledger *l, size_t dev, hs_power_state st, double t);
hs_power_state hs_ledger_state(const hs_ledger *l, size_t dev);

double hs_ledger_power(const hs_ledger *l, size_t dev); /* instantaneous W */
double hs_ledger_total_power(const hs_ledger *l);       /* sum over devices, W */

/* Joules of `dev` in `st` up to time t (t >= last change of dev). */
double hs_ledger_energy(const hs_ledger *l, size_t dev, hs_power_state st, double t);
/* Joules of `dev` over all states up to t. */
double hs_ledger_device_energy(const hs_ledger *l, size_t dev, double t);
/* Joules in `st` over all devices up to t. */
double hs_ledger_state_energy(const hs_ledger *l, hs_power_state st, double t);
/* Seconds `dev` has spent in `st` up to t. */
double hs_ledger_time_in(const hs_ledger *l, size_t dev, hs_power_state st, double t);

/* The mark: every device's figures at an instant t (>= each device's last
 * change), for per-round differences. Reading at the mark gives the bits the
 * reads at t gave then (seconds in busy, comm or idle; joules per state or in
 * all), even after a power change since (the ledger keeps the energies a
 * change would move). O(1) per mark (a device's figures are stored when
 * its state or power first changes after it; t >= the device's last change
 * is asserted then, or at the first read), 24 bytes per device; a new mark
 * replaces the last. */
void hs_ledger_mark(hs_ledger *l, double t);
double hs_ledger_mark_time_in(const hs_ledger *l, size_t dev, hs_power_state st); /* not OFF */
double hs_ledger_mark_energy(const hs_ledger *l, size_t dev, hs_power_state st);
double hs_ledger_mark_device_energy(const hs_ledger *l, size_t dev);

/* The mark in the caller's storage, which it may lend to something of its
 * own between rounds: HS_LEDGER_MARK_BYTES bytes per device (device d's at
 * buf + d * HS_LEDGER_MARK_BYTES; 8-byte aligned; owned by the caller and
 * alive as long as the ledger), used by every mark from then on instead of
 * an array of the ledger's; before the first mark. A device's bytes hold its
 * mark from hs_ledger_mark to the caller's last read of that mark; the
 * caller may then write them (the run puts the device's telemetry there:
 * 24 B per device saved), and the next hs_ledger_mark writes them all again.
 * A mark read after such a write reads the caller's bytes: undefined. */
#define HS_LEDGER_MARK_BYTES 24
void hs_ledger_mark_in(hs_ledger *l, void *buf);

/* A device's figures from the mark to t (>= its last change), in one pass
 * over its line and its mark (a per-round measure at 10^6 devices made these
 * 16 separate reads). Each is the bits of the separate reads' difference:
 *   time_s[st]   = hs_ledger_time_in(l, dev, st, t) - hs_ledger_mark_time_in(l, dev, st)
 *   energy_j[st] = hs_ledger_energy(l, dev, st, t) - hs_ledger_mark_energy(l, dev, st)
 *   device_j     = hs_ledger_device_energy(l, dev, t) - hs_ledger_mark_device_energy(l, dev)
 * for the powered states st (busy, comm, idle). Needs a mark. O(1). */
typedef struct hs_ledger_since {
  double time_s[HS_POWER_OFF];   /* busy, comm, idle */
  double energy_j[HS_POWER_OFF]; /* busy, comm, idle */
  double device_j;               /* all states */
} hs_ledger_since;
void hs_ledger_since_mark(const hs_ledger *l, size_t dev, double t, hs_ledger_since *out);

#endif
