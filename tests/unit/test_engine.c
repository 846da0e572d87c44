/* test_engine.c: the event engine's total order, cancel/reschedule by handle,
 * stop flags and a million random events popped in order.
 *
 * Why one file over 800 lines: every section (queued, apart, posted events and
 * the runs posts are sorted into) is checked against the same reference of
 * the order contract: the model of the pending set (a binary heap of
 * (time, priority, seq) with its randomised handlers, about 270 lines), the
 * recorder and the order checker and the mixed-kind plan. A split by event
 * kind would move that reference into a header of static inline functions
 * shared by every part, and a reader checking one kind would still read it. */
#include <criterion/criterion.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/hs_engine.h"
#include "base/hs_rng.h"

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

/* --- the calendar queue against the order contract ----------------------
 * A model of the pending set: each event's (time, priority, insertion seq) as
 * the contract defines them, in a plain binary heap of the test's own (lazy
 * deletion: an entry whose seq is no longer its event's is skipped). Handlers
 * schedule, cancel and reschedule at random, with time distributions that
 * exercise every tier of evq.c (dense buckets, ties, spans of 600 decades,
 * infinite times, an emptied queue). Every event the engine fires must be the
 * model's least pending one, and every event neither cancelled nor
 * rescheduled away fires once. */
typedef struct mev {
  double t;
  int prio;
  uint64_t seq;
  hs_event_id id;
  int state; /* 1 pending, 2 fired, 3 cancelled */
  uint32_t sub; /* subject index (models with nsub > 0) */
  int fn_b;     /* scheduled with model_fire_b */
} mev;

typedef struct mkey {
  double t;
  int prio;
  uint64_t seq;
  size_t idx;
} mkey;

typedef struct model model;
struct model {
  model *self; /* first: a handler's subject is a model ** (m itself or &sub[i]) */
  mev *ev;
  size_t n, cap;
  mkey *h; /* reference binary heap */
  size_t hn, hcap;
  uint64_t seq;
  uint64_t fired, budget;
  int bad, mode;
  int apart; /* 1 in `apart` events is scheduled apart (0: none) */
  int post;  /* 1 in `post` events is posted, without an id (0: none) */
  /* 1 in `burst` handlers (0: none) makes a burst of up to 3 * run_min
   * events, 7 in 8 of them posted: the engine sorts those into runs. 3 in 4
   * bursts have one priority (burst_prio), the others mixed ones (each
   * change of priority ends the engine's buffer). */
  int burst, in_burst, burst_prio;
  size_t run_min;
  /* nsub > 0: each event gets a subject drawn from nsub (each a pointer back
   * to the model) and one of two handlers, both checked when it fires. */
  size_t nsub;
  model **sub;
  hs_rng rng;
};

static int mkey_less(const mkey *a, const mkey *b) {
  if (a->t != b->t) return a->t < b->t;
  if (a->prio != b->prio) return a->prio < b->prio;
  return a->seq < b->seq;
}

static void ref_push(model *m, mkey k) {
  if (m->hn == m->hcap) {
    m->hcap = m->hcap ? 2 * m->hcap : 1024;
    m->h = realloc(m->h, m->hcap * sizeof *m->h);
  }
  size_t i = m->hn++;
  while (i > 0 && mkey_less(&k, &m->h[(i - 1) / 2])) {
    m->h[i] = m->h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  m->h[i] = k;
}

static mkey ref_pop(model *m) {
  mkey top = m->h[0], last = m->h[--m->hn];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= m->hn) break;
    if (c + 1 < m->hn && mkey_less(&m->h[c + 1], &m->h[c])) c++;
    if (!mkey_less(&m->h[c], &last)) break;
    m->h[i] = m->h[c];
    i = c;
  }
  if (m->hn) m->h[i] = last;
  return top;
}

/* The model's least pending event (dropping stale entries), or SIZE_MAX. */
static size_t ref_least(model *m) {
  while (m->hn) {
    mkey k = ref_pop(m);
    const mev *v = &m->ev[k.idx];
    if (v->state == 1 && v->seq == k.seq) return k.idx;
  }
  return SIZE_MAX;
}

static double draw_delay(model *m, double now) {
  switch (m->mode) {
  case 0: return hs_rng_exponential(&m->rng, 1.0); /* the hold model */
  case 1: { /* integer times: many exact ties */
    double t = floor(now) + (double)hs_rng_below(&m->rng, 3);
    return t > now ? t - now : 0.0;
  }
  case 2: return pow(10.0, -300 + 600 * hs_rng_uniform(&m->rng)); /* 600 decades */
  case 3: return hs_rng_below(&m->rng, 50) ? 0.0 : hs_rng_exponential(&m->rng, 1e-3); /* bursts */
  case 4: return hs_rng_below(&m->rng, 100) ? hs_rng_exponential(&m->rng, 5.0) : INFINITY;
  case 6: /* six clusters an octave apart, and rare outliers far beyond them */
    if (hs_rng_below(&m->rng, 2000) == 0) return 1e5 * (1 + hs_rng_uniform(&m->rng));
    return (double)(1u << hs_rng_below(&m->rng, 6)) * (1 + 0.2 * hs_rng_uniform(&m->rng));
  case 7: /* blocks of 5000, each earlier than the one before (the calendar is
           * first sized on the first event, see run_model), then near times */
    if (m->n < 60000) return 10.0 * (double)(12 - m->n / 5000) * (1 + 0.09 * hs_rng_uniform(&m->rng));
    return hs_rng_exponential(&m->rng, 1e-2);
  default: return m->n == 0 ? 1e3 : hs_rng_exponential(&m->rng, 1.0);
  }
}

static void model_fire(hs_engine *eng, void *subject, uint64_t arg);
static void model_fire_b(hs_engine *eng, void *subject, uint64_t arg);

static void model_schedule(hs_engine *eng, model *m, double t) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 1024;
    m->ev = realloc(m->ev, m->cap * sizeof *m->ev);
  }
  mev *v = &m->ev[m->n];
  v->t = t;
  v->prio = (int)hs_rng_below(&m->rng, 5) - 2;
  if (m->in_burst && m->burst_prio != INT_MIN) v->prio = m->burst_prio;
  v->seq = m->seq++;
  v->state = 1;
  void *subject = m;
  hs_event_fn fn = model_fire;
  v->fn_b = 0;
  if (m->nsub) {
    v->sub = (uint32_t)hs_rng_below(&m->rng, m->nsub);
    subject = &m->sub[v->sub];
    v->fn_b = (int)hs_rng_below(&m->rng, 2);
    if (v->fn_b) fn = model_fire_b;
  }
  if ((m->in_burst && hs_rng_below(&m->rng, 8)) ||
      (m->post && hs_rng_below(&m->rng, (uint64_t)m->post) == 0)) {
    hs_engine_post(eng, t, v->prio, fn, subject, m->n);
    v->id = 0; /* cancel and reschedule on it must fail */
  } else if (m->apart && hs_rng_below(&m->rng, (uint64_t)m->apart) == 0)
    v->id = hs_engine_schedule_apart(eng, t, v->prio, fn, subject, m->n);
  else
    v->id = hs_engine_schedule(eng, t, v->prio, fn, subject, m->n);
  ref_push(m, (mkey){t, v->prio, v->seq, m->n});
  m->n++;
}

static void model_fire_as(hs_engine *eng, void *subject, uint64_t arg, int fn_b) {
  model *m = *(model **)subject;
  double now = hs_engine_now(eng);
  size_t want = ref_least(m);
  if (want != arg || m->ev[arg].state != 1 || now != m->ev[arg].t) m->bad++;
  if (m->nsub && (subject != &m->sub[m->ev[arg].sub] || fn_b != m->ev[arg].fn_b)) m->bad++;
  m->ev[arg].state = 2;
  if (++m->fired >= m->budget) return; /* let the queue drain */
  if (isinf(now)) return;
  int news = (int)hs_rng_below(&m->rng, 3); /* 0, 1 or 2: the pending count wanders */
  for (int i = 0; i < news; i++) model_schedule(eng, m, now + draw_delay(m, now));
  if (m->burst && hs_rng_below(&m->rng, (uint64_t)m->burst) == 0) {
    /* Burst sizes on both sides of run_min; times as the mode draws them
     * (ties at now included), priorities as usual (often mixed). */
    uint64_t k = hs_rng_below(&m->rng, 3 * m->run_min + 1);
    m->in_burst = 1;
    m->burst_prio = hs_rng_below(&m->rng, 4) ? (int)hs_rng_below(&m->rng, 5) - 2 : INT_MIN;
    for (uint64_t i = 0; i < k; i++) model_schedule(eng, m, now + draw_delay(m, now));
    m->in_burst = 0;
  }
  mev *c = &m->ev[hs_rng_below(&m->rng, m->n)];
  uint64_t what = hs_rng_below(&m->rng, 8);
  if (what == 0) {
    bool ok = hs_engine_cancel(eng, c->id);
    if (ok != (c->state == 1 && c->id)) m->bad++;
    if (ok) c->state = 3;
  } else if (what == 1) {
    double t = now + draw_delay(m, now);
    bool ok = hs_engine_reschedule(eng, c->id, t);
    if (ok != (c->state == 1 && c->id)) m->bad++;
    if (ok) {
      c->t = t;
      c->seq = m->seq++; /* a reschedule is a new insertion */
      ref_push(m, (mkey){t, c->prio, c->seq, (size_t)(c - m->ev)});
    }
  }
}

static void model_fire(hs_engine *eng, void *subject, uint64_t arg) {
  model_fire_as(eng, subject, arg, 0);
}
static void model_fire_b(hs_engine *eng, void *subject, uint64_t arg) {
  model_fire_as(eng, subject, arg, 1);
}

static void run_model_burst(int mode, size_t initial, uint64_t budget, int apart, size_t nsub,
                            int post, int burst, size_t run_min) {
  model m = {0};
  m.self = &m;
  m.mode = mode;
  m.apart = apart;
  m.post = post;
  m.burst = burst;
  m.run_min = run_min;
  m.nsub = nsub;
  if (nsub) {
    m.sub = malloc(nsub * sizeof *m.sub);
    for (size_t i = 0; i < nsub; i++) m.sub[i] = &m;
  }
  m.budget = budget;
  hs_rng_init(&m.rng, 11, (uint64_t)mode, HS_RNG_BENCH);
  hs_engine *e = hs_engine_create(0);
  if (run_min) hs_engine_set_run_min(e, run_min);
  for (size_t i = 0; i < initial; i++) {
    model_schedule(e, &m, draw_delay(&m, 0.0));
    /* Mode 5: the calendar is first sized on one event; the next thousands
     * fall before it (as a round's events do before its deadline timer). */
    if ((mode == 5 || mode == 7) && i == 0) cr_assert_eq(hs_engine_peek_time(e), m.ev[0].t);
  }
  hs_engine_run(e);
  cr_assert_eq(m.bad, 0, "mode %d: %d order or handle errors", mode, m.bad);
  cr_assert_eq(hs_engine_pending(e), 0);
  cr_assert_eq(ref_least(&m), SIZE_MAX, "mode %d: the model still has events", mode);
  uint64_t fired = 0;
  for (size_t i = 0; i < m.n; i++) fired += m.ev[i].state == 2;
  cr_assert_eq(fired, m.fired);
  cr_assert_gt(m.fired, budget / 2);
  /* The emptied queue takes new events again, in order. */
  m.budget = m.fired + 1000;
  for (size_t i = 0; i < 100; i++) model_schedule(e, &m, hs_engine_now(e) + (double)(i % 7));
  hs_engine_run(e);
  cr_assert_eq(m.bad, 0);
  cr_assert_eq(hs_engine_pending(e), 0);
  free(m.ev);
  free(m.h);
  free(m.sub);
  hs_engine_destroy(e);
}

static void run_model_post(int mode, size_t initial, uint64_t budget, int apart, size_t nsub,
                           int post) {
  run_model_burst(mode, initial, budget, apart, nsub, post, 0, 0);
}

static void run_model_full(int mode, size_t initial, uint64_t budget, int apart, size_t nsub) {
  run_model_post(mode, initial, budget, apart, nsub, 0);
}

static void run_model_apart(int mode, size_t initial, uint64_t budget, int apart) {
  run_model_full(mode, initial, budget, apart, 0);
}

static void run_model(int mode, size_t initial, uint64_t budget) {
  run_model_full(mode, initial, budget, 0, 0);
}

Test(engine, calendar_hold_model_order) { run_model(0, 20000, 300000); }
Test(engine, calendar_integer_times_ties) { run_model(1, 5000, 200000); }
Test(engine, calendar_span_of_600_decades) { run_model(2, 5000, 200000); }
Test(engine, calendar_bursts_at_one_instant) { run_model(3, 5000, 200000); }
Test(engine, calendar_infinite_times) { run_model(4, 5000, 200000); }
Test(engine, calendar_resized_when_sized_on_few_events) { run_model(5, 50000, 200000); }
/* Buckets far fuller than the average (clusters, one outlier stretching the
 * calendar) are spread over finer rungs. */
Test(engine, calendar_rungs_for_clusters_and_outliers) { run_model(6, 50000, 200000); }
/* Each block lands before the calendar made of the previous ones: the heap is
 * spread over a new rung each time, deeper than the ladder allows (then the
 * whole set is respread). */
Test(engine, calendar_rungs_for_descending_blocks) { run_model(7, 60000, 200000); }

Test(engine, compaction_in_every_tier_keeps_the_order) {
  /* Reschedules leave garbage in the heap, the buckets and far; once it
   * outnumbers the live events the queue is compacted (several times here). */
  model m = {0};
  m.self = &m;
  m.budget = 1000;
  hs_rng_init(&m.rng, 5, 6, HS_RNG_BENCH);
  hs_engine *e = hs_engine_create(0);
  for (size_t i = 0; i < 20000; i++) model_schedule(e, &m, draw_delay(&m, 0.0));
  cr_assert_eq(hs_engine_peek_time(e) >= 0, true); /* a calendar over them */
  for (int r = 0; r < 4; r++)
    for (size_t i = 0; i < m.n; i++) {
      double t = hs_rng_exponential(&m.rng, r == 3 ? 1e3 : 1.0);
      cr_assert(hs_engine_reschedule(e, m.ev[i].id, t));
      m.ev[i].t = t;
      m.ev[i].seq = m.seq++;
      ref_push(&m, (mkey){t, m.ev[i].prio, m.ev[i].seq, i});
    }
  cr_assert_eq(hs_engine_pending(e), 20000);
  m.budget = 0; /* fire them all, add none */
  m.mode = 0;
  hs_engine_run(e);
  cr_assert_eq(m.bad, 0, "%d order or handle errors", m.bad);
  cr_assert_eq(hs_engine_pending(e), 0);
  cr_assert_eq(ref_least(&m), SIZE_MAX);
  free(m.ev);
  free(m.h);
  hs_engine_destroy(e);
}

Test(engine, events_at_infinity_fire_last_in_priority_then_insertion_order) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_engine_schedule(e, INFINITY, 1, record, &r, 1);
  hs_engine_schedule(e, INFINITY, 0, record, &r, 2);
  hs_engine_schedule(e, 3.0, 0, record, &r, 3);
  hs_engine_schedule(e, INFINITY, 0, record, &r, 4);
  hs_engine_run(e);
  uint64_t want[] = {3, 2, 4, 1};
  cr_assert_eq(r.n, 4);
  for (size_t i = 0; i < 4; i++) cr_expect_eq(r.order[i], want[i], "position %zu", i);
  hs_engine_destroy(e);
}

/* --- events kept apart (hs_engine_schedule_apart) ------------------------ */

/* An event of each kind: 'q' in the queue, 'a' kept apart, 'p' posted. */
typedef struct plan {
  char kind;
  double t;
  int prio;
} plan;

/* Schedules plan[i] with argument i + 1; ids[i] is its id (0 when posted). */
static void schedule_plan(hs_engine *e, rec *r, const plan *p, size_t n, hs_event_id *ids) {
  for (size_t i = 0; i < n; i++) {
    hs_event_id id = 0;
    if (p[i].kind == 'q') id = hs_engine_schedule(e, p[i].t, p[i].prio, record, r, i + 1);
    if (p[i].kind == 'a') id = hs_engine_schedule_apart(e, p[i].t, p[i].prio, record, r, i + 1);
    if (p[i].kind == 'p') hs_engine_post(e, p[i].t, p[i].prio, record, r, i + 1);
    ids[i] = id;
  }
}

Test(engine, apart_ties_with_queue_events_go_by_insertion) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  /* 4: lower priority, first; 5: higher, after all zeros. */
  plan p[] = {{'q', 1.0, 0},  {'a', 1.0, 0}, {'q', 1.0, 0},
              {'a', 1.0, -1}, {'a', 1.0, 1}, {'q', 1.0, 1}};
  hs_event_id ids[6];
  schedule_plan(e, &r, p, 6, ids);
  hs_event_id a = ids[1];
  cr_assert_eq(hs_engine_pending(e), 6);
  cr_assert_eq(hs_engine_event_time(e, a), 1.0);
  /* A reschedule to the same time is a new insertion: behind 3. */
  cr_assert(hs_engine_reschedule(e, a, 1.0));
  hs_engine_schedule(e, 1.0, 0, record, &r, 7); /* ...and ahead of a later one */
  cr_assert_eq(hs_engine_run(e), 7);
  uint64_t want[] = {4, 1, 3, 2, 7, 5, 6};
  cr_assert_eq(r.n, 7);
  for (size_t i = 0; i < 7; i++) cr_expect_eq(r.order[i], want[i], "position %zu", i);
  cr_assert_eq(hs_engine_fired(e), 7);
  cr_assert_eq(hs_engine_pending(e), 0);
  hs_engine_destroy(e);
}

Test(engine, apart_reschedule_cancel_and_stale_ids) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_event_id q = hs_engine_schedule(e, 2.0, 0, record, &r, 1);
  hs_event_id a = hs_engine_schedule_apart(e, 5.0, 0, record, &r, 2);
  cr_assert_neq(a, 0);
  cr_assert_neq(a, q);
  cr_assert_eq(hs_engine_peek_time(e), 2.0);
  cr_assert(hs_engine_reschedule(e, a, 1.5));
  cr_assert_eq(hs_engine_event_time(e, a), 1.5);
  cr_assert_eq(hs_engine_peek_time(e), 1.5);
  cr_assert(hs_engine_reschedule(e, a, 3.0)); /* later again: the queue's first */
  cr_assert_eq(hs_engine_peek_time(e), 2.0);
  cr_assert(hs_engine_step(e));
  cr_assert_eq(r.order[0], 1);
  cr_assert(hs_engine_step(e));
  cr_assert_eq(r.order[1], 2);
  cr_assert_eq(hs_engine_now(e), 3.0);
  /* Fired: stale for everything. */
  cr_assert_not(hs_engine_cancel(e, a));
  cr_assert_not(hs_engine_reschedule(e, a, 4.0));
  cr_assert(isnan(hs_engine_event_time(e, a)));
  cr_assert_not(hs_engine_step(e));
  cr_assert_eq(hs_engine_peek_time(e), INFINITY);
  /* The place is reused under a new id; the old one stays stale. */
  hs_event_id b = hs_engine_schedule_apart(e, 4.0, 0, record, &r, 3);
  cr_assert_neq(b, a);
  cr_assert_not(hs_engine_cancel(e, a));
  cr_assert_eq(hs_engine_pending(e), 1);
  cr_assert(hs_engine_cancel(e, b));
  cr_assert_not(hs_engine_cancel(e, b));
  cr_assert(isnan(hs_engine_event_time(e, b)));
  cr_assert_eq(hs_engine_pending(e), 0);
  cr_assert_eq(hs_engine_run(e), 0);
  cr_assert_eq(hs_engine_fired(e), 2);
  /* Ids that name nothing: 0, past the places, a forged generation. */
  cr_assert_not(hs_engine_cancel(e, 0));
  cr_assert_not(hs_engine_cancel(e, b + ((uint64_t)1 << 32)));
  cr_assert_not(hs_engine_cancel(e, (b & ~(uint64_t)0xffffffff) | 0xffffffffu));
  hs_engine_destroy(e);
}

Test(engine, apart_places_full_fall_back_to_the_queue) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_event_id id[12];
  for (uint64_t i = 0; i < 12; i++) /* more than the engine keeps apart */
    id[i] = hs_engine_schedule_apart(e, (double)(12 - i), 0, record, &r, i);
  cr_assert_eq(hs_engine_pending(e), 12);
  cr_assert(hs_engine_cancel(e, id[3]));
  cr_assert(hs_engine_cancel(e, id[9]));
  cr_assert(hs_engine_reschedule(e, id[0], 0.5)); /* 12.0 -> first */
  cr_assert(hs_engine_reschedule(e, id[10], 20.0)); /* 2.0 -> last */
  cr_assert_eq(hs_engine_run_until(e, 5.0), 4); /* 0.5, 1, 4, 5 */
  cr_assert_eq(hs_engine_now(e), 5.0);
  cr_assert_eq(hs_engine_run(e), 6);
  uint64_t want[] = {0, 11, 8, 7, 6, 5, 4, 2, 1, 10};
  cr_assert_eq(r.n, 10);
  for (size_t i = 0; i < 10; i++) cr_expect_eq(r.order[i], want[i], "position %zu", i);
  for (size_t i = 0; i < 12; i++) cr_expect_not(hs_engine_cancel(e, id[i]));
  hs_engine_destroy(e);
}

/* A handler that keeps an apart timer in step with its own events, as the
 * network does: the timer fires, is re-armed, and is moved before it fires. */
typedef struct timer {
  hs_event_id ev;
  uint64_t fired, n;
} timer;

static void on_timer(hs_engine *eng, void *subject, uint64_t arg) {
  timer *t = subject;
  (void)arg;
  t->ev = 0;
  if (++t->fired < t->n)
    t->ev = hs_engine_schedule_apart(eng, hs_engine_now(eng) + 1.0, 0, on_timer, t, 0);
}

Test(engine, apart_every_event_kind_against_the_model) {
  /* The model schedules 1 in 4 (then 1 in 64) events apart: the places fill
   * up and fall back, and apart events are cancelled and rescheduled at random
   * beside queue events, with ties (integer times) and at one instant. */
  run_model_apart(0, 5000, 100000, 4);
  run_model_apart(1, 5000, 100000, 4);
  run_model_apart(3, 5000, 100000, 64);
  run_model_apart(6, 20000, 100000, 64);
}

Test(engine, apart_timer_rearmed_in_its_own_handler) {
  hs_engine *e = hs_engine_create(0);
  timer t = {.n = 1000};
  t.ev = hs_engine_schedule_apart(e, 0.0, 0, on_timer, &t, 0);
  cr_assert(hs_engine_reschedule(e, t.ev, 0.25));
  cr_assert_eq(hs_engine_run(e), 1000);
  cr_assert_eq(t.fired, 1000);
  cr_assert_eq(hs_engine_now(e), 999.25);
  cr_assert_eq(t.ev, 0);
  hs_engine_destroy(e);
}

/* --- (handler, subject) pairs: slots name them by a 32-bit index ----------- */

Test(engine, handlers_and_subjects_reach_the_right_event) {
  /* Two handlers, and subjects few (3: the remembered pair changes often),
   * many (1000) or nearly one per event (2^20: pairs are made and freed all
   * the time, and the pair table grows and reuses indices), apart or not. */
  run_model_full(0, 5000, 100000, 0, 3);
  run_model_full(1, 5000, 100000, 16, 1000);
  run_model_full(0, 20000, 100000, 0, (size_t)1 << 20);
  run_model_full(3, 5000, 100000, 8, (size_t)1 << 20);
}

/* --- posted events (hs_engine_post): no id, a 12-byte record ------------- */

Test(engine, posted_events_keep_the_order_with_the_others) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  plan p[] = {{'p', 1.0, 0},  {'q', 1.0, 0}, {'a', 1.0, 0},     {'p', 1.0, -1},
              {'p', 0.5, 7}, {'p', 1.0, 0}, {'p', INFINITY, 0}};
  hs_event_id ids[7];
  schedule_plan(e, &r, p, 7, ids);
  hs_event_id a = ids[1];
  cr_assert_eq(ids[0], 0);
  cr_assert_eq(hs_engine_pending(e), 7);
  cr_assert_eq(hs_engine_peek_time(e), 0.5);
  cr_assert(hs_engine_reschedule(e, a, 1.0)); /* behind 6 now */
  cr_assert_eq(hs_engine_run_until(e, 1.0), 6);
  cr_assert_eq(hs_engine_pending(e), 1);
  cr_assert_eq(hs_engine_run(e), 1);
  uint64_t want[] = {5, 4, 1, 3, 6, 2, 7};
  cr_assert_eq(r.n, 7);
  for (size_t i = 0; i < 7; i++) cr_expect_eq(r.order[i], want[i], "position %zu", i);
  cr_assert_eq(hs_engine_fired(e), 7);
  hs_engine_destroy(e);
}

/* hs_engine_post_in is hs_engine_post at now() + delay: from a handler at
 * t = 2, a post 0.5 ahead fires at 2.5, after an event scheduled there
 * earlier (insertion order) and before one scheduled there later. */
static void post_later(hs_engine *eng, void *subject, uint64_t arg) {
  record(eng, subject, arg);
  hs_engine_post_in(eng, 0.5, 0, record, subject, 20);
  hs_engine_schedule(eng, 2.5, 0, record, subject, 30);
}

Test(engine, post_in_is_post_at_now_plus_delay) {
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_engine_schedule(e, 2.5, 0, record, &r, 10);
  hs_engine_schedule(e, 2.0, 0, post_later, &r, 1);
  cr_assert_eq(hs_engine_run(e), 4);
  uint64_t want[] = {1, 10, 20, 30};
  double at[] = {2.0, 2.5, 2.5, 2.5};
  cr_assert_eq(r.n, 4);
  for (size_t i = 0; i < 4; i++) {
    cr_expect_eq(r.order[i], want[i], "position %zu", i);
    cr_expect_eq(r.times[i], at[i], "position %zu", i);
  }
  hs_engine_destroy(e);
}

Test(engine, posted_events_against_the_model) {
  /* 1 in 2 events posted (their records reused at random), beside events
   * with ids that are cancelled and rescheduled, apart ones and many
   * subjects; every tier of the queue, ties and infinite times. */
  run_model_post(0, 20000, 200000, 0, 0, 2);
  run_model_post(1, 5000, 100000, 8, 3, 2);
  run_model_post(4, 5000, 100000, 0, 0, 3);
  run_model_post(6, 50000, 200000, 16, 1000, 2);
  run_model_post(7, 60000, 200000, 0, 0, 2);
}

/* Reschedule every id five times (garbage outnumbers the live events
 * several times: compactions), then cancel them all. */
static void churn_then_cancel(hs_engine *e, hs_event_id *ids, size_t n, hs_rng *rng) {
  for (int k = 0; k < 5; k++)
    for (size_t i = 0; i < n; i++)
      cr_assert(hs_engine_reschedule(e, ids[i], 20.0 + hs_rng_uniform(rng)));
  for (size_t i = 0; i < n; i++) cr_assert(hs_engine_cancel(e, ids[i]));
}

Test(engine, compaction_keeps_posted_events) {
  /* Posted events beside events rescheduled until garbage outnumbers the
   * live ones several times: the compactions keep every posted one. */
  hs_engine *e = hs_engine_create(0);
  rec r = {0};
  hs_rng rng;
  hs_rng_init(&rng, 3, 4, HS_RNG_BENCH);
  hs_event_id ids[4000];
  for (uint64_t i = 0; i < 4000; i++)
    ids[i] = hs_engine_schedule(e, 10.0 + hs_rng_uniform(&rng), 0, record, &r, 100);
  for (uint64_t i = 0; i < 40; i++) hs_engine_post(e, 1.0 + (double)i / 8, 0, record, &r, i);
  churn_then_cancel(e, ids, 4000, &rng);
  cr_assert_eq(hs_engine_pending(e), 40);
  cr_assert_eq(hs_engine_run(e), 40);
  cr_assert_eq(r.n, 40);
  for (size_t i = 0; i < 40; i++) cr_expect_eq(r.order[i], i);
  hs_engine_destroy(e);
}

/* --- bursts of posts sorted into runs ------------------------------------- */

Test(engine, posted_bursts_against_the_model) {
  /* Bursts of posts (sorted runs when at least run_min, the queue below; up
   * to 8 runs alive, then the queue) beside scheduled, apart, cancelled and
   * rescheduled events, ties at equal times and mixed priorities, in every
   * time distribution: spans of 600 decades (keys too wide for a mixed-
   * priority run: the queue), infinite times, one instant. */
  for (int mode = 0; mode <= 7; mode++) {
    run_model_burst(mode, 5000, 100000, 8, 0, 3, 40, 8);
    run_model_burst(mode, 2000, 60000, 0, 5, 0, 200, 100);
  }
  run_model_burst(3, 5000, 100000, 4, 0, 2, 10, 1);
  run_model_burst(0, 20000, 100000, 0, 0, 2, 1000, 2048); /* the default size */
}

typedef struct bigrec {
  uint64_t order[4096];
  size_t n;
} bigrec;

static void big_record(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  bigrec *r = subject;
  if (r->n < 4096) r->order[r->n] = arg;
  r->n++;
}

static void post_back(hs_engine *eng, void *subject, uint64_t arg) {
  bigrec *r = subject;
  big_record(eng, subject, arg);
  /* The first one posts a burst at now, now + 1, now + 2, each time with
   * priorities -1, 0, 1 interleaved. */
  if (arg == 1000)
    for (uint64_t i = 0; i < 3000; i++)
      hs_engine_post(eng, hs_engine_now(eng) + (double)(i % 3), (int)(i / 3 % 3) - 1, big_record, r,
                     2000 + i);
}

Test(engine, run_ties_with_queue_and_apart_events) {
  /* A run of 3000 posted in one handler at times now, now + 1, now + 2 with
   * priorities -1, 0, 1, against queue and apart events at the same times
   * (one moved after the run was posted): exactly (time, priority, seq). */
  hs_engine *e = hs_engine_create(0);
  hs_engine_set_run_min(e, 16);
  static bigrec r;
  r.n = 0;
  hs_engine_schedule(e, 1.0, 0, post_back, &r, 1000);         /* seq 0 */
  hs_event_id q = hs_engine_schedule(e, 2.0, 0, big_record, &r, 1); /* 1 */
  hs_engine_schedule_apart(e, 3.0, -1, big_record, &r, 2);    /* 2: before the run's 3.0 */
  hs_event_id a = hs_engine_schedule_apart(e, 1.0, 1, big_record, &r, 3); /* 3 */
  hs_engine_post(e, 1.0, 0, big_record, &r, 4); /* 4: a lone post, into the queue */
  cr_assert_eq(hs_engine_pending(e), 5);
  cr_assert(hs_engine_step(e)); /* post_back: seqs 5..3004 buffered, not yet looked at */
  cr_assert_eq(hs_engine_pending(e), 3004);
  cr_assert(hs_engine_reschedule(e, a, 2.0)); /* seq 3005: after the run's 2.0 events */
  cr_assert(hs_engine_reschedule(e, q, 2.0)); /* seq 3006 */
  cr_assert_eq(hs_engine_peek_time(e), 1.0);
  cr_assert_eq(hs_engine_run(e), 3004);
  cr_assert_eq(r.n, 3005);
  /* The expected order, built from the contract. */
  typedef struct {
    double t;
    int prio;
    uint64_t seq, arg;
  } k;
  k want[3010];
  size_t n = 0;
  want[n++] = (k){1.0, 0, 0, 1000};
  want[n++] = (k){3.0, -1, 2, 2}; /* ties the run's 3.0/-1 events, earlier seq */
  want[n++] = (k){1.0, 0, 4, 4};
  for (uint64_t i = 0; i < 3000; i++)
    want[n++] = (k){1.0 + (double)(i % 3), (int)(i / 3 % 3) - 1, 5 + i, 2000 + i};
  want[n++] = (k){2.0, 1, 3005, 3};
  want[n++] = (k){2.0, 0, 3006, 1};
  /* post_back fires first (the run did not exist yet); the rest by (t,
   * prio, seq), an insertion sort. */
  for (size_t i = 2; i < n; i++)
    for (size_t j = i; j > 1; j--) {
      k *x = &want[j - 1], *y = &want[j];
      bool gt = x->t != y->t         ? x->t > y->t
                : x->prio != y->prio ? x->prio > y->prio
                                     : x->seq > y->seq;
      if (!gt) break;
      k t = *x;
      *x = *y;
      *y = t;
    }
  cr_assert_eq(n, r.n);
  for (size_t i = 0; i < n; i++)
    cr_assert_eq(r.order[i], want[i].arg, "position %zu: %llu, want %llu", i,
                 (unsigned long long)r.order[i], (unsigned long long)want[i].arg);
  hs_engine_destroy(e);
}

Test(engine, compaction_keeps_runs_and_buffered_posts) {
  /* Posts in a sorted run and posts still in the buffer, beside events
   * rescheduled until garbage outnumbers the live ones: compactions count
   * neither as queue entries, and every post fires in order. */
  hs_engine *e = hs_engine_create(0);
  hs_engine_set_run_min(e, 16);
  static bigrec r;
  r.n = 0;
  hs_rng rng;
  hs_rng_init(&rng, 3, 5, HS_RNG_BENCH);
  hs_event_id ids[4000];
  for (uint64_t i = 0; i < 4000; i++)
    ids[i] = hs_engine_schedule(e, 10.0 + hs_rng_uniform(&rng), 0, big_record, &r, 100);
  for (uint64_t i = 0; i < 40; i++)
    hs_engine_post(e, 1.0 + (double)(39 - i) / 8, 0, big_record, &r, 39 - i);
  cr_assert_eq(hs_engine_peek_time(e), 1.0); /* the 40 become a run */
  for (uint64_t i = 40; i < 80; i++) hs_engine_post(e, 1.0 + (double)i / 8, 0, big_record, &r, i);
  churn_then_cancel(e, ids, 4000, &rng);
  cr_assert_eq(hs_engine_pending(e), 80);
  cr_assert_eq(hs_engine_run(e), 80);
  cr_assert_eq(r.n, 80);
  for (size_t i = 0; i < 80; i++) cr_expect_eq(r.order[i], i);
  hs_engine_destroy(e);
}

Test(engine, runs_order_times_one_ulp_apart) {
  /* 2 x 50000 posts at 1 + i ulps, i in a scrambled order, each time twice:
   * keys differ down to their lowest bit, in every group of the run. */
  for (size_t run_min = 1; run_min <= 100001; run_min += 100000) {
    hs_engine *e = hs_engine_create(0);
    hs_engine_set_run_min(e, run_min); /* 100001: the queue, for reference */
    order_check c = {-1, 0, 0, 0};
    for (uint64_t k = 0; k < 100000; k++) { /* arg: post order */
      uint64_t i = (k / 2 * 7919) % 50000; /* 7919 is prime to 50000 */
      hs_engine_post(e, 1.0 + (double)i * 0x1p-52, 0, check_order, &c, k);
    }
    cr_assert_eq(hs_engine_run(e), 100000);
    cr_assert_eq(c.n, 100000);
    cr_assert_eq(c.bad, 0, "run_min %zu: %d out of order", run_min, c.bad);
    hs_engine_destroy(e);
  }
}

Test(engine, runs_of_skewed_bursts) {
  /* Most of a burst within a nanosecond, a few stragglers far beyond: the
   * bulk is one group far larger than GROUP_N (and than any sort space
   * before), the stragglers groups of their own; then a burst already in
   * order and one at a single instant (no sort at all). */
  hs_engine *e = hs_engine_create(0);
  order_check c = {-1, 0, 0, 0};
  hs_rng rng;
  hs_rng_init(&rng, 9, 1, HS_RNG_BENCH);
  uint64_t k = 0;
  for (; k < 20000; k++) {
    double t = k % 5000 == 7 ? 1e3 + (double)(k % 3) : 1.0 + 1e-9 * hs_rng_uniform(&rng);
    hs_engine_post(e, t, 0, check_order, &c, k);
  }
  cr_assert(hs_engine_peek_time(e) < 1.0 + 1e-9);
  for (uint64_t i = 0; i < 5000; i++, k++)
    hs_engine_post(e, 2e3 + (double)i, 0, check_order, &c, k);
  cr_assert(hs_engine_peek_time(e) < 1.0 + 1e-9);
  for (uint64_t i = 0; i < 5000; i++, k++) hs_engine_post(e, 5e3, 0, check_order, &c, k);
  cr_assert_eq(hs_engine_pending(e), 30000);
  cr_assert_eq(hs_engine_run(e), 30000);
  cr_assert_eq(c.n, 30000);
  cr_assert_eq(c.bad, 0);
  hs_engine_destroy(e);
}
