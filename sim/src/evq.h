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
#include <string.h>

/* The key is two 64-bit words compared as one 128-bit unsigned number:
 *   tb: the bits of the time, a double >= 0 (for non-negative doubles the bit
 *       pattern orders like the value, so integer comparison is exact);
 *   ps: the priority, biased by 2^15, in the top 16 bits, and the insertion
 *       sequence in the low 48 bits.
 * So (tb, ps) orders exactly like (time, priority, seq), without the
 * floating-point compares and their unpredictable branches. */
typedef struct sim_evq_entry {
  uint64_t tb;
  uint64_t ps;
  uint32_t slot;
} sim_evq_entry;

static inline uint64_t sim_evq_time_bits(double t) {
  uint64_t b;
  memcpy(&b, &t, sizeof b);
  return b;
}
static inline double sim_evq_time(const sim_evq_entry *e) {
  double t;
  memcpy(&t, &e->tb, sizeof t);
  return t;
}

#define SIM_EVQ_SEQ_BITS 48
#define SIM_EVQ_PRIO_MIN (-32768)
#define SIM_EVQ_PRIO_MAX 32767
static inline uint64_t sim_evq_pack(int prio, uint64_t seq) {
  return ((uint64_t)(prio - SIM_EVQ_PRIO_MIN) << SIM_EVQ_SEQ_BITS) | seq;
}
static inline uint64_t sim_evq_seq(const sim_evq_entry *e) {
  return e->ps & (((uint64_t)1 << SIM_EVQ_SEQ_BITS) - 1);
}

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
