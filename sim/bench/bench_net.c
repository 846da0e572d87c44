/* bench_net.c: many uploads into one server link through hs_net.
 *
 * Two workloads per population N (10^4 and 10^5 by default, or the sizes given
 * on the command line), four access-link types, one 10 Gbit/s server link:
 *  - "together":  all N uploads start at t = 0 (a PMA round with equal shares);
 *  - "staggered": upload starts spread uniformly over 60 s, as when devices
 *    finish training at different times; every start and every completion is
 *    its own event with its own max-min update;
 *  - "rounds": the network part of PMA, 10 rounds: every device downloads the
 *    model (all at once), computes for a random 10-70 s (one engine event),
 *    uploads; the next round starts at the last arrival. Reports device-rounds/s.
 * Prints simulated makespan, events, rate updates, wall time and flows/s. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/hs_engine.h"
#include "sim/hs_net.h"
#include "base/hs_rng.h"

typedef struct access_type {
  const char *name;
  double mbps, ms;
} access_type;

static const access_type types[] = {
    {"wifi", 50, 8}, {"lte", 20, 40}, {"ethernet", 1000, 1}, {"adsl", 8, 25}};
#define NTYPES (sizeof types / sizeof types[0])

typedef struct bench {
  hs_net *net;
  int server;
  double bytes;
  uint64_t done;
  double last_s;
  /* rounds */
  hs_rng rng;
  size_t n, pending;
  unsigned round, rounds;
} bench;

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void uploaded(hs_engine *eng, void *subject, uint64_t arg) {
  (void)arg;
  bench *b = subject;
  b->done++;
  b->last_s = hs_engine_now(eng);
}

static void start_upload(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  bench *b = subject;
  const access_type *t = &types[arg % NTYPES];
  hs_net_transfer(b->net, b->bytes, t->mbps * HS_NET_BPS_PER_MBPS, t->ms * HS_NET_S_PER_MS,
                  &b->server, 1, uploaded, b, arg);
}

static void run(size_t n, int staggered) {
  hs_engine *eng = hs_engine_create(2 * n);
  bench b = {.net = hs_net_create(eng), .bytes = 10e6}; /* a 10 MB model */
  b.server = hs_net_add_link(b.net, "server", 10e3 * HS_NET_BPS_PER_MBPS, 1 * HS_NET_S_PER_MS);
  hs_rng rng;
  hs_rng_init(&rng, 1, 0, HS_RNG_BENCH);

  double t0 = wall_s();
  for (size_t i = 0; i < n; i++) {
    if (staggered)
      hs_engine_schedule(eng, 60.0 * hs_rng_uniform(&rng), 0, start_upload, &b, i);
    else
      start_upload(eng, &b, i);
  }
  hs_engine_run(eng);
  double wall = wall_s() - t0;

  hs_net_stats st;
  hs_net_get_stats(b.net, &st);
  printf("%-9s N=%-7zu makespan %9.3f s  events %8llu  rate updates %8llu  "
         "wall %8.4f s  %11.0f flows/s%s\n",
         staggered ? "staggered" : "together", n, b.last_s, (unsigned long long)st.events,
         (unsigned long long)st.rate_updates, wall, (double)n / wall,
         b.done == n ? "" : "  INCOMPLETE");
  hs_net_destroy(b.net);
  hs_engine_destroy(eng);
}

static void start_round(hs_engine *eng, bench *b);

static void round_uploaded(hs_engine *eng, void *subject, uint64_t arg) {
  (void)arg;
  bench *b = subject;
  b->done++;
  if (--b->pending == 0) {
    b->last_s = hs_engine_now(eng);
    if (++b->round < b->rounds) start_round(eng, b);
  }
}

static void round_computed(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  bench *b = subject;
  const access_type *t = &types[arg % NTYPES];
  hs_net_transfer(b->net, b->bytes, t->mbps * HS_NET_BPS_PER_MBPS, t->ms * HS_NET_S_PER_MS,
                  &b->server, 1, round_uploaded, b, arg);
}

static void round_downloaded(hs_engine *eng, void *subject, uint64_t arg) {
  bench *b = subject;
  hs_engine_schedule_in(eng, 10 + 60 * hs_rng_uniform(&b->rng), 0, round_computed, b, arg);
}

static void start_round(hs_engine *eng, bench *b) {
  (void)eng;
  b->pending = b->n;
  for (size_t i = 0; i < b->n; i++) {
    const access_type *t = &types[i % NTYPES];
    hs_net_transfer(b->net, b->bytes, t->mbps * HS_NET_BPS_PER_MBPS, t->ms * HS_NET_S_PER_MS,
                    &b->server, 1, round_downloaded, b, i);
  }
}

static void run_rounds(size_t n, unsigned rounds) {
  hs_engine *eng = hs_engine_create(2 * n);
  bench b = {.net = hs_net_create(eng), .bytes = 10e6};
  b.server = hs_net_add_link(b.net, "server", 10e3 * HS_NET_BPS_PER_MBPS, 1 * HS_NET_S_PER_MS);
  hs_rng_init(&b.rng, 1, 0, HS_RNG_BENCH);
  b.n = n;
  b.rounds = rounds;
  double t0 = wall_s();
  start_round(eng, &b);
  hs_engine_run(eng);
  double wall = wall_s() - t0;
  hs_net_stats st;
  hs_net_get_stats(b.net, &st);
  printf("rounds    N=%-7zu x %2u  makespan %9.1f s  events %8llu  wall %8.4f s  "
         "%11.0f device-rounds/s%s\n",
         n, rounds, b.last_s, (unsigned long long)st.events, wall, (double)n * rounds / wall,
         b.done == n * rounds ? "" : "  INCOMPLETE");
  hs_net_destroy(b.net);
  hs_engine_destroy(eng);
}

int main(int argc, char **argv) {
  size_t sizes[8] = {10000, 100000};
  int nsizes = 2;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 8; i++) sizes[nsizes++] = strtoul(argv[i], NULL, 10);
  }
  printf("hs_net: uploads of 10 MB into one 10 Gbit/s server link, access links "
         "50/20/1000/8 Mbit/s\n");
  for (int k = 0; k < nsizes; k++) {
    run(sizes[k], 0);
    run(sizes[k], 1);
    run_rounds(sizes[k], 10);
  }
  return 0;
}
