/* hs_optimize.h: a search over scenario keys driven by NLopt (issue 17).
 *
 * A variable is one --vary spec:
 *   KEY=LO:HI        a real number in [LO, HI] (LO < HI)
 *   KEY=LO:HI:STEP   a lattice LO, LO+STEP, ... <= HI (integers with STEP 1)
 *   KEY=a,b,c        a set (categorical, or any list of values), >= 2 values
 * NLopt sees every variable as a real u in [0, 1]. A real maps linearly; a
 * lattice or a set of n values maps to index min(floor(u*n), n-1), so each
 * value owns an equal slice of the box (the ordering this imposes on a
 * categorical is arbitrary; DIRECT's box splitting still visits every slice
 * once the budget allows). Each evaluation is keyed by the VALUE TEXT of its
 * point, so two u that decode alike are evaluated once per sub-problem.
 *
 * Sub-problems. Single objective: one NLopt run, the whole budget. Pareto (two
 * objectives, both minimised): sub-problem 0 evaluates the box centre once
 * (the reference r), then W weighted-sum scalarisations
 *   f_w = w * f0/r0 + (1-w) * f1/r1,  w = k/(W-1), k = 0..W-1
 * each an NLopt run with an equal share of the rest of the budget (the first
 * ones get the remainder). The front is the non-dominated set of EVERY
 * evaluated point, not only the NLopt optima.
 *
 * Determinism: sub-problems are independent, so `jobs` threads run whole
 * sub-problems, never evaluations of one sub-problem, and the set of
 * evaluations (and hence every output) is the same for any jobs. The default
 * algorithm, DIRECT-L, uses no random numbers; a stochastic algorithm gets
 * nlopt_srand(seed + sub) on its own thread (NLopt keeps that state per
 * thread where it is built with thread-local storage, as Debian's is).
 * Batch mode (MPI): with spec->batch set, `jobs` threads still run whole
 * sub-problems, but none of them evaluates: each hands its point to the
 * thread that called hs_opt_run and waits. That thread waits until every
 * running sub-problem waits (or has ended), then passes their points (in
 * sub-problem order, each distinct point once) to batch() in one call. Each
 * sub-problem's sequence of points depends only on its own results, so how
 * points fall into batches changes no output: batch mode writes the same
 * evaluations as direct mode. Only the calling thread calls batch(), so an
 * MPI batch needs no more than MPI_THREAD_FUNNELED.
 * Resume: the caller hands back earlier evaluations (sub, index, value text,
 * objectives); NLopt is re-run and, while its points match the recorded
 * ones, the recorded objectives are returned instead of evaluating. The
 * objectives are recorded with 17 significant digits, so the re-run sees
 * the same doubles and takes the same path. */
#ifndef HS_OPTIMIZE_H
#define HS_OPTIMIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/hs_status.h"

typedef enum hs_opt_kind { HS_OPT_REAL, HS_OPT_LATTICE, HS_OPT_SET } hs_opt_kind;

typedef struct hs_opt_var {
  char *spec; /* as given */
  char *key;
  hs_opt_kind kind;
  double lo, hi, step; /* REAL, LATTICE */
  char **values;       /* SET */
  size_t n;            /* LATTICE, SET: number of values */
} hs_opt_var;

/* Errors (HS_EINVAL) start with "--vary SPEC: " and give the reason (no '=',
 * an empty key, LO >= HI, a step that is not > 0, fewer than two values). */
hs_status hs_opt_var_parse(const char *spec, hs_opt_var *out, hs_error *err);
void hs_opt_var_fini(hs_opt_var *v);
/* The value text of u in [0, 1] ("%.15g" for numbers); buf of cap >= 64. */
void hs_opt_var_text(const hs_opt_var *v, double u, char *buf, size_t cap);

/* Objectives an evaluation returns: f[0] (and f[1] for Pareto). */
#define HS_OPT_MAXF 2

/* One evaluation. text[v] owned; extra: caller data (nextra doubles). */
typedef struct hs_opt_eval {
  size_t sub, index; /* sub-problem and its evaluation number (from 0) */
  char **text;       /* nvars value texts */
  double f[HS_OPT_MAXF];
  double *extra;     /* nextra values the evaluator reported, or NULL */
} hs_opt_eval;

/* Evaluate the point whose value texts are text[0..nvars): fill f (and
 * extra[0..nextra)). Called concurrently from `jobs` threads. */
typedef hs_status (*hs_opt_eval_fn)(const char *const *text, double *f, double *extra,
                                    void *ud, hs_error *err);
/* Called once per NEW evaluation, never concurrently (under a lock); false
 * stops the search (results cannot be kept). */
typedef bool (*hs_opt_record_fn)(const hs_opt_eval *e, void *ud);

/* Batch mode: evaluate pts[0..n) (text given; fill f and extra) in one call,
 * from the thread that called hs_opt_run, never concurrently. On failure:
 * the error of the failing point (the lowest, when several fail) in *err and
 * its position in *failed; the search stops. */
typedef hs_status (*hs_opt_batch_fn)(hs_opt_eval *const *pts, size_t n, size_t *failed, void *ud,
                                     hs_error *err);

typedef struct hs_opt_spec {
  const hs_opt_var *vars;
  size_t nvars;
  bool pareto;      /* two objectives; else f[0] only */
  size_t budget;    /* evaluations in all, including replayed ones */
  size_t weights;   /* W for Pareto (>= 2) */
  const char *algorithm; /* NLopt name ("GN_DIRECT_L"), NULL: the default */
  unsigned long seed;
  unsigned jobs;         /* threads running sub-problems */
  hs_opt_batch_fn batch; /* NULL: eval on the sub-problems' threads */
  size_t nextra;
  const hs_opt_eval *prior; /* resumed evaluations, any order */
  size_t nprior;
} hs_opt_spec;

/* The number of sub-problems and the budget of sub s. */
size_t hs_opt_nsubs(const hs_opt_spec *spec);
size_t hs_opt_sub_budget(const hs_opt_spec *spec, size_t s);

/* Run the search (eval may be NULL in batch mode). *evals (heap) receives
 * every evaluation, sorted by (sub, index); free with hs_opt_evals_free. Errors: HS_EINVAL for a budget too
 * small (Pareto needs 1 + 2*W) or an unknown algorithm; an evaluator's error
 * as it returned it, prefixed with the point's values. */
hs_status hs_opt_run(const hs_opt_spec *spec, hs_opt_eval_fn eval, hs_opt_record_fn record,
                     void *ud, hs_opt_eval **evals, size_t *nevals, hs_error *err);
/* The checks hs_opt_run makes before any evaluation (budget, weights,
 * algorithm; HS_EINVAL with the reason), for a caller to make before it
 * creates any file. */
hs_status hs_opt_check(const hs_opt_spec *spec, hs_error *err);
void hs_opt_evals_free(hs_opt_eval *e, size_t n, size_t nvars);

/* The front of evaluations ev[0..n), in (sub, index) order as hs_opt_run
 * returns them (the order of FILE.csv, and the order a -j 1 run evaluates
 * them). Considered: the evaluations with index < frac x their sub-problem's
 * budget (Pareto's reference, sub 0, always; frac 1: all). A point (value
 * text) counts once, at its first evaluation. Points TIE when their objective
 * vectors are equal (f[0] and f[1] for Pareto, f[0] otherwise; == on the
 * doubles, NaN equal to NaN): the first of them stands for them all. The
 * front: the non-dominated representatives (Pareto), or the one with the
 * least f[0], NaN worst (one objective). tied[0..n) receives, for each
 * evaluation on the front, the number of distinct points it stands for (>= 1;
 * their sum is the number of distinct points on the front), 0 elsewhere.
 * Returns the number of distinct points considered. The result depends only
 * on ev (not on -j, ranks or batches). O(n log n x nvars). */
size_t hs_opt_front(const hs_opt_spec *spec, const hs_opt_eval *ev, size_t n, double frac,
                    size_t *tied);

#endif
