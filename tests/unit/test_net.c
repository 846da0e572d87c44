/* test_net.c: the fluid network against hand-computed completion times, the
 * max-min property on random workloads, and byte conservation per link.
 * Callback interning, slot reuse and FIFO liveness are in test_net_slots.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/hs_engine.h"
#include "sim/hs_net.h"
#include "base/hs_rng.h"
#include "base/hs_status.h"
#include "test_net_helpers.h"



/* ---- flows that start later, from an engine event ---- */

typedef struct later {
  hs_net *net;
  logbook *lb;
  double bytes, cap_bps, latency_s;
  int links[4];
  size_t nlinks;
  hs_flow_id id;
} later;

static void start_later(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  later *L = subject;
  L->id = hs_net_transfer(L->net, L->bytes, L->cap_bps, L->latency_s, L->links, L->nlinks,
                          on_done, L->lb, arg);
  cr_assert_neq(L->id, 0);
}

static void cancel_later(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  later *L = subject;
  cr_assert(hs_net_cancel(L->net, L->id));
  cr_assert(!hs_net_cancel(L->net, L->id), "a cancelled id is stale");
}

Test(net, one_flow_alone_is_latency_plus_size_over_bandwidth) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int srv = hs_net_add_link(n, "server", 100e6, 0.005);
  cr_assert_eq(srv, 0);
  cr_assert_eq(hs_net_link_find(n, "server"), 0);
  cr_assert_eq(hs_net_link_find(n, "wan"), HS_ENOENT);
  hs_flow_id f = hs_net_transfer(n, 1 * MB, INFINITY, 0.010, &srv, 1, on_done, lb, 0);
  cr_assert_neq(f, 0);
  /* capped by its own access link only: 1 MB at 8 Mbit/s = 1 s */
  hs_flow_id g = hs_net_transfer(n, 1 * MB, 8e6, 0.020, NULL, 0, on_done, lb, 1);
  cr_assert_eq(hs_net_flow_rate(n, f), 0, "latency phase: not in the fluid system yet");
  expect_near(hs_net_flow_remaining_bytes(n, f), 1 * MB);

  hs_engine_run_until(e, 0.05);
  expect_near(hs_net_flow_rate(n, f), 100e6);
  expect_near(hs_net_link_load_bps(n, srv), 100e6);
  expect_near(hs_net_flow_remaining_bytes(n, f), 1 * MB - 100e6 / 8 * (0.05 - 0.015));
  expect_near(hs_net_flow_rate(n, g), 8e6);

  hs_engine_run(e);
  expect_near(lb->t[0], 0.015 + 8e6 / 100e6);
  expect_near(lb->t[1], 0.020 + 1.0);
  cr_expect(!hs_net_flow_pending(n, f));
  cr_expect(isnan(hs_net_flow_remaining_bytes(n, f)));
  cr_expect(!hs_net_cancel(n, f), "a completed flow cannot be cancelled");
  expect_near(hs_net_link_bytes(n, srv), 1 * MB);
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  cr_expect_eq(st.flows_completed, 2);
  cr_expect_eq(st.flows_active + st.flows_latent, 0);
  expect_near(st.bytes_delivered, 2 * MB);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, two_flows_share_a_link_equally_until_one_ends) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 8e6, 0); /* 1 MB/s */
  hs_flow_id a = hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 0);
  hs_flow_id b = hs_net_transfer(n, 2 * MB, INFINITY, 0, &l, 1, on_done, lb, 1);
  hs_engine_run_until(e, 1.0);
  expect_near(hs_net_flow_rate(n, a), 4e6);
  expect_near(hs_net_flow_rate(n, b), 4e6);
  hs_engine_run(e);
  /* each at 0.5 MB/s: a ends at 2 s; b then has 1 MB left alone at 1 MB/s */
  expect_near(lb->t[0], 2.0);
  expect_near(lb->t[1], 3.0);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, a_capped_flow_leaves_the_rest_to_the_others) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 10e6, 0);
  hs_flow_id a = hs_net_transfer(n, 125000, 1e6, 0, &l, 1, on_done, lb, 0);
  hs_flow_id b = hs_net_transfer(n, 562500, INFINITY, 0, &l, 1, on_done, lb, 1);
  hs_flow_id c = hs_net_transfer(n, 1125000, INFINITY, 0, &l, 1, on_done, lb, 2);
  hs_engine_run_until(e, 0.5);
  /* max-min: 1 + 4.5 + 4.5, not an equal split of 3.33 each */
  expect_near(hs_net_flow_rate(n, a), 1e6);
  expect_near(hs_net_flow_rate(n, b), 4.5e6);
  expect_near(hs_net_flow_rate(n, c), 4.5e6);
  expect_near(hs_net_link_load_bps(n, l), 10e6);
  hs_engine_run(e);
  expect_near(lb->t[0], 1.0);
  expect_near(lb->t[1], 1.0);
  expect_near(lb->t[2], 1.0 + 562500 * 8 / 10e6);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, a_thousand_uploads_into_one_server_link) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int srv = hs_net_add_link(n, "server", 1e9, 0.001);
  for (uint64_t i = 0; i < 1000; i++)
    cr_assert_neq(hs_net_transfer(n, 1 * MB, 100e6, 0.010, &srv, 1, on_done, lb, i), 0);
  hs_engine_run(e);
  cr_assert_eq(lb->n, 1000);
  for (size_t i = 0; i < 1000; i++) {
    expect_near(lb->t[i], 0.011 + 1000 * 8e6 / 1e9);
    cr_expect_eq(lb->order[i], i, "equal-time completions in transfer order");
  }
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  cr_expect_leq(st.rate_updates, 2, "one filling for all admissions, one for all completions");
  cr_expect_eq(st.classes, 1);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

/* An idle network hands its slots out in ascending order again (net.c
 * maybe_reorder_free): ids of ended flows stay stale, new ids are distinct and
 * pending, and the new flows still complete in transfer order. */
Test(net, ids_stay_unique_and_stale_across_idle_periods) {
  enum { N = 600, WAVES = 4 };
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  int srv = hs_net_add_link(n, "server", 1e9, 0.001);
  static hs_flow_id ids[WAVES][N];
  for (int w = 0; w < WAVES; w++) {
    logbook *lb = logbook_new();
    /* Sizes differ by wave, and within a wave, so slots are freed out of order. */
    for (uint64_t i = 0; i < N; i++) {
      ids[w][i] = hs_net_transfer(n, (double)(1 + (i * 7919 + (uint64_t)w) % N) * 1e3, 100e6,
                                  0.001 * (double)(i % 3), &srv, 1, on_done, lb, i);
      cr_assert(hs_net_flow_pending(n, ids[w][i]));
    }
    for (int v = 0; v < w; v++)
      for (size_t i = 0; i < N; i++) {
        cr_assert(!hs_net_flow_pending(n, ids[v][i]), "wave %d id %zu is stale", v, i);
        for (size_t j = 0; j < N; j++) cr_assert_neq(ids[v][i], ids[w][j]);
      }
    if (w == 1) cr_assert(hs_net_cancel(n, ids[w][5]));
    hs_engine_run(e);
    cr_assert_eq(lb->n, w == 1 ? N - 1 : N);
    for (size_t k = 1; k < lb->n; k++) cr_assert_leq(lb->t[lb->order[k - 1]], lb->t[lb->order[k]]);
    for (size_t i = 0; i < N; i++) cr_assert(!hs_net_cancel(n, ids[w][i]), "ended ids are stale");
    free(lb);
  }
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  cr_expect_eq(st.flows_completed, WAVES * N - 1);
  cr_expect_eq(st.flows_active + st.flows_latent, 0);
  hs_net_destroy(n);
  hs_engine_destroy(e);
}

Test(net, uploads_with_two_caps_fill_the_server_link_max_min) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int srv = hs_net_add_link(n, "server", 1e9, 0);
  /* 500 slow devices capped at 0.5 Mbit/s, 500 at 100 Mbit/s; fair share 1 Mbit/s */
  for (uint64_t i = 0; i < 1000; i++)
    hs_net_transfer(n, 1 * MB, i % 2 ? 100e6 : 0.5e6, 0, &srv, 1, on_done, lb, i);
  hs_engine_run(e);
  cr_assert_eq(lb->n, 1000);
  /* fast ones share 1e9 - 500 * 0.5e6 = 750e6: 1.5 Mbit/s each, 8e6 bits -> 16/3 s;
   * slow ones run at their cap all along: 16 s */
  for (size_t i = 0; i < 1000; i++) expect_near(lb->t[i], i % 2 ? 16.0 / 3.0 : 16.0);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, staggered_starts_are_recomputed_at_each_arrival_and_departure) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 8e6, 0); /* 1 MB/s */
  later B = {n, lb, 0.5 * MB, INFINITY, 0, {l}, 1, 0};
  later C = {n, lb, 0.25 * MB, 2e6, 0, {l}, 1, 0}; /* capped at 0.25 MB/s */
  hs_net_transfer(n, 2 * MB, INFINITY, 0, &l, 1, on_done, lb, 0); /* A */
  hs_engine_schedule(e, 1.0, 0, start_later, &B, 1);
  hs_engine_schedule(e, 1.5, 0, start_later, &C, 2);
  hs_engine_run(e);
  /* [0,1] A alone: 1 MB left. [1,1.5] A,B at 0.5: A 0.75, B 0.25 left.
   * [1.5,13/6] C at its cap 0.25, A,B at 0.375: B ends at 1.5 + 0.25/0.375;
   *   A 0.5, C 1/12 left. [13/6,2.5] C at 0.25, A at 0.75: C ends at 2.5, A 0.25
   *   left. [2.5,2.75] A alone at 1 MB/s. */
  expect_near(lb->t[1], 13.0 / 6.0);
  expect_near(lb->t[2], 2.5);
  expect_near(lb->t[0], 2.75);
  cr_expect_eq(lb->order[0], 1);
  cr_expect_eq(lb->order[1], 2);
  cr_expect_eq(lb->order[2], 0);
  expect_near(hs_net_link_bytes(n, l), 2.75 * MB);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, two_shared_links_in_series_the_bottleneck_decides) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int x = hs_net_add_link(n, "x", 10e6, 0.001);
  int y = hs_net_add_link(n, "y", 4e6, 0.002);
  int both[] = {y, x, y}; /* order and duplicates do not matter */
  hs_flow_id f1 = hs_net_transfer(n, 1 * MB, INFINITY, 0, both, 3, on_done, lb, 1);
  hs_flow_id f2 = hs_net_transfer(n, 1 * MB, INFINITY, 0, &x, 1, on_done, lb, 2);
  hs_flow_id f3 = hs_net_transfer(n, 0.25 * MB, INFINITY, 0, &y, 1, on_done, lb, 3);
  hs_engine_run_until(e, 0.01);
  /* y (4 Mbit/s) is f1's bottleneck: f1 = f3 = 2; f2 takes the rest of x: 8 */
  expect_near(hs_net_flow_rate(n, f1), 2e6);
  expect_near(hs_net_flow_rate(n, f2), 8e6);
  expect_near(hs_net_flow_rate(n, f3), 2e6);
  expect_near(hs_net_link_load_bps(n, x), 10e6);
  expect_near(hs_net_link_load_bps(n, y), 4e6);
  hs_engine_run(e);
  /* path latencies: f1 0.003 (each link once), f2 0.001, f3 0.002.
   * [0.001,0.003] f2 alone on x at 10e6: 2e4 bits; then 8e6: ends 1.0005.
   * [0.002,0.003] f3 alone on y at 4e6: 4e3 bits; then 2e6: ends 1.001.
   * f1 at 2e6 from 0.003 to 1.001 (1.996e6 bits), then alone at y's 4e6. */
  expect_near(lb->t[2], 1.0005);
  expect_near(lb->t[3], 1.001);
  expect_near(lb->t[1], 1.001 + (8e6 - 1.996e6) / 4e6);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, series_links_exact_without_latency) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int x = hs_net_add_link(n, "x", 10e6, 0);
  int y = hs_net_add_link(n, "y", 4e6, 0);
  int both[] = {x, y};
  hs_net_transfer(n, 1 * MB, INFINITY, 0, both, 2, on_done, lb, 1);
  hs_net_transfer(n, 1 * MB, INFINITY, 0, &x, 1, on_done, lb, 2);
  hs_net_transfer(n, 0.25 * MB, INFINITY, 0, &y, 1, on_done, lb, 3);
  hs_engine_run(e);
  /* f2, f3 end at 1 s; f1 has sent 2e6 of 8e6 bits, the rest at 4e6: +1.5 s */
  expect_near(lb->t[2], 1.0);
  expect_near(lb->t[3], 1.0);
  expect_near(lb->t[1], 2.5);
  expect_near(hs_net_link_bytes(n, x), 2 * MB);
  expect_near(hs_net_link_bytes(n, y), 1.25 * MB);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, cancel_frees_the_bandwidth_and_silences_the_callback) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 8e6, 0);
  hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 0);
  later B = {n, lb, 0, 0, 0, {0}, 0, 0};
  B.id = hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 1);
  later D = {n, lb, 0, 0, 0, {0}, 0, 0};
  D.id = hs_net_transfer(n, 1 * MB, INFINITY, 5.0, &l, 1, on_done, lb, 2); /* still latent at 1 s */
  hs_net_transfer(n, 1 * MB, INFINITY, 5.0, &l, 1, on_done, lb, 3); /* behind D, same latency */
  hs_engine_schedule(e, 1.0, 0, cancel_later, &B, 0);
  hs_engine_schedule(e, 1.0, 0, cancel_later, &D, 0);
  cr_expect(!hs_net_cancel(n, 0));
  hs_engine_run(e);
  /* [0,1] 0.5 MB each; then A alone: 0.5 MB at 1 MB/s. The last flow enters
   * at 5 s and has the link to itself */
  cr_assert_eq(lb->n, 2);
  expect_near(lb->t[0], 1.5);
  expect_near(lb->t[3], 6.0);
  cr_expect(isnan(lb->t[1]) && isnan(lb->t[2]));
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  cr_expect_eq(st.flows_cancelled, 2);
  expect_near(st.bytes_cancelled, 0.5 * MB);
  expect_near(hs_net_link_bytes(n, l), 2.5 * MB);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, cancelling_a_flow_in_the_middle_of_its_class) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 8e6, 0); /* 1 MB/s */
  hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 0);
  later B = {n, lb, 0, 0, 0, {0}, 0, 0};
  B.id = hs_net_transfer(n, 2 * MB, INFINITY, 0, &l, 1, on_done, lb, 1);
  hs_net_transfer(n, 3 * MB, INFINITY, 0, &l, 1, on_done, lb, 2);
  hs_engine_schedule(e, 1.5, 0, cancel_later, &B, 0);
  hs_engine_run(e);
  /* [0,1.5] 1/3 MB/s each: 0.5 MB sent. Then A, C at 0.5 MB/s: A ends at 2.5;
   * C has 2 MB left at 2.5, alone at 1 MB/s: 4.5 */
  cr_assert_eq(lb->n, 2);
  expect_near(lb->t[0], 2.5);
  expect_near(lb->t[2], 4.5);
  cr_expect(isnan(lb->t[1]));
  expect_near(hs_net_link_bytes(n, l), 4.5 * MB);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, equal_time_completions_across_classes_in_transfer_order) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  /* three flows, two classes, all exactly 1 s */
  hs_net_transfer(n, 125000, 1e6, 0, NULL, 0, on_done, lb, 0);
  hs_net_transfer(n, 250000, 2e6, 0, NULL, 0, on_done, lb, 1);
  hs_net_transfer(n, 125000, 1e6, 0, NULL, 0, on_done, lb, 2);
  hs_engine_run(e);
  cr_assert_eq(lb->n, 3);
  for (uint64_t i = 0; i < 3; i++) {
    cr_expect_eq(lb->order[i], i);
    cr_expect_eq(lb->t[i], 1.0);
  }
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, zero_bytes_complete_through_the_engine_and_bad_input_is_refused) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 1e6, 0);
  cr_expect_eq(hs_net_add_link(n, "neg", -5, 0), HS_EINVAL);
  cr_expect_eq(hs_net_add_link(n, "zero", 0, 0), HS_EINVAL);
  cr_expect_eq(hs_net_add_link(n, "nan", NAN, 0), HS_EINVAL);
  cr_expect_eq(hs_net_add_link(n, "lat", 1e6, -1), HS_EINVAL);
  cr_expect_eq(hs_net_add_link(n, "lat", 1e6, INFINITY), HS_EINVAL);
  cr_expect_eq(hs_net_link_count(n), 1);
  int bad = 7;
  cr_expect_eq(hs_net_transfer(n, -1, INFINITY, 0, &l, 1, on_done, lb, 1), 0);
  cr_expect_eq(hs_net_transfer(n, NAN, INFINITY, 0, &l, 1, on_done, lb, 1), 0);
  cr_expect_eq(hs_net_transfer(n, 1, 0, 0, &l, 1, on_done, lb, 1), 0);
  cr_expect_eq(hs_net_transfer(n, 1, -1, 0, &l, 1, on_done, lb, 1), 0);
  cr_expect_eq(hs_net_transfer(n, 1, INFINITY, -1, &l, 1, on_done, lb, 1), 0);
  cr_expect_eq(hs_net_transfer(n, 1, INFINITY, 0, &bad, 1, on_done, lb, 1), 0);
  cr_expect_eq(hs_net_transfer(n, 1, INFINITY, 0, NULL, 1, on_done, lb, 1), 0);
  hs_flow_id z = hs_net_transfer(n, 0, INFINITY, 0, &l, 1, on_done, lb, 0);
  cr_assert_neq(z, 0);
  cr_expect(hs_net_flow_pending(n, z));
  cr_expect_eq(lb->n, 0, "the callback goes through the engine, not from transfer");
  /* no shared link and no cap: only the latency counts */
  cr_assert_neq(hs_net_transfer(n, 1 * MB, INFINITY, 0.5, NULL, 0, on_done, lb, 1), 0);
  hs_engine_run(e);
  cr_assert_eq(lb->n, 2);
  cr_expect_eq(lb->t[0], 0.0);
  cr_expect_eq(lb->t[1], 0.5);
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  cr_expect_eq(st.flows_started, 2);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

/* ---- random workloads: max-min property and conservation ---- */

#define RN 300
#define RL 3
typedef struct rnd {
  hs_net *net;
  int links[RL];
  double bw[RL];
  double start[RN], bytes[RN], cap[RN], lat[RN], done_t[RN];
  int fl[RN][RL];
  size_t nfl[RN];
  hs_flow_id id[RN];
  bool started[RN], finished[RN];
  size_t checks;
} rnd;

static void check_max_min(const rnd *r) {
  double load[RL] = {0}, maxrate[RL] = {0};
  for (size_t i = 0; i < RN; i++) {
    if (!r->started[i] || r->finished[i]) continue;
    double x = hs_net_flow_rate(r->net, r->id[i]);
    cr_assert(x <= r->cap[i] * (1 + 1e-12), "flow %zu above its cap", i);
    for (size_t k = 0; k < r->nfl[i]; k++) {
      load[r->fl[i][k]] += x;
      if (x > maxrate[r->fl[i][k]]) maxrate[r->fl[i][k]] = x;
    }
  }
  for (int l = 0; l < RL; l++) {
    cr_assert(near(load[l], hs_net_link_load_bps(r->net, l)), "link %d load %g vs %g", l, load[l],
              hs_net_link_load_bps(r->net, l));
    cr_assert(load[l] <= r->bw[l] * (1 + 1e-9), "link %d over capacity", l);
  }
  /* Max-min fair iff every flow in the fluid system has a bottleneck: it runs
   * at its cap, or crosses a full link on which no flow is faster. */
  for (size_t i = 0; i < RN; i++) {
    if (!r->started[i] || r->finished[i]) continue;
    double x = hs_net_flow_rate(r->net, r->id[i]);
    if (x == 0) {
      cr_assert_eq(hs_net_flow_remaining_bytes(r->net, r->id[i]), r->bytes[i], "latent flow %zu", i);
      continue;
    }
    bool ok = near(x, r->cap[i]);
    for (size_t k = 0; !ok && k < r->nfl[i]; k++) {
      int l = r->fl[i][k];
      ok = load[l] >= r->bw[l] * (1 - 1e-9) && x >= maxrate[l] * (1 - 1e-9);
    }
    cr_assert(ok, "flow %zu (rate %g, cap %g) has no bottleneck", i, x, r->cap[i]);
  }
}

static void rnd_done(hs_engine *eng, void *subject, uint64_t arg) {
  rnd *r = subject;
  r->finished[arg] = true;
  r->done_t[arg] = hs_engine_now(eng);
  check_max_min(r);
  r->checks++;
}

static void rnd_start(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  rnd *r = subject;
  r->id[arg] = hs_net_transfer(r->net, r->bytes[arg], r->cap[arg], r->lat[arg], r->fl[arg],
                               r->nfl[arg], rnd_done, r, arg);
  cr_assert_neq(r->id[arg], 0);
  r->started[arg] = true;
}

static void rnd_probe(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  check_max_min(subject);
}

Test(net, random_workload_is_max_min_fair_and_conserves_bytes) {
  static const double caps[] = {1e6, 5e6, 20e6, INFINITY};
  hs_engine *e = hs_engine_create(0);
  rnd *r = calloc(1, sizeof *r);
  r->net = hs_net_create(e);
  hs_rng g;
  hs_rng_init(&g, 42, 7, HS_RNG_BENCH);
  for (int l = 0; l < RL; l++) {
    r->bw[l] = 5e6 + 45e6 * hs_rng_uniform(&g);
    r->links[l] = hs_net_add_link(r->net, NULL, r->bw[l], 0.001 * l);
  }
  for (size_t i = 0; i < RN; i++) {
    r->start[i] = 10 * hs_rng_uniform(&g);
    r->bytes[i] = 1e3 + 1e6 * hs_rng_uniform(&g);
    r->lat[i] = 0.05 * hs_rng_uniform(&g);
    r->cap[i] = caps[hs_rng_below(&g, 4)];
    for (int l = 0; l < RL; l++)
      if (hs_rng_below(&g, 2)) r->fl[i][r->nfl[i]++] = l;
    if (r->nfl[i] == 0) r->cap[i] = caps[hs_rng_below(&g, 3)]; /* keep it finite */
    hs_engine_schedule(e, r->start[i], 0, rnd_start, r, i);
  }
  for (int k = 0; k < 40; k++) hs_engine_schedule(e, 0.5 * k + 0.123, 1, rnd_probe, r, 0);
  hs_engine_run(e);

  double per_link[RL] = {0}, total = 0;
  for (size_t i = 0; i < RN; i++) {
    cr_assert(r->finished[i], "flow %zu never finished", i);
    double path = r->lat[i], slowest = r->cap[i];
    for (size_t k = 0; k < r->nfl[i]; k++) {
      per_link[r->fl[i][k]] += r->bytes[i];
      path += 0.001 * r->fl[i][k];
      slowest = fmin(slowest, r->bw[r->fl[i][k]]);
    }
    total += r->bytes[i];
    double alone = r->start[i] + path + r->bytes[i] * 8 / slowest;
    cr_expect(r->done_t[i] >= alone * (1 - 1e-12), "flow %zu faster than alone", i);
  }
  for (int l = 0; l < RL; l++)
    cr_expect(fabs(hs_net_link_bytes(r->net, l) - per_link[l]) <= 1e-9 * per_link[l],
              "link %d carried %.12g bytes, flows sent %.12g", l, hs_net_link_bytes(r->net, l),
              per_link[l]);
  hs_net_stats st;
  hs_net_get_stats(r->net, &st);
  cr_expect_eq(st.flows_completed, RN);
  cr_expect(fabs(st.bytes_delivered - total) <= 1e-9 * total);
  cr_expect_eq(st.flows_active + st.flows_latent + st.classes_active, 0);
  cr_expect_gt(r->checks, RN - 1);
  hs_net_destroy(r->net);
  hs_engine_destroy(e);
  free(r);
}

/* Duplex (hs_net_add_duplex_link). One upload and one download of 1 MB on a
 * link of 8 Mbit/s (1 MB/s), no caps: half duplex shares one capacity (each
 * 0.5 MB/s, both end at 2 s); full duplex gives each direction its own (each
 * 1 MB/s, both end at 1 s + the one-way latency). */
Test(net, half_duplex_an_upload_and_a_download_share_one_capacity) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_link(n, "l", 8e6, 0);
  int back = hs_net_link_reverse(n, l);
  cr_expect_eq(back, l, "a half-duplex link is its own reverse");
  hs_flow_id up = hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 0);
  hs_flow_id down = hs_net_transfer(n, 1 * MB, INFINITY, 0, &back, 1, on_done, lb, 1);
  hs_engine_run_until(e, 0.5);
  expect_near(hs_net_flow_rate(n, up), 4e6);
  expect_near(hs_net_flow_rate(n, down), 4e6);
  hs_engine_run(e);
  expect_near(lb->t[0], 2.0);
  expect_near(lb->t[1], 2.0);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

Test(net, full_duplex_each_direction_has_the_whole_bandwidth) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  logbook *lb = logbook_new();
  int l = hs_net_add_duplex_link(n, "l", 8e6, 0.25);
  cr_assert_geq(l, 0);
  int back = hs_net_link_reverse(n, l);
  cr_expect_neq(back, l);
  cr_expect_eq(hs_net_link_reverse(n, back), l, "the two directions name each other");
  cr_expect_eq(hs_net_link_count(n), 2);
  cr_expect_eq(hs_net_link_find(n, "l"), l, "the name finds the forward direction");
  expect_near(hs_net_link_bandwidth_bps(n, back), 8e6);
  expect_near(hs_net_link_latency_s(n, back), 0.25);
  /* Two uploads and one download: the uploads share the forward capacity
   * (0.5 MB/s each, 2 s), the download has the reverse one alone (1 s). */
  hs_flow_id up = hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 0);
  hs_net_transfer(n, 1 * MB, INFINITY, 0, &l, 1, on_done, lb, 1);
  hs_flow_id down = hs_net_transfer(n, 1 * MB, INFINITY, 0, &back, 1, on_done, lb, 2);
  hs_engine_run_until(e, 0.5);
  expect_near(hs_net_flow_rate(n, up), 4e6);
  expect_near(hs_net_flow_rate(n, down), 8e6);
  expect_near(hs_net_link_load_bps(n, l), 8e6);
  expect_near(hs_net_link_load_bps(n, back), 8e6);
  hs_engine_run(e);
  expect_near(lb->t[0], 0.25 + 2.0);
  expect_near(lb->t[1], 0.25 + 2.0);
  expect_near(lb->t[2], 0.25 + 1.0);
  expect_near(hs_net_link_bytes(n, l), 2 * MB);
  expect_near(hs_net_link_bytes(n, back), 1 * MB);
  cr_expect_eq(hs_net_add_duplex_link(n, "bad", 0, 0), HS_EINVAL);
  cr_expect_eq(hs_net_add_duplex_link(n, "bad", 1e6, -1), HS_EINVAL);
  cr_expect_eq(hs_net_link_count(n), 2, "a refused link adds neither direction");
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}
