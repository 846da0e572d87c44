/* test_collective.c: every collective against its closed form with numbers
 * worked by hand, p = 1, parameter checks, and star against the fluid network. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sim/hs_collective.h"
#include "sim/hs_engine.h"
#include "sim/hs_net.h"

static bool near(double got, double want) {
  return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want));
}

#define expect_near(got, want) \
  cr_expect(near((got), (want)), "got %.17g, want %.17g", (double)(got), (double)(want))

/* n = 1 MB, alpha = 1 ms, beta = 1 Gbit/s: 8n/beta = 8 ms. */
static hs_coll_params base(uint32_t p) {
  return (hs_coll_params){.bytes = 1e6, .ranks = p, .alpha_s = 1e-3, .beta_bps = 1e9};
}

static double time_of(const char *name, hs_coll_params c) {
  const hs_collective_type *t = hs_collective_find(name);
  cr_assert(t, "no collective %s", name);
  double s = NAN;
  hs_error err = {0};
  cr_assert_eq(hs_collective_time(t, &c, &s, &err), HS_OK, "%s: %s", name, err.msg);
  return s;
}

Test(collective, registry_lists_each_kind_once) {
  const char *names[] = {"ring", "tree", "hierarchical", "allgather", "reducescatter", "star"};
  cr_assert_eq(hs_collective_count(), 6);
  for (size_t i = 0; i < 6; i++) {
    const hs_collective_type *t = hs_collective_find(names[i]);
    cr_assert(t, "%s", names[i]);
    cr_expect_str_eq(t->name, names[i]);
    cr_expect(t->formula && t->time_s);
    bool listed = false;
    for (size_t k = 0; k < hs_collective_count(); k++) listed |= hs_collective_at(k) == t;
    cr_expect(listed);
  }
  cr_expect_null(hs_collective_find("butterfly"));
  cr_expect_null(hs_collective_find(NULL));
}

Test(collective, ring_allreduce) {
  /* 2*3*1ms + 2*3/4*8ms = 6 + 12 ms */
  expect_near(time_of("ring", base(4)), 0.018);
  /* p = 2: 2 ms + 8 ms */
  expect_near(time_of("ring", base(2)), 0.010);
  cr_expect_eq(time_of("ring", base(1)), 0.0);
}

Test(collective, tree_allreduce_uses_ceil_log2) {
  expect_near(time_of("tree", base(2)), 2 * 1 * 0.009);
  expect_near(time_of("tree", base(5)), 2 * 3 * 0.009);
  expect_near(time_of("tree", base(8)), 2 * 3 * 0.009);
  expect_near(time_of("tree", base(9)), 2 * 4 * 0.009);
  expect_near(time_of("tree", base(1024)), 2 * 10 * 0.009);
  expect_near(time_of("tree", base(1025)), 2 * 11 * 0.009);
  cr_expect_eq(time_of("tree", base(1)), 0.0);
}

Test(collective, hierarchical_allreduce_two_tiers) {
  hs_coll_params c = {.bytes = 1e6, .ranks = 8, .alpha_s = 1e-5, .beta_bps = 1e11,
                      .ranks_per_node = 4, .inter_alpha_s = 1e-3, .inter_beta_bps = 1e9};
  /* intra pass: 3*10us + 3/4 * 80us = 90 us, twice; inter ring of 250 kB over
   * 2 nodes: 2*(1 ms + 1/2 * 2 ms) = 4 ms */
  expect_near(time_of("hierarchical", c), 0.004 + 2 * 90e-6);
  /* g = 1: a plain ring over the inter tier */
  hs_coll_params g1 = c;
  g1.ranks_per_node = 1;
  hs_coll_params r = {.bytes = 1e6, .ranks = 8, .alpha_s = 1e-3, .beta_bps = 1e9};
  expect_near(time_of("hierarchical", g1), time_of("ring", r));
  /* one node: a plain ring over the intra tier */
  hs_coll_params m1 = c;
  m1.ranks_per_node = 8;
  hs_coll_params r2 = {.bytes = 1e6, .ranks = 8, .alpha_s = 1e-5, .beta_bps = 1e11};
  expect_near(time_of("hierarchical", m1), time_of("ring", r2));
  hs_coll_params one = c;
  one.ranks = 1;
  one.ranks_per_node = 1;
  cr_expect_eq(time_of("hierarchical", one), 0.0);
}

Test(collective, allgather_and_reducescatter_are_one_ring_pass) {
  /* 3 * 1 ms + 3/4 * 8 ms */
  expect_near(time_of("allgather", base(4)), 0.009);
  expect_near(time_of("reducescatter", base(4)), 0.009);
  /* all-reduce = reduce-scatter + all-gather */
  expect_near(time_of("ring", base(7)),
              time_of("reducescatter", base(7)) + time_of("allgather", base(7)));
  cr_expect_eq(time_of("allgather", base(1)), 0.0);
  cr_expect_eq(time_of("reducescatter", base(1)), 0.0);
}

Test(collective, star_is_bound_by_the_server_link_or_the_slowest_worker) {
  hs_coll_params c = {.bytes = 1e6, .ranks = 10, .alpha_s = 0.01, .beta_bps = 1e9,
                      .server_beta_bps = 1e9};
  /* server: 10 * 8 ms = 80 ms > worker 8 ms */
  expect_near(time_of("star", c), 2 * (0.01 + 0.08));
  /* slow workers: 8e6 / 50e6 = 160 ms > 80 ms */
  c.beta_bps = 50e6;
  expect_near(time_of("star", c), 2 * (0.01 + 0.16));
  /* one worker still talks to a separate server */
  c.ranks = 1;
  expect_near(time_of("star", c), 2 * (0.01 + 0.16));
}

Test(collective, bad_parameters_name_the_field) {
  const hs_collective_type *ring = hs_collective_find("ring");
  const hs_collective_type *hier = hs_collective_find("hierarchical");
  const hs_collective_type *star = hs_collective_find("star");
  hs_error err = {0};
  double s = 123;
  hs_coll_params c = base(4);
  c.beta_bps = -1;
  cr_expect_eq(hs_collective_time(ring, &c, &s, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "beta_bps"), "%s", err.msg);
  cr_expect_eq(s, 123, "no time on error");
  c = base(0);
  cr_expect_eq(hs_collective_check(ring, &c, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, "ranks"), "%s", err.msg);
  c = base(4);
  c.bytes = NAN;
  cr_expect_eq(hs_collective_check(ring, &c, &err), HS_EINVAL);
  c = base(4);
  c.alpha_s = -1e-3;
  cr_expect_eq(hs_collective_check(ring, &c, &err), HS_EINVAL);
  c = base(6);
  c.ranks_per_node = 4;
  c.inter_beta_bps = 1e9;
  cr_expect_eq(hs_collective_check(hier, &c, &err), HS_EINVAL, "4 does not divide 6");
  cr_expect(strstr(err.msg, "ranks_per_node"), "%s", err.msg);
  c.ranks_per_node = 3;
  cr_expect_eq(hs_collective_check(hier, &c, &err), HS_OK);
  c.inter_beta_bps = 0;
  cr_expect_eq(hs_collective_check(hier, &c, &err), HS_EINVAL);
  c = base(4);
  cr_expect_eq(hs_collective_check(star, &c, &err), HS_EINVAL, "star needs server_beta_bps");
  cr_expect(strstr(err.msg, "server_beta_bps"), "%s", err.msg);
  cr_expect_eq(hs_collective_check(ring, &c, &err), HS_OK, "ring ignores the server");
}

Test(collective, slowest_participant) {
  double a[] = {1e-3, 5e-3, 2e-3}, b[] = {1e9, 1e8, 4e8};
  double alpha, beta;
  hs_collective_slowest(a, b, 3, &alpha, &beta);
  cr_expect_eq(alpha, 5e-3);
  cr_expect_eq(beta, 1e8);
}

/* ---- star against the fluid network: p uploads, then p downloads ---- */

typedef struct ps {
  hs_net *net;
  int server;
  double bytes, lat_s;
  const double *cap;
  uint32_t p, left;
  double end_s;
} ps;

static void down_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)arg;
  ps *s = subject;
  if (--s->left == 0) s->end_s = hs_engine_now(eng);
}

static void up_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  ps *s = subject;
  if (--s->left) return;
  s->left = s->p; /* the server averages at the last arrival, then sends back */
  for (uint32_t i = 0; i < s->p; i++)
    hs_net_transfer(s->net, s->bytes, s->cap[i], s->lat_s, &s->server, 1, down_done, s, i);
}

static double star_by_simulation(const double *cap, uint32_t p, double server_bps) {
  hs_engine *e = hs_engine_create(0);
  ps s = {hs_net_create(e), 0, 1e6, 0.01, cap, p, p, NAN};
  s.server = hs_net_add_link(s.net, "server", server_bps, 0);
  for (uint32_t i = 0; i < p; i++)
    hs_net_transfer(s.net, s.bytes, cap[i], s.lat_s, &s.server, 1, up_done, &s, i);
  hs_engine_run(e);
  hs_net_destroy(s.net);
  hs_engine_destroy(e);
  return s.end_s;
}

Test(collective, star_matches_the_fluid_network) {
  enum { P = 50 };
  double cap[P];
  for (uint32_t i = 0; i < P; i++) cap[i] = (i % 3 == 0) ? 100e6 : (i % 3 == 1) ? 200e6 : 1e9;
  /* server-bound: 50 * 8 ms = 400 ms > 8e6/100e6 = 80 ms */
  hs_coll_params c = {.bytes = 1e6, .ranks = P, .alpha_s = 0.01, .beta_bps = 100e6,
                      .server_beta_bps = 1e9};
  double want = time_of("star", c);
  expect_near(want, 2 * (0.01 + 0.4));
  cr_expect(fabs(star_by_simulation(cap, P, 1e9) - want) <= 1e-9);
  /* worker-bound: one slow worker at 10 Mbit/s: 800 ms > 400 ms */
  cap[7] = 10e6;
  c.beta_bps = 10e6;
  want = time_of("star", c);
  expect_near(want, 2 * (0.01 + 0.8));
  cr_expect(fabs(star_by_simulation(cap, P, 1e9) - want) <= 1e-9);
}
