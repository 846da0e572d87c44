/* test_net_slots.c: the network's bookkeeping under churn: interned
 * (callback, subject) kinds, slots reused after cancels, 8-byte FIFO entries
 * live only while their generation matches, records kept while callbacks
 * start transfers (split from test_net.c, which checks the rates and times). */
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

/* ---- interned callbacks, slot reuse, FIFO liveness (net.c's 8-byte FIFO
 * entries, 40-byte records and kinds) ---- */

typedef struct who {
  uint64_t calls;   /* callbacks received */
  uint64_t arg;     /* the arg of the last one */
  double t;         /* its time */
  int fn;           /* which function called back (1 or 2) */
} who;

static void who_done1(hs_engine *eng, void *subject, uint64_t arg) {
  who *w = subject;
  w->calls++;
  w->arg = arg;
  w->t = hs_engine_now(eng);
  w->fn = 1;
}

static void who_done2(hs_engine *eng, void *subject, uint64_t arg) {
  who_done1(eng, subject, arg);
  ((who *)subject)->fn = 2;
}

/* The shared-subject form: one subject for every flow, indexed by arg. */
enum { KN = 3000, KWAVES = 3 };
typedef struct book {
  who w[KN];
} book;

static void book_done1(hs_engine *eng, void *subject, uint64_t arg) {
  who_done1(eng, &((book *)subject)->w[arg % 10000], arg);
}

static void book_done2(hs_engine *eng, void *subject, uint64_t arg) {
  who_done2(eng, &((book *)subject)->w[arg % 10000], arg);
}

/* Runs KWAVES waves of KN transfers (two callbacks, two classes, four lanes,
 * every 97th flow cancelled); per_flow: a distinct subject per flow (one kind
 * per flow in flight), else one shared subject. Logs into out[wave][flow]. */
static void kinds_run(bool per_flow, who (*out)[KN]) {
  hs_engine *e = hs_engine_create(0);
  hs_net *n = hs_net_create(e);
  int srv = hs_net_add_link(n, "server", 400e6, 0.002);
  book *bk = calloc(1, sizeof *bk);
  static hs_flow_id ids[KN];
  for (int w = 0; w < KWAVES; w++) {
    memset(out[w], 0, KN * sizeof out[w][0]);
    memset(bk, 0, sizeof *bk);
    for (uint64_t i = 0; i < KN; i++) {
      bool two = i / 5 % 3 == 0; /* runs of equal (fn, class): the last-kind shortcut */
      hs_event_fn fn = per_flow ? (two ? who_done2 : who_done1) : (two ? book_done2 : book_done1);
      void *subj = per_flow ? (void *)&out[w][i] : (void *)bk;
      ids[i] = hs_net_transfer(n, 1e5 + (double)(i % 7) * 1e4, i / 4 % 2 ? 50e6 : 1e9,
                               0.001 * (double)(i % 4), &srv, 1, fn, subj,
                               10000 * (uint64_t)w + i);
      cr_assert_neq(ids[i], 0);
    }
    for (uint64_t i = 0; i < KN; i += 97) cr_assert(hs_net_cancel(n, ids[i]));
    hs_net_stats st;
    hs_net_get_stats(n, &st);
    cr_assert_eq(st.kinds, per_flow ? KN - (KN + 96) / 97 : 4, "wave %d: %zu kinds", w, st.kinds);
    hs_engine_run(e);
    hs_net_get_stats(n, &st);
    cr_assert_eq(st.kinds, 0, "every kind freed once its flows called back");
    if (!per_flow) memcpy(out[w], bk->w, sizeof bk->w);
  }
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  cr_expect_eq(st.flows_completed, (uint64_t)KWAVES * (KN - (KN + 96) / 97));
  cr_expect_eq(st.classes, 2, "kinds never split a class");
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(bk);
}

/* Every flow calls back once, with its own subject, function and arg, at
 * the time the shared-subject run gives; kinds are freed and reused across
 * the waves (each wave's subjects are new). */
Test(net, distinct_subjects_per_flow_call_back_their_own_subject_and_arg) {
  who(*shared)[KN] = calloc(KWAVES, sizeof *shared);
  who(*own)[KN] = calloc(KWAVES, sizeof *own);
  kinds_run(false, shared);
  kinds_run(true, own);
  for (int w = 0; w < KWAVES; w++)
    for (uint64_t i = 0; i < KN; i++) {
      const who *a = &shared[w][i], *b = &own[w][i];
      if (i % 97 == 0) {
        cr_assert(a->calls == 0 && b->calls == 0, "cancelled flow %llu called back",
                  (unsigned long long)i);
        continue;
      }
      cr_assert_eq(b->calls, 1, "wave %d flow %llu: %llu callbacks", w, (unsigned long long)i,
                   (unsigned long long)b->calls);
      cr_assert_eq(a->calls, 1);
      cr_assert_eq(b->arg, 10000 * (uint64_t)w + i);
      cr_assert_eq(b->fn, i / 5 % 3 == 0 ? 2 : 1);
      cr_assert_eq(a->fn, b->fn);
      cr_assert_eq(a->t, b->t, "wave %d flow %llu: %.17g vs %.17g", w, (unsigned long long)i,
                   a->t, b->t);
    }
  free(shared);
  free(own);
}

/* Kinds are freed (by backward shift in their hash table) while others are
 * looked up: 2000 flows with their own subjects complete one by one, each
 * callback starting a flow for one of 8 shared subjects. In every callback
 * the live kinds are exactly the distinct subjects still due plus the shared
 * subjects still in use (a lookup that missed its kind would add one). */
enum { TN = 2000, TS = 8 };
typedef struct ktest {
  hs_net *net;
  int link;
  uint64_t pend_own, pend_shared[TS];
  int shared[TS]; /* subjects; only their addresses matter */
  int own[TN];
  uint64_t callbacks;
} ktest;

static void ktest_check(const ktest *k) {
  uint64_t want = k->pend_own;
  for (int j = 0; j < TS; j++) want += k->pend_shared[j] > 0;
  hs_net_stats st;
  hs_net_get_stats(k->net, &st);
  cr_assert_eq(st.kinds, want, "%zu kinds, want %llu", st.kinds, (unsigned long long)want);
}

static void ktest_shared_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  ktest *k = (ktest *)((char *)subject - offsetof(ktest, shared) - arg * sizeof(int));
  ktest_check(k);
  k->pend_shared[arg]--;
  k->callbacks++;
}

static void ktest_own_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  ktest *k = (ktest *)((char *)subject - offsetof(ktest, own) - arg * sizeof(int));
  ktest_check(k);
  k->pend_own--;
  k->callbacks++;
  int j = (int)(arg % TS);
  k->pend_shared[j]++;
  cr_assert_neq(hs_net_transfer(k->net, 5e3 * (double)(1 + arg % 5), INFINITY, 0, &k->link, 1,
                                ktest_shared_done, &k->shared[j], (uint64_t)j),
                0);
}

Test(net, kinds_stay_unique_while_others_are_freed) {
  hs_engine *e = hs_engine_create(0);
  ktest *k = calloc(1, sizeof *k);
  k->net = net_one_link(e, 1e9, &k->link);
  for (uint64_t i = 0; i < TN; i++) {
    cr_assert_neq(hs_net_transfer(k->net, 1e3 * (double)(1 + (i * 7919) % TN), INFINITY,
                                  0.0001 * (double)(i % 3), &k->link, 1, ktest_own_done,
                                  &k->own[i], i),
                  0);
    k->pend_own++;
  }
  ktest_check(k);
  hs_engine_run(e);
  cr_assert_eq(k->callbacks, 2 * TN);
  ktest_check(k);
  hs_net_destroy(k->net);
  hs_engine_destroy(e);
  free(k);
}

/* ---- slot reuse: 8-byte FIFO entries are live while their generation is
 * their slot's ---- */

typedef struct reuse {
  hs_net *net;
  logbook *lb;
  int link;
  hs_flow_id victim, heir;
  double heir_bytes, heir_latency;
} reuse;

/* Cancel the victim, then start the heir at once: it takes the victim's slot. */
static void cancel_then_reuse(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  reuse *r = subject;
  cr_assert(hs_net_cancel(r->net, r->victim));
  r->heir = hs_net_transfer(r->net, r->heir_bytes, INFINITY, r->heir_latency, &r->link, 1, on_done,
                            r->lb, 9);
  cr_assert_eq(r->heir & 0xffffffffULL, r->victim & 0xffffffffULL, "the heir reuses the slot");
  cr_assert_neq(r->heir, r->victim, "with a new generation");
  cr_assert(!hs_net_flow_pending(r->net, r->victim));
  cr_assert(hs_net_flow_pending(r->net, r->heir));
}

/* A latent flow behind another in its lane is cancelled; its slot goes to a
 * flow of the same lane. The dead entry must not admit the heir early. */
Test(net, a_cancelled_latent_flows_entry_is_skipped_after_its_slot_is_reused) {
  hs_engine *e = hs_engine_create(0);
  reuse r = {.lb = logbook_new(), .heir_bytes = 1 * MB, .heir_latency = 1.0};
  hs_net *n = r.net = net_one_link(e, 8e6, &r.link); /* 1 MB/s */
  logbook *lb = r.lb;
  hs_net_transfer(n, 1 * MB, INFINITY, 1.0, &r.link, 1, on_done, lb, 0);            /* X */
  r.victim = hs_net_transfer(n, 1 * MB, INFINITY, 1.0, &r.link, 1, on_done, lb, 1); /* A */
  hs_engine_schedule(e, 0.5, 0, cancel_then_reuse, &r, 0);
  hs_engine_run(e);
  /* X alone from 1 to 1.5 (0.5 MB), then X and the heir at 0.5 MB/s: X ends
   * at 2.5, the heir has 0.5 MB left, alone: 3.0. */
  cr_assert_eq(lb->n, 2);
  expect_near(lb->t[0], 2.5);
  expect_near(lb->t[9], 3.0);
  cr_expect(isnan(lb->t[1]));
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

/* An active flow in the middle of its class's run is cancelled; its slot goes
 * to a flow that joins the same run behind the others. Skipping the dead
 * entry keeps the run in (finish, seq) order. */
Test(net, a_cancelled_active_flows_entry_is_skipped_after_its_slot_is_reused) {
  hs_engine *e = hs_engine_create(0);
  reuse r = {.lb = logbook_new(), .heir_bytes = 3 * MB, .heir_latency = 0};
  hs_net *n = r.net = net_one_link(e, 8e6, &r.link); /* 1 MB/s */
  logbook *lb = r.lb;
  hs_net_transfer(n, 1 * MB, INFINITY, 0, &r.link, 1, on_done, lb, 0);            /* X */
  r.victim = hs_net_transfer(n, 2 * MB, INFINITY, 0, &r.link, 1, on_done, lb, 1); /* A */
  hs_net_transfer(n, 3 * MB, INFINITY, 0, &r.link, 1, on_done, lb, 2);            /* Y */
  hs_engine_schedule(e, 0.3, 1, cancel_then_reuse, &r, 0); /* after the admissions at 0 */
  hs_engine_run(e);
  /* [0, 0.3] 1/3 MB/s each (0.1 MB); X, Y, heir at 1/3 MB/s: X ends at 3.0;
   * Y (2.0 left) and heir (2.1) at 0.5: Y at 7.0; heir alone: 7.1. */
  cr_assert_eq(lb->n, 3);
  expect_near(lb->t[0], 3.0);
  expect_near(lb->t[2], 7.0);
  expect_near(lb->t[9], 7.1);
  cr_expect(isnan(lb->t[1]));
  hs_net_stats st;
  hs_net_get_stats(n, &st);
  expect_near(st.bytes_cancelled, 0.1 * MB);
  hs_net_destroy(n);
  hs_engine_destroy(e);
  free(lb);
}

/* 200 flows complete at one time; each callback starts a transfer. A slot is
 * handed out again only after its own callback ran, so every callback gets
 * its own arg, in transfer order. */
typedef struct burst {
  hs_net *net;
  int link;
  uint64_t got[400];
  size_t n;
} burst;

static void burst_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  burst *b = subject;
  cr_assert_lt(b->n, 400);
  b->got[b->n++] = arg;
  if (arg < 200)
    cr_assert_neq(hs_net_transfer(b->net, 1e3, INFINITY, 0, &b->link, 1, burst_done, b, 200 + arg),
                  0);
}

Test(net, callbacks_of_a_batch_keep_their_records_while_callbacks_start_transfers) {
  hs_engine *e = hs_engine_create(0);
  burst *b = calloc(1, sizeof *b);
  b->net = net_one_link(e, 8e9, &b->link);
  for (uint64_t i = 0; i < 200; i++)
    hs_net_transfer(b->net, 1e6, INFINITY, 0.01, &b->link, 1, burst_done, b, i);
  hs_engine_run(e);
  cr_assert_eq(b->n, 400);
  for (uint64_t i = 0; i < 400; i++) cr_assert_eq(b->got[i], i, "callback %llu got arg %llu",
                                                  (unsigned long long)i, (unsigned long long)b->got[i]);
  hs_net_destroy(b->net);
  hs_engine_destroy(e);
  free(b);
}

/* The last callback of a wave starts the next wave on an idle network: the
 * slots are handed out in ascending order again (a round's downloads written
 * in sequence), with new generations. */
typedef struct waves {
  hs_net *net;
  int link;
  size_t left, wave;
  hs_flow_id ids[2][600];
} waves;

static void wave_done(hs_engine *eng, void *subject, uint64_t arg);

static void wave_start(waves *w) {
  w->left = 600;
  for (uint64_t i = 0; i < 600; i++) {
    /* sizes out of order: completions free the slots out of order */
    w->ids[w->wave][i] = hs_net_transfer(w->net, 1e3 * (double)(1 + (i * 7919) % 600), 1e8,
                                         0, &w->link, 1, wave_done, w, i);
  }
}

static void wave_done(hs_engine *eng, void *subject, uint64_t arg) {
  (void)eng;
  (void)arg;
  waves *w = subject;
  if (--w->left == 0 && w->wave == 0) {
    w->wave = 1;
    wave_start(w);
  }
}

Test(net, the_next_wave_started_by_a_last_callback_gets_ascending_slots) {
  hs_engine *e = hs_engine_create(0);
  waves *w = calloc(1, sizeof *w);
  w->net = net_one_link(e, 1e9, &w->link);
  wave_start(w);
  hs_engine_run(e);
  cr_assert_eq(w->wave, 1);
  cr_assert_eq(w->left, 0);
  for (uint64_t i = 0; i < 600; i++) {
    cr_assert_eq(w->ids[1][i] & 0xffffffffULL, i + 1, "flow %llu of the second wave",
                 (unsigned long long)i);
    cr_assert_neq(w->ids[1][i], w->ids[0][i]);
  }
  hs_net_destroy(w->net);
  hs_engine_destroy(e);
  free(w);
}
