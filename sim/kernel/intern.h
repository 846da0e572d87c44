/* intern.h: interned (callback, subject, tag) triples with reference counts,
 * private to sim/kernel: the engine names each pending event's (handler,
 * subject) pair by one (tag 0), the network each flow's (on_done, subject,
 * class) (tag = class). A 32-bit index replaces two pointers in records kept
 * by the million (engine slots 48 -> 32 bytes, flow records 64 -> 40).
 *
 * The count is the number of records naming the triple (pending events,
 * flows pending or with their callback due). A simulation passes few
 * distinct triples (one subject, a handler per event kind, a class per link
 * type); a library user may pass a distinct subject per event or flow, which
 * costs one triple per record alive: a triple is freed when its count drops
 * to 0 and its index reused, so the table never outgrows the records alive.
 *
 * Data structures: entries a[] with a free list threaded through free
 * entries; an open-addressing hash table (linear probing, load <= 1/2) of the
 * live indices, with deletion by backward shift (no tombstones, so probe
 * chains stay as short as the live load makes them); the triple last
 * interned, which is checked first (a burst of events or transfers with one
 * callback hits it). Get and put are O(1) expected. Rejected: never freeing
 * triples (a subject per record grows the table without bound); the engine's
 * first table, which kept unused pairs until the array was full and then
 * freed them all at once (a second mechanism for the same job: merged here);
 * counts kept in the records (a put would have to find the triple anyway). */
#ifndef SIM_INTERN_H
#define SIM_INTERN_H

#include <stdint.h>

#include "sim/hs_engine.h"

typedef struct sim_interned {
  hs_event_fn fn;
  void *subject;
  uint32_t tag;
  uint32_t refs; /* 0: free; tag is then the next free entry + 1 (0: none) */
} sim_interned;

typedef struct sim_intern {
  sim_interned *a;
  uint32_t n, cap;
  uint32_t free1; /* first free entry + 1, 0 if none */
  uint32_t live;  /* entries with refs > 0 */
  uint32_t last;  /* the entry last interned */
  uint32_t *tab;  /* live entry indices, UINT32_MAX for an empty cell */
  uint32_t mask;
} sim_intern;

/* The slow paths of the two inline functions below. */
uint32_t sim_intern_add(sim_intern *t, hs_event_fn fn, void *subject, uint32_t tag);
void sim_intern_release(sim_intern *t, uint32_t k);
/* Frees the table's memory (a zeroed sim_intern is an empty table). */
void sim_intern_fini(sim_intern *t);

/* The index of (fn, subject, tag), with one more reference. */
static inline uint32_t sim_intern_get(sim_intern *t, hs_event_fn fn, void *subject,
                                      uint32_t tag) {
  if (t->last < t->n) {
    sim_interned *k = &t->a[t->last];
    if (k->refs && k->fn == fn && k->subject == subject && k->tag == tag) {
      k->refs++;
      return t->last;
    }
  }
  return sim_intern_add(t, fn, subject, tag);
}

/* One reference less; the last one frees the entry (its index may be reused
 * by the next get: read what you need first). */
static inline void sim_intern_put(sim_intern *t, uint32_t k) {
  if (t->a[k].refs > 1)
    t->a[k].refs--;
  else
    sim_intern_release(t, k);
}

static inline const sim_interned *sim_intern_at(const sim_intern *t, uint32_t k) {
  return &t->a[k];
}

#endif
