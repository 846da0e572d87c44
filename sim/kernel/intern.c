/* intern.c: interned (callback, subject, tag) triples with reference counts,
 * for the engine's event slots and the network's flow records. Data
 * structures and what was rejected: see intern.h. Invariant: tab holds
 * exactly the indices with refs > 0, each reachable by probing from its home
 * cell without crossing an empty cell; free entries form a list through tag. */
#include "intern.h"

#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"

#define EMPTY UINT32_MAX

static uint64_t triple_hash(hs_event_fn fn, const void *subject, uint32_t tag) {
  uint64_t f = 0;
  memcpy(&f, &fn, sizeof fn < sizeof f ? sizeof fn : sizeof f);
  uint64_t h = (f ^ (uint64_t)(uintptr_t)subject * 0x9e3779b97f4a7c15ULL) + tag;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

static uint32_t home(const sim_intern *t, uint32_t k) {
  const sim_interned *K = &t->a[k];
  return (uint32_t)triple_hash(K->fn, K->subject, K->tag) & t->mask;
}

static void tab_reset(sim_intern *t, uint32_t size) {
  hs_free(t->tab);
  t->tab = hs_reallocarray(NULL, size, sizeof *t->tab);
  for (uint32_t j = 0; j < size; j++) t->tab[j] = EMPTY;
  t->mask = size - 1;
}

uint32_t sim_intern_add(sim_intern *t, hs_event_fn fn, void *subject, uint32_t tag) {
  if (!t->tab) tab_reset(t, 16);
  uint32_t i = (uint32_t)triple_hash(fn, subject, tag) & t->mask;
  for (; t->tab[i] != EMPTY; i = (i + 1) & t->mask) {
    sim_interned *K = &t->a[t->tab[i]];
    if (K->fn == fn && K->subject == subject && K->tag == tag) {
      K->refs++;
      return t->last = t->tab[i];
    }
  }
  uint32_t k = t->free1 - 1;
  if (t->free1) {
    t->free1 = t->a[k].tag;
  } else {
    HS_ASSERT(t->n < EMPTY - 1, "fewer than 2^32 interned triples");
    if (t->n == t->cap) {
      t->cap = t->cap ? 2 * t->cap : 8;
      t->a = hs_reallocarray(t->a, t->cap, sizeof *t->a);
    }
    k = t->n++;
  }
  t->a[k] = (sim_interned){fn, subject, tag, 1};
  t->live++;
  if (2 * (uint64_t)t->live > t->mask + 1ULL) { /* keep load <= 1/2 */
    tab_reset(t, 2 * (t->mask + 1));
    for (uint32_t j = 0; j < t->n; j++) {
      if (!t->a[j].refs) continue;
      uint32_t h = home(t, j);
      while (t->tab[h] != EMPTY) h = (h + 1) & t->mask;
      t->tab[h] = j;
    }
  } else {
    t->tab[i] = k;
  }
  return t->last = k;
}

/* The last reference: out of the table by backward shift, onto the free list. */
void sim_intern_release(sim_intern *t, uint32_t k) {
  sim_interned *K = &t->a[k];
  HS_ASSERT(K->refs == 1, "an entry in use has references");
  K->refs = 0;
  uint32_t m = t->mask, i = home(t, k);
  while (t->tab[i] != k) i = (i + 1) & m;
  for (uint32_t j = (i + 1) & m; t->tab[j] != EMPTY; j = (j + 1) & m) {
    /* The entry at j may fill the hole at i unless its home lies in (i, j]. */
    uint32_t h = home(t, t->tab[j]);
    if (((j - h) & m) >= ((j - i) & m)) {
      t->tab[i] = t->tab[j];
      i = j;
    }
  }
  t->tab[i] = EMPTY;
  K->tag = t->free1;
  t->free1 = k + 1;
  t->live--;
}

void sim_intern_fini(sim_intern *t) {
  hs_free(t->a);
  hs_free(t->tab);
  memset(t, 0, sizeof *t);
}
