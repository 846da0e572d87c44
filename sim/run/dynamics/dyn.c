/* dyn.c: changing devices on the run's timeline: thermal state that follows
 * the device's power, level switches while computing (events at the closed-
 * form trip and recover instants, each moving the ledger's busy power),
 * computations timed through levels, co-tenant load, speed traces and
 * absences, and the availability events.
 *
 * Invariants: a device's thermal state is exact at t_sync and its power has
 * been constant since (sim_dev_state syncs it before every change, and a
 * level switch while busy is an event that syncs it); a pending level event
 * carries the device's generation, which every state change bumps, so a
 * stale one does nothing. A computation's end is planned once, when it
 * starts, by walking the same closed forms the events follow, so a throttle
 * in the middle of it moves its completion exactly as a speed trace does.
 * Lost ranks and absent devices: by default an absence pauses what the
 * device was doing (its computation resumes when it returns: DDP's step waits
 * for it) and powers it off; a regime may take absences itself (PMA: the
 * participant vanishes from the round).
 * Complexity: O(segments) per computation (level switches, co-tenant and
 * availability changes inside it); O(1) per state change.
 * Rejected: re-planning a computation at every level switch (one planned end
 * is cheaper and equal, since power while busy depends only on the level). */
#include <math.h>
#include <string.h>

#include "dyn.h"
#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "sim_run.h"

#define DYN_MAX_LEVELS 16

typedef struct dyn_dev dyn_dev;
struct dyn_dev {
  const hs_thermal_profile *th; /* NULL: no throttling (one level, speed 1) */
  dyn_thermal s;
  double t_sync;
  hs_power_state st;
  double p_busy[DYN_MAX_LEVELS]; /* busy watts per level */
  double idle_w, comm_w;
  bool has_cot, has_av, away;    /* away: unavailable now */
  dyn_pw cot, av;
  uint32_t gen;
  uint32_t ev_to;                /* level the pending level event switches to */
  hs_power_state resume;         /* state to take back when it returns */
  double last_j;                 /* energy of the last planned computation */
};

static double power_of(const dyn_dev *dd, hs_power_state st, uint32_t level) {
  switch (st) {
    case HS_POWER_BUSY: return dd->p_busy[level];
    case HS_POWER_COMM: return dd->comm_w;
    case HS_POWER_IDLE: return dd->idle_w;
    default: return 0;
  }
}

/* Advance dd's thermal state to `now` at the power of its current state. */
static void dev_sync(dyn_dev *dd, double now) {
  if (dd->th && now > dd->t_sync) {
    double p[DYN_MAX_LEVELS];
    for (size_t k = 0; k < dd->th->nlevels; k++) p[k] = power_of(dd, dd->st, (uint32_t)k);
    dyn_thermal_advance(dd->th, &dd->s, p, now - dd->t_sync);
  }
  if (now > dd->t_sync) dd->t_sync = now;
}

static void on_level(hs_engine *eng, void *subject, uint64_t arg);

/* While busy: the ledger's busy power is the level's, and the next switch is
 * an event. */
static void arm_level(sim_run *r, size_t i, dyn_dev *dd, double now) {
  if (!dd->th) return;
  hs_ledger_set_power(r->ledger, i, HS_POWER_BUSY, dd->p_busy[dd->s.level], now);
  if (dd->st != HS_POWER_BUSY) return;
  uint32_t to;
  double sw = dyn_thermal_next_switch_s(dd->th, &dd->s, dd->p_busy[dd->s.level], &to);
  if (!isfinite(sw)) return;
  dd->ev_to = to;
  hs_engine_schedule_in(r->eng, sw, 0, on_level, r, (uint64_t)dd->gen << 32 | i);
}

static void on_level(hs_engine *eng, void *subject, uint64_t arg) {
  sim_run *r = subject;
  size_t i = (size_t)(arg & 0xffffffffu);
  dyn_dev *dd = sim_dev_dyn(r, i);
  if ((uint32_t)(arg >> 32) != dd->gen) return;
  uint32_t from = dd->s.level;
  dev_sync(dd, hs_engine_now(eng));
  if (dd->s.level == from) { /* rounding left it a hair short of the threshold */
    dd->s.temp_c = dd->ev_to > from ? dd->th->trip_c[dd->ev_to] : dd->th->recover_c[from];
    dd->s.level = dd->ev_to;
  }
  dd->gen++;
  arm_level(r, i, dd, hs_engine_now(eng));
}

void sim_dyn_state(sim_run *r, size_t i, hs_power_state st) {
  dyn_dev *dd = sim_dev_dyn(r, i);
  double now = hs_engine_now(r->eng);
  dev_sync(dd, now);
  dd->st = st;
  dd->gen++;
  if (st == HS_POWER_BUSY) arm_level(r, i, dd, now);
}

/* Walk a device busy from t: while t < t_end (lead-in) or, with work >= 0,
 * until that much speed-1 work is done. Returns the time it stops; *j gets
 * the energy of the work part. s is a copy (planning commits nothing). */
static double walk(sim_run *r, size_t i, dyn_thermal *s, double t, double t_end, double work,
                   double *j) {
  dyn_dev *dd = sim_dev_dyn(r, i);
  const hs_speed_trace *trace = sim_dev_sp(r, i)->trace;
  for (;;) {
    if (work < 0 && t >= t_end) return t;
    bool on = !dd->has_av || dyn_pw_at(&dd->av, t) > 0;
    double end = work < 0 ? t_end : INFINITY;
    if (dd->has_av) end = fmin(end, dyn_pw_next(&dd->av, t));
    double cf = 1;
    if (dd->has_cot) {
      cf = dyn_pw_at(&dd->cot, t);
      end = fmin(end, dyn_pw_next(&dd->cot, t));
    }
    double p = on ? dd->p_busy[s->level] : 0;
    uint32_t to = s->level;
    double sw = dd->th ? dyn_thermal_next_switch_s(dd->th, s, p, &to) : INFINITY;
    bool switches = t + sw <= end;
    if (switches) end = t + sw;
    double speed = on ? (dd->th ? dd->th->speed[s->level] : 1.0) * cf : 0;
    if (work >= 0 && speed > 0) {
      double done = isfinite(end) ? speed * (trace ? hs_speed_trace_work(trace, t, end) : end - t)
                                  : INFINITY;
      if (done >= work) {
        double fin = trace ? hs_speed_trace_finish(trace, t, work / speed) : t + work / speed;
        *j += p * (fin - t);
        return fin;
      }
      work -= done;
    }
    if (!isfinite(end)) return INFINITY;
    if (work >= 0) *j += p * (end - t);
    if (dd->th) {
      if (switches) {
        s->temp_c = to > s->level ? dd->th->trip_c[to] : dd->th->recover_c[s->level];
        s->level = to;
      } else {
        s->temp_c = dyn_thermal_temp_after(dd->th, s->temp_c, p, end - t);
      }
    }
    t = end;
  }
}

/* Seconds the computation takes once the lead-in of after_s seconds (busy)
 * is over; INFINITY when it never ends. */
double sim_dyn_finish(sim_run *r, size_t i, double work_s, double after_s) {
  dyn_dev *dd = sim_dev_dyn(r, i);
  double now = hs_engine_now(r->eng);
  dev_sync(dd, now);
  dyn_thermal s = dd->s;
  double j = 0;
  double t0 = walk(r, i, &s, now, now + after_s, -1, &j);
  j = 0;
  double end = isfinite(t0) ? walk(r, i, &s, t0, INFINITY, work_s, &j) : INFINITY;
  dd->last_j = j;
  return end - t0;
}

double sim_dyn_last_j(const sim_run *r, size_t i) { return sim_dev_dyn(r, i)->last_j; }

bool sim_dev_available(const sim_run *r, size_t i) {
  return !sim_dev_dyn(r, i) || !sim_dev_dyn(r, i)->away;
}

/* --- availability ----------------------------------------------------------- */

static void on_avail(hs_engine *eng, void *subject, uint64_t i);

static void arm_avail(sim_run *r, size_t i, dyn_dev *dd) {
  double now = hs_engine_now(r->eng);
  double next = dyn_pw_next(&dd->av, now);
  if (isfinite(next)) hs_engine_schedule(r->eng, next, 0, on_avail, r, i);
}

static void on_avail(hs_engine *eng, void *subject, uint64_t i) {
  sim_run *r = subject;
  dyn_dev *dd = sim_dev_dyn(r, i);
  bool on = dyn_pw_at(&dd->av, hs_engine_now(eng)) > 0;
  if (on == !dd->away) {
    arm_avail(r, i, dd);
    return;
  }
  dd->away = !on;
  bool taken = r->on_avail && r->on_avail(r, i, on);
  if (taken && !on) dd->resume = HS_POWER_IDLE; /* its work is gone: back idle */
  if (!taken) {
    if (!on) {
      dd->resume = hs_ledger_state(r->ledger, i);
      sim_dev_state(r, i, HS_POWER_OFF);
    } else {
      sim_dev_state(r, i, dd->resume);
    }
  }
  arm_avail(r, i, dd);
}

/* --- set-up ----------------------------------------------------------------- */

static bool changes(const dyn_dev_spec *ds) {
  return ds->thermal || ds->cot_slowdown > 0 || ds->av_trace || ds->av_on_s > 0;
}

void sim_dyn_setup(sim_run *r) {
  const struct hs_dynamics *dy = r->sc->dynamics;
  if (!dy) return;
  HS_ASSERT(dy->ndev == r->ndev, "one dynamics record per expanded device");
  /* Only the devices that change get a record (an empty block costs nothing). */
  size_t nd = 0;
  for (size_t i = 0; i < r->ndev; i++) nd += changes(&dy->dev[i]);
  r->dyn = nd ? hs_calloc(nd, sizeof *r->dyn) : NULL;
  r->dyn_of = nd ? hs_calloc(r->ndev, sizeof *r->dyn_of) : NULL;
  r->ndyn = nd;
  sim_shared_setup(r);
  nd = 0;
  for (size_t i = 0; i < r->ndev; i++) {
    const dyn_dev_spec *ds = &dy->dev[i];
    if (!changes(ds)) continue;
    dyn_dev *dd = &r->dyn[nd++];
    r->dyn_of[i] = dd;
    double busy_w = sim_dev_busy_w(r, i), idle_w = sim_dev_idle_w(r, i);
    uint64_t key = sim_dev_key(r, i);
    dd->th = ds->thermal;
    dd->idle_w = idle_w;
    dd->comm_w = sim_dev_comm_w(r, i);
    dd->p_busy[0] = busy_w;
    if (dd->th) {
      HS_ASSERT(dd->th->nlevels <= DYN_MAX_LEVELS, "the profile loader caps the levels");
      for (size_t k = 0; k < dd->th->nlevels; k++) dd->p_busy[k] = busy_w * dd->th->busy_factor[k];
      dd->s.temp_c = isnan(dy->start_c) ? dd->th->ambient_c + dd->th->r_c_per_w * idle_w
                                        : dy->start_c;
      double p[DYN_MAX_LEVELS];
      for (size_t k = 0; k < dd->th->nlevels; k++) p[k] = idle_w;
      dyn_thermal_advance(dd->th, &dd->s, p, 0); /* a hot start begins throttled */
    }
    dd->st = HS_POWER_OFF;
    if (ds->cot_slowdown > 0) {
      dd->has_cot = true;
      dyn_pw_markov(&dd->cot, r->sc->seed, key, DYN_RNG_COTENANT, 1.0, ds->cot_free_s,
                    ds->cot_slowdown, ds->cot_loaded_s);
    }
    if (ds->av_trace) {
      dd->has_av = true;
      dyn_pw_intervals(&dd->av, ds->av_iv, ds->av_n);
    } else if (ds->av_on_s > 0) {
      dd->has_av = true;
      dyn_pw_markov(&dd->av, r->sc->seed, key, DYN_RNG_AVAIL, 1.0, ds->av_on_s, 0.0,
                    ds->av_off_s);
    }
  }
}

void sim_dyn_start(sim_run *r) {
  for (size_t i = 0; r->ndyn && i < r->ndev; i++) {
    dyn_dev *dd = sim_dev_dyn(r, i);
    if (!dd || !dd->has_av) continue;
    if (dyn_pw_at(&dd->av, 0) <= 0) {
      dd->away = true;
      dd->resume = HS_POWER_IDLE;
      sim_dev_state(r, i, HS_POWER_OFF);
    }
    arm_avail(r, i, dd);
  }
}

void sim_dyn_free(sim_run *r) {
  sim_shared_free(r);
  for (size_t i = 0; i < r->ndyn; i++) {
    dyn_pw_fini(&r->dyn[i].cot);
    dyn_pw_fini(&r->dyn[i].av);
  }
  hs_free(r->dyn);
  hs_free(r->dyn_of);
  r->dyn = NULL;
  r->dyn_of = NULL;
  r->ndyn = 0;
}
