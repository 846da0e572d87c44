/* test_optimize.c: the NLopt wrapper (hs_optimize.h) on functions whose
 * optimum and Pareto front are known in closed form; its encoding of
 * lattices and sets; the budget; -j independence; resume by replay. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "sim/hs_metrics.h"
#include "sim/hs_opt_search.h"
#include "sim/hs_optimize.h"
#include "sim/hs_transport.h"
#include "sim/hs_sweep.h"

static hs_opt_var var(const char *spec) {
  hs_opt_var v;
  hs_error err = {0};
  cr_assert_eq(hs_opt_var_parse(spec, &v, &err), HS_OK, "%s: %s", spec, err.msg);
  return v;
}

/* (x - 0.3)^2 + (y + 0.2)^2 + 1: minimum 1 at (0.3, -0.2). */
static hs_status bowl(const char *const *t, double *f, double *extra, void *ud, hs_error *err) {
  (void)extra, (void)err;
  if (ud) __atomic_add_fetch((int *)ud, 1, __ATOMIC_SEQ_CST);
  double x = atof(t[0]), y = atof(t[1]);
  f[0] = (x - 0.3) * (x - 0.3) + (y + 0.2) * (y + 0.2) + 1;
  f[1] = 0;
  return HS_OK;
}

Test(optimize, finds_a_known_minimum) {
  hs_opt_var v[2] = {var("x=-1:1"), var("y=-1:1")};
  hs_opt_spec sp = {.vars = v, .nvars = 2, .budget = 150, .jobs = 1};
  hs_opt_eval *ev;
  size_t n;
  hs_error err = {0};
  cr_assert_eq(hs_opt_run(&sp, bowl, NULL, NULL, &ev, &n, &err), HS_OK, "%s", err.msg);
  cr_assert(n <= 150 && n >= 50, "evaluations %zu", n);
  size_t best = 0;
  for (size_t i = 1; i < n; i++)
    if (ev[i].f[0] < ev[best].f[0]) best = i;
  cr_assert(fabs(atof(ev[best].text[0]) - 0.3) < 0.02, "x %s", ev[best].text[0]);
  cr_assert(fabs(atof(ev[best].text[1]) + 0.2) < 0.02, "y %s", ev[best].text[1]);
  cr_assert(ev[best].f[0] - 1 < 1e-3);
  hs_opt_evals_free(ev, n, 2);
  hs_opt_var_fini(&v[0]);
  hs_opt_var_fini(&v[1]);
}

/* |n - 7| + (kind != "b"): minimum 0 at n = 7, kind b. */
static hs_status mixed(const char *const *t, double *f, double *extra, void *ud, hs_error *err) {
  (void)extra, (void)ud, (void)err;
  f[0] = fabs(atof(t[0]) - 7) + (strcmp(t[1], "b") != 0);
  f[1] = 0;
  return HS_OK;
}

Test(optimize, integer_and_categorical_keys) {
  hs_opt_var v[2] = {var("n=0:20:1"), var("kind=a,b,c")};
  cr_assert_eq(v[0].kind, HS_OPT_LATTICE);
  cr_assert_eq(v[0].n, 21);
  cr_assert_eq(v[1].kind, HS_OPT_SET);
  hs_opt_spec sp = {.vars = v, .nvars = 2, .budget = 60, .jobs = 1};
  hs_opt_eval *ev;
  size_t n;
  hs_error err = {0};
  cr_assert_eq(hs_opt_run(&sp, mixed, NULL, NULL, &ev, &n, &err), HS_OK, "%s", err.msg);
  double best = 1e9;
  for (size_t i = 0; i < n; i++) {
    cr_assert(strchr(ev[i].text[0], '.') == NULL, "an integer key printed %s", ev[i].text[0]);
    for (size_t j = 0; j < i; j++) /* a point is evaluated once */
      cr_assert(strcmp(ev[i].text[0], ev[j].text[0]) || strcmp(ev[i].text[1], ev[j].text[1]));
    if (ev[i].f[0] < best) best = ev[i].f[0];
  }
  cr_assert_eq(best, 0.0);
  hs_opt_evals_free(ev, n, 2);
  hs_opt_var_fini(&v[0]);
  hs_opt_var_fini(&v[1]);
}

Test(optimize, decoding_of_lattices_and_sets) {
  hs_opt_var l = var("k=2:10:4"), s = var("p=x,y");
  char b[64];
  cr_assert_eq(l.n, 3);
  hs_opt_var_text(&l, 0, b, sizeof b);
  cr_assert_str_eq(b, "2");
  hs_opt_var_text(&l, 0.5, b, sizeof b);
  cr_assert_str_eq(b, "6");
  hs_opt_var_text(&l, 1, b, sizeof b);
  cr_assert_str_eq(b, "10");
  hs_opt_var_text(&s, 0.49, b, sizeof b);
  cr_assert_str_eq(b, "x");
  hs_opt_var_text(&s, 0.5, b, sizeof b);
  cr_assert_str_eq(b, "y");
  hs_opt_var_text(&s, 1, b, sizeof b);
  cr_assert_str_eq(b, "y");
  hs_opt_var r = var("w=0:1");
  hs_opt_var_text(&r, 0.25, b, sizeof b);
  cr_assert_str_eq(b, "0.25");
  hs_opt_var_fini(&l);
  hs_opt_var_fini(&s);
  hs_opt_var_fini(&r);
}

Test(optimize, bad_specs) {
  const char *bad[] = {"x=1:1", "x=2:1", "x=", "=0:1", "x", "x=a", "x=0:1:0", "x=0:1:-1",
                       "x=a,,b", "x=a,a", "x=0:1:5", "x=0:nan", "x=0:1:2:3"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    hs_opt_var v;
    hs_error err = {0};
    cr_assert_eq(hs_opt_var_parse(bad[i], &v, &err), HS_EINVAL, "%s accepted", bad[i]);
    cr_assert(!strncmp(err.msg, "--vary ", 7), "%s", err.msg);
    cr_assert(strchr(err.msg, '\n') == NULL);
  }
}

/* Objectives x^2 and (x - 1)^2: the Pareto set is x in [0, 1]; the extremes of
 * the front are x = 0 (weight 1 on the first) and x = 1 (weight 0). */
static hs_status two(const char *const *t, double *f, double *extra, void *ud, hs_error *err) {
  (void)ud, (void)err;
  double x = atof(t[0]);
  f[0] = x * x;
  f[1] = (x - 1) * (x - 1);
  extra[0] = x;
  return HS_OK;
}

static void front(const hs_opt_eval *ev, size_t n, bool *on) {
  double *a = hs_calloc(n, sizeof *a), *b = hs_calloc(n, sizeof *b);
  for (size_t i = 0; i < n; i++) a[i] = ev[i].f[0], b[i] = ev[i].f[1];
  hs_sweep_pareto(a, b, n, on);
  hs_free(a);
  hs_free(b);
}

static void same_evals(const hs_opt_eval *a, size_t na, const hs_opt_eval *b, size_t nb) {
  cr_assert_eq(na, nb);
  for (size_t i = 0; i < na; i++) {
    cr_assert_eq(a[i].sub, b[i].sub);
    cr_assert_eq(a[i].index, b[i].index);
    cr_assert_str_eq(a[i].text[0], b[i].text[0]);
    cr_assert_eq(a[i].f[0], b[i].f[0]);
    cr_assert_eq(a[i].f[1], b[i].f[1]);
  }
}

Test(optimize, a_known_front) {
  hs_opt_var v = var("x=-2:3");
  hs_opt_spec sp = {.vars = &v, .nvars = 1, .pareto = true, .budget = 1 + 5 * 30, .weights = 5,
                    .jobs = 1, .nextra = 1};
  hs_opt_eval *ev;
  size_t n;
  hs_error err = {0};
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ev, &n, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(hs_opt_nsubs(&sp), 6);
  cr_assert_eq(hs_opt_sub_budget(&sp, 0), 1);
  size_t per[6] = {0};
  for (size_t i = 0; i < n; i++) per[ev[i].sub]++;
  for (size_t s = 0; s < 6; s++) cr_assert_leq(per[s], hs_opt_sub_budget(&sp, s));
  bool *on = hs_calloc(n, sizeof *on);
  front(ev, n, on);
  double lo = 9, hi = -9;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (on[i]) {
      double x = ev[i].extra[0];
      cr_assert(x >= -0.01 && x <= 1.01, "front point x = %g outside [0, 1] (+- the sampling)", x);
      lo = fmin(lo, x), hi = fmax(hi, x), k++;
    }
  cr_assert(k >= 5, "front of %zu points", k);
  cr_assert(lo < 0.02 && hi > 0.98, "front spans [%g, %g]", lo, hi);
  /* Threads run whole sub-problems: the same evaluations for any -j. */
  hs_opt_eval *ev3;
  size_t n3;
  sp.jobs = 3;
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ev3, &n3, &err), HS_OK);
  same_evals(ev, n, ev3, n3);
  hs_free(on);
  hs_opt_evals_free(ev, n, 1);
  hs_opt_evals_free(ev3, n3, 1);
  hs_opt_var_fini(&v);
}

/* Resume: a search stopped after 20 records, run again with those 20 as prior
 * evaluations, gives the same evaluations as one uninterrupted search and
 * evaluates only what the first run did not. */
typedef struct rec {
  hs_opt_eval e[400];
  size_t n, stop_at;
  int calls;
} rec;
static bool keep(const hs_opt_eval *e, void *ud) {
  rec *r = ud;
  if (r->n == r->stop_at) return false;
  hs_opt_eval *c = &r->e[r->n++];
  *c = *e;
  c->text = hs_calloc(1, sizeof *c->text);
  c->text[0] = hs_strdup(e->text[0]);
  c->extra = hs_calloc(1, sizeof *c->extra);
  c->extra[0] = e->extra[0];
  return true;
}
static hs_status two_counted(const char *const *t, double *f, double *extra, void *ud,
                             hs_error *err) {
  __atomic_add_fetch(&((rec *)ud)->calls, 1, __ATOMIC_SEQ_CST);
  return two(t, f, extra, ud, err);
}

Test(optimize, resume_replays_recorded_evaluations) {
  hs_opt_var v = var("x=-2:3");
  hs_opt_spec sp = {.vars = &v, .nvars = 1, .pareto = true, .budget = 61, .weights = 3,
                    .jobs = 1, .nextra = 1};
  hs_opt_eval *full, *ev;
  size_t nfull, n;
  hs_error err = {0};
  rec *all = hs_calloc(1, sizeof *all);
  all->stop_at = (size_t)-1;
  cr_assert_eq(hs_opt_run(&sp, two_counted, keep, all, &full, &nfull, &err), HS_OK);
  cr_assert_eq(all->n, nfull, "every evaluation recorded once");
  rec *part = hs_calloc(1, sizeof *part);
  part->stop_at = 20;
  cr_assert_eq(hs_opt_run(&sp, two_counted, keep, part, &ev, &n, &err), HS_EIO);
  cr_assert_eq(part->n, 20);
  part->stop_at = (size_t)-1;
  sp.prior = part->e;
  sp.nprior = 20;
  int before = part->calls;
  cr_assert_eq(hs_opt_run(&sp, two_counted, keep, part, &ev, &n, &err), HS_OK, "%s", err.msg);
  same_evals(full, nfull, ev, n);
  cr_assert_eq(part->n, nfull, "the resumed run records only the new evaluations");
  cr_assert_leq(part->calls - before, all->calls - 0, "no more simulations than a fresh run");
  /* A prior evaluation at another point: the file is from another search. */
  hs_free(part->e[0].text[0]);
  part->e[0].text[0] = hs_strdup("2.5");
  sp.nprior = 1;
  hs_opt_eval *bad;
  size_t nbad;
  cr_assert_eq(hs_opt_run(&sp, two, NULL, part, &bad, &nbad, &err), HS_ESTATE);
  for (size_t i = 0; i < part->n; i++) {
    hs_free(part->e[i].text[0]);
    hs_free(part->e[i].text);
    hs_free(part->e[i].extra);
  }
  for (size_t i = 0; i < all->n; i++) {
    hs_free(all->e[i].text[0]);
    hs_free(all->e[i].text);
    hs_free(all->e[i].extra);
  }
  hs_free(part);
  hs_free(all);
  hs_opt_evals_free(full, nfull, 1);
  hs_opt_evals_free(ev, n, 1);
  hs_opt_var_fini(&v);
}

Test(optimize, budget_and_algorithm_checks) {
  hs_opt_var v = var("x=0:1");
  hs_opt_eval *ev;
  size_t n;
  hs_error err = {0};
  hs_opt_spec sp = {.vars = &v, .nvars = 1, .pareto = true, .budget = 6, .weights = 3, .jobs = 1,
                    .nextra = 1};
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ev, &n, &err), HS_EINVAL);
  cr_assert(strstr(err.msg, "at least 7"), "%s", err.msg);
  sp.budget = 30;
  sp.algorithm = "NO_SUCH";
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ev, &n, &err), HS_EINVAL);
  sp.algorithm = "GN_CRS2_LM"; /* stochastic: seeded, so repeatable */
  sp.seed = 9;
  hs_opt_eval *ev2;
  size_t n2;
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ev, &n, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ev2, &n2, &err), HS_OK);
  same_evals(ev, n, ev2, n2);
  hs_opt_evals_free(ev, n, 1);
  hs_opt_evals_free(ev2, n2, 1);
  hs_opt_var_fini(&v);
}

/* Batch mode (what hetsim-mpi uses): the same evaluations as direct mode for
 * any number of sub-problem threads; batch() is never called concurrently,
 * never gets more points than threads, nor one point twice. */
typedef struct batcher {
  int inside, calls, max_n, points;
  const char *fail_at; /* a point text whose evaluation fails */
} batcher;
static hs_status batch_two(hs_opt_eval *const *pts, size_t n, size_t *failed, void *ud,
                           hs_error *err) {
  batcher *b = ud;
  cr_assert_eq(__atomic_add_fetch(&b->inside, 1, __ATOMIC_SEQ_CST), 1, "batch() concurrently");
  b->calls++;
  b->points += (int)n;
  if ((int)n > b->max_n) b->max_n = (int)n;
  hs_status st = HS_OK;
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < i; j++) cr_assert_str_neq(pts[i]->text[0], pts[j]->text[0]);
    if (st == HS_OK && b->fail_at && !strcmp(pts[i]->text[0], b->fail_at)) {
      *failed = i;
      st = hs_error_set(err, HS_EINVAL, "no run at this point");
    }
    if (st == HS_OK) two((const char *const *)pts[i]->text, pts[i]->f, pts[i]->extra, NULL, err);
  }
  __atomic_sub_fetch(&b->inside, 1, __ATOMIC_SEQ_CST);
  return st;
}

Test(optimize, batch_mode_equals_direct_mode) {
  hs_opt_var v = var("x=-2:3");
  hs_opt_spec sp = {.vars = &v, .nvars = 1, .pareto = true, .budget = 1 + 5 * 20, .weights = 5,
                    .jobs = 1, .nextra = 1};
  hs_opt_eval *ref, *ev;
  size_t nref, n;
  hs_error err = {0};
  cr_assert_eq(hs_opt_run(&sp, two, NULL, NULL, &ref, &nref, &err), HS_OK, "%s", err.msg);
  unsigned jobs[] = {1, 2, 5, 8};
  for (size_t k = 0; k < sizeof jobs / sizeof *jobs; k++) {
    batcher b = {0};
    sp.jobs = jobs[k];
    sp.batch = batch_two;
    cr_assert_eq(hs_opt_run(&sp, NULL, NULL, &b, &ev, &n, &err), HS_OK, "%s", err.msg);
    same_evals(ref, nref, ev, n);
    cr_assert_leq(b.max_n, (int)jobs[k]);
    if (jobs[k] >= 5) cr_assert_eq(b.max_n, 5, "the five weighted sums in one batch");
    cr_assert_leq(b.points, (int)nref, "a point evaluated at most once");
    cr_assert_geq(b.calls, 2, "the reference point in a batch of its own");
    hs_opt_evals_free(ev, n, 1);
  }
  /* A failing point: its error, with its values, and the search stops. */
  batcher b = {.fail_at = ref[7].text[0]};
  sp.jobs = 3;
  cr_assert_eq(hs_opt_run(&sp, NULL, NULL, &b, &ev, &n, &err), HS_EINVAL);
  cr_assert(strstr(err.msg, "no run at this point"), "%s", err.msg);
  cr_assert(!strncmp(err.msg, "point x=", 8), "%s", err.msg);
  cr_assert_null(ev);
  hs_opt_evals_free(ref, nref, 1);
  hs_opt_var_fini(&v);
}

/* --- the front file's rule: one row per distinct objective vector ------------- */

/* An evaluation with one value text x and objectives (a, b). */
static hs_opt_eval mk(size_t sub, size_t index, const char *x, double a, double b) {
  hs_opt_eval e = {.sub = sub, .index = index, .f = {a, b}};
  e.text = hs_calloc(1, sizeof *e.text);
  e.text[0] = hs_strdup(x);
  return e;
}

/* A hand-made Pareto search (W 2, budget 9: sub 0 one evaluation, subs 1 and
 * 2 four each) whose front has ties: its tied counts, its first-kept rows and
 * its quarter stages are known. */
Test(optimize, front_one_row_per_objective_vector) {
  hs_opt_var v = var("x=a,b,c,d,e,f,g");
  hs_opt_spec sp = {.vars = &v, .nvars = 1, .pareto = true, .budget = 9, .weights = 2};
  cr_assert_eq(hs_opt_sub_budget(&sp, 1), 4);
  hs_opt_eval ev[] = {
      mk(0, 0, "a", 5, 5), /* 0: the centre, dominated by (1, 4) */
      mk(1, 0, "b", 1, 4), /* 1: front, first of the (1, 4) tie */
      mk(1, 1, "c", 1, 4), /* 2: ties with b */
      mk(1, 2, "d", 3, 1), /* 3: front, first of the (3, 1) tie */
      mk(1, 3, "e", 2, 6), /* 4: dominated */
      mk(2, 0, "c", 1, 4), /* 5: point c again (another weighted sum): not a new tie */
      mk(2, 1, "f", 1, 4), /* 6: ties with b */
      mk(2, 2, "g", 3, 1), /* 7: ties with d */
      mk(2, 3, "a", 5, 5), /* 8: the centre again */
  };
  size_t n = sizeof ev / sizeof *ev, tied[9];
  cr_assert_eq(hs_opt_front(&sp, ev, n, 1.0, tied), 7, "7 distinct points a..g");
  size_t want[9] = {0, 3, 0, 2, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) cr_assert_eq(tied[i], want[i], "row %zu: tied %zu", i, tied[i]);
  /* the first half of each budget: indexes 0 and 1 (and the centre) */
  cr_assert_eq(hs_opt_front(&sp, ev, n, 0.5, tied), 4, "a, b, c, f");
  size_t half[9] = {0, 3, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < n; i++) cr_assert_eq(tied[i], half[i], "half, row %zu", i);
  /* a point seen first in sub 2 (index 0) and later in sub 1 is kept where
   * FILE.csv lists it first: lowest sub, then index */
  hs_opt_eval tail[] = {mk(0, 0, "a", 5, 5), mk(1, 0, "e", 9, 9), mk(1, 1, "b", 2, 2),
                        mk(2, 0, "c", 2, 2)};
  size_t t4[4];
  cr_assert_eq(hs_opt_front(&sp, tail, 4, 1.0, t4), 4);
  cr_assert(t4[0] == 0 && t4[1] == 0 && t4[2] == 2 && t4[3] == 0, "%zu %zu %zu %zu", t4[0], t4[1],
            t4[2], t4[3]);
  for (size_t i = 0; i < n; i++) hs_free(ev[i].text[0]), hs_free(ev[i].text);
  for (size_t i = 0; i < 4; i++) hs_free(tail[i].text[0]), hs_free(tail[i].text);
  hs_opt_var_fini(&v);
}

/* One objective: the best is the first of the least value; NaN (a run that
 * never met its target) is worst, and NaNs tie with each other. */
Test(optimize, best_one_row_with_its_ties) {
  hs_opt_var v = var("x=a,b,c,d,e");
  hs_opt_spec sp = {.vars = &v, .nvars = 1, .budget = 5};
  hs_opt_eval ev[] = {mk(0, 0, "a", NAN, 0), mk(0, 1, "b", 2, 0), mk(0, 2, "c", 1, 7),
                      mk(0, 3, "d", 1, 8), mk(0, 4, "e", NAN, 0)};
  size_t tied[5];
  cr_assert_eq(hs_opt_front(&sp, ev, 5, 1.0, tied), 5);
  cr_assert(!tied[0] && !tied[1] && tied[2] == 2 && !tied[3] && !tied[4],
            "f[1] is not an objective here: c and d tie");
  ev[2].f[0] = ev[3].f[0] = NAN;
  ev[1].f[0] = NAN;
  hs_opt_front(&sp, ev, 5, 1.0, tied);
  cr_assert(tied[0] == 5, "every point NaN: the first stands for all 5 (%zu)", tied[0]);
  for (size_t i = 0; i < 5; i++) hs_free(ev[i].text[0]), hs_free(ev[i].text);
  hs_opt_var_fini(&v);
}

/* A key with no effect (y): objectives x and 4 - x on the lattice x = 0..4.
 * Every x is on the front, and every y at that x ties with it: the front has
 * one row per x that was evaluated, the first evaluation of that x, tied with
 * as many distinct (x, y) as were evaluated; the same for -j 1 and -j 2. */
static hs_status no_effect(const char *const *t, double *f, double *extra, void *ud,
                           hs_error *err) {
  (void)extra, (void)ud, (void)err;
  f[0] = atof(t[0]);
  f[1] = 4 - f[0];
  return HS_OK;
}

Test(optimize, a_key_without_effect_gives_ties) {
  hs_opt_var v[2] = {var("x=0:4:1"), var("y=0:1")};
  hs_opt_spec sp = {.vars = v, .nvars = 2, .pareto = true, .budget = 61, .weights = 3,
                    .algorithm = "GN_CRS2_LM", .seed = 3, .jobs = 1};
  size_t *tied[2] = {NULL, NULL};
  hs_opt_eval *ev[2];
  size_t n[2];
  for (unsigned j = 0; j < 2; j++) {
    hs_error err = {0};
    sp.jobs = j + 1;
    cr_assert_eq(hs_opt_run(&sp, no_effect, NULL, NULL, &ev[j], &n[j], &err), HS_OK, "%s", err.msg);
    tied[j] = hs_calloc(n[j], sizeof *tied[j]);
    hs_opt_front(&sp, ev[j], n[j], 1.0, tied[j]);
  }
  same_evals(ev[0], n[0], ev[1], n[1]);
  size_t rows = 0;
  for (size_t i = 0; i < n[0]; i++) {
    cr_assert_eq(tied[0][i], tied[1][i], "-j 1 and -j 2 differ at row %zu", i);
    /* brute force: is i the first evaluation of its x, and how many distinct
     * points share its x? */
    bool first = true;
    for (size_t k = 0; k < i && first; k++) first = strcmp(ev[0][k].text[0], ev[0][i].text[0]) != 0;
    size_t same = 0;
    for (size_t k = 0; k < n[0]; k++) {
      bool seen = false; /* k's point already counted */
      for (size_t m = 0; m < k && !seen; m++)
        seen = !strcmp(ev[0][m].text[0], ev[0][k].text[0]) &&
               !strcmp(ev[0][m].text[1], ev[0][k].text[1]);
      same += !seen && !strcmp(ev[0][k].text[0], ev[0][i].text[0]);
    }
    cr_assert_eq(tied[0][i], first ? same : 0, "row %zu (x %s): tied %zu, expected %zu", i,
                 ev[0][i].text[0], tied[0][i], first ? same : 0);
    rows += first;
    if (first) cr_assert_gt(same, 1, "x %s: y has no effect, so a tie is expected", ev[0][i].text[0]);
  }
  cr_assert_eq(rows, 5, "one front row per x in 0..4 (got %zu)", rows);
  for (unsigned j = 0; j < 2; j++) {
    hs_free(tied[j]);
    hs_opt_evals_free(ev[j], n[j], 2);
  }
  hs_opt_var_fini(&v[0]);
  hs_opt_var_fini(&v[1]);
}

/* --- the search of `hetsim optimize` (hs_opt_search.h) ------------------------- */

static double neg_makespan(const hs_summary *s) { return -s->makespan_s; }

/* The best point of a search over tiny.json with objective obj, read from
 * its front file: its policy.w_e text (malloc'd). */
static char *best_point(const char *obj, const char *dir) {
  char out[256];
  snprintf(out, sizeof out, "%s/%s.csv", dir, obj);
  static const char *const vary[] = {"policy.w_e=0:1"};
  hs_opt_job job = {.scenario = HS_SOURCE_DIR "/tests/data/sweep/tiny.json", .out = out,
                    .objective = obj, .vary = vary, .nvary = 1, .budget = 9, .weights = 2,
                    .jobs = 1};
  hs_error err = {0};
  hs_opt_search *s = hs_opt_search_create(&job, &err);
  cr_assert(s, "%s", err.msg);
  hs_opt_report rep;
  cr_assert_eq(hs_opt_search_run(s, hs_transport_local(), &rep, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(rep.evaluations, 9);
  cr_expect_eq(rep.front_rows, 1, "one objective: the best point");
  cr_expect_null(rep.per_rank, "one process: no ranks to count");
  FILE *f = fopen(rep.front_path, "r");
  cr_assert(f);
  char line[4096];
  for (int i = 0; i < 3; i++) cr_assert(fgets(line, sizeof line, f)); /* two header lines */
  fclose(f);
  char *save = NULL;
  strtok_r(line, ",", &save); /* sub */
  strtok_r(NULL, ",", &save); /* index */
  char *we = hs_strdup(strtok_r(NULL, ",", &save));
  hs_opt_report_fini(&rep);
  hs_opt_search_destroy(s);
  return we;
}

/* A metric whose table line says higher is better is maximised: the best
 * point of -makespan is the best point of makespan. */
Test(optimize, a_higher_better_objective_is_maximised) {
  static const hs_metric neg = {.name = "test_neg_makespan_s", .unit = "s",
                                .doc = "test only: minus the makespan", .type = HS_METRIC_F64,
                                .in = HS_METRIC_SWEEP | HS_METRIC_HIGHER_BETTER,
                                .stats = HS_STAT_MEAN, .derive = neg_makespan};
  hs_error err = {0};
  cr_assert_eq(hs_metric_register_test(&neg, &err), HS_OK, "%s", err.msg);
  char dir[] = "/tmp/hs-test-opt-XXXXXX";
  cr_assert(mkdtemp(dir));
  char *a = best_point("makespan", dir), *b = best_point("test_neg_makespan", dir);
  cr_expect_str_eq(a, b);
  hs_free(a);
  hs_free(b);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_expect_eq(system(cmd), 0);
}

/* Objectives are metrics of the table: unknown names and metrics no run of
 * the search reports are refused before anything runs, saying why. */
Test(optimize, objectives_come_from_the_metric_table) {
  static const char *const vary[] = {"policy.w_e=0:1"};
  hs_opt_job job = {.scenario = HS_SOURCE_DIR "/tests/data/sweep/tiny.json",
                    .out = "/nonexistent/never-written.csv", .objective = "speed", .vary = vary,
                    .nvary = 1, .budget = 9, .weights = 2, .jobs = 1};
  hs_error err = {0};
  cr_expect_null(hs_opt_search_create(&job, &err));
  cr_expect_eq(err.status, HS_EINVAL);
  cr_expect(strstr(err.msg, "energy_system_j") != NULL, "every sweep metric listed: %s", err.msg);
  job.objective = "pareto_system";
  cr_expect_null(hs_opt_search_create(&job, &err));
  cr_expect(strstr(err.msg, "no metric energy_system_j in this search (it needs regime \"fl\"") !=
                NULL, "%s", err.msg);
  static const hs_override fl[] = {{"regime.kind", "fl"}};
  job.set = fl;
  job.nset = 1;
  hs_opt_search *s = hs_opt_search_create(&job, &err);
  cr_expect(s, "fl reports energy_system_j: %s", err.msg);
  hs_opt_search_destroy(s);
  job.objective = "energy_system"; /* the unit suffix left out */
  s = hs_opt_search_create(&job, &err);
  cr_expect(s, "%s", err.msg);
  hs_opt_search_destroy(s);
}
