/* evq.h: the pending-event set behind the engine, kept behind a handful of
 * operations (init/fini, push, top, pop, compact) so it can be replaced
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

/* A calendar bucket: a chain of chunks from the pool (evq.c). */
typedef struct sim_evq_bucket {
  uint32_t head, tail; /* chunk indices, SIM_EVQ_NIL when empty */
  uint32_t tail_n;     /* entries in the tail chunk */
  uint32_t n;          /* entries in the bucket */
} sim_evq_bucket;

typedef struct sim_evq_chunk sim_evq_chunk;

/* A calendar over a time range: bucket of time t is floor((t - base) * inv_w);
 * buckets [cur, nbk) may hold entries. */
typedef struct sim_evq_rung {
  double base, inv_w;
  sim_evq_bucket *bk;
  size_t nbk, bkcap, cur;
} sim_evq_rung;

#define SIM_EVQ_RUNGS 8
#define SIM_EVQ_ALT 0x80000000u /* see sim_evq.pf_alt_base */

/* Tiers, ordered by time: every entry of `heap` is earlier than every entry
 * of the innermost rung's buckets, rung r+1's entries are earlier than rung
 * r's (rung r+1 was spread from one bucket of rung r, or from the heap), and
 * every rung's earlier than `far`'s (see evq.c). */
typedef struct sim_evq {
  sim_evq_entry *heap; /* 4-ary min-heap of the entries due first */
  size_t hn, hcap;
  size_t hbase;       /* heap size after the last pour or spread */
  size_t hpush;       /* pushes into the heap since rung 0 was made */
  sim_evq_rung rung[SIM_EVQ_RUNGS];
  size_t nr;          /* rungs in use, >= 1; rung[nr - 1] is the innermost */
  sim_evq_chunk *chunk;
  size_t nchunk, chunkcap;
  uint32_t free_chunk;
  sim_evq_bucket far; /* unsorted, beyond rung 0's last bucket */
  /* far's least time and greatest finite time, kept as entries are added so
   * a rebuild need not read far twice; far_ok false after a respread or a
   * compaction (then the rebuild measures far). */
  double far_lo, far_hi;
  bool far_ok;
  size_t size; /* entries in all tiers */
  /* Optional: where entry.slot's record lives (pf_base + slot * pf_stride,
   * or pf_alt_base + (slot - SIM_EVQ_ALT) * pf_alt_stride when slot >=
   * SIM_EVQ_ALT); when a bucket moves into the heap, those records are
   * prefetched. */
  const char *pf_base, *pf_alt_base;
  size_t pf_stride, pf_alt_stride;
} sim_evq;

void sim_evq_init(sim_evq *q, size_t cap);
void sim_evq_fini(sim_evq *q);
/* Key and slot as scalars: an entry built on the stack and copied as a whole
 * costs a store-forwarding stall per push. */
void sim_evq_push(sim_evq *q, uint64_t tb, uint64_t ps, uint32_t slot);
/* The least entry, or NULL when empty (may move entries between tiers, hence
 * not const). The pointer is valid until the next push, pop or compact. */
const sim_evq_entry *sim_evq_top_refill(sim_evq *q);
static inline const sim_evq_entry *sim_evq_top(sim_evq *q) {
  /* The common cases inline: a non-empty heap, an empty queue. */
  return q->hn ? &q->heap[0] : q->size ? sim_evq_top_refill(q) : NULL;
}
sim_evq_entry sim_evq_pop(sim_evq *q); /* size > 0 */
/* The entry that follows the least one if it is already at hand (for
 * prefetching), else NULL. Never moves entries. */
static inline const sim_evq_entry *sim_evq_peek(const sim_evq *q) {
  return q->hn ? &q->heap[0] : NULL;
}
/* Drop every entry for which keep(entry, ctx) is false, in O(size). */
void sim_evq_compact(sim_evq *q, bool (*keep)(const sim_evq_entry *e, const void *ctx),
                     const void *ctx);

#endif
