/* net.c: the fluid network, max-min fair over classes of flows.
 *
 * Data structures.
 *  - flows[]: 40-byte records in slots with a generation (in gens[], apart),
 *    so an hs_flow_id (generation << 32 | slot + 1) goes stale when its flow
 *    ends. Fields only one state uses are shared (the admission time while
 *    latent is the finishing virtual time once active; `where` holds the
 *    state with the lane or the class-heap position), and (on_done, subject,
 *    class) is a 32-bit index into interned kinds (intern.h). Free slots
 *    are a stack of slot numbers, put back in ascending order when the
 *    network is idle. An ended flow's generation is bumped at once, but its
 *    slot goes back on the stack only once its callback's record is read.
 *  - classes[]: one per distinct (cap, sorted shared-link set), found through an
 *    open-addressing hash table; never freed (there are few link types). Flows
 *    of one class always share one rate, so a class keeps a virtual clock v
 *    (bytes sent per flow, exact at time t0, advancing at rate/8 bytes/s) and
 *    its flows ordered by finishing virtual time fv = v at admission + bytes:
 *    a FIFO "run" for flows that arrive in (fv, seq) order, the usual case
 *    (equal sizes), and a heap for the others. The clock restarts at 0
 *    whenever the class empties, which keeps v small and fv - v accurate.
 *  - lanes: flows in their latency phase, one FIFO per distinct path latency
 *    (found through a hash table). Within a lane, admission times never
 *    decrease (now does not, the latency is the lane's), so a lane is sorted by
 *    construction; a small heap orders the lanes by their first admission. A
 *    single heap of all latent flows was rejected: 10^5 simultaneous downloads
 *    made every admission a cache-missing sift through 10^5 entries.
 *  - FIFO entries (lanes and runs) are 8 bytes, generation << 32 | slot: the
 *    key and seq are read from the record, and only the front's are needed,
 *    so they are cached: a lane's as its key in the lane heap, a run's in
 *    its class (front). A cancelled flow's entry stays until it reaches the
 *    front, where its generation, no longer its slot's, marks it dead.
 *  - class heap: non-empty classes by (time of their next completion, seq of
 *    that flow). seq = order of hs_net_transfer calls, the tie-break everywhere,
 *    so equal-time completions come out in call order even across classes.
 *    Heaps (net_heap.h) are indexed: items record their position.
 *  - ONE engine event, at min(lane heap top, class heap top).
 *
 * Memory per flow: 40 (record) + 4 (generation) + 4 (free stack) + 8 (its
 * lane or run entry; a lane's and a run's ring both keep the size they grew
 * to) + 4 while its callback is due, each array grown by doubling. At
 * hs-bench-pma's peak (10^6 downloads at once: two lanes and two runs of
 * 2^19 entries, 5 * 10^5 callbacks due at once) that is ~69 B per device,
 * counted from the arrays' capacities. Rejected for that reason: 64-byte
 * records, 24-byte (key, seq, slot) FIFO entries, (generation, slot)
 * free-stack entries and 24-byte (on_done, subject, arg) copies of due
 * callbacks (twice the memory per flow).
 *
 * Invariants: a class is in active[] and in the class heap iff nflows > 0;
 * v <= every fv of the class; the front of every FIFO is a live flow (entries
 * of cancelled flows are skipped when they reach it), and its cached key is
 * its record's; the class heap key equals t0 + (first fv - v) * 8 / rate,
 * except for a class marked dirty between an event's completions and its
 * rate update, which re-keys it; a link's nflows is the sum of the nflows of
 * the classes crossing it; link load = sum over active classes crossing it of
 * nflows * rate <= bandwidth (up to rounding); a slot is on the free stack
 * iff its flow ended and nothing reads its record any more.
 *
 * Complexity. Recomputing max-min over flows (O(n) per event, O(n^2) per round
 * with 10^5 uploads) was rejected, as was one engine event per flow (a rate
 * change would reschedule every flow of the link). Here an event costs one
 * progressive filling over the K active classes and L links,
 * O(K log K + (K + L) * L), plus per admitted or completed flow O(log K) and
 * O(1) (run) or O(log n) (heap); all admissions and completions at one time
 * share one filling. The rate of a class changes only at an event, where its
 * clock is first advanced with the old rate and its next completion
 * rescheduled: keys are written in place and the class heap rebuilt, O(K)
 * (one heap update per class took an unpredictable up-or-down branch each).
 * A completion re-keys its class once: when no other class is due, the key
 * is left to the rate update that follows.
 *
 * Files: the interned kinds (intern.c/.h, shared with the engine) and the
 * heap (net_heap.h) stand alone; flows, classes, lanes and the two heaps of
 * classes and lanes share one invariant set (above) and are updated together
 * at every event, so they stay in this file: split across files they would need a private header
 * exposing every field, and no piece could be checked against the
 * invariants alone. */
#include "sim/hs_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "base/hs_status.h"
#include "net_heap.h"
#include "intern.h"

#define SIM_NONE UINT32_MAX
#define PF_AHEAD 8 /* free flow slots prefetched this far ahead */

/* With 10^5 flows in flight their slots do not fit in cache; fetching the next
 * finisher's slot while the engine runs other events hides that miss. */
#if defined(__GNUC__)
#define SIM_PREFETCH(p) __builtin_prefetch(p)
#define SIM_PREFETCH_W(p) __builtin_prefetch(p, 1)
#else
#define SIM_PREFETCH(p) ((void)(p))
#define SIM_PREFETCH_W(p) ((void)(p))
#endif

/* A flow record, 40 bytes. What only one state uses shares a field: t is the
 * admission time while LATENT and the finishing virtual time fv once ACTIVE;
 * `where` is the state and, by state, the lane or the position in the class
 * heap (below). on_done, subject and the class live in the interned kind. */
typedef struct sim_flow {
  double bytes;
  double t;      /* LATENT: admission time; ACTIVE: fv */
  uint64_t seq;
  uint64_t arg;
  uint32_t kind; /* in net->kinds (intern.h) */
  uint32_t where;
} sim_flow;

/* where: SIM_W_FREE; SIM_W_RUN (ACTIVE, in its class's run); SIM_W_LATENT |
 * lane (LATENT); else the position in its class heap (ACTIVE). */
#define SIM_W_FREE UINT32_MAX
#define SIM_W_RUN (UINT32_MAX - 1)
#define SIM_W_LATENT 0x80000000u
#define SIM_MAX_SLOTS 0x7fffffffu /* heap positions stay below SIM_W_LATENT */

static bool w_latent(uint32_t w) { return w >= SIM_W_LATENT && w < SIM_W_RUN; }
static bool w_active(uint32_t w) { return w < SIM_W_LATENT || w == SIM_W_RUN; }

/* A FIFO of flows, 8-byte entries (generation << 32 | slot), absolute indices
 * head..tail into a power-of-two ring. The key and seq of an entry are in its
 * flow's record; the owner caches those of the front. An entry is live while
 * its generation is its slot's (a cancel or a completion bumps it); entries
 * of cancelled flows stay until they reach the head (dead counts them, so a
 * clean FIFO is never probed). */
typedef struct sim_fifo {
  uint64_t *a;
  uint64_t head, tail;
  uint32_t mask;
  uint32_t dead;
} sim_fifo;

typedef struct sim_class {
  double cap_bps;
  uint32_t *links; /* sorted, unique */
  uint32_t nlinks;
  double rate_bps; /* per flow */
  double v;        /* virtual clock (bytes per flow) at t0 */
  double t0;
  uint32_t nflows;
  /* The class's flows in two parts: a sorted run (a ring buffer appended in
   * (fv, seq) order, absolute indices head..tail, cancelled entries skipped)
   * and a heap for flows that arrive out of order. Equal-size transfers (the
   * same model for every device) always append, so the common case is O(1)
   * with no cache-missing sift through 10^5 entries. front: (fv, seq, slot)
   * of the run's head (valid while the run is not empty); back_*: of the
   * last entry appended (live or not), what the next one is compared with. */
  sim_fifo run;
  sim_hent front;
  double back_fv;
  uint64_t back_seq;
  sim_heap heap;
  uint32_t apos;   /* index in active[], SIM_NONE when empty */
  uint32_t hpos;   /* position in the class heap */
  /* scratch of the filling */
  double new_rate;
  bool frozen;
  bool dirty;      /* top flow or clock changed: refresh its class heap key */
} sim_class;

/* A lane's front (admission time, seq) is its key in the lane heap. */
typedef struct sim_lane {
  double lat_s;
  sim_fifo q;
  uint32_t hpos; /* position in the lane heap, SIM_NONE when empty */
} sim_lane;

typedef struct sim_link {
  char *name;
  double bw_bps;
  double lat_s;
  double load_bps;
  double bytes;    /* carried up to t_last */
  double t_last;
  double rem;      /* scratch: capacity left */
  double users;    /* scratch: flows of unfrozen classes crossing it */
  uint64_t nflows; /* flows in the fluid system crossing it (kept up to date) */
} sim_link;

typedef struct sim_ord {
  double cap;
  uint32_t ci;
} sim_ord;

struct hs_net {
  hs_engine *eng;
  int prio;
  hs_event_id ev;
  double ev_time;
  uint64_t seq;

  sim_link *links;
  uint32_t nlinks, caplinks;
  /* The link carrying each link's other direction: itself for a half-duplex
   * link, its pair for a full-duplex one (hs_net_add_duplex_link). Apart from
   * sim_link, which the filling reads: only callers ask for it. */
  uint32_t *reverse;

  sim_flow *flows;
  uint32_t nslots, capslots;
  /* Free slots as a stack, not a list threaded through the slots: reading a
   * freed slot's link was a cache miss on every transfer; now a transfer
   * writes the slot and reads its generation, both fetched PF_AHEAD
   * transfers earlier. (Generations on the stack too cost 4 B per slot.) */
  uint32_t *free_slots;
  uint32_t nfree, capfree;
  /* Generation of each slot, apart from the records (4 bytes each): the
   * liveness of a FIFO entry and of an id is checked here, and an idle
   * network puts its free slots back in order without touching either. */
  uint32_t *gens;
  uint32_t freed; /* flows freed since the free slots were last ordered */

  sim_class *classes;
  uint32_t nclasses, capclasses;
  uint32_t *ctab; /* hash table of class indices */
  uint32_t ctab_mask;

  uint32_t *active;
  uint32_t nactive, capactive;

  sim_lane *lanes;
  uint32_t nlanes, caplanes;
  uint32_t *ltab; /* hash table of lane indices by latency */
  uint32_t ltab_mask;
  sim_heap lhead; /* items are lane indices, keyed by their first entry */
  sim_heap chead; /* items are class indices */

  uint32_t *scratch; /* sorted links of a new transfer */
  uint32_t capscratch;
  /* The active classes that cross a shared link, sorted by (cap, index): the
   * filling's order, kept up to date when a class (de)activates instead of
   * sorted at every rate update. */
  sim_ord *ord;
  uint32_t nord, capord;
  /* Slots of the flows completed by the current event, whose callbacks are
   * due: their records (arg, kind) are read when the callbacks run, so a slot
   * goes back to the free stack only then. ndone: those not back yet. */
  uint32_t *done;
  uint32_t ndone, capdone;

  sim_intern kinds; /* interned (on_done, subject, class) of the flows */

  hs_net_stats st;
};

/* ---- heaps (net_heap.h): where each heap's items keep their position --- */

static sim_hpos chead_pos(const hs_net *net) {
  return (sim_hpos){(char *)net->classes + offsetof(sim_class, hpos), sizeof(sim_class)};
}

static sim_hpos lhead_pos(const hs_net *net) {
  return (sim_hpos){(char *)net->lanes + offsetof(sim_lane, hpos), sizeof(sim_lane)};
}

static sim_hpos flow_pos(const hs_net *net) {
  return (sim_hpos){(char *)net->flows + offsetof(sim_flow, where), sizeof(sim_flow)};
}

/* ---- FIFOs and lanes -------------------------------------------------- */

static void fifo_push(sim_fifo *q, uint64_t entry) {
  if (q->a == NULL || q->tail - q->head == (uint64_t)q->mask + 1) {
    uint32_t size = q->a ? 2 * (q->mask + 1) : 16;
    uint64_t *a = hs_reallocarray(NULL, size, sizeof *a);
    for (uint64_t k = q->head; k < q->tail; k++) a[k & (size - 1)] = q->a[k & q->mask];
    hs_free(q->a);
    q->a = a;
    q->mask = size - 1;
  }
  q->a[q->tail++ & q->mask] = entry;
}

static bool fifo_empty(const sim_fifo *q) { return q->head == q->tail; }
static uint64_t fifo_front_entry(const sim_fifo *q) { return q->a[q->head & q->mask]; }
static uint32_t fifo_front(const sim_fifo *q) { return (uint32_t)fifo_front_entry(q); }

/* A record may straddle two lines; the flow's end writes its generation. */
static void flow_prefetch(const hs_net *net, uint32_t slot) {
  const sim_flow *f = &net->flows[slot];
  SIM_PREFETCH_W(f);
  SIM_PREFETCH_W((const char *)f + sizeof *f - 1);
  SIM_PREFETCH_W(&net->gens[slot]);
}

/* Drop the front entry, then the dead entries behind it, so the front is
 * always a live flow; prefetch the record of the entry behind the new front
 * (it is read when that front leaves). */
static void fifo_advance(const hs_net *net, sim_fifo *q) {
  q->head++;
  while (q->dead && !fifo_empty(q)) {
    uint64_t e = q->a[q->head & q->mask];
    if (net->gens[(uint32_t)e] == (uint32_t)(e >> 32)) break;
    q->head++;
    q->dead--;
  }
  if (fifo_empty(q))
    q->dead = 0;
  else if (q->tail - q->head > 1)
    flow_prefetch(net, (uint32_t)q->a[(q->head + 1) & q->mask]);
}

/* After a cancel: drop the front if it is dead (and the dead behind it). */
static bool fifo_clean(const hs_net *net, sim_fifo *q) {
  if (fifo_empty(q)) return false;
  uint64_t e = q->a[q->head & q->mask];
  if (net->gens[(uint32_t)e] == (uint32_t)(e >> 32)) return false;
  q->dead--;
  fifo_advance(net, q);
  return true;
}

static uint64_t bits_hash(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  b ^= b >> 33;
  b *= 0xff51afd7ed558ccdULL;
  return b ^ (b >> 33);
}

static void ltab_insert(hs_net *net, uint32_t li) {
  uint32_t i = (uint32_t)bits_hash(net->lanes[li].lat_s) & net->ltab_mask;
  while (net->ltab[i] != SIM_NONE) i = (i + 1) & net->ltab_mask;
  net->ltab[i] = li;
}

static uint32_t lane_get(hs_net *net, double lat_s) {
  uint32_t i = (uint32_t)bits_hash(lat_s) & net->ltab_mask;
  for (; net->ltab[i] != SIM_NONE; i = (i + 1) & net->ltab_mask)
    if (net->lanes[net->ltab[i]].lat_s == lat_s) return net->ltab[i];
  HS_ASSERT(net->nlanes < SIM_W_RUN - SIM_W_LATENT, "a lane index fits in a record's where");
  if (net->nlanes == net->caplanes) {
    net->caplanes = net->caplanes ? 2 * net->caplanes : 8;
    net->lanes = hs_reallocarray(net->lanes, net->caplanes, sizeof *net->lanes);
  }
  uint32_t li = net->nlanes++;
  memset(&net->lanes[li], 0, sizeof net->lanes[li]);
  net->lanes[li].lat_s = lat_s;
  net->lanes[li].hpos = SIM_NONE;
  if (2 * (uint64_t)net->nlanes > net->ltab_mask + 1ULL) { /* keep load <= 1/2 */
    uint32_t size = 2 * (net->ltab_mask + 1);
    hs_free(net->ltab);
    net->ltab = hs_reallocarray(NULL, size, sizeof *net->ltab);
    for (uint32_t k = 0; k < size; k++) net->ltab[k] = SIM_NONE;
    net->ltab_mask = size - 1;
    for (uint32_t k = 0; k < net->nlanes; k++) ltab_insert(net, k);
  } else {
    net->ltab[i] = li;
  }
  return li;
}

/* After the lane's front changed: re-key it in the lane heap, or drop it. */
static void lane_refresh(hs_net *net, uint32_t li) {
  sim_lane *ln = &net->lanes[li];
  if (fifo_empty(&ln->q)) {
    if (ln->hpos != SIM_NONE) sim_heap_remove(&net->lhead, lhead_pos(net), ln->hpos);
    ln->hpos = SIM_NONE;
    return;
  }
  const sim_flow *f = &net->flows[fifo_front(&ln->q)];
  if (ln->hpos == SIM_NONE)
    sim_heap_push(&net->lhead, lhead_pos(net), f->t, f->seq, li);
  else
    sim_heap_update(&net->lhead, lhead_pos(net), ln->hpos, f->t, f->seq);
}

/* ---- classes ---------------------------------------------------------- */

static uint64_t class_hash(double cap, const uint32_t *links, uint32_t n) {
  uint64_t bits;
  memcpy(&bits, &cap, sizeof bits);
  uint64_t h = 1469598103934665603ULL ^ bits;
  h *= 1099511628211ULL;
  for (uint32_t i = 0; i < n; i++) {
    h ^= links[i] + 0x9e3779b97f4a7c15ULL;
    h *= 1099511628211ULL;
  }
  return h ^ (h >> 29);
}

static bool class_is(const sim_class *c, double cap, const uint32_t *links, uint32_t n) {
  if (c->cap_bps != cap || c->nlinks != n) return false;
  for (uint32_t i = 0; i < n; i++) /* n is small: no memcmp call */
    if (c->links[i] != links[i]) return false;
  return true;
}

static void ctab_insert(hs_net *net, uint32_t ci) {
  const sim_class *c = &net->classes[ci];
  uint32_t i = (uint32_t)class_hash(c->cap_bps, c->links, c->nlinks) & net->ctab_mask;
  while (net->ctab[i] != SIM_NONE) i = (i + 1) & net->ctab_mask;
  net->ctab[i] = ci;
}

static uint32_t class_get(hs_net *net, double cap, const uint32_t *links, uint32_t n) {
  uint32_t i = (uint32_t)class_hash(cap, links, n) & net->ctab_mask;
  for (; net->ctab[i] != SIM_NONE; i = (i + 1) & net->ctab_mask)
    if (class_is(&net->classes[net->ctab[i]], cap, links, n)) return net->ctab[i];

  if (net->nclasses == net->capclasses) {
    net->capclasses = net->capclasses ? 2 * net->capclasses : 8;
    net->classes = hs_reallocarray(net->classes, net->capclasses, sizeof *net->classes);
  }
  uint32_t ci = net->nclasses++;
  sim_class *c = &net->classes[ci];
  memset(c, 0, sizeof *c);
  c->cap_bps = cap;
  c->nlinks = n;
  if (n) {
    c->links = hs_reallocarray(NULL, n, sizeof *links);
    memcpy(c->links, links, n * sizeof *links);
  }
  c->apos = SIM_NONE;
  c->hpos = SIM_NONE;
  net->st.classes = net->nclasses;

  if (2 * (uint64_t)net->nclasses > net->ctab_mask + 1ULL) { /* keep load <= 1/2 */
    uint32_t size = 2 * (net->ctab_mask + 1);
    hs_free(net->ctab);
    net->ctab = hs_reallocarray(NULL, size, sizeof *net->ctab);
    for (uint32_t k = 0; k < size; k++) net->ctab[k] = SIM_NONE;
    net->ctab_mask = size - 1;
    for (uint32_t k = 0; k < net->nclasses; k++) ctab_insert(net, k);
  } else {
    net->ctab[i] = ci;
  }
  return ci;
}

/* The class's first finisher: the smaller of the run's front and the heap's
 * top (the run's front is always a live flow). NULL when the class is empty. */
static const sim_hent *class_top(const sim_class *c) {
  const sim_hent *h = c->heap.n ? &c->heap.a[0] : NULL;
  if (fifo_empty(&c->run)) return h;
  if (!h) return &c->front;
  return sim_hent_less(h, &c->front) ? h : &c->front;
}

/* The run's front changed: cache its (fv, seq, slot). */
static void run_front_load(const hs_net *net, sim_class *c) {
  if (fifo_empty(&c->run)) return;
  uint32_t slot = fifo_front(&c->run);
  const sim_flow *f = &net->flows[slot];
  c->front = (sim_hent){f->t, f->seq, slot};
}

/* One flow more or less in the class, and on each of its links. */
static void class_count(hs_net *net, sim_class *c, int delta) {
  c->nflows += (uint32_t)delta;
  for (uint32_t i = 0; i < c->nlinks; i++) net->links[c->links[i]].nflows += (uint64_t)(int64_t)delta;
}

/* entry: the flow's (generation << 32 | slot), from its lane: reading its
 * generation from gens[] was a cache miss per admission. */
static void class_push(hs_net *net, sim_class *c, uint64_t entry) {
  uint32_t slot = (uint32_t)entry;
  sim_flow *f = &net->flows[slot];
  class_count(net, c, 1);
  if (fifo_empty(&c->run) || c->back_fv < f->t || (c->back_fv == f->t && c->back_seq < f->seq)) {
    if (fifo_empty(&c->run)) c->front = (sim_hent){f->t, f->seq, slot};
    fifo_push(&c->run, entry);
    c->back_fv = f->t;
    c->back_seq = f->seq;
    f->where = SIM_W_RUN;
  } else {
    sim_heap_push(&c->heap, flow_pos(net), f->t, f->seq, slot); /* sets f->where */
  }
}

/* Remove the class's first finisher; returns it. */
static sim_hent class_pop(hs_net *net, sim_class *c) {
  const sim_hent *t = class_top(c);
  HS_ASSERT(t, "pop from a non-empty class");
  sim_hent e = *t;
  if (t != &c->front) {
    sim_heap_remove(&c->heap, flow_pos(net), 0);
  } else {
    fifo_advance(net, &c->run);
    run_front_load(net, c);
  }
  class_count(net, c, -1);
  return e;
}

/* Advance the class clock to `now` at its current rate. Never past the first
 * finishing flow: rounding must not make a flow look over-complete. */
static void class_sync(sim_class *c, double now) {
  if (c->nflows == 0) {
    c->v = 0;
    c->t0 = now;
    return;
  }
  if (now > c->t0) {
    double top = class_top(c)->key;
    double v = c->rate_bps == INFINITY ? top : c->v + c->rate_bps / 8.0 * (now - c->t0);
    c->v = v < top ? v : top;
    c->t0 = now;
  }
}

/* Virtual clock at `now` without changing the class. */
static double class_v_at(const sim_class *c, double now) {
  if (c->nflows == 0 || !(now > c->t0)) return c->v;
  double top = class_top(c)->key;
  double v = c->rate_bps == INFINITY ? top : c->v + c->rate_bps / 8.0 * (now - c->t0);
  return v < top ? v : top;
}

static double class_next_time(const sim_class *c) {
  if (c->nflows == 0) return INFINITY;
  double left = class_top(c)->key - c->v;
  if (left <= 0 || c->rate_bps == INFINITY) return c->t0;
  if (!(c->rate_bps > 0)) return INFINITY;
  return c->t0 + left * 8.0 / c->rate_bps;
}

static bool ord_less(const sim_ord *a, const sim_ord *b) {
  return a->cap < b->cap || (a->cap == b->cap && a->ci < b->ci);
}

/* Position of x in the sorted order: the first entry not less than it. */
static uint32_t ord_find(const hs_net *net, sim_ord x) {
  uint32_t lo = 0, hi = net->nord;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ord_less(&net->ord[mid], &x))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* O(log K) to find, O(K) to shift: within the filling's own O(K log K). */
static void ord_insert(hs_net *net, uint32_t ci) {
  if (net->nord == net->capord) {
    net->capord = net->capord ? 2 * net->capord : 8;
    net->ord = hs_reallocarray(net->ord, net->capord, sizeof *net->ord);
  }
  sim_ord x = {net->classes[ci].cap_bps, ci};
  uint32_t i = ord_find(net, x);
  memmove(&net->ord[i + 1], &net->ord[i], (net->nord - i) * sizeof *net->ord);
  net->ord[i] = x;
  net->nord++;
}

static void ord_remove(hs_net *net, uint32_t ci) {
  uint32_t i = ord_find(net, (sim_ord){net->classes[ci].cap_bps, ci});
  HS_ASSERT(i < net->nord && net->ord[i].ci == ci, "an active class is in the order");
  net->nord--;
  memmove(&net->ord[i], &net->ord[i + 1], (net->nord - i) * sizeof *net->ord);
}

static void class_activate(hs_net *net, uint32_t ci) {
  sim_class *c = &net->classes[ci];
  HS_ASSERT(c->apos == SIM_NONE, "class activated twice");
  if (net->nactive == net->capactive) {
    net->capactive = net->capactive ? 2 * net->capactive : 8;
    net->active = hs_reallocarray(net->active, net->capactive, sizeof *net->active);
  }
  c->apos = net->nactive;
  net->active[net->nactive++] = ci;
  c->rate_bps = 0; /* set by the next filling */
  if (c->nlinks) ord_insert(net, ci);
  sim_heap_push(&net->chead, chead_pos(net), INFINITY, 0, ci);
}

static void class_deactivate(hs_net *net, uint32_t ci) {
  sim_class *c = &net->classes[ci];
  HS_ASSERT(c->apos != SIM_NONE && c->nflows == 0, "only an active, empty class deactivates");
  uint32_t last = net->active[--net->nactive];
  net->active[c->apos] = last;
  net->classes[last].apos = c->apos;
  c->apos = SIM_NONE;
  if (c->nlinks) ord_remove(net, ci);
  c->run.head = c->run.tail; /* every entry left is a cancelled flow's */
  c->run.dead = 0;
  sim_heap_remove(&net->chead, chead_pos(net), c->hpos);
  c->hpos = SIM_NONE;
  c->rate_bps = 0;
  c->v = 0;
}

/* Write the class's key in place (the heap is restored by the caller). */
static void class_write_key(hs_net *net, sim_class *c) {
  HS_ASSERT(c->nflows > 0, "a keyed class has flows");
  sim_hent *e = &net->chead.a[c->hpos];
  e->key = class_next_time(c);
  e->seq = class_top(c)->seq;
  c->dirty = false;
}

/* Restore the class heap after keys were written in place: O(K) (Floyd),
 * within the filling's own cost, and one comparison for two classes, where
 * one heap_update per class took an unpredictable branch (up or down). */
static void chead_heapify(hs_net *net) {
  sim_heap *h = &net->chead;
  if (h->n == 2) {
    if (sim_hent_less(&h->a[1], &h->a[0])) {
      sim_hent e = h->a[0];
      h->a[0] = h->a[1];
      h->a[1] = e;
      net->classes[h->a[0].item].hpos = 0;
      net->classes[h->a[1].item].hpos = 1;
    }
    return;
  }
  for (uint32_t i = h->n / 2; i-- > 0;) sim_heap_down(h, chead_pos(net), i);
}

/* ---- scratch buffers -------------------------------------------------- */

static uint32_t *scratch(hs_net *net, size_t n) {
  if (n > net->capscratch) {
    net->capscratch = (uint32_t)(n > 2 * (size_t)net->capscratch ? n : 2 * (size_t)net->capscratch);
    net->scratch = hs_reallocarray(net->scratch, net->capscratch, sizeof *net->scratch);
  }
  return net->scratch;
}

/* ---- max-min filling -------------------------------------------------- */

static bool class_crosses(const sim_class *c, uint32_t l) {
  for (uint32_t i = 0; i < c->nlinks; i++)
    if (c->links[i] == l) return true;
  return false;
}

/* Freeze the class at `rate`: take its flows and their bandwidth off its
 * links, except `full` (the bottleneck, zeroed by the caller afterwards). */
static void freeze(hs_net *net, sim_class *c, double rate, uint32_t full) {
  double n = (double)c->nflows;
  c->frozen = true;
  c->new_rate = rate;
  for (uint32_t i = 0; i < c->nlinks; i++) {
    if (c->links[i] == full) continue;
    sim_link *L = &net->links[c->links[i]];
    if (rate < INFINITY) { /* only an infinite link carries an infinite rate */
      L->rem -= n * rate;
      if (L->rem < 0) L->rem = 0;
    }
    L->users -= n;
  }
}

/* Progressive filling over the active classes, then apply the new rates at
 * `now`: classes whose rate changes first advance their clock at the old rate. */
static void rates_update(hs_net *net, double now) {
  net->st.rate_updates++;
  for (uint32_t l = 0; l < net->nlinks; l++) {
    sim_link *L = &net->links[l];
    if (now > L->t_last) L->bytes += L->load_bps / 8.0 * (now - L->t_last);
    L->t_last = now;
    L->rem = L->bw_bps;
    L->users = (double)L->nflows; /* exact, as the sum over its classes was */
  }
  for (uint32_t k = 0; k < net->nactive; k++) {
    sim_class *c = &net->classes[net->active[k]];
    c->frozen = c->nlinks == 0;
    if (c->frozen) c->new_rate = c->cap_bps;
  }
  const sim_ord *order = net->ord;
  uint32_t m = net->nord;

  uint32_t next = 0, left = m;
  while (left > 0) {
    uint32_t best_l = SIM_NONE;
    double best = INFINITY;
    for (uint32_t l = 0; l < net->nlinks; l++) {
      const sim_link *L = &net->links[l];
      if (L->users > 0) {
        double share = L->rem / L->users;
        if (best_l == SIM_NONE || share < best) {
          best = share;
          best_l = l;
        }
      }
    }
    HS_ASSERT(best_l != SIM_NONE, "an unfrozen class crosses a link with users");
    while (net->classes[order[next].ci].frozen) next++;
    sim_class *cheap = &net->classes[order[next].ci];
    if (cheap->cap_bps <= best) {
      freeze(net, cheap, cheap->cap_bps, SIM_NONE);
      left--;
    } else {
      for (uint32_t k = next; k < m; k++) {
        sim_class *c = &net->classes[order[k].ci];
        if (!c->frozen && class_crosses(c, best_l)) {
          freeze(net, c, best, best_l);
          left--;
        }
      }
      net->links[best_l].users = 0;
      net->links[best_l].rem = 0;
    }
  }

  for (uint32_t l = 0; l < net->nlinks; l++) net->links[l].load_bps = 0;
  bool rekeyed = false;
  for (uint32_t k = 0; k < net->nactive; k++) {
    sim_class *c = &net->classes[net->active[k]];
    if (c->new_rate != c->rate_bps) {
      class_sync(c, now);
      c->rate_bps = c->new_rate;
      c->dirty = true;
    }
    for (uint32_t i = 0; i < c->nlinks; i++)
      net->links[c->links[i]].load_bps += (double)c->nflows * c->rate_bps;
    if (c->dirty) {
      class_write_key(net, c);
      rekeyed = true;
    }
  }
  if (rekeyed) chead_heapify(net);
}

/* ---- the network's engine event --------------------------------------- */

static void net_event(hs_engine *eng, void *subject, uint64_t arg);

static void schedule_next(hs_net *net) {
  double t = INFINITY;
  if (net->lhead.n) t = net->lhead.a[0].key;
  if (net->chead.n && net->chead.a[0].key < t) t = net->chead.a[0].key;
  if (t == INFINITY) {
    if (net->ev) hs_engine_cancel(net->eng, net->ev);
    net->ev = 0;
    return;
  }
  if (net->ev) {
    if (t != net->ev_time) {
      bool ok = hs_engine_reschedule(net->eng, net->ev, t);
      HS_ASSERT(ok, "the network's pending event id is live");
    }
  } else {
    net->ev = hs_engine_schedule_apart(net->eng, t, net->prio, net_event, net, 0);
  }
  net->ev_time = t;
}

/* The flow ends: its id goes stale at once (generation bumped), but its slot
 * is handed back by slot_release, once nothing reads its record any more. */
static void flow_end(hs_net *net, uint32_t slot) {
  net->flows[slot].where = SIM_W_FREE;
  uint32_t gen = net->gens[slot] + 1;
  if (gen == 0) gen = 1;
  net->gens[slot] = gen;
}

static void slot_release(hs_net *net, uint32_t slot) {
  net->freed++;
  if (net->nfree == net->capfree) {
    net->capfree = net->capfree ? 2 * net->capfree : 64;
    net->free_slots = hs_reallocarray(net->free_slots, net->capfree, sizeof *net->free_slots);
  }
  net->free_slots[net->nfree++] = slot;
}

/* When no flow is left, hand out the slots in ascending order again: a burst
 * of transfers (10^6 downloads at a round's start) then writes its flow
 * records in sequence, and admits and completes them in sequence, instead of
 * at the random slots the last completions freed. O(slots), done only after
 * slots/2 flows were freed since the last time (O(1) amortized per flow).
 * Not while callbacks are due (their slots are not on the stack yet). */
static void maybe_reorder_free(hs_net *net) {
  if (net->st.flows_active || net->st.flows_latent || net->ndone || net->nslots < 64 ||
      net->freed < net->nslots / 2)
    return;
  HS_ASSERT(net->nfree == net->nslots, "an idle network has every slot free");
  for (uint32_t k = 0; k < net->nslots; k++) {
    uint32_t slot = net->nslots - 1 - k; /* the top of the stack is slot 0 */
    net->free_slots[k] = slot;
  }
  net->freed = 0;
}

static void push_done(hs_net *net, uint32_t slot) {
  if (net->ndone == net->capdone) {
    net->capdone = net->capdone ? 2 * net->capdone : 16;
    net->done = hs_reallocarray(net->done, net->capdone, sizeof *net->done);
  }
  net->done[net->ndone++] = slot;
}

static void admit(hs_net *net, uint64_t entry, double now) {
  uint32_t slot = (uint32_t)entry;
  sim_flow *f = &net->flows[slot];
  uint32_t ci = sim_intern_at(&net->kinds, f->kind)->tag;
  sim_class *c = &net->classes[ci];
  if (c->nflows == 0) {
    class_sync(c, now); /* restart the clock at 0 */
    class_activate(net, ci);
    c = &net->classes[ci];
  } else {
    class_sync(c, now);
  }
  f->t = c->v + f->bytes;
  class_push(net, c, entry);
  c->dirty = true;
  net->st.flows_latent--;
  net->st.flows_active++;
}

/* Is any class other than the class heap's top due at `now`? */
static bool others_due(const sim_heap *h, double now) {
  return (h->n > 1 && h->a[1].key <= now) || (h->n > 2 && h->a[2].key <= now);
}

static void net_event(hs_engine *eng, void *subject, uint64_t arg) {
  (void)arg;
  hs_net *net = subject;
  double now = hs_engine_now(eng);
  net->ev = 0;
  net->st.events++;
  HS_ASSERT(net->ndone == 0, "callbacks of the last event have run");
  bool changed = false;

  /* Completions first, one flow at a time by (time, seq) across classes. A
   * class whose next flow is not due, when no other class is either, keeps
   * its stale key: the rate update below re-keys it (dirty) once. */
  while (net->chead.n && net->chead.a[0].key <= now) {
    uint32_t ci = net->chead.a[0].item;
    sim_class *c = &net->classes[ci];
    sim_hent top = class_pop(net, c);
    c->v = top.key; /* exact: the flow is done */
    c->t0 = now;
    sim_flow *f = &net->flows[top.item];
    net->st.bytes_delivered += f->bytes;
    net->st.flows_completed++;
    net->st.flows_active--;
    flow_end(net, top.item);
    if (sim_intern_at(&net->kinds, f->kind)->fn) {
      push_done(net, top.item);
    } else {
      sim_intern_put(&net->kinds, f->kind);
      slot_release(net, top.item);
    }
    changed = true;
    if (c->nflows == 0) {
      class_deactivate(net, ci);
      continue;
    }
    double t = class_next_time(c);
    if (t > now && !others_due(&net->chead, now)) {
      c->dirty = true;
      break;
    }
    sim_heap_update(&net->chead, chead_pos(net), c->hpos, t, class_top(c)->seq);
  }
  /* Then admissions: a flow arriving now does not share with one leaving now. */
  while (net->lhead.n && net->lhead.a[0].key <= now) {
    uint32_t li = net->lhead.a[0].item;
    sim_fifo *q = &net->lanes[li].q;
    uint64_t entry = fifo_front_entry(q);
    fifo_advance(net, q);
    admit(net, entry, now);
    lane_refresh(net, li);
    changed = true;
  }
  if (changed) rates_update(net, now);
  schedule_next(net);

  /* Callbacks last, on a consistent state; they may start or cancel flows
   * (never this handler re-entrantly), so iterate over a fixed count. A slot
   * goes back to the free stack once its record is read, just before its
   * callback: a callback's transfer never takes a slot whose callback is still
   * due, and the slots are reordered before the last callback when the
   * network is idle then (a round's last upload starting the next round). */
  uint32_t nd = net->ndone;
  for (uint32_t i = 0; i < nd; i++) {
    uint32_t slot = net->done[i];
    const sim_flow *f = &net->flows[slot];
    uint32_t k = f->kind;
    uint64_t a = f->arg;
    hs_event_fn fn = sim_intern_at(&net->kinds, k)->fn;
    void *subj = sim_intern_at(&net->kinds, k)->subject;
    slot_release(net, slot);
    net->ndone = nd - i - 1;
    maybe_reorder_free(net);
    fn(eng, subj, a);
    sim_intern_put(&net->kinds, k);
  }
  maybe_reorder_free(net);
}

/* ---- public API -------------------------------------------------------- */

hs_net *hs_net_create(hs_engine *eng) {
  HS_ASSERT(eng, "a network needs an engine");
  hs_net *net = hs_calloc(1, sizeof *net);
  net->eng = eng;
  net->ctab_mask = 15;
  net->ctab = hs_reallocarray(NULL, 16, sizeof *net->ctab);
  for (uint32_t i = 0; i < 16; i++) net->ctab[i] = SIM_NONE;
  net->ltab_mask = 15;
  net->ltab = hs_reallocarray(NULL, 16, sizeof *net->ltab);
  for (uint32_t i = 0; i < 16; i++) net->ltab[i] = SIM_NONE;
  return net;
}

void hs_net_destroy(hs_net *net) {
  if (!net) return;
  if (net->ev) hs_engine_cancel(net->eng, net->ev);
  for (uint32_t l = 0; l < net->nlinks; l++) hs_free(net->links[l].name);
  for (uint32_t c = 0; c < net->nclasses; c++) {
    hs_free(net->classes[c].links);
    hs_free(net->classes[c].heap.a);
    hs_free(net->classes[c].run.a);
  }
  hs_free(net->links);
  hs_free(net->reverse);
  hs_free(net->flows);
  hs_free(net->free_slots);
  hs_free(net->gens);
  hs_free(net->classes);
  hs_free(net->ctab);
  hs_free(net->active);
  for (uint32_t l = 0; l < net->nlanes; l++) hs_free(net->lanes[l].q.a);
  hs_free(net->lanes);
  hs_free(net->ltab);
  hs_free(net->lhead.a);
  hs_free(net->chead.a);
  hs_free(net->scratch);
  hs_free(net->ord);
  hs_free(net->done);
  sim_intern_fini(&net->kinds);
  hs_free(net);
}

void hs_net_set_priority(hs_net *net, int priority) { net->prio = priority; }

static int link_add(hs_net *net, const char *name, double bandwidth_bps, double latency_s,
                    uint32_t reverse) {
  if (net->nlinks == net->caplinks) {
    net->caplinks = net->caplinks ? 2 * net->caplinks : 4;
    net->links = hs_reallocarray(net->links, net->caplinks, sizeof *net->links);
    net->reverse = hs_reallocarray(net->reverse, net->caplinks, sizeof *net->reverse);
  }
  sim_link *L = &net->links[net->nlinks];
  memset(L, 0, sizeof *L);
  L->name = name ? hs_strdup(name) : NULL;
  L->bw_bps = bandwidth_bps;
  L->lat_s = latency_s;
  L->t_last = hs_engine_now(net->eng);
  net->reverse[net->nlinks] = reverse;
  return (int)net->nlinks++;
}

int hs_net_add_link(hs_net *net, const char *name, double bandwidth_bps, double latency_s) {
  if (!(bandwidth_bps > 0) || !(latency_s >= 0) || !isfinite(latency_s)) return HS_EINVAL;
  return link_add(net, name, bandwidth_bps, latency_s, net->nlinks);
}

/* Two plain links that name each other: max-min fairness then holds per
 * direction with no change to the filling, and a half-duplex scenario adds
 * exactly the links it added before. */
int hs_net_add_duplex_link(hs_net *net, const char *name, double bandwidth_bps,
                           double latency_s) {
  if (!(bandwidth_bps > 0) || !(latency_s >= 0) || !isfinite(latency_s)) return HS_EINVAL;
  int fwd = link_add(net, name, bandwidth_bps, latency_s, net->nlinks + 1);
  link_add(net, name, bandwidth_bps, latency_s, (uint32_t)fwd);
  return fwd;
}

size_t hs_net_link_count(const hs_net *net) { return net->nlinks; }

int hs_net_link_find(const hs_net *net, const char *name) {
  for (uint32_t l = 0; l < net->nlinks; l++)
    if (net->links[l].name && name && !strcmp(net->links[l].name, name)) return (int)l;
  return HS_ENOENT;
}

static const sim_link *link_at(const hs_net *net, int link) {
  HS_ASSERT(link >= 0 && (uint32_t)link < net->nlinks, "link index from hs_net_add_link");
  return &net->links[link];
}

double hs_net_link_bandwidth_bps(const hs_net *net, int link) { return link_at(net, link)->bw_bps; }
int hs_net_link_reverse(const hs_net *net, int link) {
  (void)link_at(net, link);
  return (int)net->reverse[link];
}
double hs_net_link_latency_s(const hs_net *net, int link) { return link_at(net, link)->lat_s; }
double hs_net_link_load_bps(const hs_net *net, int link) { return link_at(net, link)->load_bps; }

double hs_net_link_bytes(const hs_net *net, int link) {
  const sim_link *L = link_at(net, link);
  double now = hs_engine_now(net->eng);
  return now > L->t_last ? L->bytes + L->load_bps / 8.0 * (now - L->t_last) : L->bytes;
}

static int cmp_u32(const void *x, const void *y) {
  uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
  return a < b ? -1 : (a > b);
}

hs_flow_id hs_net_transfer(hs_net *net, double bytes, double cap_bps, double latency_s,
                           const int *shared_links, size_t nlinks, hs_event_fn on_done,
                           void *subject, uint64_t arg) {
  if (!(bytes >= 0) || !isfinite(bytes) || !(cap_bps > 0) || !(latency_s >= 0) ||
      !isfinite(latency_s) || (nlinks && !shared_links) || nlinks > UINT32_MAX)
    return 0;
  uint32_t *ls = scratch(net, nlinks);
  for (size_t i = 0; i < nlinks; i++) {
    if (shared_links[i] < 0 || (uint32_t)shared_links[i] >= net->nlinks) return 0;
    ls[i] = (uint32_t)shared_links[i];
  }
  if (nlinks > 1) qsort(ls, nlinks, sizeof *ls, cmp_u32);
  uint32_t n = 0;
  for (size_t i = 0; i < nlinks; i++)
    if (n == 0 || ls[n - 1] != ls[i]) ls[n++] = ls[i];
  double path = latency_s;
  for (uint32_t i = 0; i < n; i++) path += net->links[ls[i]].lat_s;

  uint32_t ci = class_get(net, cap_bps, ls, n);
  uint32_t li = lane_get(net, path);
  uint32_t kind = sim_intern_get(&net->kinds, on_done, subject, ci);
  uint64_t seq = ++net->seq;
  uint32_t slot;
  uint32_t gen = 1;
  if (net->nfree) {
    slot = net->free_slots[--net->nfree];
    gen = net->gens[slot];
  } else {
    HS_ASSERT(net->nslots < SIM_MAX_SLOTS, "fewer than 2^31 flows at once");
    if (net->nslots == net->capslots) {
      net->capslots = net->capslots ? 2 * net->capslots : 64;
      net->flows = hs_reallocarray(net->flows, net->capslots, sizeof *net->flows);
      net->gens = hs_reallocarray(net->gens, net->capslots, sizeof *net->gens);
    }
    slot = net->nslots++;
    net->gens[slot] = gen;
  }
  /* Write-only: the slot is likely cold, and stores do not wait for it. */
  double t_admit = hs_engine_now(net->eng) + path;
  net->flows[slot] = (sim_flow){.bytes = bytes, .t = t_admit, .seq = seq, .arg = arg,
                                .kind = kind, .where = SIM_W_LATENT | li};
  sim_lane *ln = &net->lanes[li];
  fifo_push(&ln->q, (uint64_t)gen << 32 | slot);
  if (ln->hpos == SIM_NONE) lane_refresh(net, li);
  net->st.flows_started++;
  net->st.flows_latent++;
  schedule_next(net);
  if (net->nfree) { /* PF_AHEAD transfers ahead: in a burst one was too late */
    uint32_t k = net->nfree > PF_AHEAD ? net->nfree - PF_AHEAD : 0;
    uint32_t next = net->free_slots[k];
    const sim_flow *p = &net->flows[next];
    SIM_PREFETCH_W(p);
    SIM_PREFETCH_W((const char *)p + sizeof *p - 1); /* a record may straddle two lines */
    SIM_PREFETCH(&net->gens[next]);
  }
  return ((uint64_t)gen << 32) | ((uint64_t)slot + 1);
}

static const sim_flow *flow_lookup(const hs_net *net, hs_flow_id id, uint32_t *slot_out) {
  uint64_t s = id & 0xffffffffULL;
  if (s == 0 || s > net->nslots) return NULL;
  const sim_flow *f = &net->flows[s - 1];
  if (f->where == SIM_W_FREE || net->gens[s - 1] != (uint32_t)(id >> 32)) return NULL;
  if (slot_out) *slot_out = (uint32_t)(s - 1);
  return f;
}

bool hs_net_cancel(hs_net *net, hs_flow_id id) {
  uint32_t slot;
  const sim_flow *f = flow_lookup(net, id, &slot);
  if (!f) return false;
  double now = hs_engine_now(net->eng);
  uint32_t where = f->where;
  uint32_t ci = sim_intern_at(&net->kinds, f->kind)->tag;
  sim_intern_put(&net->kinds, f->kind);
  if (w_latent(where)) {
    uint32_t li = where & ~SIM_W_LATENT;
    net->st.flows_latent--;
    flow_end(net, slot);
    slot_release(net, slot);
    net->lanes[li].q.dead++;
    if (fifo_clean(net, &net->lanes[li].q)) lane_refresh(net, li);
  } else {
    sim_class *c = &net->classes[ci];
    class_sync(c, now);
    double sent = f->bytes - (f->t - c->v);
    net->st.bytes_cancelled += sent > 0 ? sent : 0;
    if (where != SIM_W_RUN) sim_heap_remove(&c->heap, flow_pos(net), where);
    class_count(net, c, -1);
    net->st.flows_active--;
    flow_end(net, slot);
    slot_release(net, slot);
    if (where == SIM_W_RUN) {
      c->run.dead++;
      if (fifo_clean(net, &c->run)) run_front_load(net, c); /* skip it if at the front */
    }
    if (c->nflows == 0)
      class_deactivate(net, ci);
    else
      c->dirty = true; /* its first finisher may have changed */
    /* Cancels are rare: update rates at once rather than defer to an event. */
    rates_update(net, now);
  }
  net->st.flows_cancelled++;
  schedule_next(net);
  maybe_reorder_free(net);
  return true;
}

double hs_net_flow_rate(const hs_net *net, hs_flow_id id) {
  const sim_flow *f = flow_lookup(net, id, NULL);
  if (!f || !w_active(f->where)) return 0;
  uint32_t ci = sim_intern_at(&net->kinds, f->kind)->tag;
  return net->classes[ci].rate_bps;
}

double hs_net_flow_remaining_bytes(const hs_net *net, hs_flow_id id) {
  const sim_flow *f = flow_lookup(net, id, NULL);
  if (!f) return NAN;
  if (w_latent(f->where)) return f->bytes;
  const sim_class *c = &net->classes[sim_intern_at(&net->kinds, f->kind)->tag];
  double left = f->t - class_v_at(c, hs_engine_now(net->eng));
  return left > 0 ? left : 0;
}

bool hs_net_flow_pending(const hs_net *net, hs_flow_id id) { return flow_lookup(net, id, NULL) != NULL; }

void hs_net_get_stats(const hs_net *net, hs_net_stats *out) {
  *out = net->st;
  out->classes_active = net->nactive;
  out->kinds = net->kinds.live;
}
