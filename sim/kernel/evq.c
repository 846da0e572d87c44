/* evq.c: the pending-event set, a ladder of calendars over a small heap.
 *
 * Tiers, in time order (the invariant everything rests on):
 *   heap    a 4-ary min-heap of the entries due first;
 *   rungs   rung[nr-1] (innermost) .. rung[0]: each a calendar, bucket i
 *           (cur <= i < nbk) an unsorted chain of 16-entry chunks holding its
 *           entries with floor(d(t)) = i, d(t) = (t - base) * inv_w;
 *   far     an unsorted chain of chunks with the entries beyond rung 0.
 * Rung 0 is spread from far; rung r+1 from one bucket of rung r (a bucket of
 * more than SPLIT_MIN entries is spread over a finer rung of its own instead
 * of being poured into the heap) or from the heap. Rung r+1 thus holds only
 * entries before rung r's current bucket (d_r < cur_r), and its last bucket
 * takes everything up to that boundary. An entry belongs to the heap when d
 * of the innermost rung is below its cur; else to the innermost rung whose
 * parent has not reached it; else to rung 0's bucket or far. d is monotone in
 * t (a subtraction and a multiplication, each correctly rounded), so every
 * heap entry is strictly earlier than every rung entry, rung r+1's than rung
 * r's, bucket i's than bucket i+1's, and all of them than far's: the heap top
 * is the global minimum of (time, priority, seq), and the order is exactly a
 * single heap's (byte-identical runs).
 * When the heap is empty, the innermost rung's next non-empty bucket is poured
 * into it (Floyd heapify, O(m)) or split; a used-up inner rung is dropped at
 * once (its last bucket may reach past its parent's boundary); when rung 0 is
 * used up, far is spread over a new rung 0: base = its least time, nbk =
 * |far| / 64 buckets (at least 1), inv_w chosen so its greatest time falls in
 * the last bucket. Why rungs: a calendar's equal-width buckets are sized on
 * the extremes, so one late event (the network's next completion 300 s away
 * while 10^6 compute events fall within 2 s) put every event in one bucket
 * and the heap grew to 10^4-10^5 entries (sift_down then a large share of
 * hs-bench-pma at 10^6; sim/doc/performance.md has the figures).
 * If the heap grows past RESPREAD_MIN and twice its size at the last pour
 * (a calendar sized on a few events, and most new ones earlier than its next
 * bucket: a PMA round's compute events pushed type by type, each type's
 * earlier than the one before), it is spread over a new innermost rung, O(hn)
 * once per doubling. At most SIM_EVQ_RUNGS rungs; beyond, or when nothing can
 * be divided, the old rule applies: everything is respread over a new rung 0,
 * at most once per size/2 heap pushes (O(1) amortized). Every entry is moved
 * a bounded number of times (far -> rungs -> heap, at most once per rung).
 * Degenerate inputs (all events at one instant) cannot be divided: the heap
 * then costs O(log n), as the plain heap did, never worse.
 * When a bucket is poured, the engine's records of its events are prefetched
 * together (pf_base): at 10^6 pending each is a cache miss, now overlapped.
 *
 * Tuning (the hold model's figures for each step are in
 * sim/doc/performance.md, "The calendar's tuning"): records prefetched when
 * a bucket is poured, the key passed as scalars (no stack copy), 64 entries
 * per bucket (16 and 256 were slower at 10^6 pending); prefetching the next
 * heap entries' records on every dispatch was dropped (slower).
 * Rejected: a binary heap with keys split from payload (the heap already holds
 * only keys + a 32-bit slot; the misses are per level, not per byte); a radix
 * heap on the 128-bit keys (monotone, fine for the clock, but its buckets by
 * the highest differing bit of the time's bits mix ~2^52 values in the top
 * bucket: refills re-sort the same entries many times); sorted bucket lists of
 * the classic calendar queue (O(bucket) inserts). Rungs (a ladder queue) were
 * first rejected as needed for degenerate spans only; PMA at 10^6 devices
 * showed otherwise (above); they reuse the calendar's buckets and chunks.
 * The hold model's exponential times put ~900 events in the first buckets of
 * a calendar over 10^6: with SPLIT_MIN 256 those are split too (faster at
 * 10^6 pending; 1024 left them whole).
 * Also tried at hs-bench-pma 10^6 devices (where poured buckets are small
 * and the heap holds tens of entries at a pop) and dropped, no gain beyond
 * noise: sorting each poured
 * bucket (insertion-sorted blocks of 16, then merges) and popping it in O(1)
 * beside a heap for later arrivals (the sort cost what the sifts did; hold
 * 10^6 slightly worse); Floyd's bottom-up sift for pop (burst model
 * slower); PER_BUCKET/SPLIT_MIN 32/128, 16/64, 64/128, 32/64; a coarser
 * rung 0 at a rebuild (1024 or 4096 per bucket, the splits doing the rest).
 *
 * Memory: 20 bytes per entry in the buckets and far (packed, see `packed`;
 * 24 in the small heap), plus up to one partly filled 324-byte chunk per
 * non-empty bucket and 16 bytes per bucket header (nbk <= pending / 64 per
 * rung; the rungs' arrays are kept for reuse). Far is made of the same
 * chunks: a rebuild frees its chunks as it spreads them, so the buckets reuse
 * them (an array for far doubled the queue's peak). The chunk pool keeps its
 * peak size. At hs-bench-pma's 10^6-event burst (nearly all in far, in full
 * chunks) that is about 20 bytes per pending event (packed entries; 24-byte
 * ones cost more memory for the same CPU time). */
#include "evq.h"

#include <assert.h>
#include <math.h>

#include "base/hs_alloc.h"

#define SIM_EVQ_NIL UINT32_MAX
#define CHUNK_N 16    /* entries per chunk */
#define PER_BUCKET 64 /* far entries per bucket at a rebuild */
#define RESPREAD_MIN 4096 /* heaps this small are cheap: never spread them */
#define SPLIT_MIN 256     /* a bucket larger than this is spread over a new rung */

/* An entry as it waits in a bucket: the key and slot in 20 bytes, without
 * sim_evq_entry's 4 bytes of padding (a sixth of a pending event's queue
 * memory); read and written by memcpy, so no field needs its alignment. */
typedef struct packed {
  uint32_t w[5];
} packed;

struct sim_evq_chunk {
  uint32_t next;
  packed e[CHUNK_N];
};

static inline void pk_put(packed *p, uint64_t tb, uint64_t ps, uint32_t slot) {
  memcpy(&p->w[0], &tb, sizeof tb);
  memcpy(&p->w[2], &ps, sizeof ps);
  p->w[4] = slot;
}

static inline sim_evq_entry pk_get(const packed *p) {
  sim_evq_entry e;
  memcpy(&e.tb, &p->w[0], sizeof e.tb);
  memcpy(&e.ps, &p->w[2], sizeof e.ps);
  e.slot = p->w[4];
  return e;
}

static inline double pk_time(const packed *p) {
  double t;
  memcpy(&t, &p->w[0], sizeof t);
  return t;
}

static inline void pk_unpack(sim_evq_entry *dst, const packed *src, size_t m) {
  for (size_t j = 0; j < m; j++) dst[j] = pk_get(&src[j]);
}

__extension__ typedef unsigned __int128 u128;

static inline int less(const sim_evq_entry *a, const sim_evq_entry *b) {
  return ((u128)a->tb << 64 | a->ps) < ((u128)b->tb << 64 | b->ps);
}

void sim_evq_init(sim_evq *q, size_t cap) {
  memset(q, 0, sizeof *q);
  q->hcap = 64;
  q->heap = hs_malloc(q->hcap * sizeof *q->heap);
  (void)cap; /* every tier grows on demand */
  q->far = (sim_evq_bucket){SIM_EVQ_NIL, SIM_EVQ_NIL, 0, 0};
  q->free_chunk = SIM_EVQ_NIL;
  q->far_lo = INFINITY;
  q->far_ok = true;
  q->nr = 1;
  q->rung[0].inv_w = 1.0;
}

void sim_evq_fini(sim_evq *q) {
  hs_free(q->heap);
  for (size_t r = 0; r < SIM_EVQ_RUNGS; r++) hs_free(q->rung[r].bk);
  hs_free(q->chunk);
  memset(q, 0, sizeof *q);
}

/* --- the heap ------------------------------------------------------------ */

static void sift_up(sim_evq_entry *h, size_t i, sim_evq_entry e) {
  while (i > 0) {
    size_t parent = (i - 1) >> 2;
    if (!less(&e, &h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

static void sift_down(sim_evq_entry *h, size_t n, size_t i, sim_evq_entry e) {
  for (;;) {
    size_t c = 4 * i + 1;
    if (c >= n) break;
    size_t best;
    if (c + 4 <= n) {
      /* All four children: a two-level tournament, which the compiler can do
       * with conditional moves instead of hard-to-predict branches. */
      size_t b01 = less(&h[c + 1], &h[c]) ? c + 1 : c;
      size_t b23 = less(&h[c + 3], &h[c + 2]) ? c + 3 : c + 2;
      best = less(&h[b23], &h[b01]) ? b23 : b01;
    } else {
      best = c;
      for (size_t k = c + 1; k < n; k++)
        if (less(&h[k], &h[best])) best = k;
    }
    if (!less(&h[best], &e)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = e;
}

static void heapify(sim_evq_entry *h, size_t n) {
  if (n < 2) return;
  for (size_t i = (n - 2) / 4 + 1; i-- > 0;) sift_down(h, n, i, h[i]);
}

static void heap_reserve(sim_evq *q, size_t n) {
  if (n <= q->hcap) return;
  while (q->hcap < n) q->hcap *= 2;
  q->heap = hs_reallocarray(q->heap, q->hcap, sizeof *q->heap);
}

/* --- buckets ------------------------------------------------------------- */

static uint32_t chunk_alloc(sim_evq *q) {
  uint32_t c = q->free_chunk;
  if (c != SIM_EVQ_NIL) {
    q->free_chunk = q->chunk[c].next;
  } else {
    if (q->nchunk == q->chunkcap) {
      assert(q->chunkcap < SIM_EVQ_NIL / 2);
      q->chunkcap = q->chunkcap ? 2 * q->chunkcap : 64;
      q->chunk = hs_reallocarray(q->chunk, q->chunkcap, sizeof *q->chunk);
    }
    c = (uint32_t)q->nchunk++;
  }
  q->chunk[c].next = SIM_EVQ_NIL;
  return c;
}

/* A new empty tail chunk for b. */
static void bucket_grow(sim_evq *q, sim_evq_bucket *b) {
  uint32_t c = chunk_alloc(q);
  if (b->tail == SIM_EVQ_NIL)
    b->head = c;
  else
    q->chunk[b->tail].next = c;
  b->tail = c;
  b->tail_n = 0;
}

static void bucket_add(sim_evq *q, sim_evq_bucket *b, sim_evq_entry e) {
  if (b->tail == SIM_EVQ_NIL || b->tail_n == CHUNK_N) bucket_grow(q, b);
  pk_put(&q->chunk[b->tail].e[b->tail_n++], e.tb, e.ps, e.slot);
  b->n++;
}

/* Appends the bucket's entries to dst (room assumed), frees its chunks,
 * empties it; returns the number of entries moved. */
static size_t bucket_drain(sim_evq *q, sim_evq_bucket *b, sim_evq_entry *dst) {
  size_t n = 0;
  for (uint32_t c = b->head; c != SIM_EVQ_NIL;) {
    sim_evq_chunk *ch = &q->chunk[c];
    uint32_t next = ch->next;
#if defined(__GNUC__)
    if (next != SIM_EVQ_NIL) __builtin_prefetch(&q->chunk[next]); /* overlap the chase */
#endif
    size_t m = next == SIM_EVQ_NIL ? b->tail_n : CHUNK_N;
    pk_unpack(dst + n, ch->e, m);
    n += m;
    ch->next = q->free_chunk;
    q->free_chunk = c;
    c = next;
  }
  assert(n == b->n);
  b->head = b->tail = SIM_EVQ_NIL;
  b->tail_n = b->n = 0;
  return n;
}

/* Detaches b's chain and returns it as *chain (b becomes empty). */
static sim_evq_bucket bucket_take(sim_evq_bucket *b) {
  sim_evq_bucket c = *b;
  *b = (sim_evq_bucket){SIM_EVQ_NIL, SIM_EVQ_NIL, 0, 0};
  return c;
}

/* Copies the next chunk of a taken chain into buf and frees that chunk (so
 * the entries may be added to other buckets at once, reusing it); returns the
 * number copied, 0 at the end. *c is the walk position (chain.head at first). */
static size_t chain_next(sim_evq *q, const sim_evq_bucket *chain, uint32_t *c,
                         sim_evq_entry buf[CHUNK_N]) {
  if (*c == SIM_EVQ_NIL) return 0;
  sim_evq_chunk *ch = &q->chunk[*c];
  uint32_t next = ch->next;
  size_t m = next == SIM_EVQ_NIL ? chain->tail_n : CHUNK_N;
  pk_unpack(buf, ch->e, m);
  ch->next = q->free_chunk;
  q->free_chunk = *c;
  *c = next;
  return m;
}

/* Moves every entry of src (taken) into dst. */
static void chain_append(sim_evq *q, sim_evq_bucket src, sim_evq_bucket *dst) {
  sim_evq_entry buf[CHUNK_N];
  uint32_t c = src.head;
  for (size_t m; (m = chain_next(q, &src, &c, buf));)
    for (size_t j = 0; j < m; j++) bucket_add(q, dst, buf[j]);
}

static inline double bucket_of(const sim_evq_rung *R, const sim_evq_entry *e) {
  return (sim_evq_time(e) - R->base) * R->inv_w;
}

static void rung_reserve(sim_evq_rung *R, size_t k) {
  if (k <= R->bkcap) return;
  R->bk = hs_reallocarray(R->bk, k, sizeof *R->bk);
  for (size_t i = R->bkcap; i < k; i++) R->bk[i] = (sim_evq_bucket){SIM_EVQ_NIL, SIM_EVQ_NIL, 0, 0};
  R->bkcap = k;
}

/* The width for k buckets from tmin to tmax (finite), so that tmax falls in the
 * last one; 0 when the span is one instant (or too small to divide). */
static double fit_inv(double tmin, double tmax, size_t k) {
  double span = tmax - tmin;
  double inv = span > 0 ? ((double)k - 0.5) / span : 0;
  if (!(isfinite(inv) && inv > 0)) return 0;
  while (span * inv >= (double)k) inv *= 1 - 0x1p-40; /* rounding */
  return inv;
}

/* Least and greatest finite time of a chain (tmin is INFINITY when it holds
 * only infinite times). */
static void chain_span(const sim_evq *q, const sim_evq_bucket *b, double *tmin, double *tmax) {
  double lo = INFINITY, hi = 0;
  for (uint32_t c = b->head; c != SIM_EVQ_NIL; c = q->chunk[c].next) {
    const sim_evq_chunk *ch = &q->chunk[c];
    size_t m = ch->next == SIM_EVQ_NIL ? b->tail_n : CHUNK_N;
    for (size_t j = 0; j < m; j++) {
      double t = pk_time(&ch->e[j]);
      if (t < lo) lo = t;
      if (t > hi && t < INFINITY) hi = t;
    }
  }
  *tmin = lo;
  *tmax = hi;
}

static inline void far_note(sim_evq *q, double t) {
  if (t < q->far_lo) q->far_lo = t;
  if (t > q->far_hi && t < INFINITY) q->far_hi = t;
}

/* Spread far over rung 0. Called with the heap empty and rung 0 the only one,
 * used up. Events at an infinite time stay in far (d = inf); when nothing else
 * is left they go to the heap, base becomes infinite, and every later push
 * then lands in the heap too (d is -inf or NaN, see sim_evq_push) until the
 * queue empties. */
static void rebuild(sim_evq *q) {
  sim_evq_rung *R = &q->rung[0];
  q->hpush = 0;
  double tmin = q->far_lo, tmax = q->far_hi;
  if (!q->far_ok) chain_span(q, &q->far, &tmin, &tmax);
  q->far_lo = INFINITY; /* far is emptied below: its span starts afresh */
  q->far_hi = 0;
  q->far_ok = true;
  if (!(tmin < INFINITY)) {
    heap_reserve(q, q->far.n);
    q->hn = q->hbase = bucket_drain(q, &q->far, q->heap);
    heapify(q->heap, q->hn);
    R->base = INFINITY;
    R->nbk = R->cur = 0;
    return;
  }
  size_t k = q->far.n / PER_BUCKET;
  if (k < 1) k = 1;
  rung_reserve(R, k);
  R->base = tmin;
  double inv = fit_inv(tmin, tmax, k);
  if (inv > 0)
    R->inv_w = inv;
  else
    k = 1; /* one instant (or a subnormal span): keep the previous width */
  R->nbk = k;
  R->cur = 0;
  /* Chunk by chunk, so far's memory is reused by the buckets as it empties. */
  sim_evq_bucket old = bucket_take(&q->far);
  sim_evq_entry buf[CHUNK_N];
  uint32_t c = old.head;
  for (size_t m; (m = chain_next(q, &old, &c, buf));)
    for (size_t j = 0; j < m; j++) {
      double d = bucket_of(R, &buf[j]);
      /* Beyond the last bucket: infinite times, or beyond a kept width. */
      if (d < (double)k) {
        bucket_add(q, &R->bk[(size_t)d], buf[j]);
      } else {
        far_note(q, sim_evq_time(&buf[j]));
        bucket_add(q, &q->far, buf[j]);
      }
    }
}

/* The rung a spread of entries earlier than the innermost rung's remaining
 * buckets goes to: a new innermost one, or the innermost itself when it is an
 * inner rung used up (then nothing lies between it and its parent, and it can
 * be replaced; so every inner rung but the innermost always has a bucket
 * left). Never rung 0: far is bounded by rung 0's end, and a new rung over the
 * same entries may end later, past entries already in far; a used-up rung 0
 * is a harmless parent (its pushes past the end go to far). NULL when the
 * ladder is full. */
static sim_evq_rung *child_rung(sim_evq *q) {
  sim_evq_rung *R = &q->rung[q->nr - 1];
  if (R->cur == R->nbk && q->nr > 1) return R;
  if (q->nr == SIM_EVQ_RUNGS) return NULL;
  return &q->rung[q->nr++];
}

/* Put e into rung R (not rung 0) whose range it lies in: the last bucket
 * takes everything up to the parent's boundary. */
static inline void rung_add(sim_evq *q, sim_evq_rung *R, sim_evq_entry e) {
  double d = bucket_of(R, &e);
  size_t i = d < (double)R->nbk ? (size_t)d : R->nbk - 1;
  bucket_add(q, &R->bk[i], e);
}

/* Spread a taken chain of n entries over [tmin, tmax] (finite, tmin < tmax
 * as fit_inv says) into rung R. */
static void rung_fill(sim_evq *q, sim_evq_rung *R, sim_evq_bucket chain, double tmin,
                      double inv, size_t k) {
  rung_reserve(R, k);
  R->base = tmin;
  R->inv_w = inv;
  R->nbk = k;
  R->cur = 0;
  sim_evq_entry buf[CHUNK_N];
  uint32_t c = chain.head;
  for (size_t m; (m = chain_next(q, &chain, &c, buf));)
    for (size_t j = 0; j < m; j++) rung_add(q, R, buf[j]);
}

/* Instead of pouring a large bucket into the heap (O(log b) per event after),
 * spread it over a finer rung of its own; false when it cannot be divided (one
 * instant) or the ladder is full, and b is left as it was. */
static bool split(sim_evq *q, sim_evq_bucket *b) {
  if (q->rung[0].base == INFINITY) return false;
  double tmin, tmax;
  chain_span(q, b, &tmin, &tmax);
  size_t k = b->n / PER_BUCKET;
  double inv = fit_inv(tmin, tmax, k);
  if (!(inv > 0) || !(tmax < INFINITY)) return false;
  sim_evq_rung *R = child_rung(q);
  if (!R) return false;
  rung_fill(q, R, bucket_take(b), tmin, inv, k);
  return true;
}

/* The heap grew far past the bucket it was poured from (a calendar sized on a
 * few events, and most new ones earlier than its next bucket): spread the
 * heap over a new innermost rung. O(hn), done only when hn doubled since the
 * last pour or spread (O(1) amortized per push). False when it cannot be
 * divided or the ladder is full. */
static bool spread_heap(sim_evq *q) {
  if (q->rung[0].base == INFINITY) return false;
  double tmin = INFINITY, tmax = 0;
  for (size_t i = 0; i < q->hn; i++) {
    double t = sim_evq_time(&q->heap[i]);
    if (t < tmin) tmin = t;
    if (t > tmax) tmax = t;
  }
  size_t k = q->hn / PER_BUCKET;
  double inv = tmax < INFINITY ? fit_inv(tmin, tmax, k) : 0;
  if (!(inv > 0)) return false;
  sim_evq_rung *R = child_rung(q);
  if (!R) return false;
  rung_reserve(R, k);
  R->base = tmin;
  R->inv_w = inv;
  R->nbk = k;
  R->cur = 0;
  for (size_t i = 0; i < q->hn; i++) rung_add(q, R, q->heap[i]);
  q->hn = q->hbase = 0;
  return true;
}

/* Everything back into far and rung 0 rebuilt over it: the fallback when the
 * heap keeps growing and the ladder is full. O(size), and allowed only after
 * size/2 pushes into the heap since rung 0 was made: O(1) amortized, also
 * when the heap is big for a reason a calendar cannot fix (one instant). */
static void respread(sim_evq *q) {
  q->far_ok = false;
  for (size_t i = 0; i < q->hn; i++) bucket_add(q, &q->far, q->heap[i]);
  q->hn = q->hbase = 0;
  for (size_t r = 0; r < q->nr; r++) {
    sim_evq_rung *R = &q->rung[r];
    for (size_t i = R->cur; i < R->nbk; i++)
      if (R->bk[i].n) chain_append(q, bucket_take(&R->bk[i]), &q->far);
    R->cur = R->nbk;
  }
  q->nr = 1;
  rebuild(q);
}

static void pour(sim_evq *q, sim_evq_bucket *b) {
  heap_reserve(q, b->n);
  q->hn = q->hbase = bucket_drain(q, b, q->heap);
#if defined(__GNUC__)
  /* These are the next events to fire: start loading their records (the
   * engine's slots, a cache miss each at 10^6 pending) all at once. */
  if (q->pf_base)
    for (size_t i = 0; i < q->hn; i++) {
      uint32_t s = q->heap[i].slot;
      size_t stride = s < SIM_EVQ_ALT ? q->pf_stride : q->pf_alt_stride;
      const char *rec = s < SIM_EVQ_ALT ? q->pf_base + (size_t)s * stride
                                        : q->pf_alt_base + (size_t)(s - SIM_EVQ_ALT) * stride;
      __builtin_prefetch(rec); /* both ends: a record may straddle two lines */
      __builtin_prefetch(rec + stride - 1);
    }
#endif
  heapify(q->heap, q->hn);
}

/* The queue is empty: the next pushes go to far and the next top sizes a
 * calendar for them (this also leaves the infinite-base mode). Done when the
 * last entry goes, so that a top of the empty queue (an engine whose events
 * are all in sorted runs, see engine.c) needs no call. (perf put 12 % of
 * hs-bench-pma 1000000:4 on the entry of those calls, but that was mostly
 * skid of the handlers' cache misses: CPU time unchanged within noise.) */
static void reset_empty(sim_evq *q) {
  q->nr = 1;
  q->rung[0].base = 0;
  q->rung[0].nbk = q->rung[0].cur = 0;
}

/* Make the heap non-empty if any entry is pending; false when none is. */
static bool refill(sim_evq *q) {
  while (q->hn == 0) {
    sim_evq_rung *R = &q->rung[q->nr - 1];
    while (R->cur < R->nbk && R->bk[R->cur].head == SIM_EVQ_NIL) R->cur++;
    if (R->cur < R->nbk) {
      sim_evq_bucket *b = &R->bk[R->cur++];
      if (b->n > SPLIT_MIN && split(q, b)) continue;
      pour(q, b);
      /* A used-up inner rung goes at once: its last bucket may reach past
       * its parent's boundary, and the heap test must use the parent's. */
      if (R->cur == R->nbk && q->nr > 1) q->nr--;
    } else if (q->nr > 1) {
      q->nr--;
    } else if (q->far.n) {
      rebuild(q);
    } else {
      reset_empty(q);
      return false;
    }
  }
  return true;
}

static void heap_grew(sim_evq *q) {
  if (q->hn > 2 * q->hbase) {
    if (spread_heap(q)) return;
    q->hbase = q->hn; /* cannot be divided now: retry when it doubled again */
  }
  if (++q->hpush > q->size / 2) respread(q);
}

void sim_evq_push(sim_evq *q, uint64_t tb, uint64_t ps, uint32_t slot) {
  double t;
  memcpy(&t, &tb, sizeof t);
  size_t r = q->nr - 1;
  sim_evq_rung *R = &q->rung[r];
  double d = (t - R->base) * R->inv_w;
  q->size++;
  if (!(d >= (double)R->cur)) { /* NaN (t = base = inf) included */
    heap_reserve(q, q->hn + 1);
    sift_up(q->heap, q->hn++, (sim_evq_entry){tb, ps, slot});
    if (q->hn > RESPREAD_MIN) heap_grew(q);
    return;
  }
  /* Outwards to the rung whose range holds t: rung r holds what its parent
   * has not reached yet (d of the parent below the parent's cur). */
  for (; r > 0; r--) {
    const sim_evq_rung *P = &q->rung[r - 1];
    double e = (t - P->base) * P->inv_w;
    if (!(e >= (double)P->cur)) break;
    R = &q->rung[r - 1];
    d = e;
  }
  sim_evq_bucket *b;
  if (r > 0) {
    assert(R->cur < R->nbk); /* inner rungs always have a bucket left */
    b = &R->bk[d < (double)R->nbk ? (size_t)d : R->nbk - 1];
  } else if (d < (double)R->nbk) {
    b = &R->bk[(size_t)d];
  } else {
    b = &q->far;
    far_note(q, t);
  }
  if (b->tail == SIM_EVQ_NIL || b->tail_n == CHUNK_N) bucket_grow(q, b);
  pk_put(&q->chunk[b->tail].e[b->tail_n++], tb, ps, slot);
  b->n++;
}

const sim_evq_entry *sim_evq_top_refill(sim_evq *q) { return refill(q) ? &q->heap[0] : NULL; }

sim_evq_entry sim_evq_pop(sim_evq *q) {
  bool any = refill(q);
  assert(any);
  (void)any;
  sim_evq_entry top = q->heap[0];
  sim_evq_entry last = q->heap[--q->hn];
  q->size--;
  if (q->hn > 0)
    sift_down(q->heap, q->hn, 0, last);
  else if (q->size == 0)
    reset_empty(q);
  return top;
}

static size_t filter(sim_evq_entry *a, size_t n,
                     bool (*keep)(const sim_evq_entry *e, const void *ctx), const void *ctx) {
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (keep(&a[i], ctx)) a[m++] = a[i];
  return m;
}

/* Keeps b's entries for which keep() holds, in order, in b's own chunks. */
static size_t bucket_filter(sim_evq *q, sim_evq_bucket *b,
                            bool (*keep)(const sim_evq_entry *e, const void *ctx),
                            const void *ctx) {
  sim_evq_bucket chain = bucket_take(b);
  sim_evq_entry buf[CHUNK_N];
  uint32_t c = chain.head;
  for (size_t m; (m = chain_next(q, &chain, &c, buf));)
    for (size_t j = 0; j < m; j++)
      if (keep(&buf[j], ctx)) bucket_add(q, b, buf[j]);
  return b->n;
}

void sim_evq_compact(sim_evq *q, bool (*keep)(const sim_evq_entry *e, const void *ctx),
                     const void *ctx) {
  q->far_ok = false;
  q->hn = filter(q->heap, q->hn, keep, ctx);
  heapify(q->heap, q->hn);
  size_t total = q->hn + bucket_filter(q, &q->far, keep, ctx);
  for (size_t r = 0; r < q->nr; r++) {
    sim_evq_rung *R = &q->rung[r];
    for (size_t i = R->cur; i < R->nbk; i++)
      if (R->bk[i].n) total += bucket_filter(q, &R->bk[i], keep, ctx);
  }
  q->size = total;
  if (total == 0) reset_empty(q);
}

