/* evq.h: the pending-event set behind the engine, kept behind a handful of
 * operations (init/fini, push, pop, top, compact) so it can be replaced
 * (cf. ROSS tw-queue.h).
 *
 * Keys are (time, priority, seq), compared lexicographically; seq is unique, so
 * the order is total. The queue knows nothing of handles: the engine decides
 * which entries are still live (see engine.c, lazy deletion). */
#ifndef SIM_EVQ_H
#define SIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_evq_entry {
  double time;
  int32_t prio;
  uint32_t slot;
  uint64_t seq;
} sim_evq_entry;

typedef struct sim_evq {
  sim_evq_entry *heap;
  size_t size, cap;
} sim_evq;

void sim_evq_init(sim_evq *q, size_t cap);
void sim_evq_fini(sim_evq *q);
void sim_evq_push(sim_evq *q, sim_evq_entry e);
sim_evq_entry sim_evq_pop(sim_evq *q); /* size > 0 */
static inline const sim_evq_entry *sim_evq_top(const sim_evq *q) {
  return q->size ? &q->heap[0] : NULL;
}
/* Drop every entry for which keep(entry, ctx) is false and restore the heap in
 * O(n) (Floyd's bottom-up construction). */
void sim_evq_compact(sim_evq *q, bool (*keep)(const sim_evq_entry *e, const void *ctx),
                     const void *ctx);

#endif
