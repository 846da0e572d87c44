/* test_engine.c: the event engine's total order, cancel/reschedule by handle,
 * stop flags and a million random events popped in order. */
#include <criterion/criterion.h>
#include <signal.h>
#include <math.h>

#include "hs_engine.h"
#include "hs_rng.h"

typedef struct rec {
  uint64_t order[64];
  double times[64];
  size_t n;
} rec;

static void record(hs_engine *eng, void *subject, uint64_t arg) {
  rec *r = subject;
  r->times[r->n] = hs_engine_now(eng);
  r->order[r->n++] = arg;
}

Test(engine, ties_broken_by_priority_then_insertion) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_engine_schedule(e, 2.0, 0, record, &r, 1);
  hs_engine_schedule(e, 1.0, 5, record, &r, 2);
  hs_engine_schedule(e, 1.0, 0, record, &r, 3);
  hs_engine_schedule(e, 1.0, 5, record, &r, 4);
  hs_engine_schedule(e, 1.0, -1, record, &r, 5);
  hs_engine_schedule(e, 1.0, 0, record, &r, 6);
  cr_assert_eq(hs_engine_pending(e), 6);
  cr_assert_eq(hs_engine_run(e), 6);
  uint64_t want[] = {5, 3, 6, 2, 4, 1};
  for (size_t i = 0; i < 6; i++) cr_expect_eq(r.order[i], want[i], "position %zu", i);
  cr_assert_eq(hs_engine_now(e), 2.0);
  cr_assert_eq(hs_engine_pending(e), 0);
  hs_engine_destroy(e);
}

static hs_engine *five(rec *r, hs_event_id ids[5]) {
  hs_engine *e = hs_engine_create(2);
  for (uint64_t i = 0; i < 5; i++) ids[i] = hs_engine_schedule(e, (double)(i + 1), 0, record, r, i);
  return e;
}

Test(engine, cancel_head_middle_tail) {
  for (int which = 0; which < 3; which++) {
    rec r = {0};
    hs_event_id ids[5];
    hs_engine *e = five(&r, ids);
    size_t victim = which == 0 ? 0 : which == 1 ? 2 : 4;
    cr_assert(hs_engine_cancel(e, ids[victim]));
    cr_assert_not(hs_engine_cancel(e, ids[victim]), "a cancelled id is stale");
    cr_assert(isnan(hs_engine_event_time(e, ids[victim])));
    cr_assert_eq(hs_engine_pending(e), 4);
    hs_engine_run(e);
    cr_assert_eq(r.n, 4);
    for (size_t i = 0; i < r.n; i++) cr_expect_neq(r.order[i], victim);
    for (size_t i = 1; i < r.n; i++) cr_expect_lt(r.order[i - 1], r.order[i]);
    hs_engine_destroy(e);
  }
}

Test(engine, reschedule_head_middle_tail) {
  /* head 1.0 -> 10, middle 3.0 -> 0.5, tail 5.0 -> 2.5 */
  rec r = {0};
  hs_event_id ids[5];
  hs_engine *e = five(&r, ids);
  cr_assert(hs_engine_reschedule(e, ids[0], 10.0));
  cr_assert(hs_engine_reschedule(e, ids[2], 0.5));
  cr_assert(hs_engine_reschedule(e, ids[4], 2.5));
  cr_assert_eq(hs_engine_event_time(e, ids[2]), 0.5);
  cr_assert_eq(hs_engine_peek_time(e), 0.5);
  cr_assert_eq(hs_engine_pending(e), 5);
  hs_engine_run(e);
  uint64_t want[] = {2, 1, 4, 3, 0};
  double wt[] = {0.5, 2.0, 2.5, 4.0, 10.0};
  cr_assert_eq(r.n, 5);
  for (size_t i = 0; i < 5; i++) {
    cr_expect_eq(r.order[i], want[i]);
    cr_expect_eq(r.times[i], wt[i]);
  }
  cr_assert_not(hs_engine_reschedule(e, ids[0], 11.0), "a fired id is stale");
  hs_engine_destroy(e);
}

Test(engine, reschedule_to_same_time_goes_behind_ties) {
  rec r = {0};
  hs_engine *e = hs_engine_create(0);
  hs_event_id a = hs_engine_schedule(e, 1.0, 0, record, &r, 1);
  hs_engine_schedule(e, 1.0, 0, record, &r, 2);
  hs_engine_reschedule(e, a, 1.0);
  hs_engine_run(e);
  cr_assert_eq(r.order[0], 2);
  cr_assert_eq(r.order[1], 1);
  hs_engine_destroy(e);
}

Test(engine, stale_ids_never_name_reused_slots) {
  rec r = {0};
  hs_engine *e = hs_engine_create(1);
  hs_event_id a = hs_engine_schedule(e, 1.0, 0, record, &r, 1);
  hs_engine_cancel(e, a);
  hs_event_id b = hs_engine_schedule(e, 2.0, 0, record, &r, 2); /* reuses a's slot */
  cr_assert_neq(a, b);
  cr_assert_not(hs_engine_cancel(e, a));
  cr_assert_not(hs_engine_cancel(e, 0));
  cr_assert_not(hs_engine_cancel(e, (hs_event_id)1 << 40 | 999));
  cr_assert_eq(hs_engine_run(e), 1);
  cr_assert_eq(r.order[0], 2);
  hs_engine_destroy(e);
}

typedef struct stopper {
  int count;
  int stop_at;
} stopper;

static void count_and_stop(hs_engine *eng, void *subject, uint64_t arg) {
  (void)arg;
  stopper *s = subject;
  if (++s->count == s->stop_at) hs_engine_stop(eng);
}

Test(engine, stop_flag_and_run_until) {
  hs_engine *e = hs_engine_create(0);
  stopper s = {0, 3};
  for (int i = 0; i < 10; i++) hs_engine_schedule(e, (double)i, 0, count_and_stop, &s, 0);
  cr_assert_eq(hs_engine_run(e), 3);
  cr_assert(hs_engine_stopped(e));
  cr_assert_eq(hs_engine_now(e), 2.0);
  cr_assert_eq(hs_engine_pending(e), 7);
  cr_assert_eq(hs_engine_run_until(e, 5.5), 3); /* t = 3, 4, 5 */
  cr_assert_eq(hs_engine_now(e), 5.5, "run_until advances the clock to its end");
  cr_assert_eq(hs_engine_run(e), 4);
  cr_assert_eq(hs_engine_pending(e), 0);
  cr_assert_eq(hs_engine_fired(e), 10);
  cr_assert_eq(hs_engine_peek_time(e), INFINITY);
  cr_assert_not(hs_engine_step(e));
  hs_engine_destroy(e);
}

typedef struct chain {
  int left;
} chain;

static void self_schedule(hs_engine *eng, void *subject, uint64_t arg) {
  chain *c = subject;
  if (c->left-- > 0) hs_engine_schedule_in(eng, 0.0, 0, self_schedule, c, arg + 1);
}

Test(engine, handlers_schedule_at_now) {
  hs_engine *e = hs_engine_create(0);
  chain c = {100};
  hs_engine_schedule(e, 1.5, 0, self_schedule, &c, 0);
  cr_assert_eq(hs_engine_run(e), 101);
  cr_assert_eq(hs_engine_now(e), 1.5);
  hs_engine_destroy(e);
}

typedef struct order_check {
  double last_time;
  uint64_t last_seq_arg;
  uint64_t n;
  int bad;
} order_check;

static void check_order(hs_engine *eng, void *subject, uint64_t arg) {
  order_check *o = subject;
  double t = hs_engine_now(eng);
  if (t < o->last_time || (t == o->last_time && arg < o->last_seq_arg)) o->bad++;
  o->last_time = t;
  o->last_seq_arg = arg;
  o->n++;
}

Test(engine, million_random_events_pop_in_order_with_cancels) {
  hs_engine *e = hs_engine_create(0);
  hs_rng r;
  hs_rng_init(&r, 7, 0, HS_RNG_BENCH);
  order_check o = {-1, 0, 0, 0};
  const uint64_t n = 1000000;
  hs_event_id *ids = malloc(sizeof *ids * n);
  for (uint64_t i = 0; i < n; i++) {
    /* coarse times so that many ties occur; arg = insertion index */
    double t = (double)hs_rng_below(&r, 1000);
    ids[i] = hs_engine_schedule(e, t, 0, check_order, &o, i);
  }
  uint64_t cancelled = 0;
  for (uint64_t i = 0; i < n; i += 3) cancelled += hs_engine_cancel(e, ids[i]);
  cr_assert_eq(hs_engine_pending(e), n - cancelled);
  hs_engine_run(e);
  cr_assert_eq(o.n, n - cancelled);
  cr_assert_eq(o.bad, 0, "%d events out of order", o.bad);
  free(ids);
  hs_engine_destroy(e);
}

static void noop(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)subject;
  (void)arg;
}

Test(engine, scheduling_in_the_past_asserts, .signal = SIGABRT) {
  hs_engine *e = hs_engine_create(0);
  hs_engine_schedule(e, 5.0, 0, noop, NULL, 0);
  hs_engine_run(e);
  hs_engine_schedule(e, 1.0, 0, noop, NULL, 0);
}

Test(engine, negative_zero_and_extreme_priorities_keep_the_order) {
  /* -0.0 equals 0.0: it must tie with it (and break the tie by priority and
   * insertion), not sort after every positive time. */
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_engine_schedule(e, 1e-300, 0, record, &r, 1);
  hs_engine_schedule(e, -0.0, 32767, record, &r, 2);
  hs_engine_schedule(e, 0.0, -32768, record, &r, 3);
  hs_engine_schedule(e, 0.0, 32767, record, &r, 4);
  hs_engine_schedule(e, 1e300, -32768, record, &r, 5);
  hs_engine_run(e);
  uint64_t want[] = {3, 2, 4, 1, 5};
  for (size_t i = 0; i < 5; i++) cr_expect_eq(r.order[i], want[i], "position %zu", i);
  hs_engine_destroy(e);
}

Test(engine, priority_out_of_range_asserts, .signal = SIGABRT) {
  hs_engine *e = hs_engine_create(0);
  hs_engine_schedule(e, 1.0, 40000, noop, NULL, 0);
}
