/* engine.c: the discrete-event engine.
 *
 * Data: a slot pool, one 32-byte slot per pending event (argument, time, the
 * queue key's priority and live seq, generation, and a 32-bit index of its
 * (handler, subject) pair); the pairs, few in practice (a run uses a handful),
 * held once in a small table with reference counts; the pending set (evq.c: a
 * calendar of time buckets over a small 4-ary heap, keyed by time, priority,
 * insertion sequence; it prefetches the slots of the events it is about to
 * hand out, see sim_evq.pf_base); and up to APART_N events kept apart from the
 * queue (hs_engine_schedule_apart). An event id packs (generation << 32 |
 * slot + 1), or APART_LOW + k + 1 for apart event k; a fired or cancelled
 * event bumps its generation, so its id goes stale and never names a newer
 * event that reuses the slot.
 *
 * Cancel is lazy and O(1): the slot is released and its queue entry becomes
 * garbage, recognised at pop time because the entry's ps no longer equals its
 * slot's (seqs are unique, so a reused slot never revives an old entry).
 * Reschedule costs a push (see hs_engine.h): the old entry becomes garbage
 * and a new one is pushed with a fresh seq, the id unchanged. When garbage
 * exceeds the live events (and a minimum), the queue is compacted in O(n),
 * so memory stays within a constant factor of the pending count.
 *
 * Apart events: the network re-arms its one event after each of its events
 * (2 of the 3 events per device-round of a PMA round at scale); in the queue
 * that was a push and a pop each time. Apart, the key (the same (time,
 * priority, seq) words the queue would hold, the seq drawn from the same
 * counter) is compared with the queue's top at every dispatch, peek, step and
 * run_until, so the order is exactly the queue's; a reschedule rewrites the
 * key. More than APART_N at once fall back to the queue.
 *
 * Posted events (hs_engine_post): events nobody can cancel, move or ask about
 * need no slot and no id. A post is appended, whole (key, argument, pair,
 * seq offset: a 24-byte pitem), to a burst buffer; before the engine next
 * looks at what fires next (next_event: every dispatch, peek, step and
 * run_until), the buffer is flushed (flush_posts):
 *   - at least run_min (RUN_MIN = 2048) events: a run, sorted by the
 *     times' bits minus the least (the buffer is in post order, hence seq
 *     order, and holds one priority, so a stable sort by time gives exactly
 *     (time, priority, seq)). The sort is lazy: one stable pass splits the
 *     run into groups of ascending key ranges (bins of the top 16 bits of
 *     the span, counted, neighbours merged into groups of ~GROUP_N = 1024
 *     events: a skewed burst, most events within seconds and stragglers far
 *     beyond, still gets small groups); a group is sorted (LSD radix, 8 bits
 *     a digit, digits on which its keys agree skipped; nothing when already
 *     in order) when the head reaches it, in cache. Up to RUN_N runs are
 *     alive; the least head's key (rtb, rps) is kept, like the apart
 *     events', and compared with the queue's top and the least apart event,
 *     so the order is exactly one queue's. A run's dispatch is a sequential
 *     read; a used-up run's array is kept for the next burst (spare: freeing
 *     and touching 12 MB again each burst cost a page fault per 4 KiB);
 *   - fewer (or all run places taken): into the queue one by one, each as a
 *     12-byte record (argument, pair) on its own free stack, named in the
 *     entry by POSTED + index (slots stay below 2^31), always live for the
 *     garbage test; the records are first sized from capacity_hint.
 * A post of another priority than the buffer's, or one whose seq is 2^32
 * past the buffer's first, flushes the buffer first (a flush is correct at
 * any time: it only moves pending events). Cost: O(1) amortized per post;
 * at the flush one pass of n (keys, bins, order check) and one scatter; a
 * group's sort a few passes of it in cache (together well under a whole
 * LSD sort of the burst up front, 6 passes over it); O(1) per dispatch from
 * a run, plus RUN_N compares when two or more are alive.
 * Why: in a PMA round each of 10^6 download ends posts its compute end, in
 * two bursts of half a million inside one network event each; through the
 * calendar most of them were moved twice (far -> rung -> heap), and the
 * calendar's refill, sift_down, push, chain_next/span, rung_fill and pop
 * were a large share of hs-bench-pma. Runs cut the benchmark's CPU time and
 * raised the posted models of hs-bench-engine well above the hold model,
 * which they leave unchanged, at the same peak memory per device (the
 * calendar's chunks for the posted events are not needed any more); the
 * figures are in sim/doc/performance.md ("Posted runs"). Bursts below
 * run_min pay a copy.
 * Tried and dropped: the whole run sorted at the flush (above; no gain in
 * hs-bench-pma, the pma-post model slower); groups by a fixed top digit of
 * the span (PMA's stragglers put a third of a burst in one group: no gain);
 * 11-bit digits (4 passes instead of 6, each dearer: no gain);
 * 16-byte sort items (key, index, seq) with the argument and pair in a
 * record array in post order, read at dispatch with a prefetch 16 ahead
 * (the same CPU, more memory per device); priority bits in the key (mixed priorities
 * in one run: a 48-bit limit on the time span and a second key layout, for
 * a case no regime has).
 *
 * Pairs: a slot names its (handler, subject) by index, 16 bytes less per
 * pending event (48 -> 32, and 32-byte slots never straddle a cache line).
 * The pairs are interned with reference counts (intern.h, the table the
 * network uses for its flows' callbacks): the last pair used is checked
 * first (a burst of schedules by one regime hits it), a pair is freed when
 * its last pending event fires or is cancelled, so a library user passing a
 * distinct subject per event gets a table no larger than the pending pairs.
 * (A periodic event alone on its pair makes and frees it each time: a hash
 * insert and delete, O(1).)
 *
 * Rejected: a handle-to-position map (exact removal, but one cache miss per
 * heap level at 10^6 pending: the hold benchmark was markedly slower with
 * it); a free list threaded through the slots (each pop read a
 * cold slot, and each miss waited for the one before); dropping the time from
 * the slot (hs_engine_event_time needs it, and the queue cannot be searched by
 * slot).
 *
 * Invariants: a slot is pending iff its ps != NONE; a posted record is
 * pending iff it is not on its free stack; a buffered post is pending, and a
 * run's it[head, n); nside counts those two; an apart place is pending iff
 * its fn != NULL; a pair's refs counts the pending slots, posted records,
 * buffered and run events naming it; the buffer is empty whenever the next
 * event is chosen; the clock never goes backwards (scheduling in the past
 * asserts); ties are resolved only by (time, priority, seq), never by
 * addresses (the pair table's hashing decides where a pair is stored, never
 * what fires when).
 *
 * Over 800 lines: the engine's four stores of pending events (slots and the
 * queue, apart events, posted records, runs) meet in next_event and the
 * dispatchers, which must inline into hs_engine_run; a second file would
 * need their structures in a shared header and calls across files. */
#include "sim/hs_engine.h"

#include <math.h>
#include <string.h>

#include "evq.h"
#include "intern.h"
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
#define POSTED SIM_EVQ_ALT /* entry.slot of posted event i: POSTED + i */
#define RUN_N 8            /* sorted runs alive at once (usually 1-2) */
#define RUN_MIN 2048       /* default: a flushed buffer this large is sorted into a run */
#define SPARE_N 4          /* arrays of each kind kept for reuse */
#define RADIX_BITS 8
#define BIN_BITS 16    /* a run's first pass: bins of the top 16 bits of its keys' span */
#define GROUP_N 1024   /* bins merged into groups of about this many events */
#define GROUP_MAX 4096 /* groups per run at most */

#if defined(__GNUC__)
#define PREFETCH_W(p) __builtin_prefetch((p), 1)
#else
#define PREFETCH_W(p) ((void)(p))
#endif

/* 32 bytes, on 32-byte boundaries: one cache line per event, never two. */
typedef struct slot {
  uint64_t arg;
  double time;
  uint64_t ps;  /* the queue entry's ps (priority, live seq); NONE when free */
  uint32_t hd;  /* (handler, subject): index into hs_engine.hd */
  uint32_t gen;
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

/* A posted event's record: its argument (w[0..1], by memcpy) and pair. */
typedef struct posted {
  uint32_t w[3];
} posted;

/* A posted event in the burst buffer or a sorted run (see "Posted events"
 * above), whole: its sort key (the time's bits in the buffer, their excess
 * over the buffer's least in a run), argument, pair, and seq minus the
 * buffer's first (a buffer's seqs lie within 2^32, see hs_engine_post). Its
 * priority is its buffer's. 24 bytes. */
typedef struct pitem {
  uint64_t key, arg;
  uint32_t hd, dseq;
} pitem;

/* A sorted run: it[head, n) in (time, seq) order, all of priority bits
 * ptop; the head's full key cached in (htb, hps). */
typedef struct run {
  pitem *it;
  size_t head, n, cap;
  uint64_t tb0, seq0, ptop;
  uint64_t htb, hps;
  /* Lazy sort: it[0, sorted) is in order; it[sorted, n) is in groups of
   * ascending key ranges (group g at [bo[g], bo[g + 1]), ng groups), each
   * sorted when the head reaches it. */
  size_t sorted, *bo;
  uint32_t g, ng;
} run;

/* An array kept for reuse (the next burst's buffer or sort space): freeing
 * and reallocating 10^5-10^6-entry arrays each burst cost a page fault per
 * 4 KiB written. */
typedef struct spare {
  void *p;
  size_t cap;
} spare;

struct hs_engine {
  sim_evq q;
  /* The least pending apart event's key (tb = NO_KEY when none) and index:
   * compared with the queue's top at every dispatch. */
  uint64_t atb, aps;
  uint32_t amin, napart;
  apart ap[APART_N];
  slot *slots; /* 64-byte aligned inside slots_raw */
  void *slots_raw;
  size_t nslots, cap;
  sim_intern hd; /* (handler, subject) pairs, tag 0 (intern.h) */
  /* Free slots as a stack of indices, not a list threaded through the slots:
   * popping a threaded list read the freed slot, a cache miss at 10^6 pending
   * (97 % of schedule_in's time in hs-bench-pma), and each miss waited for
   * the one before. A slot's generation is read when it is handed out, but
   * that slot was prefetched PF_AHEAD schedules earlier, and the reads do not
   * depend on each other. */
  uint32_t *free_slots;
  size_t nfree, capfree;
  /* Posted events (hs_engine_post, no id): argument and pair index only, a
   * 12-byte record; free ones on a stack. */
  posted *post;
  uint32_t *pfree;
  size_t npost, cappost, npfree;
  size_t hint; /* capacity_hint (or the default): the posted arrays' first size */
  /* Burst buffer: posts since the last flush (flush_posts), in post order. */
  pitem *bit;
  size_t bn, bcap;
  uint64_t btbmin, btbmax, bseq0;
  uint32_t bprio;      /* the buffer's biased priority (all its posts') */
  size_t run_min;      /* a flushed buffer this large becomes a run */
  /* Sorted runs (fn-less when n == 0) and the least head's key (rtb = NO_KEY
   * when none) and index. */
  run runs[RUN_N];
  uint32_t nruns, rmin;
  uint64_t rtb, rps;
  size_t nside; /* events in the buffer and the runs */
  pitem *scr;   /* a run group's sort space (the largest group so far) */
  size_t scap;
  uint32_t *bins;  /* a run's first pass: events per bin, then its group */
  spare sp[SPARE_N];
  size_t live;        /* pending events (heap size minus garbage) */
  uint64_t seq;
  uint64_t fired;
  double now;
  int stop;
};

/* The slot array at capacity cap, 64-byte aligned (malloc's large blocks
 * start 16 bytes into a page: half the slots would straddle two lines). Only
 * the pages written count: a large unused hint costs address space only. */
static void slots_resize(hs_engine *e, size_t cap) {
  void *raw = hs_malloc(cap * sizeof(slot) + 63);
  slot *s = (slot *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
  if (e->nslots) memcpy(s, e->slots, e->nslots * sizeof *s);
  hs_free(e->slots_raw);
  e->slots_raw = raw;
  e->slots = s;
  e->cap = cap;
  e->q.pf_base = (const char *)s;
  e->q.pf_stride = sizeof *s;
}

hs_engine *hs_engine_create(size_t capacity_hint) {
  hs_engine *e = hs_calloc(1, sizeof *e);
  e->cap = capacity_hint ? capacity_hint : 64;
  e->hint = e->cap;
  e->atb = NO_KEY;
  e->aps = NONE;
  e->rtb = NO_KEY;
  e->rps = NONE;
  e->run_min = RUN_MIN;
  for (int k = 0; k < APART_N; k++) e->ap[k].tb = NO_KEY;
  sim_evq_init(&e->q, e->cap);
  slots_resize(e, e->cap);
  return e;
}

void hs_engine_destroy(hs_engine *e) {
  if (!e) return;
  sim_evq_fini(&e->q);
  hs_free(e->slots_raw);
  hs_free(e->free_slots);
  hs_free(e->post);
  hs_free(e->pfree);
  sim_intern_fini(&e->hd);
  hs_free(e->bit);
  hs_free(e->scr);
  hs_free(e->bins);
  for (int k = 0; k < RUN_N; k++) {
    hs_free(e->runs[k].it);
    hs_free(e->runs[k].bo);
  }
  for (int k = 0; k < SPARE_N; k++) hs_free(e->sp[k].p);
  hs_free(e);
}

void hs_engine_set_run_min(hs_engine *e, size_t n) { e->run_min = n ? n : 1; }

double hs_engine_now(const hs_engine *e) { return e->now; }
size_t hs_engine_pending(const hs_engine *e) { return e->live; }
uint64_t hs_engine_fired(const hs_engine *e) { return e->fired; }

/* A free slot and its generation. */
static uint32_t slot_alloc(hs_engine *e, uint32_t *gen) {
  if (e->nfree) {
    uint32_t s = e->free_slots[--e->nfree];
    *gen = e->slots[s].gen;
    return s;
  }
  if (e->nslots == e->cap) {
    HS_ASSERT(e->cap < NO_SLOT / 2, "too many pending events");
    slots_resize(e, 2 * e->cap);
  }
  *gen = 1;
  return (uint32_t)e->nslots++;
}

static void slot_release(hs_engine *e, uint32_t s) {
  slot *sl = &e->slots[s];
  sl->gen++;
  sl->ps = NONE;
  if (e->nfree == e->capfree) {
    e->capfree = e->capfree ? 2 * e->capfree : 64;
    e->free_slots = hs_reallocarray(e->free_slots, e->capfree, sizeof *e->free_slots);
  }
  e->free_slots[e->nfree++] = s;
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
  if (e->slots[s].gen != (uint32_t)(id >> 32) || e->slots[s].ps == NONE) return NO_SLOT;
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
  if (e->napart == 0) { /* the usual case: the network's one timer fired */
    e->atb = NO_KEY;
    e->aps = NONE;
  } else if (k == e->amin) {
    apart_min(e);
  } /* else the least is unchanged */
}

static inline bool entry_live(const hs_engine *e, const sim_evq_entry *en) {
  return en->slot >= POSTED || e->slots[en->slot].ps == en->ps;
}

static bool keep_live(const sim_evq_entry *en, const void *ctx) { return entry_live(ctx, en); }

static void maybe_compact(hs_engine *e) {
  size_t inq = e->live - e->napart - e->nside;
  size_t garbage = e->q.size - inq;
  if (garbage > COMPACT_MIN && garbage > inq) sim_evq_compact(&e->q, keep_live, e);
}

/* The next insertion sequence. The last one of 2^48 is never drawn, so a
 * live ps is never NONE. */
static inline uint64_t next_seq(hs_engine *e) {
  HS_ASSERT(e->seq < ((uint64_t)1 << SIM_EVQ_SEQ_BITS) - 1, "2^48 insertions");
  return e->seq++;
}

hs_event_id hs_engine_schedule(hs_engine *e, double time, int priority, hs_event_fn fn,
                               void *subject, uint64_t arg) {
  HS_ASSERT(fn != NULL, "event without handler");
  HS_ASSERT(priority >= SIM_EVQ_PRIO_MIN && priority <= SIM_EVQ_PRIO_MAX,
            "priority outside [-32768, 32767]");
  HS_ASSERT(!isnan(time) && time >= e->now, "event scheduled in the past");
  uint32_t gen;
  uint32_t s = slot_alloc(e, &gen);
  uint64_t ps = sim_evq_pack(priority, next_seq(e));
  uint32_t hd = sim_intern_get(&e->hd, fn, subject, 0);
  /* Write-only: the slot is likely cold, and stores do not wait for it. */
  e->slots[s] = (slot){.arg = arg, .time = time, .ps = ps, .hd = hd, .gen = gen};
  e->live++;
  sim_evq_push(&e->q, sim_evq_time_bits(time + 0.0), ps, s);
  /* Start fetching the slot PF_AHEAD schedules from now (a store to a cold
   * line still has to bring the line in; in a burst of 10^6 schedules, one
   * ahead was too late and the stores queued up). */
  if (e->nfree) {
    size_t k = e->nfree > PF_AHEAD ? e->nfree - PF_AHEAD : 0;
    PREFETCH_W(&e->slots[e->free_slots[k]]);
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

/* Posted event into the queue: a record from its free stack, named by the
 * entry (POSTED + index). */
static void post_queue(hs_engine *e, uint64_t tb, uint64_t ps, uint64_t arg, uint32_t hd) {
  size_t i;
  if (e->npfree) {
    i = e->pfree[--e->npfree];
  } else {
    if (e->npost == e->cappost) {
      HS_ASSERT(e->cappost < POSTED / 2, "too many posted events");
      e->cappost = e->cappost ? 2 * e->cappost : e->hint < POSTED / 2 ? e->hint : 64;
      e->post = hs_reallocarray(e->post, e->cappost, sizeof *e->post);
      e->pfree = hs_reallocarray(e->pfree, e->cappost, sizeof *e->pfree);
      e->q.pf_alt_base = (const char *)e->post;
      e->q.pf_alt_stride = sizeof *e->post;
    }
    i = e->npost++;
  }
  posted *p = &e->post[i];
  memcpy(&p->w[0], &arg, sizeof arg);
  p->w[2] = hd;
  if (e->npfree) /* as in hs_engine_schedule */
    PREFETCH_W(&e->post[e->pfree[e->npfree > PF_AHEAD ? e->npfree - PF_AHEAD : 0]]);
  sim_evq_push(&e->q, tb, ps, POSTED + (uint32_t)i);
}

/* --- the burst buffer and sorted runs ------------------------------------- */

/* Give an array back for reuse; the smallest one goes when all places are
 * taken. */
static void spare_put(spare *sp, void *p, size_t cap) {
  if (!p) return;
  int m = 0;
  for (int k = 0; k < SPARE_N; k++) {
    if (!sp[k].p) {
      sp[k] = (spare){p, cap};
      return;
    }
    if (sp[k].cap < sp[m].cap) m = k;
  }
  if (sp[m].cap < cap) {
    hs_free(sp[m].p);
    sp[m] = (spare){p, cap};
  } else {
    hs_free(p);
  }
}

/* A kept array of at least `need` elements of `size` bytes (the smallest
 * such, or the largest kept when `largest`), else the largest kept one
 * grown, else a new one; *cap its size. */
static void *spare_get(spare *sp, size_t need, size_t size, size_t *cap, bool largest) {
  int best = -1, big = -1;
  for (int k = 0; k < SPARE_N; k++) {
    if (!sp[k].p) continue;
    if (sp[k].cap >= need && (best < 0 || sp[k].cap < sp[best].cap)) best = k;
    if (big < 0 || sp[k].cap > sp[big].cap) big = k;
  }
  int k = best >= 0 && !largest ? best : big;
  void *p = NULL;
  size_t c = 0;
  if (k >= 0) {
    p = sp[k].p;
    c = sp[k].cap;
    sp[k] = (spare){NULL, 0};
  }
  if (c < need) {
    c = need;
    p = hs_reallocarray(p, c, size);
  }
  *cap = c;
  return p;
}

/* Room for one more buffered post: the largest kept array first (the
 * last burst's size is the best guess for the next), then doubling. */
static void buffer_grow(hs_engine *e) {
  if (!e->bit) {
    e->bit = spare_get(e->sp, 64, sizeof *e->bit, &e->bcap, true);
  } else {
    e->bcap *= 2;
    e->bit = hs_reallocarray(e->bit, e->bcap, sizeof *e->bit);
  }
}

static void run_sort_next(hs_engine *e, run *r);

static inline void run_head(hs_engine *e, run *r) {
  if (r->head == r->sorted) run_sort_next(e, r);
  const pitem *x = &r->it[r->head];
  r->htb = r->tb0 + x->key;
  r->hps = r->ptop << SIM_EVQ_SEQ_BITS | (r->seq0 + x->dseq);
}

/* Recompute the least run head (RUN_N compares at most). */
static void run_least(hs_engine *e) {
  e->rtb = NO_KEY;
  e->rps = NONE;
  for (uint32_t k = 0; k < RUN_N; k++) {
    const run *r = &e->runs[k];
    if (r->head < r->n && key_less(r->htb, r->hps, e->rtb, e->rps)) {
      e->rmin = k;
      e->rtb = r->htb;
      e->rps = r->hps;
    }
  }
}

/* The same after run kf's head moved to (tb, ps), given as values: reading
 * them back from the run just after storing them stalled store forwarding
 * (perf: a fifth of dispatch_run's samples with two runs alive). */
static inline void run_least_after(hs_engine *e, uint32_t kf, uint64_t tb, uint64_t ps) {
  uint32_t m = kf;
  if (e->nruns > 1)
    for (uint32_t k = 0; k < RUN_N; k++) {
      const run *r = &e->runs[k];
      if (k != kf && r->head < r->n && key_less(r->htb, r->hps, tb, ps)) {
        m = k;
        tb = r->htb;
        ps = r->hps;
      }
    }
  e->rmin = m;
  e->rtb = tb;
  e->rps = ps;
}

/* Stable LSD radix sort of a[0, n) by key, RADIX_BITS at a time, skipping
 * the digits on which all keys agree (`diff`: the OR of every key's XOR with
 * the first). tmp has room for n. Returns the array holding the result (a
 * or tmp). Stability keeps post order, hence seq order, among equal keys. */
static pitem *radix_sort(pitem *a, pitem *tmp, size_t n, uint64_t diff) {
  enum { R = 1 << RADIX_BITS, D = (64 + RADIX_BITS - 1) / RADIX_BITS };
  _Static_assert(D <= 16, "digits");
  unsigned dig[D];
  unsigned nd = 0;
  for (unsigned d = 0; d < D; d++)
    if ((diff >> (d * RADIX_BITS)) & (R - 1)) dig[nd++] = d;
  if (!nd) return a;
  size_t cnt[D][R];
  memset(cnt, 0, nd * sizeof cnt[0]);
  for (size_t i = 0; i < n; i++) {
    uint64_t k = a[i].key;
    for (unsigned j = 0; j < nd; j++) cnt[j][(k >> (dig[j] * RADIX_BITS)) & (R - 1)]++;
  }
  pitem *src = a, *dst = tmp;
  for (unsigned j = 0; j < nd; j++) {
    size_t sum = 0;
    for (unsigned v = 0; v < R; v++) {
      size_t c = cnt[j][v];
      cnt[j][v] = sum;
      sum += c;
    }
    unsigned sh = dig[j] * RADIX_BITS;
    size_t *off = cnt[j];
    for (size_t i = 0; i < n; i++) {
      pitem x = src[i];
      dst[off[(x.key >> sh) & (R - 1)]++] = x;
    }
    pitem *t = src;
    src = dst;
    dst = t;
  }
  return src;
}

/* Sort the run's next group (it starts at the head) by its lower digits,
 * in the scratch array and back: a group of a 500k burst is ~2000 entries,
 * so its passes run in cache, just before its events are dispatched. */
static void run_sort_next(hs_engine *e, run *r) {
  size_t lo = r->sorted, m = r->bo[r->g + 1] - lo; /* no group is empty */
  r->g++;
  r->sorted = lo + m;
  uint64_t diff = 0, k0 = r->it[lo].key;
  bool inorder = true;
  for (size_t i = lo + 1; i < lo + m; i++) {
    diff |= r->it[i].key ^ k0;
    inorder &= r->it[i].key >= r->it[i - 1].key;
  }
  if (inorder) return;
  if (e->scap < m) {
    hs_free(e->scr);
    e->scap = m;
    e->scr = hs_malloc(m * sizeof *e->scr);
  }
  pitem *res = radix_sort(r->it + lo, e->scr, m, diff);
  if (res != r->it + lo) memcpy(r->it + lo, res, m * sizeof *res);
}

/* Move the buffer where the order sees it: into a sorted run when it holds
 * at least run_min events (and a run place is free), else into the queue
 * entry by entry. O(n) either way (a run: one pass for its keys and bins,
 * one scatter into groups, sorted later, see run_sort_next). Called
 * before every look at the next event, and by post before a post the buffer
 * cannot take (another priority, or seqs that would outgrow dseq). */
static void flush_posts(hs_engine *e) {
  size_t n = e->bn;
  e->bn = 0;
  uint64_t ptop = e->bprio;
  uint32_t k = 0;
  while (k < RUN_N && e->runs[k].head < e->runs[k].n) k++;
  if (n < e->run_min || k == RUN_N) {
    for (size_t i = 0; i < n; i++) {
      const pitem *x = &e->bit[i];
      post_queue(e, x->key, ptop << SIM_EVQ_SEQ_BITS | (e->bseq0 + x->dseq), x->arg, x->hd);
    }
    e->nside -= n;
    return;
  }
  /* One pass: keys made relative to the least, counted into bins of the
   * top bits of the span (for the groups below), checked for order. */
  uint64_t tb0 = e->btbmin, span = e->btbmax - tb0, prev = 0;
  unsigned msb = 0;
  while (msb < 63 && (span >> (msb + 1))) msb++;
  unsigned bb = 1; /* bin bits: up to 4 bins per event, at most BIN_BITS */
  while (bb < BIN_BITS && ((size_t)1 << bb) < 4 * n) bb++;
  unsigned sh = msb + 1 > bb ? msb + 1 - bb : 0;
  size_t nb = (size_t)(span >> sh) + 1; /* keys lie in [0, span] */
  if (!e->bins) e->bins = hs_malloc(((size_t)1 << BIN_BITS) * sizeof *e->bins);
  uint32_t *bins = e->bins;
  memset(bins, 0, nb * sizeof *bins);
  bool sorted = true;
  for (size_t i = 0; i < n; i++) {
    uint64_t key = e->bit[i].key - tb0;
    e->bit[i].key = key;
    bins[key >> sh]++;
    sorted &= key >= prev;
    prev = key;
  }
  run *r = &e->runs[k];
  pitem *res = e->bit;
  size_t capres = e->bcap;
  *r = (run){.it = res, .head = 0, .n = n, .tb0 = tb0, .seq0 = e->bseq0, .ptop = ptop,
             .sorted = n};
  if (!sorted) {
    /* One stable pass into groups of ascending key ranges, each sorted
     * when the head reaches it (run_sort_next), in cache: the bins (the
     * top bits of the span) are merged into groups of about GROUP_N events
     * (up to 2 GROUP_MAX groups), so a skewed burst (most events in a few
     * seconds, stragglers far beyond) still gets small groups. A lone bin
     * heavier than that is one group. */
    size_t want = n / GROUP_MAX > GROUP_N ? n / GROUP_MAX : GROUP_N;
    /* A closed group and the first bin after it hold more than `want`, so
     * disjoint pairs of groups do: ng <= 2 n / want + 2 <= 2 GROUP_MAX + 2,
     * and bo has ng + 1 entries. */
    size_t *bo = hs_malloc((2 * (size_t)GROUP_MAX + 3) * sizeof *bo), acc = 0;
    uint32_t ng = 0;
    bo[0] = 0;
    for (size_t b = 0; b < nb; b++) {
      size_t c = bins[b];
      if (acc && acc + c > want) { /* close the group before bin b */
        bo[ng + 1] = bo[ng] + acc;
        ng++;
        acc = 0;
      }
      bins[b] = ng;
      acc += c;
    }
    if (acc) { /* the last group (trailing empty bins make none) */
      bo[ng + 1] = bo[ng] + acc;
      ng++;
    }
    HS_ASSERT(bo[ng] == n && ng <= 2 * GROUP_MAX + 2, "run groups");
    size_t captmp;
    pitem *tmp = spare_get(e->sp, n, sizeof *tmp, &captmp, false);
    size_t *off = hs_malloc(ng * sizeof *off);
    memcpy(off, bo, ng * sizeof *off);
    for (size_t i = 0; i < n; i++) {
      pitem x = e->bit[i];
      tmp[off[bins[x.key >> sh]]++] = x;
    }
    hs_free(off);
    spare_put(e->sp, e->bit, e->bcap);
    capres = captmp;
    r->it = tmp;
    r->bo = bo;
    r->ng = ng;
    r->sorted = r->g = 0;
  }
  r->cap = capres;
  e->bit = NULL;
  e->bcap = 0;
  run_head(e, r);
  e->nruns++;
  if (key_less(r->htb, r->hps, e->rtb, e->rps)) {
    e->rmin = k;
    e->rtb = r->htb;
    e->rps = r->hps;
  }
}

void hs_engine_post(hs_engine *e, double time, int priority, hs_event_fn fn, void *subject,
                    uint64_t arg) {
  HS_ASSERT(fn != NULL, "event without handler");
  HS_ASSERT(priority >= SIM_EVQ_PRIO_MIN && priority <= SIM_EVQ_PRIO_MAX,
            "priority outside [-32768, 32767]");
  HS_ASSERT(!isnan(time) && time >= e->now, "event scheduled in the past");
  uint64_t seq = next_seq(e);
  uint64_t tb = sim_evq_time_bits(time + 0.0);
  uint32_t prio = (uint32_t)(priority - SIM_EVQ_PRIO_MIN);
  if (e->bn && (prio != e->bprio || seq - e->bseq0 >= UINT32_MAX)) flush_posts(e);
  if (e->bn == 0) {
    e->bseq0 = seq;
    e->btbmin = e->btbmax = tb;
    e->bprio = prio;
  } else if (tb < e->btbmin) {
    e->btbmin = tb;
  } else if (tb > e->btbmax) {
    e->btbmax = tb;
  }
  if (e->bn == e->bcap) buffer_grow(e);
  uint32_t hd = sim_intern_get(&e->hd, fn, subject, 0);
  e->bit[e->bn++] = (pitem){tb, arg, hd, (uint32_t)(seq - e->bseq0)};
  e->live++;
  e->nside++;
}
hs_event_id hs_engine_schedule_in(hs_engine *e, double delay, int priority, hs_event_fn fn,
                                  void *subject, uint64_t arg) {
  HS_ASSERT(delay >= 0, "negative delay");
  return hs_engine_schedule(e, e->now + delay, priority, fn, subject, arg);
}

void hs_engine_post_in(hs_engine *e, double delay, int priority, hs_event_fn fn, void *subject,
                       uint64_t arg) {
  HS_ASSERT(delay >= 0, "negative delay");
  hs_engine_post(e, e->now + delay, priority, fn, subject, arg);
}

bool hs_engine_cancel(hs_engine *e, hs_event_id id) {
  uint32_t k = apart_lookup(e, id);
  if (k != NO_SLOT) {
    apart_release(e, k);
    return true;
  }
  uint32_t s = lookup(e, id);
  if (s == NO_SLOT) return false;
  sim_intern_put(&e->hd, e->slots[s].hd);
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
    if (k == e->amin) {
      apart_min(e);
    } else if (key_less(a->tb, a->ps, e->atb, e->aps)) {
      e->amin = k;
      e->atb = a->tb;
      e->aps = a->ps;
    }
    return true;
  }
  uint32_t s = lookup(e, id);
  if (s == NO_SLOT) return false;
  HS_ASSERT(!isnan(new_time) && new_time >= e->now, "event rescheduled into the past");
  slot *sl = &e->slots[s];
  sl->time = new_time;
  sl->ps = (sl->ps & ~(((uint64_t)1 << SIM_EVQ_SEQ_BITS) - 1)) | next_seq(e);
  sim_evq_push(&e->q, sim_evq_time_bits(new_time + 0.0), sl->ps, s);
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

/* What fires next: 1 the queue's top (*top), 2 the least apart event, 3 the
 * least run head, 0 nothing. Exact ties are impossible (seqs are unique).
 * Posts since the last look are flushed first, so they take part. */
static inline int next_event(hs_engine *e, const sim_evq_entry **top) {
  if (e->bn) flush_posts(e);
  const sim_evq_entry *t = live_top(e);
  *top = t;
  int w = 0;
  uint64_t tb = NO_KEY, ps = NONE;
  if (t) {
    w = 1;
    tb = t->tb;
    ps = t->ps;
  }
  if (key_less(e->atb, e->aps, tb, ps)) {
    w = 2;
    tb = e->atb;
    ps = e->aps;
  }
  if (key_less(e->rtb, e->rps, tb, ps)) w = 3;
  return w;
}

static inline double next_time(const hs_engine *e, int which, const sim_evq_entry *top) {
  if (which == 1) return sim_evq_time(top);
  double t;
  if (which == 2)
    memcpy(&t, &e->atb, sizeof t);
  else if (which == 3)
    memcpy(&t, &e->rtb, sizeof t);
  else
    t = INFINITY;
  return t;
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
  if (next && next->slot < POSTED) __builtin_prefetch(&e->slots[next->slot]);
#endif
  uint64_t arg;
  uint32_t k;
  if (top.slot < POSTED) {
    arg = e->slots[top.slot].arg;
    k = e->slots[top.slot].hd;
    slot_release(e, top.slot); /* before the call: the handler may reuse the slot */
  } else {
    const posted *p = &e->post[top.slot - POSTED];
    memcpy(&arg, &p->w[0], sizeof arg);
    k = p->w[2];
    e->pfree[e->npfree++] = top.slot - POSTED;
    e->live--;
  }
  hs_event_fn fn = sim_intern_at(&e->hd, k)->fn;
  void *subject = sim_intern_at(&e->hd, k)->subject;
  sim_intern_put(&e->hd, k); /* read first: the last reference frees the pair */
  e->now = sim_evq_time(&top);
  e->fired++;
  fn(e, subject, arg);
}

static void dispatch_apart(hs_engine *e) {
  apart a = e->ap[e->amin];
  apart_release(e, e->amin); /* before the call: the handler may reschedule */
  memcpy(&e->now, &a.tb, sizeof e->now);
  e->fired++;
  a.fn(e, a.subject, a.arg);
}

static void dispatch_run(hs_engine *e) {
  run *r = &e->runs[e->rmin];
  const pitem *x = &r->it[r->head++];
  uint64_t arg = x->arg;
  uint32_t k = x->hd;
  memcpy(&e->now, &e->rtb, sizeof e->now);
  if (r->head < r->n) {
    run_head(e, r);
    run_least_after(e, e->rmin, r->htb, r->hps);
  } else {
    spare_put(e->sp, r->it, r->cap); /* before the call: it may post */
    hs_free(r->bo);
    *r = (run){0};
    e->nruns--;
    run_least(e);
  }
  hs_event_fn fn = sim_intern_at(&e->hd, k)->fn;
  void *subject = sim_intern_at(&e->hd, k)->subject;
  sim_intern_put(&e->hd, k);
  e->live--;
  e->nside--;
  e->fired++;
  fn(e, subject, arg);
}

static inline void dispatch_next(hs_engine *e, int which) {
  if (which == 3)
    dispatch_run(e);
  else if (which == 2)
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
