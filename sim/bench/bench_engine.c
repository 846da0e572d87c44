/* bench_engine.c: the classic hold model on the event engine.
 *
 * Fill the pending set with N events at Exp(1) times; then each dispatched event
 * schedules one more at now + Exp(1), so the set stays at N. Prints events/s for
 * N = 10^3, 10^5, 10^6 (or the sizes given on the command line). One thread.
 * Targets on the 2-core reference machine: >= 10M events/s at N = 10^3 and
 * >= 10M events/s at N = 10^6. The wall clock is read here, never in the engine;
 * events per CPU second are printed too (steadier when the machine is shared).
 *
 * Second model, "burst" (the shape of a PMA round at scale): one event far
 * ahead (the network's next completion, 300 s), then N events scheduled from
 * one handler within ~3 s, in six blocks each earlier than the one before
 * (device types listed in order, each faster than the last); half of them
 * schedule a follow-up 1-2 ms later (an upload's admission). The far event
 * starts the next round; 5 rounds. This is the case the calendar's rungs
 * exist for (evq.c); the hold model never reaches them. "burst-post" is the
 * same with the N events posted (hs_engine_post: no ids, no slots).
 *
 * Third model, "pma-post" (a PMA round as the engine sees it): two link
 * classes each finish their N/2 downloads in one event, which posts N/2
 * compute ends (times over ~3 s, six board types, each type's slower than
 * the last); every compute end moves one timer kept apart (the network's
 * next event: hs_engine_schedule_apart, rescheduled), which fires now and
 * then; a far event (the round's deadline) starts the next round; 5 rounds.
 * Posted bursts are sorted into runs (engine.c): this line shows their cost. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/hs_engine.h"
#include "base/hs_rng.h"

typedef struct hold {
  hs_rng rng;
  uint64_t left;
} hold;

static void on_event(hs_engine *eng, void *subject, uint64_t arg) {
  hold *h = subject;
  if (--h->left == 0) {
    hs_engine_stop(eng);
    return;
  }
  hs_engine_schedule_in(eng, hs_rng_exponential(&h->rng, 1.0), 0, on_event, h, arg);
}

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run(size_t n, uint64_t events) {
  hs_engine *eng = hs_engine_create(n + 1);
  hold h;
  hs_rng_init(&h.rng, 42, n, HS_RNG_BENCH);
  h.left = events;
  for (size_t i = 0; i < n; i++)
    hs_engine_schedule(eng, hs_rng_exponential(&h.rng, 1.0), 0, on_event, &h, i);
  /* Warm up with a tenth of the events, then measure. */
  uint64_t warm = events / 10;
  h.left = warm;
  hs_engine_run(eng);
  h.left = events;
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t done = hs_engine_run(eng);
  double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  /* On a shared machine the CPU-time rate is the steadier of the two. */
  printf("hold  pending=%-8zu events=%-9llu wall_s=%.3f  events_per_s=%.0f  per_cpu_s=%.0f\n",
         n, (unsigned long long)done, dt, (double)done / dt, (double)done / dc);
  hs_engine_destroy(eng);
}

typedef struct burst {
  hs_rng rng;
  size_t n;
  int rounds;
  int post;
} burst;

static void on_follow(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)subject;
  (void)arg;
}

static void on_burst(hs_engine *eng, void *subject, uint64_t arg) {
  burst *b = subject;
  double u = hs_rng_uniform(&b->rng);
  if (u < 0.5) hs_engine_schedule_in(eng, 1e-3 * (1 + 2 * u), 0, on_follow, b, arg);
}

static void on_far(hs_engine *eng, void *subject, uint64_t arg) {
  burst *b = subject;
  (void)arg;
  if (b->rounds-- == 0) return;
  hs_engine_schedule_in(eng, 300.0, 0, on_far, b, 0);
  for (size_t i = 0; i < b->n; i++) {
    unsigned k = (unsigned)(i * 6 / b->n);
    double t = 0.05 * (double)(1u << (5 - k)) * (1 + 0.2 * hs_rng_uniform(&b->rng));
    if (b->post)
      hs_engine_post(eng, hs_engine_now(eng) + t, 0, on_burst, b, i);
    else
      hs_engine_schedule_in(eng, t, 0, on_burst, b, i);
  }
}

typedef struct pma {
  hs_rng rng;
  size_t n;
  int rounds;
  hs_event_id timer;
} pma;

static void on_timer(hs_engine *eng, void *subject, uint64_t arg) {
  pma *p = subject;
  (void)arg;
  p->timer = 0;
  (void)eng;
}

static void on_compute(hs_engine *eng, void *subject, uint64_t arg) {
  pma *p = subject;
  /* The network's timer: moved to a little later, or armed anew. */
  double t = hs_engine_now(eng) + 1e-3 * (1 + hs_rng_uniform(&p->rng));
  if (!p->timer || !hs_engine_reschedule(eng, p->timer, t))
    p->timer = hs_engine_schedule_apart(eng, t, 0, on_timer, p, arg);
}

static void on_class_done(hs_engine *eng, void *subject, uint64_t cls) {
  pma *p = subject;
  double now = hs_engine_now(eng);
  for (size_t i = cls; i < p->n; i += 2) {
    unsigned k = (unsigned)(i * 6 / p->n); /* board type */
    double w = 0.4 * (1 + 0.1 * k) * (1 + 0.25 * hs_rng_uniform(&p->rng));
    hs_engine_post(eng, now + w, 0, on_compute, p, i);
  }
}

static void on_round(hs_engine *eng, void *subject, uint64_t arg) {
  pma *p = subject;
  (void)arg;
  if (p->rounds-- == 0) return;
  hs_engine_schedule_in(eng, 300.0, 0, on_round, p, 0);
  hs_engine_schedule_in(eng, 0.3, 0, on_class_done, p, 0); /* gbe */
  hs_engine_schedule_in(eng, 1.2, 0, on_class_done, p, 1); /* wifi */
}

static void run_pma(size_t n) {
  hs_engine *eng = hs_engine_create(n + 1);
  pma p = {.n = n, .rounds = 5};
  hs_rng_init(&p.rng, 44, n, HS_RNG_BENCH);
  hs_engine_schedule(eng, 600.0, 0, on_round, &p, 0);
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t done = hs_engine_run(eng);
  double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  printf("pma-post pending=%-8zu events=%-9llu wall_s=%.3f  events_per_s=%.0f  per_cpu_s=%.0f\n", n,
         (unsigned long long)done, dt, (double)done / dt, (double)done / dc);
  hs_engine_destroy(eng);
}

static void run_burst(size_t n, int post) {
  hs_engine *eng = hs_engine_create(n + 1);
  burst b = {.n = n, .rounds = 5, .post = post};
  hs_rng_init(&b.rng, 43, n, HS_RNG_BENCH);
  hs_engine_schedule(eng, 0.0, 0, on_far, &b, 0);
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  uint64_t done = hs_engine_run(eng);
  double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  printf("%s pending=%-8zu events=%-9llu wall_s=%.3f  events_per_s=%.0f  per_cpu_s=%.0f\n",
         post ? "burst-post" : "burst", n, (unsigned long long)done, dt, (double)done / dt,
         (double)done / dc);
  hs_engine_destroy(eng);
}

int main(int argc, char **argv) {
  if (argc > 1 && (argv[1][0] == '-')) {
    printf("usage: hs-bench-engine [PENDING ...]\n"
           "Hold-model, burst and PMA-round benchmarks of the event engine (default sizes\n"
           "1000 100000 1000000).\n"
           "example: hs-bench-engine 1000 1000000\n");
    return 0;
  }
  size_t sizes[16] = {1000, 100000, 1000000};
  int nsizes = 3;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 16; i++) sizes[nsizes++] = (size_t)strtoull(argv[i], NULL, 10);
  }
  for (int i = 0; i < nsizes; i++) run(sizes[i], sizes[i] >= 1000000 ? 10000000 : 20000000);
  for (int i = 0; i < nsizes; i++) run_burst(sizes[i], 0);
  for (int i = 0; i < nsizes; i++) run_burst(sizes[i], 1);
  for (int i = 0; i < nsizes; i++) run_pma(sizes[i]);
  return 0;
}
