/* pool.c: a fixed set of worker threads that run one function together, the
 * caller taking part as thread 0 (so nthreads == 1 costs no thread at all).
 *
 * Invariant: `gen` counts dispatched jobs; a worker runs job g exactly once,
 * and run() returns only when every worker has finished job g (pending == 0).
 * One mutex and two condition variables; a batch of 32 samples takes
 * milliseconds, so a few microseconds of wake-up do not matter.
 * Rejected: pthread_barrier (optional in POSIX), spinning (steals the core a
 * measurement is timing), one thread per batch (creation cost per batch). */
#include "learn/hs_learn_parts.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct lrn_pool {
  unsigned n;
  pthread_t *th;
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  uint64_t gen;
  unsigned pending;
  bool quit;
  lrn_pool_fn fn;
  void *ctx;
};

typedef struct {
  lrn_pool *p;
  unsigned tid;
} pool_arg;

static void *pool_worker(void *arg) {
  pool_arg a = *(pool_arg *)arg;
  free(arg);
  lrn_pool *p = a.p;
  uint64_t seen = 0;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (p->gen == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
    if (p->quit) break;
    seen = p->gen;
    lrn_pool_fn fn = p->fn;
    void *ctx = p->ctx;
    pthread_mutex_unlock(&p->mu);
    fn(ctx, a.tid, p->n);
    pthread_mutex_lock(&p->mu);
    if (--p->pending == 0) pthread_cond_signal(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

lrn_pool *lrn_pool_create(unsigned nthreads) {
  assert(nthreads >= 1);
  lrn_pool *p = hs_calloc(1, sizeof *p);
  p->n = nthreads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->go, NULL);
  pthread_cond_init(&p->done, NULL);
  p->th = hs_calloc(nthreads, sizeof *p->th);
  for (unsigned i = 1; i < nthreads; i++) {
    pool_arg *a = hs_malloc(sizeof *a);
    a->p = p;
    a->tid = i;
    if (pthread_create(&p->th[i], NULL, pool_worker, a) != 0) {
      free(a);
      p->n = i; /* fewer threads than asked: still correct, the caller sees the size */
      break;
    }
  }
  return p;
}

unsigned lrn_pool_size(const lrn_pool *p) { return p->n; }

void lrn_pool_run(lrn_pool *p, lrn_pool_fn fn, void *ctx) {
  if (p->n > 1) {
    pthread_mutex_lock(&p->mu);
    assert(p->pending == 0);
    p->fn = fn;
    p->ctx = ctx;
    p->pending = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
  }
  fn(ctx, 0, p->n);
  if (p->n > 1) {
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
}

void lrn_pool_destroy(lrn_pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->quit = true;
  pthread_cond_broadcast(&p->go);
  pthread_mutex_unlock(&p->mu);
  for (unsigned i = 1; i < p->n; i++) pthread_join(p->th[i], NULL);
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->go);
  pthread_cond_destroy(&p->done);
  free(p->th);
  free(p);
}
