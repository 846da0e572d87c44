/* optimize_ranks.c: batches of optimiser points across the ranks of a
 * transport (optimize_ranks.h), for `hetsim-mpi optimize`; with the
 * in-process transport nothing calls it (one rank needs no batches).
 *
 * One batch is three collectives: a broadcast of its header (points, bytes
 * of text, stop flag), a broadcast of the points' value texts (NUL-terminated,
 * point after point), and one gather of a fixed-size block per rank (the
 * lowest failing slot with its status and message, then nout doubles per
 * slot; rank r's slot j is point r + j * size). Fixed-size blocks keep the
 * gather to one call with no counts exchanged first, as in sweep_ranks.c.
 * Every point of a rank's share is tried even after one fails, so the error
 * reported (the lowest failing point's) does not depend on thread timing.
 *
 * Invariants: only the calling (main) thread uses the transport; a rank's
 * `jobs` threads only evaluate. Cost per batch: O(size) messages of
 * O(n * (nvars * text + nout / size)) bytes, against n simulations.
 *
 * Rejected: reusing hs_sweep_run_ranks (its unit is a row of one grid, and a
 * batch is points of many one-point grids); point-to-point work stealing
 * (better balance when points differ wildly in cost, but a scheduler to
 * maintain, and a batch is at most ranks x jobs points anyway). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"
#include "optimize_ranks.h"

/* Head of a rank's block; the doubles follow (its size is a multiple of 8). */
typedef struct head {
  int64_t failed; /* lowest failing slot, or -1 */
  int64_t status;
  char msg[HS_ERROR_MSG_MAX];
} head;

enum { H_N, H_BYTES, H_STOP, H_LEN };

/* This rank's share of a batch, run on its threads. */
typedef struct share {
  const opt_ranks *m;
  const char *const *text;
  size_t first, stride, count; /* slot j is point first + j * stride */
  double *out;                 /* count * nout */
  hs_status *st;
  hs_error *err;
  size_t next;
  pthread_mutex_t mu;
} share;

static void *run_share(void *arg) {
  share *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    size_t j = s->next++;
    pthread_mutex_unlock(&s->mu);
    if (j >= s->count) return NULL;
    size_t i = s->first + j * s->stride;
    s->st[j] = s->m->eval(s->text + i * s->m->nvars, s->out + j * s->m->nout, s->m->ud, &s->err[j]);
  }
}

/* Every rank: run its share of text[0..n) points, gather the blocks; rank 0
 * unpacks them into out. */
static hs_status batch(const opt_ranks *m, const char *const *text, size_t n, double *out,
                       size_t *failed, hs_error *err) {
  int rank = m->t->rank(), size = m->t->size();
  size_t R = (size_t)size, per = (n + R - 1) / R;
  share s = {.m = m, .text = text, .first = (size_t)rank, .stride = R};
  s.count = n > (size_t)rank ? (n - (size_t)rank + R - 1) / R : 0;
  s.out = hs_calloc(s.count * m->nout + 1, sizeof *s.out);
  s.st = hs_calloc(s.count + 1, sizeof *s.st);
  s.err = hs_calloc(s.count + 1, sizeof *s.err);
  pthread_mutex_init(&s.mu, NULL);
  size_t nt = m->jobs > 1 ? m->jobs : 1;
  if (nt > s.count) nt = s.count;
  pthread_t *t = hs_calloc(nt + 1, sizeof *t);
  size_t started = 0;
  for (; started + 1 < nt; started++) /* this thread is one of them */
    if (pthread_create(&t[started], NULL, run_share, &s)) break;
  run_share(&s);
  for (size_t i = 0; i < started; i++) pthread_join(t[i], NULL);
  hs_free(t);
  pthread_mutex_destroy(&s.mu);

  size_t bytes = sizeof(head) + per * m->nout * sizeof(double);
  HS_ASSERT(bytes <= INT32_MAX, "a batch is at most ranks x jobs points");
  unsigned char *mine = hs_calloc(bytes, 1);
  head h = {.failed = -1};
  for (size_t j = 0; j < s.count && h.failed < 0; j++)
    if (s.st[j] != HS_OK) {
      h.failed = (int64_t)j;
      h.status = s.st[j];
      memcpy(h.msg, s.err[j].msg, sizeof h.msg);
      h.msg[sizeof h.msg - 1] = '\0';
    }
  memcpy(mine, &h, sizeof h);
  memcpy(mine + sizeof h, s.out, s.count * m->nout * sizeof(double));
  unsigned char *all = rank == 0 ? hs_malloc(bytes * R) : NULL;
  m->t->gather(mine, bytes, all, 0);
  hs_status st = HS_OK;
  if (rank == 0) {
    size_t low = n;
    for (size_t r = 0; r < R; r++) {
      const unsigned char *b = all + r * bytes;
      memcpy(&h, b, sizeof h);
      for (size_t j = 0; r + j * R < n; j++)
        memcpy(out + (r + j * R) * m->nout, b + sizeof h + j * m->nout * sizeof(double),
               m->nout * sizeof(double));
      if (h.failed >= 0 && r + (size_t)h.failed * R < low) {
        low = r + (size_t)h.failed * R;
        st = (hs_status)h.status;
        if (err) {
          err->status = st;
          memcpy(err->msg, h.msg, sizeof err->msg);
        }
      }
    }
    if (failed) *failed = low;
  }
  hs_free(all);
  hs_free(mine);
  hs_free(s.out);
  hs_free(s.st);
  hs_free(s.err);
  return st;
}

hs_status opt_ranks_batch(const opt_ranks *m, const char *const *text, size_t n, double *out,
                          size_t *failed, hs_error *err) {
  uint64_t h[H_LEN] = {n, 0, 0};
  for (size_t i = 0; i < n * m->nvars; i++) h[H_BYTES] += strlen(text[i]) + 1;
  char *packed = hs_malloc(h[H_BYTES] + 1), *p = packed;
  for (size_t i = 0; i < n * m->nvars; i++) {
    size_t len = strlen(text[i]) + 1;
    memcpy(p, text[i], len);
    p += len;
  }
  m->t->bcast(h, sizeof h, 0);
  m->t->bcast(packed, (size_t)h[H_BYTES], 0);
  hs_free(packed);
  return batch(m, text, n, out, failed, err);
}

void opt_ranks_stop(const opt_ranks *m) {
  uint64_t h[H_LEN] = {0, 0, 1};
  m->t->bcast(h, sizeof h, 0);
}

void opt_ranks_serve(const opt_ranks *m) {
  for (;;) {
    uint64_t h[H_LEN];
    m->t->bcast(h, sizeof h, 0);
    if (h[H_STOP]) return;
    size_t n = (size_t)h[H_N], nt = n * m->nvars;
    char *packed = hs_malloc((size_t)h[H_BYTES] + 1);
    m->t->bcast(packed, (size_t)h[H_BYTES], 0);
    packed[h[H_BYTES]] = '\0';
    const char **text = hs_calloc(nt + 1, sizeof *text);
    const char *p = packed, *end = packed + h[H_BYTES];
    for (size_t i = 0; i < nt; i++) {
      HS_ASSERT(p < end, "rank 0 sent n * nvars strings");
      text[i] = p;
      p += strlen(p) + 1;
    }
    (void)batch(m, text, n, NULL, NULL, NULL); /* rank 0 reports */
    hs_free(text);
    hs_free(packed);
  }
}
