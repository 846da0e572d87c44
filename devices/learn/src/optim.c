/* optim.c: SGD, momentum (heavy ball, PyTorch's form v = mu v + g) and Adam
 * (Kingma and Ba, with bias correction) on float parameters, the gradient
 * clipping by global norm and the coupled weight decay in front of them, and
 * the learning-rate schedules (constant, step, cosine, linear warm-up).
 *
 * Invariant: the state belongs to one model copy (t counts its steps);
 * everything is computed in double from the float parameter and rounded once.
 * Cost: SGD O(touched parameters); momentum and Adam O(all parameters) per
 * step, because their state moves where the step's gradient is zero.
 * Clipping and decay are off at 0 and then leave the step bitwise what it
 * was (the branches skip them; no multiply by 1 or add of 0 * p).
 * Rejected: lazy ("sparse") Adam for the embedding rows, which is a different
 * optimiser; float state (drifts from the closed forms the tests check);
 * decoupled decay (AdamW): PyTorch's SGD and Adam couple it, and a
 * practitioner's weight_decay means that; schedules by optimiser step (the
 * simulator's unit of progress every regime shares is the round). */
#include "learn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LRN_PI 3.14159265358979323846 /* M_PI is not C11 */

int hs_learn_opt_kind_find(const char *name) {
  static const char *const names[] = {"sgd", "momentum", "adam"};
  for (int i = 0; i < 3; i++)
    if (name && strcmp(name, names[i]) == 0) return i;
  return -1;
}

hs_status hs_learn_opt_check(const hs_learn_opt *o, hs_error *err) {
  if (o->kind != HS_LEARN_SGD && o->kind != HS_LEARN_MOMENTUM && o->kind != HS_LEARN_ADAM)
    return hs_error_set(err, HS_EINVAL, "opt.kind: %d is not sgd, momentum or adam", (int)o->kind);
  if (!(o->lr >= 0) || !isfinite(o->lr)) return hs_error_set(err, HS_ERANGE, "opt.lr: %g is not > 0", o->lr);
  if (!(o->momentum >= 0 && o->momentum < 1))
    return hs_error_set(err, HS_ERANGE, "opt.momentum: %g is not in [0, 1)", o->momentum);
  if (!(o->beta1 >= 0 && o->beta1 < 1)) return hs_error_set(err, HS_ERANGE, "opt.beta1: %g is not in [0, 1)", o->beta1);
  if (!(o->beta2 >= 0 && o->beta2 < 1)) return hs_error_set(err, HS_ERANGE, "opt.beta2: %g is not in [0, 1)", o->beta2);
  if (!(o->eps >= 0) || !isfinite(o->eps)) return hs_error_set(err, HS_ERANGE, "opt.eps: %g is not >= 0", o->eps);
  if (!(o->weight_decay >= 0) || !isfinite(o->weight_decay))
    return hs_error_set(err, HS_ERANGE, "opt.weight_decay: %g is not >= 0", o->weight_decay);
  if (!(o->clip_norm >= 0) || !isfinite(o->clip_norm))
    return hs_error_set(err, HS_ERANGE, "opt.clip_norm: %g is not >= 0", o->clip_norm);
  return HS_OK;
}

void lrn_opt_resolve(hs_learn_opt *o, double task_lr) {
  if (o->lr == 0) o->lr = task_lr;
  if (o->momentum == 0) o->momentum = 0.9;
  if (o->beta1 == 0) o->beta1 = 0.9;
  if (o->beta2 == 0) o->beta2 = 0.999;
  if (o->eps == 0) o->eps = 1e-8;
}

hs_learn_optstate *hs_learn_optstate_create(const hs_learn_opt *o, size_t n) {
  hs_learn_optstate *s = hs_calloc(1, sizeof *s);
  s->o = *o;
  lrn_opt_resolve(&s->o, 0.1);
  s->n = n;
  if (o->kind != HS_LEARN_SGD) s->m = hs_calloc(n ? n : 1, sizeof *s->m);
  if (o->kind == HS_LEARN_ADAM) s->v = hs_calloc(n ? n : 1, sizeof *s->v);
  return s;
}

void hs_learn_optstate_reset(hs_learn_optstate *s) {
  s->t = 0;
  if (s->m) memset(s->m, 0, s->n * sizeof *s->m);
  if (s->v) memset(s->v, 0, s->n * sizeof *s->v);
}

void hs_learn_optstate_destroy(hs_learn_optstate *s) {
  if (!s) return;
  free(s->m);
  free(s->v);
  free(s);
}

void hs_learn_optstate_set_lr(hs_learn_optstate *s, double lr) { s->o.lr = lr; }

/* The per-step constants: Adam's, the clipping factor and the decay. */
typedef struct {
  double lr, b1, b2, c1, c2, eps;
  double clip; /* 1: no clipping this step */
  double wd;
} adam_k;

/* The gradient one parameter steps along: g / div, clipped, decayed. */
static inline double grad_at(const adam_k *k, const float *p, const double *g, double div, size_t i) {
  double gi = g[i] / div;
  if (k->clip != 1) gi *= k->clip;
  if (k->wd != 0) gi += k->wd * (double)p[i];
  return gi;
}

static void step_range(hs_learn_optstate *s, const adam_k *k, float *p, double *g, double div, size_t lo, size_t hi,
                       bool zero) {
  const double lr = s->o.lr;
  switch (s->o.kind) {
  case HS_LEARN_SGD:
    for (size_t i = lo; i < hi; i++) {
      p[i] = (float)((double)p[i] - lr * grad_at(k, p, g, div, i));
      if (zero) g[i] = 0;
    }
    break;
  case HS_LEARN_MOMENTUM: {
    const double mu = s->o.momentum;
    for (size_t i = lo; i < hi; i++) {
      s->m[i] = mu * s->m[i] + grad_at(k, p, g, div, i);
      p[i] = (float)((double)p[i] - lr * s->m[i]);
      if (zero) g[i] = 0;
    }
    break;
  }
  case HS_LEARN_ADAM:
    for (size_t i = lo; i < hi; i++) {
      double gi = grad_at(k, p, g, div, i);
      s->m[i] = k->b1 * s->m[i] + (1 - k->b1) * gi;
      s->v[i] = k->b2 * s->v[i] + (1 - k->b2) * gi * gi;
      p[i] = (float)((double)p[i] - k->lr * (s->m[i] / k->c1) / (sqrt(s->v[i] / k->c2) + k->eps));
      if (zero) g[i] = 0;
    }
    break;
  }
}

/* Sum of squares of g[lo..hi) / div. */
static double sq_range(const double *g, double div, size_t lo, size_t hi) {
  double acc = 0;
  for (size_t i = lo; i < hi; i++) acc += (g[i] / div) * (g[i] / div);
  return acc;
}

/* The clipping factor min(1, c / ||g / div||): the norm over the rows listed
 * and the dense tail (entries elsewhere are zero), or over all of g. */
static double clip_factor(const hs_learn_optstate *s, const double *g, double div, const lrn_rows *rows,
                          size_t row_dim, size_t dense0) {
  if (!(s->o.clip_norm > 0)) return 1;
  double sq = 0;
  if (!rows) {
    sq = sq_range(g, div, 0, s->n);
  } else {
    for (size_t r = 0; r < rows->n; r++) {
      size_t lo = (size_t)rows->list[r] * row_dim;
      sq += sq_range(g, div, lo, lo + row_dim);
    }
    sq += sq_range(g, div, dense0, s->n);
  }
  double norm = sqrt(sq);
  return norm > s->o.clip_norm ? s->o.clip_norm / norm : 1;
}

void lrn_opt_step(hs_learn_optstate *s, float *p, double *g, double div, const lrn_rows *rows, size_t row_dim,
                  size_t dense0, bool zero) {
  s->t++;
  adam_k k = {s->o.lr, s->o.beta1, s->o.beta2, 1 - pow(s->o.beta1, (double)s->t),
              1 - pow(s->o.beta2, (double)s->t), s->o.eps,
              clip_factor(s, g, div, rows, row_dim, dense0), s->o.weight_decay};
  if (s->o.kind != HS_LEARN_SGD || !rows) {
    step_range(s, &k, p, g, div, 0, s->n, zero);
    return;
  }
  for (size_t r = 0; r < rows->n; r++) {
    size_t lo = (size_t)rows->list[r] * row_dim;
    step_range(s, &k, p, g, div, lo, lo + row_dim, zero);
  }
  step_range(s, &k, p, g, div, dense0, s->n, zero);
}

void hs_learn_opt_apply(hs_learn_optstate *s, float *p, const double *g, size_t n) {
  size_t keep = s->n;
  if (n < s->n) s->n = n;
  /* g is only read (zero == false): the cast keeps one step function. */
  lrn_opt_step(s, p, (double *)(uintptr_t)g, 1.0, NULL, 0, 0, false);
  s->n = keep;
}

/* ------------------------------------------------------------- schedules */
int hs_learn_sched_kind_find(const char *name) {
  static const char *const names[] = {"constant", "step", "cosine"};
  for (int i = 0; i < 3; i++)
    if (name && strcmp(name, names[i]) == 0) return i;
  return -1;
}

double hs_learn_sched_lr(const hs_learn_sched *s, double base, uint32_t round, uint32_t rounds) {
  double lr = base;
  switch (s->kind) {
  case HS_LEARN_LR_CONSTANT:
    break;
  case HS_LEARN_LR_STEP: {
    uint32_t every = s->step_rounds ? s->step_rounds : 1;
    double gamma = s->gamma > 0 ? s->gamma : 0.1;
    lr = base * pow(gamma, (double)(round / every));
    break;
  }
  case HS_LEARN_LR_COSINE: {
    double t = rounds ? (double)round / (double)rounds : 0;
    lr = s->min_lr + (base - s->min_lr) * 0.5 * (1 + cos(LRN_PI * t));
    break;
  }
  }
  if (s->warmup_rounds && round < s->warmup_rounds) lr *= (double)(round + 1) / (double)s->warmup_rounds;
  return lr;
}
