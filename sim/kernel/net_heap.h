/* net_heap.h: the indexed binary min-heap of net.c (private to the network).
 *
 * Entries are (key, seq, item), ordered by (key, seq): seq is the order of
 * hs_net_transfer calls, unique among a heap's entries, so the order is
 * total and the top does not depend on how the heap was built. Each item
 * records its position, for O(log n) removal and re-keying: the position of
 * item i is the uint32_t at base + i * stride of a sim_hpos, built by the
 * caller from the array that holds the items (classes, lanes or flow
 * records), so one heap code serves the three without a branch on which
 * heap it is. A sim_hpos is built at each call: the arrays move when they
 * grow. Functions are static inline: net.c calls them on every event.
 * Complexity: push, remove, update O(log n); top O(1). */
#ifndef SIM_NET_HEAP_H
#define SIM_NET_HEAP_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"

typedef struct sim_hent {
  double key;
  uint64_t seq;
  uint32_t item;
} sim_hent;

typedef struct sim_heap {
  sim_hent *a;
  uint32_t n, cap;
} sim_heap;

typedef struct sim_hpos {
  char *base;
  size_t stride;
} sim_hpos;

static inline bool sim_hent_less(const sim_hent *x, const sim_hent *y) {
  return x->key < y->key || (x->key == y->key && x->seq < y->seq);
}

static inline void sim_hpos_set(sim_hpos p, uint32_t item, uint32_t pos) {
  memcpy(p.base + (size_t)item * p.stride, &pos, sizeof pos);
}

static inline void sim_heap_up(sim_heap *h, sim_hpos p, uint32_t i) {
  sim_hent e = h->a[i];
  while (i > 0) {
    uint32_t q = (i - 1) / 2;
    if (!sim_hent_less(&e, &h->a[q])) break;
    h->a[i] = h->a[q];
    sim_hpos_set(p, h->a[i].item, i);
    i = q;
  }
  h->a[i] = e;
  sim_hpos_set(p, e.item, i);
}

static inline void sim_heap_down(sim_heap *h, sim_hpos p, uint32_t i) {
  sim_hent e = h->a[i];
  for (;;) {
    uint32_t l = 2 * i + 1;
    if (l >= h->n) break;
    uint32_t m = (l + 1 < h->n && sim_hent_less(&h->a[l + 1], &h->a[l])) ? l + 1 : l;
    if (!sim_hent_less(&h->a[m], &e)) break;
    h->a[i] = h->a[m];
    sim_hpos_set(p, h->a[i].item, i);
    i = m;
  }
  h->a[i] = e;
  sim_hpos_set(p, e.item, i);
}

static inline void sim_heap_push(sim_heap *h, sim_hpos p, double key, uint64_t seq, uint32_t item) {
  HS_ASSERT(!isnan(key), "heap keys are times");
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 8;
    h->a = hs_reallocarray(h->a, h->cap, sizeof *h->a);
  }
  h->a[h->n] = (sim_hent){key, seq, item};
  sim_heap_up(h, p, h->n++);
}

static inline void sim_heap_remove(sim_heap *h, sim_hpos p, uint32_t pos) {
  HS_ASSERT(pos < h->n, "heap position in range");
  h->n--;
  if (pos == h->n) return;
  h->a[pos] = h->a[h->n];
  sim_hpos_set(p, h->a[pos].item, pos);
  if (pos > 0 && sim_hent_less(&h->a[pos], &h->a[(pos - 1) / 2]))
    sim_heap_up(h, p, pos);
  else
    sim_heap_down(h, p, pos);
}

static inline void sim_heap_update(sim_heap *h, sim_hpos p, uint32_t pos, double key, uint64_t seq) {
  HS_ASSERT(pos < h->n && !isnan(key), "heap position in range, key a time");
  sim_hent old = h->a[pos];
  h->a[pos].key = key;
  h->a[pos].seq = seq;
  if (sim_hent_less(&h->a[pos], &old))
    sim_heap_up(h, p, pos);
  else
    sim_heap_down(h, p, pos);
}

#endif
