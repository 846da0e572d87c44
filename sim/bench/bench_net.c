/* bench_net.c: many uploads into one server link through hs_net.
 *
 * Two workloads per population N (10^4 and 10^5 by default, or the sizes given
 * on the command line), four access-link types, one 10 Gbit/s server link:
 *  - "together":  all N uploads start at t = 0 (a PMA round with equal shares);
 *  - "staggered": upload starts spread uniformly over 60 s, as when devices
 *    finish training at different times; every start and every completion is
 *    its own event with its own max-min update.
 * Prints simulated makespan, events, rate updates, wall time and flows/s. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hs_engine.h"
#include "hs_net.h"
#include "hs_rng.h"

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
  bench b = {hs_net_create(eng), 0, 10e6, 0, 0}; /* a 10 MB model */
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
  }
  return 0;
}
