/* evq.c: a 4-ary min-heap in one array.
 *
 * Why 4-ary: half the depth of a binary heap, and the four children of a node
 * share a cache line or two, which is what the hold model at 10^6 pending
 * events is bound by. Entries are 24 bytes, stored inline (no pointers to
 * chase), and the heap keeps no handle-to-position map: writing a position back
 * for every moved entry costs one cache miss per level at 10^6 pending, so the
 * engine cancels lazily instead (engine.c). Rejected: calendar queues (fast on
 * smooth distributions, erratic on the bursty ones regimes produce: a whole
 * round's events at one instant) and pairing heaps (pointer-heavy).
 *
 * Invariant: for every i > 0, key(heap[(i-1)/4]) < key(heap[i]), key = (tb, ps). */
#include "evq.h"

#include <assert.h>

#include "hs_alloc.h"

__extension__ typedef unsigned __int128 u128;

static inline int less(const sim_evq_entry *a, const sim_evq_entry *b) {
  return ((u128)a->tb << 64 | a->ps) < ((u128)b->tb << 64 | b->ps);
}

void sim_evq_init(sim_evq *q, size_t cap) {
  q->cap = cap ? cap : 64;
  q->size = 0;
  q->heap = hs_malloc(q->cap * sizeof *q->heap);
}

void sim_evq_fini(sim_evq *q) {
  hs_free(q->heap);
  q->heap = NULL;
  q->size = q->cap = 0;
}

static void sift_up(sim_evq *q, size_t i, sim_evq_entry e) {
  while (i > 0) {
    size_t parent = (i - 1) >> 2;
    if (!less(&e, &q->heap[parent])) break;
    q->heap[i] = q->heap[parent];
    i = parent;
  }
  q->heap[i] = e;
}

/* Above this many entries (1.5 MiB) the heap no longer fits in the caches
 * close to the core and sift_down prefetches one level ahead. */
#define SIM_EVQ_PREFETCH_MIN 65536

static void sift_down(sim_evq *q, size_t i, sim_evq_entry e) {
  size_t n = q->size;
  for (;;) {
    size_t c = 4 * i + 1;
    if (c >= n) break;
    size_t best;
    if (n > SIM_EVQ_PREFETCH_MIN && 4 * c + 1 < n) {
      /* Large heaps: the next level is out of cache, and the branch-free
       * choice below gives the CPU nothing to speculate on; fetch all four
       * candidates' children while the choice is made. */
      const sim_evq_entry *g = q->heap + 4 * c + 1;
      for (int k = 0; k < 16; k += 4) __builtin_prefetch(g + k);
    }
    if (c + 4 <= n) {
      /* All four children: a two-level tournament, which the compiler can do
       * with conditional moves instead of hard-to-predict branches. */
      const sim_evq_entry *h = q->heap;
      size_t b01 = less(&h[c + 1], &h[c]) ? c + 1 : c;
      size_t b23 = less(&h[c + 3], &h[c + 2]) ? c + 3 : c + 2;
      best = less(&h[b23], &h[b01]) ? b23 : b01;
    } else {
      best = c;
      for (size_t k = c + 1; k < n; k++)
        if (less(&q->heap[k], &q->heap[best])) best = k;
    }
    if (!less(&q->heap[best], &e)) break;
    q->heap[i] = q->heap[best];
    i = best;
  }
  q->heap[i] = e;
}

void sim_evq_push(sim_evq *q, sim_evq_entry e) {
  if (q->size == q->cap) {
    q->cap *= 2;
    q->heap = hs_reallocarray(q->heap, q->cap, sizeof *q->heap);
  }
  sift_up(q, q->size++, e);
}

sim_evq_entry sim_evq_pop(sim_evq *q) {
  assert(q->size > 0);
  sim_evq_entry top = q->heap[0];
  sim_evq_entry last = q->heap[--q->size];
  if (q->size > 0) sift_down(q, 0, last);
  return top;
}

void sim_evq_compact(sim_evq *q, bool (*keep)(const sim_evq_entry *e, const void *ctx),
                     const void *ctx) {
  size_t n = 0;
  for (size_t i = 0; i < q->size; i++)
    if (keep(&q->heap[i], ctx)) q->heap[n++] = q->heap[i];
  q->size = n;
  if (n < 2) return;
  for (size_t i = (n - 2) / 4 + 1; i-- > 0;) sift_down(q, i, q->heap[i]);
}
