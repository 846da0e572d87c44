/* net_kind.h: the network's interned callbacks (private to net.c).
 *
 * A kind is an (on_done, subject, class) triple with a reference count: the
 * number of the network's flows, pending or with their callback due, that
 * use it. A flow record keeps a 32-bit kind index instead of two pointers
 * and a class index (net.c's records shrink 64 -> 40 bytes). A simulation
 * passes few distinct triples (one subject, a callback per direction, a
 * class per link type); a library user may pass a distinct subject per flow,
 * which costs one kind per flow in flight: kinds are freed when their count
 * drops to 0 and their indices reused, so the table never outgrows the flows
 * in flight.
 *
 * Data structures: kinds[] with a free list threaded through free entries;
 * an open-addressing hash table (linear probing, load <= 1/2) of the live
 * indices, with deletion by backward shift (no tombstones, so probe chains
 * stay as short as the live load makes them); the kind last interned, which
 * a transfer checks first (a burst of transfers with one callback hits it).
 * Get and put are O(1) expected. Rejected: never freeing kinds (a subject
 * per flow grows the table without bound), and reference counts kept in the
 * flow records (a put would have to find the kind anyway). */
#ifndef SIM_NET_KIND_H
#define SIM_NET_KIND_H

#include <stdint.h>

#include "sim/hs_engine.h"

typedef struct sim_kind {
  hs_event_fn fn;
  void *subject;
  uint32_t cls;
  uint32_t refs; /* 0: free; cls is then the next free kind + 1 (0: none) */
} sim_kind;

typedef struct sim_kinds {
  sim_kind *a;
  uint32_t n, cap;
  uint32_t free1; /* first free kind + 1, 0 if none */
  uint32_t live;  /* kinds with refs > 0 */
  uint32_t last;  /* the kind last interned */
  uint32_t *tab;  /* live kind indices, UINT32_MAX for an empty cell */
  uint32_t mask;
} sim_kinds;

/* The slow paths of the two inline functions below. */
uint32_t sim_kinds_intern(sim_kinds *t, hs_event_fn fn, void *subject, uint32_t cls);
void sim_kinds_release(sim_kinds *t, uint32_t k);
/* Frees the table's memory (a zeroed sim_kinds is an empty table). */
void sim_kinds_fini(sim_kinds *t);

/* The kind of (fn, subject, cls), with one more reference. */
static inline uint32_t sim_kinds_get(sim_kinds *t, hs_event_fn fn, void *subject, uint32_t cls) {
  if (t->last < t->n) {
    sim_kind *k = &t->a[t->last];
    if (k->refs && k->fn == fn && k->subject == subject && k->cls == cls) {
      k->refs++;
      return t->last;
    }
  }
  return sim_kinds_intern(t, fn, subject, cls);
}

/* One reference less; the last one frees the kind (its index may be reused
 * by the next get: read what you need first). */
static inline void sim_kinds_put(sim_kinds *t, uint32_t k) {
  if (t->a[k].refs > 1)
    t->a[k].refs--;
  else
    sim_kinds_release(t, k);
}

static inline const sim_kind *sim_kinds_at(const sim_kinds *t, uint32_t k) { return &t->a[k]; }

#endif
