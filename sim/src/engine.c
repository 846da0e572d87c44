/* engine.c: the discrete-event engine.
 *
 * Data: a slot pool (handler, subject, argument, time, live seq, generation)
 * and the pending set (evq.c: a calendar of time buckets over a small 4-ary
 * heap, keyed by time, priority, insertion sequence; it prefetches the slots
 * of the events it is about to hand out, see sim_evq.pf_base). An event id
 * packs (generation << 32 | slot + 1); a fired or cancelled event bumps its
 * slot's generation, so its id goes stale and never names a newer event that
 * reuses the slot.
 *
 * Cancel is lazy and O(1): the slot is released and its heap entry becomes
 * garbage, recognised at pop time because the entry's seq no longer equals its
 * slot's live_seq (seqs are unique, so a reused slot never revives an old
 * entry). Reschedule is O(log n): the old entry becomes garbage and a new one
 * is pushed with a fresh seq, the id unchanged. When garbage exceeds the live
 * events (and a minimum), the heap is compacted in O(n), so memory stays within
 * a constant factor of the pending count. Rejected: a handle-to-position map
 * (exact removal, but one cache miss per heap level at 10^6 pending: the hold
 * benchmark fell from 2.2M to 1.5M events/s with it).
 *
 * Invariants: a slot is pending iff live_seq != NONE; the clock never goes
 * backwards (scheduling in the past asserts); ties are resolved only by
 * (time, priority, seq), never by addresses. */
#include "sim/hs_engine.h"

#include <math.h>
#include <string.h>

#include "evq.h"
#include "base/hs_alloc.h"
#include "base/hs_assert.h"

#define NONE UINT64_MAX
#define NO_SLOT UINT32_MAX
#define COMPACT_MIN 1024
#define PF_AHEAD 8 /* free slots prefetched this far ahead */
#define APART_N 4  /* events kept apart from the queue (hs_engine_schedule_apart) */
/* The low id word of apart event k is APART_LOW + k + 1; slots stay below
 * 2^31 (slot_alloc asserts), so the two ranges never meet. */
#define APART_LOW 0xffffff00u
#define NO_KEY UINT64_MAX /* tb of a free apart: above every time's bits */

#if defined(__GNUC__)
#define PREFETCH_W(p) __builtin_prefetch((p), 1)
#else
#define PREFETCH_W(p) ((void)(p))
#endif

typedef struct slot {
  hs_event_fn fn;
  void *subject;
  uint64_t arg;
  double time;
  uint64_t live_seq; /* seq of the heap entry that is this event; NONE when free */
  uint32_t gen;
  int32_t prio;
} slot;

/* An event kept apart: its key as the queue would hold it, and its record.
 * Free when fn is NULL (then tb = NO_KEY, so a free one never is the least). */
typedef struct apart {
  uint64_t tb, ps;
  hs_event_fn fn;
  void *subject;
  uint64_t arg;
  uint32_t gen;
} apart;

struct hs_engine {
  sim_evq q;
  /* The least pending apart event's key (tb = NO_KEY when none) and index:
   * compared with the queue's top at every dispatch. */
  uint64_t atb, aps;
  uint32_t amin, napart;
  apart ap[APART_N];
  slot *slots;
  size_t nslots, cap;
  /* Free slots as a stack of (generation << 32 | slot), not a list threaded
   * through the slots: popping a threaded list read the freed slot, a cache
   * miss at 10^6 pending (97 % of schedule_in's time in hs-bench-pma), and
   * each miss waited for the one before; now scheduling only writes the slot. */
  uint64_t *free_slots;
  size_t nfree, capfree;
  size_t live;        /* pending events (heap size minus garbage) */
  uint64_t seq;
  uint64_t fired;
  double now;
  int stop;
};

hs_engine *hs_engine_create(size_t capacity_hint) {
  hs_engine *e = hs_calloc(1, sizeof *e);
  e->cap = capacity_hint ? capacity_hint : 64;
  e->atb = NO_KEY;
  for (int k = 0; k < APART_N; k++) e->ap[k].tb = NO_KEY;
  sim_evq_init(&e->q, e->cap);
  e->slots = hs_malloc(e->cap * sizeof *e->slots);
  e->q.pf_base = (const char *)e->slots;
  e->q.pf_stride = sizeof *e->slots;
  return e;
}

void hs_engine_destroy(hs_engine *e) {
  if (!e) return;
  sim_evq_fini(&e->q);
  hs_free(e->slots);
  hs_free(e->free_slots);
  hs_free(e);
}

double hs_engine_now(const hs_engine *e) { return e->now; }
size_t hs_engine_pending(const hs_engine *e) { return e->live; }
uint64_t hs_engine_fired(const hs_engine *e) { return e->fired; }

/* A free slot and its generation (the slot itself is not read). */
static uint32_t slot_alloc(hs_engine *e, uint32_t *gen) {
  if (e->nfree) {
    uint64_t f = e->free_slots[--e->nfree];
    *gen = (uint32_t)(f >> 32);
    return (uint32_t)f;
  }
  if (e->nslots == e->cap) {
    HS_ASSERT(e->cap < NO_SLOT / 2, "too many pending events");
    e->cap *= 2;
    e->slots = hs_reallocarray(e->slots, e->cap, sizeof *e->slots);
    e->q.pf_base = (const char *)e->slots;
  }
  *gen = 1;
  return (uint32_t)e->nslots++;
}

static void slot_release(hs_engine *e, uint32_t s) {
  slot *sl = &e->slots[s];
  sl->gen++;
  sl->live_seq = NONE;
  if (e->nfree == e->capfree) {
    e->capfree = e->capfree ? 2 * e->capfree : 64;
    e->free_slots = hs_reallocarray(e->free_slots, e->capfree, sizeof *e->free_slots);
  }
  e->free_slots[e->nfree++] = (uint64_t)sl->gen << 32 | s;
  e->live--;
}

static inline hs_event_id make_id(uint32_t gen, uint32_t s) {
  return ((uint64_t)gen << 32) | ((uint64_t)s + 1);
}

/* Slot of a pending event, or NO_SLOT when the id is 0 or stale. */
static uint32_t lookup(const hs_engine *e, hs_event_id id) {
  uint64_t low = id & 0xffffffffu;
  if (low == 0 || low > e->nslots) return NO_SLOT;
  uint32_t s = (uint32_t)(low - 1);
  if (e->slots[s].gen != (uint32_t)(id >> 32) || e->slots[s].live_seq == NONE) return NO_SLOT;
  return s;
}

static inline bool key_less(uint64_t atb, uint64_t aps, uint64_t btb, uint64_t bps) {
  return atb < btb || (atb == btb && aps < bps);
}

/* Recompute the least apart event (APART_N compares). */
static void apart_min(hs_engine *e) {
  uint32_t m = 0;
  for (uint32_t k = 1; k < APART_N; k++)
    if (key_less(e->ap[k].tb, e->ap[k].ps, e->ap[m].tb, e->ap[m].ps)) m = k;
  e->amin = m;
  e->atb = e->ap[m].tb;
  e->aps = e->ap[m].ps;
}

/* Index of a pending apart event, or NO_SLOT when id does not name one. */
static uint32_t apart_lookup(const hs_engine *e, hs_event_id id) {
  uint32_t low = (uint32_t)id;
  if (low <= APART_LOW || low > APART_LOW + APART_N) return NO_SLOT;
  const apart *a = &e->ap[low - APART_LOW - 1];
  if (a->gen != (uint32_t)(id >> 32) || !a->fn) return NO_SLOT;
  return low - APART_LOW - 1;
}

static void apart_release(hs_engine *e, uint32_t k) {
  apart *a = &e->ap[k];
  a->fn = NULL;
  a->tb = NO_KEY;
  a->gen++;
  e->napart--;
  e->live--;
  apart_min(e);
}

static inline bool entry_live(const hs_engine *e, const sim_evq_entry *en) {
  return e->slots[en->slot].live_seq == sim_evq_seq(en);
}

static bool keep_live(const sim_evq_entry *en, const void *ctx) { return entry_live(ctx, en); }

static void maybe_compact(hs_engine *e) {
  size_t inq = e->live - e->napart;
  size_t garbage = e->q.size - inq;
  if (garbage > COMPACT_MIN && garbage > inq) sim_evq_compact(&e->q, keep_live, e);
}

static inline uint64_t next_seq(hs_engine *e) {
  HS_ASSERT(e->seq < (uint64_t)1 << SIM_EVQ_SEQ_BITS, "2^48 insertions");
  return e->seq++;
}

static void push(hs_engine *e, uint32_t s, double time, int prio) {
  uint64_t seq = next_seq(e);
  e->slots[s].live_seq = seq;
  sim_evq_push(&e->q, sim_evq_time_bits(time + 0.0), sim_evq_pack(prio, seq), s);
}

hs_event_id hs_engine_schedule(hs_engine *e, double time, int priority, hs_event_fn fn,
                               void *subject, uint64_t arg) {
  HS_ASSERT(fn != NULL, "event without handler");
  HS_ASSERT(priority >= SIM_EVQ_PRIO_MIN && priority <= SIM_EVQ_PRIO_MAX,
            "priority outside [-32768, 32767]");
  HS_ASSERT(!isnan(time) && time >= e->now, "event scheduled in the past");
  uint32_t gen;
  uint32_t s = slot_alloc(e, &gen);
  /* Write-only: the slot is likely cold, and stores do not wait for it. */
  e->slots[s] = (slot){.fn = fn, .subject = subject, .arg = arg, .time = time, .gen = gen,
                       .prio = priority};
  e->live++;
  push(e, s, time, priority);
  /* Start fetching the slot PF_AHEAD schedules from now (a store to a cold
   * line still has to bring the line in; in a burst of 10^6 schedules, one
   * ahead was too late and the stores queued up). */
  if (e->nfree) {
    size_t k = e->nfree > PF_AHEAD ? e->nfree - PF_AHEAD : 0;
    const slot *p = &e->slots[(uint32_t)e->free_slots[k]];
    PREFETCH_W(p);
    PREFETCH_W((const char *)p + sizeof *p - 1); /* a slot may straddle two lines */
  }
  return make_id(gen, s);
}

hs_event_id hs_engine_schedule_apart(hs_engine *e, double time, int priority, hs_event_fn fn,
                                     void *subject, uint64_t arg) {
  uint32_t k = 0;
  while (k < APART_N && e->ap[k].fn) k++;
  if (k == APART_N) return hs_engine_schedule(e, time, priority, fn, subject, arg);
  HS_ASSERT(fn != NULL, "event without handler");
  HS_ASSERT(priority >= SIM_EVQ_PRIO_MIN && priority <= SIM_EVQ_PRIO_MAX,
            "priority outside [-32768, 32767]");
  HS_ASSERT(!isnan(time) && time >= e->now, "event scheduled in the past");
  apart *a = &e->ap[k];
  a->fn = fn;
  a->subject = subject;
  a->arg = arg;
  a->tb = sim_evq_time_bits(time + 0.0);
  a->ps = sim_evq_pack(priority, next_seq(e));
  e->napart++;
  e->live++;
  if (key_less(a->tb, a->ps, e->atb, e->aps)) {
    e->amin = k;
    e->atb = a->tb;
    e->aps = a->ps;
  }
  return make_id(a->gen, APART_LOW + k);
}

hs_event_id hs_engine_schedule_in(hs_engine *e, double delay, int priority, hs_event_fn fn,
                                  void *subject, uint64_t arg) {
  HS_ASSERT(delay >= 0, "negative delay");
  return hs_engine_schedule(e, e->now + delay, priority, fn, subject, arg);
}

bool hs_engine_cancel(hs_engine *e, hs_event_id id) {
  uint32_t k = apart_lookup(e, id);
  if (k != NO_SLOT) {
    apart_release(e, k);
    return true;
  }
  uint32_t s = lookup(e, id);
  if (s == NO_SLOT) return false;
  slot_release(e, s);
  maybe_compact(e);
  return true;
}

bool hs_engine_reschedule(hs_engine *e, hs_event_id id, double new_time) {
  uint32_t k = apart_lookup(e, id);
  if (k != NO_SLOT) {
    /* Only the key changes: no queue entry, no garbage; the seq is drawn
     * exactly as push() would. */
    HS_ASSERT(!isnan(new_time) && new_time >= e->now, "event rescheduled into the past");
    apart *a = &e->ap[k];
    a->tb = sim_evq_time_bits(new_time + 0.0);
    a->ps = (a->ps & ~(((uint64_t)1 << SIM_EVQ_SEQ_BITS) - 1)) | next_seq(e);
    apart_min(e);
    return true;
  }
  uint32_t s = lookup(e, id);
  if (s == NO_SLOT) return false;
  HS_ASSERT(!isnan(new_time) && new_time >= e->now, "event rescheduled into the past");
  e->slots[s].time = new_time;
  push(e, s, new_time, e->slots[s].prio);
  maybe_compact(e);
  return true;
}

double hs_engine_event_time(const hs_engine *e, hs_event_id id) {
  uint32_t k = apart_lookup(e, id);
  if (k != NO_SLOT) {
    double t;
    memcpy(&t, &e->ap[k].tb, sizeof t);
    return t;
  }
  uint32_t s = lookup(e, id);
  return s == NO_SLOT ? NAN : e->slots[s].time;
}

/* Pop garbage off the top so that the top, if any, is live. */
static const sim_evq_entry *live_top(hs_engine *e) {
  const sim_evq_entry *top;
  while ((top = sim_evq_top(&e->q)) && !entry_live(e, top)) sim_evq_pop(&e->q);
  return top;
}

/* What fires next: 1 the queue's top (*top), 2 the least apart event, 0
 * nothing. Exact ties are impossible (seqs are unique). */
static inline int next_event(hs_engine *e, const sim_evq_entry **top) {
  const sim_evq_entry *t = live_top(e);
  *top = t;
  if (t) return key_less(e->atb, e->aps, t->tb, t->ps) ? 2 : 1;
  return e->atb != NO_KEY ? 2 : 0;
}

static inline double next_time(const hs_engine *e, int which, const sim_evq_entry *top) {
  if (which == 1) return sim_evq_time(top);
  double t;
  memcpy(&t, &e->atb, sizeof t);
  return which == 2 ? t : INFINITY;
}

double hs_engine_peek_time(hs_engine *e) {
  const sim_evq_entry *top;
  int which = next_event(e, &top);
  return next_time(e, which, top);
}

static void dispatch(hs_engine *e) {
  sim_evq_entry top = sim_evq_pop(&e->q);
#if defined(__GNUC__)
  /* The next event's slot is a likely cache miss: start loading it now, so it
   * overlaps with this handler's work. */
  const sim_evq_entry *next = sim_evq_peek(&e->q);
  if (next) __builtin_prefetch(&e->slots[next->slot]);
#endif
  slot sl = e->slots[top.slot];
  slot_release(e, top.slot); /* before the call: the handler may reuse the slot */
  e->now = sim_evq_time(&top);
  e->fired++;
  sl.fn(e, sl.subject, sl.arg);
}

static void dispatch_apart(hs_engine *e) {
  apart a = e->ap[e->amin];
  apart_release(e, e->amin); /* before the call: the handler may reschedule */
  memcpy(&e->now, &a.tb, sizeof e->now);
  e->fired++;
  a.fn(e, a.subject, a.arg);
}

static inline void dispatch_next(hs_engine *e, int which) {
  if (which == 2)
    dispatch_apart(e);
  else
    dispatch(e);
}

bool hs_engine_step(hs_engine *e) {
  const sim_evq_entry *top;
  int which = next_event(e, &top);
  if (!which) return false;
  dispatch_next(e, which);
  return true;
}

uint64_t hs_engine_run(hs_engine *e) {
  uint64_t before = e->fired;
  const sim_evq_entry *top;
  int which;
  e->stop = 0;
  while (!e->stop && (which = next_event(e, &top))) dispatch_next(e, which);
  return e->fired - before;
}

uint64_t hs_engine_run_until(hs_engine *e, double t_end) {
  uint64_t before = e->fired;
  const sim_evq_entry *top;
  int which;
  e->stop = 0;
  while (!e->stop && (which = next_event(e, &top)) && next_time(e, which, top) <= t_end)
    dispatch_next(e, which);
  if (!e->stop && isfinite(t_end) && t_end > e->now) e->now = t_end;
  return e->fired - before;
}

void hs_engine_stop(hs_engine *e) { e->stop = 1; }
bool hs_engine_stopped(const hs_engine *e) { return e->stop != 0; }
