/* evq.c: the pending-event set, a two-level calendar over a small heap.
 *
 * Tiers, in time order (the invariant everything rests on):
 *   heap   a 4-ary min-heap of the entries whose bucket number d(t) < cur;
 *   bucket i (cur <= i < nbk): an unsorted chain of 16-entry chunks holding
 *          the entries with floor(d(t)) = i;
 *   far    an unsorted chain of chunks with the entries with d(t) >= nbk,
 * where d(t) = (t - base) * inv_w. d is monotone in t (a subtraction and a
 * multiplication, each correctly rounded), so every heap entry is strictly
 * earlier than every bucket entry, bucket i's than bucket i+1's, and all of
 * them than far's: the heap top is the global minimum of (time, priority,
 * seq), and the order is exactly the heap's order (byte-identical runs).
 * When the heap is empty, the next non-empty bucket is poured into it (Floyd
 * heapify, O(m)) and cur moves past it; when the buckets are used up, far is
 * spread over a new calendar: base = its least time, nbk = |far| / 64 buckets
 * (at least 1), inv_w chosen so its greatest time falls in the last bucket.
 * Every entry is thus moved at most far -> bucket -> heap (O(1) amortized)
 * and the heap holds about one bucket (tens to a few thousand entries: L1/L2)
 * instead of every pending event. If the calendar was sized on a few events
 * and most new ones land in the heap (a PMA round: all its events fall before
 * the deadline timer the calendar was built on), everything is respread over
 * a new calendar, at most once per size/2 heap pushes (O(1) amortized).
 * Degenerate inputs (all events at one instant) put many entries in one
 * bucket: the heap then costs O(log n), as the plain heap did, never worse.
 * When a bucket is poured, the engine's records of its events are prefetched
 * together (pf_base): at 10^6 pending each is a cache miss, now overlapped.
 *
 * Measured (hs-bench-engine hold model, Release, 2-core EPYC shared by seven
 * builds at load 5-10, so events per CPU second, best of 3; M = 10^6):
 *                                                 10^3 / 10^5 / 10^6 pending
 *   plain 4-ary heap of 24-byte entries (before)  18.4M /  5.1M /  1.8M (3.1M
 *                                                 wall on an idle machine)
 *   calendar, 16 per bucket, no prefetch           -    /   -   /  5.9M (wall)
 *   + records prefetched when a bucket is poured  20.5M / 18.2M /  7.8M
 *   + key passed as scalars (no stack copy)        23.2M / 20.6M /  8.7M
 *   64 per bucket instead of 16 (kept)            17.9M / 15.0M / 10.9M
 *   256 per bucket                                16.2M / 10.0M /  8.6M
 *   + prefetching the next 21 heap entries' records on every dispatch:
 *     15.3M / 13.9M / 8.9M, dropped.
 * Rejected: a binary heap with keys split from payload (the heap already holds
 * only keys + a 32-bit slot; the misses are per level, not per byte); a radix
 * heap on the 128-bit keys (monotone, fine for the clock, but its buckets by
 * the highest differing bit of the time's bits mix ~2^52 values in the top
 * bucket: refills re-sort the same entries many times); a full ladder queue
 * (recursive rungs: more code for the degenerate spans only); sorted bucket
 * lists of the classic calendar queue (O(bucket) inserts).
 *
 * Memory: 24 bytes per entry, plus up to one partly filled 392-byte chunk per
 * non-empty bucket and 16 bytes per bucket header (nbk <= pending / 64). Far
 * is made of the same chunks: a rebuild frees its chunks as it spreads them,
 * so the buckets reuse them (an array for far doubled the queue's peak). The
 * chunk pool keeps its peak size. */
#include "evq.h"

#include <assert.h>
#include <math.h>

#include "base/hs_alloc.h"

#define SIM_EVQ_NIL UINT32_MAX
#define CHUNK_N 16    /* entries per chunk */
#define PER_BUCKET 64 /* far entries per bucket at a rebuild */
#define RESPREAD_MIN 4096 /* heaps this small are cheap: never respread them */

struct sim_evq_chunk {
  uint32_t next;
  sim_evq_entry e[CHUNK_N];
};

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
  q->inv_w = 1.0;
}

void sim_evq_fini(sim_evq *q) {
  hs_free(q->heap);
  hs_free(q->bk);
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
  q->chunk[b->tail].e[b->tail_n++] = e;
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
    memcpy(dst + n, ch->e, m * sizeof *dst);
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
  memcpy(buf, ch->e, m * sizeof *buf);
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

static inline double bucket_of(const sim_evq *q, const sim_evq_entry *e) {
  return (sim_evq_time(e) - q->base) * q->inv_w;
}

/* Spread far over a new calendar. Called with heap and buckets empty. Events
 * at an infinite time stay in far (d = inf); when nothing else is left they
 * go to the heap, base becomes infinite, and every later push then lands in
 * the heap too (d is -inf or NaN, see sim_evq_push) until the queue empties. */
static void rebuild(sim_evq *q) {
  q->hpush = 0;
  double tmin = INFINITY, tmax = 0;
  for (uint32_t c = q->far.head; c != SIM_EVQ_NIL; c = q->chunk[c].next) {
    const sim_evq_chunk *ch = &q->chunk[c];
    size_t m = ch->next == SIM_EVQ_NIL ? q->far.tail_n : CHUNK_N;
    for (size_t j = 0; j < m; j++) {
      double t = sim_evq_time(&ch->e[j]);
      if (t < tmin) tmin = t;
      if (t > tmax && t < INFINITY) tmax = t;
    }
  }
  if (!(tmin < INFINITY)) {
    heap_reserve(q, q->far.n);
    q->hn = bucket_drain(q, &q->far, q->heap);
    heapify(q->heap, q->hn);
    q->base = INFINITY;
    q->nbk = q->cur = 0;
    return;
  }
  size_t k = q->far.n / PER_BUCKET;
  if (k < 1) k = 1;
  if (k > q->bkcap) {
    q->bk = hs_reallocarray(q->bk, k, sizeof *q->bk);
    for (size_t i = q->bkcap; i < k; i++)
      q->bk[i] = (sim_evq_bucket){SIM_EVQ_NIL, SIM_EVQ_NIL, 0, 0};
    q->bkcap = k;
  }
  q->base = tmin;
  double span = tmax - tmin;
  double inv = span > 0 ? ((double)k - 0.5) / span : 0;
  if (isfinite(inv) && inv > 0) {
    while (span * inv >= (double)k) inv *= 1 - 0x1p-40; /* rounding */
    q->inv_w = inv;
  } else {
    k = 1; /* one instant (or a subnormal span): keep the previous width */
  }
  q->nbk = k;
  q->cur = 0;
  /* Chunk by chunk, so far's memory is reused by the buckets as it empties. */
  sim_evq_bucket old = bucket_take(&q->far);
  sim_evq_entry buf[CHUNK_N];
  uint32_t c = old.head;
  for (size_t m; (m = chain_next(q, &old, &c, buf));)
    for (size_t j = 0; j < m; j++) {
      double d = bucket_of(q, &buf[j]);
      /* Beyond the last bucket: infinite times, or beyond a kept width. */
      bucket_add(q, d < (double)k ? &q->bk[(size_t)d] : &q->far, buf[j]);
    }
}

/* Everything back into far and a new calendar over it: when the calendar was
 * sized on a few events and most new ones fall before its first bucket, the
 * heap would otherwise grow to hold them all. O(size), and allowed only after
 * size/2 pushes into the heap since the last calendar: O(1) amortized, also
 * when the heap is big for a reason a calendar cannot fix (one instant). */
static void respread(sim_evq *q) {
  for (size_t i = 0; i < q->hn; i++) bucket_add(q, &q->far, q->heap[i]);
  q->hn = 0;
  for (size_t i = q->cur; i < q->nbk; i++)
    if (q->bk[i].n) chain_append(q, bucket_take(&q->bk[i]), &q->far);
  q->cur = q->nbk;
  rebuild(q);
}

/* Make the heap non-empty if any entry is pending; false when none is. */
static bool refill(sim_evq *q) {
  while (q->hn == 0) {
    while (q->cur < q->nbk && q->bk[q->cur].head == SIM_EVQ_NIL) q->cur++;
    if (q->cur < q->nbk) {
      sim_evq_bucket *b = &q->bk[q->cur++];
      heap_reserve(q, b->n);
      q->hn = bucket_drain(q, b, q->heap);
#if defined(__GNUC__)
      /* These are the next events to fire: start loading their records (the
       * engine's slots, a cache miss each at 10^6 pending) all at once. */
      if (q->pf_base)
        for (size_t i = 0; i < q->hn; i++) {
          const char *rec = q->pf_base + (size_t)q->heap[i].slot * q->pf_stride;
          __builtin_prefetch(rec); /* both ends: a record may straddle two lines */
          __builtin_prefetch(rec + q->pf_stride - 1);
        }
#endif
      heapify(q->heap, q->hn);
    } else if (q->far.n) {
      rebuild(q);
    } else {
      /* Empty: the next pushes go to far and the next top sizes a calendar
       * for them (this also leaves the infinite-base mode). */
      q->base = 0;
      q->nbk = q->cur = 0;
      return false;
    }
  }
  return true;
}

void sim_evq_push(sim_evq *q, uint64_t tb, uint64_t ps, uint32_t slot) {
  double t;
  memcpy(&t, &tb, sizeof t);
  double d = (t - q->base) * q->inv_w;
  q->size++;
  if (!(d >= (double)q->cur)) { /* NaN (t = base = inf) included */
    heap_reserve(q, q->hn + 1);
    sift_up(q->heap, q->hn++, (sim_evq_entry){tb, ps, slot});
    if (q->hn > RESPREAD_MIN && ++q->hpush > q->size / 2) respread(q);
  } else if (d < (double)q->nbk) {
    sim_evq_bucket *b = &q->bk[(size_t)d];
    if (b->tail == SIM_EVQ_NIL || b->tail_n == CHUNK_N) bucket_grow(q, b);
    sim_evq_entry *e = &q->chunk[b->tail].e[b->tail_n++];
    b->n++;
    e->tb = tb;
    e->ps = ps;
    e->slot = slot;
  } else {
    bucket_add(q, &q->far, (sim_evq_entry){tb, ps, slot});
  }
}

const sim_evq_entry *sim_evq_top(sim_evq *q) { return refill(q) ? &q->heap[0] : NULL; }

sim_evq_entry sim_evq_pop(sim_evq *q) {
  bool any = refill(q);
  assert(any);
  (void)any;
  sim_evq_entry top = q->heap[0];
  sim_evq_entry last = q->heap[--q->hn];
  q->size--;
  if (q->hn > 0) sift_down(q->heap, q->hn, 0, last);
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
  q->hn = filter(q->heap, q->hn, keep, ctx);
  heapify(q->heap, q->hn);
  size_t total = q->hn + bucket_filter(q, &q->far, keep, ctx);
  for (size_t i = q->cur; i < q->nbk; i++)
    if (q->bk[i].n) total += bucket_filter(q, &q->bk[i], keep, ctx);
  q->size = total;
}
