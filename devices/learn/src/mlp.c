/* mlp.c: a one-hidden-layer perceptron (ReLU) with softmax cross-entropy
 * (nout > 1) or squared error (nout == 1), trained by minibatch SGD.
 *
 * Data structure: row-major float weights (W1 is nhid x nin), one gradient
 * record per thread so threads never share a write; apply() sums them in a
 * fixed order, so results do not depend on thread timing.
 * Complexity: O(nin * nhid) per sample; input zeros (most MNIST pixels) are
 * skipped in the W1 gradient. The learner (learner.c) uses the same forward
 * pass on a flat parameter vector (lrn_mlp_view) with a double-accumulating
 * backward (lrn_mlp_sample_d): same per-sample terms, summed in double. Rejected: a BLAS - the sizes are tiny and the
 * harness must build on a board with nothing installed. float, not double:
 * what real trainers on these boards use, and half the memory traffic. */
#include "base/hs_rng.h"
#include "learn/hs_learn_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mlp_splitmix(uint64_t *s) { return hs_splitmix64_step(s); }

static float mlp_uniform(uint64_t *s, float a) { /* in [-a, a) */
  return (float)(((double)(mlp_splitmix(s) >> 11) * 0x1p-53 * 2.0 - 1.0) * a);
}

void lrn_mlp_init(lrn_mlp *m, int nin, int nhid, int nout, uint64_t seed) {
  m->nin = nin;
  m->nhid = nhid;
  m->nout = nout;
  m->w1 = hs_malloc((size_t)nin * (size_t)nhid * sizeof *m->w1);
  m->b1 = hs_calloc((size_t)nhid, sizeof *m->b1);
  m->w2 = hs_malloc((size_t)nhid * (size_t)nout * sizeof *m->w2);
  m->b2 = hs_calloc((size_t)nout, sizeof *m->b2);
  uint64_t s = seed;
  float a1 = (float)sqrt(6.0 / nin), a2 = (float)sqrt(6.0 / (nhid + nout)); /* He / Glorot */
  for (size_t i = 0; i < (size_t)nin * (size_t)nhid; i++) m->w1[i] = mlp_uniform(&s, a1);
  for (size_t i = 0; i < (size_t)nhid * (size_t)nout; i++) m->w2[i] = mlp_uniform(&s, a2);
}

void lrn_mlp_fini(lrn_mlp *m) {
  free(m->w1);
  free(m->b1);
  free(m->w2);
  free(m->b2);
  memset(m, 0, sizeof *m);
}

void lrn_mlp_grad_init(lrn_mlp_grad *g, const lrn_mlp *m) {
  g->w1 = hs_calloc((size_t)m->nin * (size_t)m->nhid, sizeof *g->w1);
  g->b1 = hs_calloc((size_t)m->nhid, sizeof *g->b1);
  g->w2 = hs_calloc((size_t)m->nhid * (size_t)m->nout, sizeof *g->w2);
  g->b2 = hs_calloc((size_t)m->nout, sizeof *g->b2);
  g->h = hs_calloc((size_t)m->nhid, sizeof *g->h);
  g->o = hs_calloc((size_t)m->nout, sizeof *g->o);
  g->loss = 0;
}

void lrn_mlp_grad_fini(lrn_mlp_grad *g) {
  free(g->w1);
  free(g->b1);
  free(g->w2);
  free(g->b2);
  free(g->h);
  free(g->o);
  memset(g, 0, sizeof *g);
}

/* Forward pass: h, o and the loss; o then holds dLoss/do. Shared by the
 * float backward (the harness) and the double one (the learner). */
static double mlp_forward(const lrn_mlp *m, const float *x, int cls, float y, float *h, float *o) {
  const int nin = m->nin, nh = m->nhid, no = m->nout;
  for (int i = 0; i < nh; i++) {
    const float *w = m->w1 + (size_t)i * (size_t)nin;
    float s = m->b1[i];
    for (int j = 0; j < nin; j++) s += w[j] * x[j];
    h[i] = s > 0 ? s : 0;
  }
  for (int k = 0; k < no; k++) {
    const float *w = m->w2 + (size_t)k * (size_t)nh;
    float s = m->b2[k];
    for (int i = 0; i < nh; i++) s += w[i] * h[i];
    o[k] = s;
  }
  double loss;
  if (no == 1) {
    float d = o[0] - y;
    loss = 0.5 * (double)d * (double)d;
    o[0] = d;
  } else {
    float mx = o[0];
    for (int k = 1; k < no; k++) mx = o[k] > mx ? o[k] : mx;
    double z = 0;
    for (int k = 0; k < no; k++) z += exp((double)(o[k] - mx));
    loss = log(z) - (double)(o[cls] - mx);
    for (int k = 0; k < no; k++) o[k] = (float)(exp((double)(o[k] - mx)) / z) - (k == cls ? 1.0f : 0.0f);
  }
  return loss;
}

double lrn_mlp_sample(const lrn_mlp *m, lrn_mlp_grad *g, const float *x, int cls, float y,
                        float *h, float *o) {
  const int nin = m->nin, nh = m->nhid, no = m->nout;
  double loss = mlp_forward(m, x, cls, y, h, o);
  if (!g) return loss;
  g->loss += loss;
  /* o now holds dLoss/do. */
  for (int k = 0; k < no; k++) {
    float *gw = g->w2 + (size_t)k * (size_t)nh;
    for (int i = 0; i < nh; i++) gw[i] += o[k] * h[i];
    g->b2[k] += o[k];
  }
  for (int i = 0; i < nh; i++) {
    if (h[i] <= 0) continue;
    float dh = 0;
    for (int k = 0; k < no; k++) dh += m->w2[(size_t)k * (size_t)nh + (size_t)i] * o[k];
    if (dh == 0) continue;
    float *gw = g->w1 + (size_t)i * (size_t)nin;
    for (int j = 0; j < nin; j++)
      if (x[j] != 0) gw[j] += dh * x[j];
    g->b1[i] += dh;
  }
  return loss;
}

void lrn_mlp_view(lrn_mlp *m, int nin, int nhid, int nout, const float *p) {
  /* The view never writes through these pointers (lrn_mlp_sample_d takes it
   * const); the cast keeps one struct for owned and borrowed weights. */
  float *q = (float *)(uintptr_t)p;
  m->nin = nin;
  m->nhid = nhid;
  m->nout = nout;
  m->w1 = q;
  m->b1 = m->w1 + (size_t)nin * (size_t)nhid;
  m->w2 = m->b1 + nhid;
  m->b2 = m->w2 + (size_t)nhid * (size_t)nout;
}

size_t lrn_mlp_nparams(int nin, int nhid, int nout) {
  return (size_t)nin * (size_t)nhid + (size_t)nhid + (size_t)nhid * (size_t)nout + (size_t)nout;
}

void lrn_mlp_flatten(const lrn_mlp *m, float *p) {
  size_t a = (size_t)m->nin * (size_t)m->nhid, c = (size_t)m->nhid * (size_t)m->nout;
  memcpy(p, m->w1, a * sizeof *p);
  memcpy(p + a, m->b1, (size_t)m->nhid * sizeof *p);
  memcpy(p + a + (size_t)m->nhid, m->w2, c * sizeof *p);
  memcpy(p + a + (size_t)m->nhid + c, m->b2, (size_t)m->nout * sizeof *p);
}

double lrn_mlp_sample_d(const lrn_mlp *m, double *g, const float *x, int cls, float y, float *h, float *o,
                        int *pred) {
  const int nin = m->nin, nh = m->nhid, no = m->nout;
  double loss = mlp_forward(m, x, cls, y, h, o);
  if (pred) {
    /* o = softmax - onehot(cls): the probabilities are o + onehot. */
    int best = 0;
    float bp = -1;
    for (int k = 0; k < no && no > 1; k++) {
      float pk = o[k] + (k == cls ? 1.0f : 0.0f);
      if (pk > bp) {
        bp = pk;
        best = k;
      }
    }
    *pred = best;
  }
  if (!g) return loss;
  /* Same terms as the float backward, each rounded to float as there, then
   * accumulated in double (layout of lrn_mlp_view). */
  double *gw1 = g, *gb1 = g + (size_t)nin * (size_t)nh, *gw2 = gb1 + nh, *gb2 = gw2 + (size_t)nh * (size_t)no;
  for (int k = 0; k < no; k++) {
    double *gw = gw2 + (size_t)k * (size_t)nh;
    for (int i = 0; i < nh; i++) gw[i] += (double)(o[k] * h[i]);
    gb2[k] += (double)o[k];
  }
  for (int i = 0; i < nh; i++) {
    if (h[i] <= 0) continue;
    float dh = 0;
    for (int k = 0; k < no; k++) dh += m->w2[(size_t)k * (size_t)nh + (size_t)i] * o[k];
    if (dh == 0) continue;
    double *gw = gw1 + (size_t)i * (size_t)nin;
    for (int j = 0; j < nin; j++)
      if (x[j] != 0) gw[j] += (double)(dh * x[j]);
    gb1[i] += (double)dh;
  }
  return loss;
}

/* Threads are capped at PROBE_MAX_THREADS by the CLI. */
#define MLP_MAX_GRADS 64

static void mlp_step(float *p, float *const *gs, unsigned n, size_t len, float lr) {
  for (size_t i = 0; i < len; i++) {
    float s = 0;
    for (unsigned t = 0; t < n; t++) {
      s += gs[t][i];
      gs[t][i] = 0;
    }
    p[i] -= lr * s;
  }
}

void lrn_mlp_apply(lrn_mlp *m, lrn_mlp_grad *g, unsigned n, float lr_over_batch) {
  float *gw1[MLP_MAX_GRADS], *gb1[MLP_MAX_GRADS], *gw2[MLP_MAX_GRADS], *gb2[MLP_MAX_GRADS];
  if (n > MLP_MAX_GRADS) n = MLP_MAX_GRADS;
  for (unsigned t = 0; t < n; t++) {
    gw1[t] = g[t].w1;
    gb1[t] = g[t].b1;
    gw2[t] = g[t].w2;
    gb2[t] = g[t].b2;
    g[t].loss = 0;
  }
  mlp_step(m->w1, gw1, n, (size_t)m->nin * (size_t)m->nhid, lr_over_batch);
  mlp_step(m->b1, gb1, n, (size_t)m->nhid, lr_over_batch);
  mlp_step(m->w2, gw2, n, (size_t)m->nhid * (size_t)m->nout, lr_over_batch);
  mlp_step(m->b2, gb2, n, (size_t)m->nout, lr_over_batch);
}
