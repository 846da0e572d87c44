/* [devices/learn/include/learn -> hetsim::learn; not installed]
 * hs_learn.h: the learner interface of hetsim::learn (devices/learn), the
 * board harness's trainers (hetsim-probe) made into a library the simulator
 * calls. It trains for real: the same MLP (Fashion-MNIST), regressor (ERA5 CSV
 * windows) and embedding bag (aclImdb) code the harness times on the boards.
 * libc + libm + pthreads; it knows nothing of the simulator: the simulator
 * decides who trains how many samples from which model, and this library says
 * what the result is worth.
 *
 * Objects (create/destroy; the caller owns what it creates):
 *   hs_learner         task + data + model + optimiser config + partition
 *   hs_learn_grad      a batch gradient (double, dense, with touched rows)
 *   hs_learn_optstate  optimiser state of ONE model copy (momentum buffer,
 *                      Adam moments and step count)
 * A model is a flat float vector of hs_learn_nparams() parameters, owned by
 * the caller; the library never keeps a pointer to it.
 *
 * Determinism (same config and seed => bitwise same results, whatever the
 * thread count): every random choice comes from a stream keyed by (seed,
 * entity, purpose[, draw]) (splitmix64 -> xoshiro256**); participants train
 * on separate threads but each job is computed by one thread with the same
 * code, and every sum over participants/ranks/chunks is taken in index order.
 *
 * Threads: a learner is used by one caller thread at a time (its calls must
 * not overlap); the *_many calls and hs_learn_eval use its own pool.
 *
 * Numerics: parameters are float (what the boards train with); gradients,
 * optimiser state and aggregation accumulate in double and round to float
 * once per step. A batch gradient is the mean over its samples.
 *
 * Typical use (FedAvg round, error handling elided):
 *   hs_learn_cfg c = {.task = "mnist", .seed = 1, .batch = 32,
 *                     .opt = {.kind = HS_LEARN_SGD, .lr = 0.05}, .threads = 4};
 *   hs_learner *l; hs_learn_create(&c, &l, &err);
 *   hs_learn_part_cfg pc = {HS_LEARN_DIRICHLET, 10, 0.1, NULL};
 *   hs_learn_partition(l, &pc, &err);
 *   float *g = malloc(np * 4), *m[10]; hs_learn_init_params(l, g);
 *   hs_learn_job j[10]; for i: j[i] = (hs_learn_job){.participant = i,
 *       .draw = round, .samples = n_i, .start = g, .out = m[i]};
 *   hs_learn_train_many(l, j, 10, &err);
 *   double w[10] = {n_0, ..., n_9};
 *   hs_learn_aggregate(l, (const float *const *)m, w, 10, g);
 *   hs_learn_eval(l, g, 0, &loss, &acc);   (0: every held-out sample)
 */
#ifndef HS_LEARN_H
#define HS_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

typedef struct hs_learner hs_learner;
typedef struct hs_learn_grad hs_learn_grad;
typedef struct hs_learn_optstate hs_learn_optstate;

/* ------------------------------------------------------------- optimisers */
typedef enum hs_learn_opt_kind { HS_LEARN_SGD, HS_LEARN_MOMENTUM, HS_LEARN_ADAM } hs_learn_opt_kind;
/* Per step t (from 1), for every parameter with gradient g:
 *   SGD       p -= lr g
 *   MOMENTUM  v = mu v + g;  p -= lr v                       (v0 = 0)
 *   ADAM      m = b1 m + (1-b1) g;  s = b2 s + (1-b2) g^2;
 *             p -= lr (m / (1-b1^t)) / (sqrt(s / (1-b2^t)) + eps)  (m0 = s0 = 0)
 * computed in double from the float p, then rounded to float. Zero fields
 * take the defaults: lr the task's (mnist 0.1, era5 0.01, imdb 0.5), mu 0.9,
 * b1 0.9, b2 0.999, eps 1e-8.
 * Before the rule, in this order (PyTorch's: clip_grad_norm_ on the batch
 * gradient, then the optimiser's coupled weight_decay):
 *   clip_norm > 0     g *= min(1, clip_norm / ||g||_2), the norm over every
 *                     parameter of the step's gradient (the global norm);
 *   weight_decay > 0  g += weight_decay * p (L2, coupled: Adam sees it too).
 * Both 0 (the default) = off, and the step is bitwise the plain rule. SGD on
 * an embedding's rows steps only the rows a batch touched, so its decay is
 * lazy there (the rows a batch did not touch are not decayed). */
typedef struct hs_learn_opt {
  hs_learn_opt_kind kind;
  double lr, momentum, beta1, beta2, eps;
  double weight_decay, clip_norm;
} hs_learn_opt;
/* Look an optimiser up by name ("sgd", "momentum", "adam"); -1 when unknown. */
int hs_learn_opt_kind_find(const char *name);
/* Check an optimiser config: "<where>: <reason>" (e.g. "opt.lr: -1 is not > 0"). */
hs_status hs_learn_opt_check(const hs_learn_opt *o, hs_error *err);

/* State for n parameters, zeroed (t = 0). Defaults of o are resolved here. */
hs_learn_optstate *hs_learn_optstate_create(const hs_learn_opt *o, size_t n);
void hs_learn_optstate_reset(hs_learn_optstate *s);   /* back to t = 0 */
void hs_learn_optstate_destroy(hs_learn_optstate *s);
/* One step on the n parameters p with gradient g (the low-level form the
 * learner uses; exposed for tests and for callers with their own vectors). */
void hs_learn_opt_apply(hs_learn_optstate *s, float *p, const double *g, size_t n);
/* The rate of the following steps (a schedule's value for this round). */
void hs_learn_optstate_set_lr(hs_learn_optstate *s, double lr);

/* ------------------------------------------------- learning-rate schedule */
/* lr(r) for round r = 0, 1, ... of R rounds, from the base rate b:
 *   CONSTANT  b
 *   STEP      b * gamma^floor(r / step_rounds)
 *   COSINE    min_lr + (b - min_lr) (1 + cos(pi r / R)) / 2   (b at r = 0)
 * then, when warmup_rounds = w > 0 and r < w, times (r + 1) / w (linear
 * warm-up, Goyal et al.'s, by round). Zero fields: gamma 0.1, step_rounds 1. */
typedef enum hs_learn_sched_kind { HS_LEARN_LR_CONSTANT, HS_LEARN_LR_STEP, HS_LEARN_LR_COSINE } hs_learn_sched_kind;
typedef struct hs_learn_sched {
  hs_learn_sched_kind kind;
  uint32_t step_rounds, warmup_rounds;
  double gamma, min_lr;
} hs_learn_sched;
int hs_learn_sched_kind_find(const char *name); /* "constant", "step", "cosine"; -1 */
double hs_learn_sched_lr(const hs_learn_sched *s, double base, uint32_t round, uint32_t rounds);

/* ---------------------------------------------------------------- learner */
/* A job of n = q * batch + r samples (0 < r < batch) trains, in order:
 *   KEEP   q batches of `batch` and one of r (what a plain data loader does:
 *          PyTorch's DataLoader with drop_last=False, its default);
 *   DROP   the q full batches only (drop_last=True); the r samples are not
 *          trained and not counted in `trained`; n < batch trains nothing;
 *   MERGE  q - 1 batches of `batch` and one of batch + r (the short tail
 *          folded into the batch before it); n < batch is one batch of n.
 * r = 0: all three are q full batches. */
typedef enum hs_learn_last_batch { HS_LEARN_LAST_KEEP, HS_LEARN_LAST_DROP, HS_LEARN_LAST_MERGE } hs_learn_last_batch;
int hs_learn_last_batch_find(const char *name); /* "keep", "drop", "merge"; -1 */

typedef struct hs_learn_cfg {
  const char *task;      /* "mnist" | "era5" | "imdb" */
  const char *data;      /* file or folder; NULL = the task default (mnist:
                          * /usr/share/datasets/fashion-mnist, Debian's
                          * dataset-fashion-mnist; era5 and imdb need one) */
  size_t max_samples;    /* cap on training samples loaded; 0 = task default
                          * (mnist 20000, imdb 5000, era5 all rows) */
  size_t max_held;       /* cap on held-out samples loaded; 0 = all there are
                          * (mnist: the 10000 of t10k, imdb: every review of
                          * test/; without those files a tenth of the training
                          * data, taken from its tail) */
  uint64_t seed;         /* model initialisation and every stream */
  size_t batch;          /* local minibatch, >= 1 */
  hs_learn_opt opt;
  unsigned threads;      /* worker threads for the *_many calls; 0 = 1 */
  hs_learn_last_batch last_batch; /* a job's short last batch (below) */
} hs_learn_cfg;

/* Load the data and initialise the model. Bad input (unknown task, missing
 * data files, batch 0, a bad optimiser) is a status with one line naming the
 * file or field and the reason; nothing is left allocated. */
hs_status hs_learn_create(const hs_learn_cfg *cfg, hs_learner **out, hs_error *err);
void hs_learn_destroy(hs_learner *l);

size_t hs_learn_nparams(const hs_learner *l);
size_t hs_learn_train_count(const hs_learner *l);   /* training samples */
size_t hs_learn_held_count(const hs_learner *l);    /* held-out samples */
int hs_learn_classes(const hs_learner *l);          /* 10 mnist, 2 imdb, 0 era5 (regression) */
int hs_learn_label(const hs_learner *l, size_t i);  /* class of training sample i; -1 regression */
const char *hs_learn_describe(const hs_learner *l); /* model, data used (says "SYNTHETIC" when so) */
const hs_learn_opt *hs_learn_optimiser(const hs_learner *l); /* defaults resolved */
/* The initial model (the trainer's seeded initialisation) into params. */
void hs_learn_init_params(const hs_learner *l, float *params);

/* -------------------------------------------------------------- partition */
typedef enum hs_learn_part_kind { HS_LEARN_IID, HS_LEARN_DIRICHLET, HS_LEARN_COUNTS } hs_learn_part_kind;
typedef struct hs_learn_part_cfg {
  hs_learn_part_kind kind;
  unsigned participants; /* P >= 1 */
  double alpha;          /* DIRICHLET: concentration > 0 (small = strong label skew) */
  const size_t *counts;  /* COUNTS: P sizes, each >= 1, sum <= training samples */
} hs_learn_part_cfg;
/* Split the training set across P participants (replaces any earlier split):
 *   IID        a seeded shuffle cut into P near-equal parts (sizes differ by <= 1);
 *   DIRICHLET  per class c (in class order): q ~ Dir(alpha, ..., alpha) over
 *              the P participants, the class's samples shuffled and cut at
 *              floor(n_c * cumsum(q)); classification tasks only;
 *   COUNTS     a seeded shuffle cut into parts of the given sizes.
 * Every training sample goes to at most one participant (IID/DIRICHLET: exactly
 * one); each part is sorted by sample index. Streams: (seed, class or 0,
 * purpose). Errors: "partition.alpha: ..." (alpha <= 0 or not finite),
 * "partition.participants: ...", "partition.counts[i]: ...", and a split that
 * leaves a participant with no data names it. On error the learner has no
 * partition. */
hs_status hs_learn_partition(hs_learner *l, const hs_learn_part_cfg *pc, hs_error *err);
unsigned hs_learn_participants(const hs_learner *l);              /* 0 before a partition */
size_t hs_learn_part_size(const hs_learner *l, unsigned p);
const uint32_t *hs_learn_part_samples(const hs_learner *l, unsigned p); /* owned by l */
/* n sample indices of participant p's part for draw key `draw` (e.g. the
 * round, the step, the model version): passes over the part, each pass a
 * fresh permutation from the stream (seed, p, draw); the same key gives the
 * same samples. Returns n (0 when p has no part). */
size_t hs_learn_draw(const hs_learner *l, unsigned p, uint64_t draw, size_t n, uint32_t *idx);

/* -------------------------------------------------- federated (local) training */
typedef struct hs_learn_job {
  /* in */
  unsigned participant;
  uint64_t draw;         /* key of this job's samples (hs_learn_draw) */
  size_t samples;        /* n: trained in ceil(n / batch) local steps */
  const float *start;    /* model it starts from (e.g. the version it downloaded) */
  float *out;            /* trained model, nparams (may not alias start) */
  hs_learn_optstate *opt;/* NULL: a fresh optimiser state for this job */
  double lr;             /* > 0: the rate of this job's steps (a schedule's);
                          * 0: the optimiser's */
  /* out */
  size_t trained;        /* samples trained on (= samples, less a dropped tail) */
  double loss_sum;       /* sum of the per-sample training losses seen */
  double loss_sq_sum;    /* sum of their squares (Oort's statistical utility:
                          * trained * sqrt(loss_sq_sum / trained)) */
} hs_learn_job;
/* Train one job on the calling thread. HS_ESTATE without a partition,
 * HS_ERANGE for a participant outside it ("job.participant: ..."). The update
 * is out - start. */
hs_status hs_learn_train(hs_learner *l, hs_learn_job *job, hs_error *err);
/* Train n independent jobs on the learner's threads; each job's result is
 * bitwise what hs_learn_train gives. All jobs are checked before any runs. */
hs_status hs_learn_train_many(hs_learner *l, hs_learn_job *jobs, size_t n, hs_error *err);

/* FedAvg: out = sum_i (w_i / W) * models[i], W = sum w_i, accumulated in
 * double in index order (participant order), rounded once. w_i >= 0, W > 0
 * (asserted). With one model, out is that model bitwise. out may alias none
 * of the models. */
void hs_learn_aggregate(const hs_learner *l, const float *const *models, const double *w, size_t n,
                        float *out);
/* FedAvg's weights w[k] of jobs[k], done: SAMPLES its `trained`, DATA the
 * size of its participant's part (McMahan et al.'s n_k, Flower's default
 * num_examples), UNIFORM 1. */
typedef enum hs_learn_weighting { HS_LEARN_W_SAMPLES, HS_LEARN_W_DATA, HS_LEARN_W_UNIFORM } hs_learn_weighting;
int hs_learn_weighting_find(const char *name); /* "samples", "data", "uniform"; -1 */
void hs_learn_fedavg_weights(const hs_learner *l, hs_learn_weighting kind, const hs_learn_job *jobs, size_t n,
                             double *w);
/* Server optimiser (Reddi et al., "Adaptive Federated Optimization"): one
 * step of s on global along the pseudo-gradient global - aggregate (computed
 * in double). s MOMENTUM with lr eta is FedAvgM (Hsu et al.: v = mu v + d,
 * x -= eta v; with eta = 1 its first step lands on the aggregate, bitwise:
 * v = d); s ADAM is FedAdam
 * (with Adam's bias correction; eps plays Reddi's tau). scratch: n doubles. */
void hs_learn_server_step(hs_learn_optstate *s, float *global, const float *aggregate, size_t n, double *scratch);
/* FedAsync mixing: global = (1 - a) * global + a * model, a in [0, 1]. */
void hs_learn_mix(const hs_learner *l, float *global, const float *model, double a);

/* ------------------------------------------------------------------- DDP */
hs_learn_grad *hs_learn_grad_create(const hs_learner *l);  /* zero gradient */
void hs_learn_grad_destroy(hs_learn_grad *g);
/* g = mean gradient of training samples idx[0..n) at params (n >= 1);
 * returns the mean loss of the batch. */
double hs_learn_batch_grad(hs_learner *l, const float *params, const uint32_t *idx, size_t n,
                           hs_learn_grad *g);
/* The same for several ranks at once on the learner's threads. */
void hs_learn_batch_grad_many(hs_learner *l, const float *params, const uint32_t *const *idx,
                              const size_t *n, hs_learn_grad *const *g, double *mean_loss, size_t ranks);
/* out = sum_i w[i] * g[i], in rank order (DDP all-reduce with the schedule's
 * gradient weights, e.g. w_i = b_i / sum b: then one step on out is one step
 * of single-process training on the union of the ranks' batches). */
void hs_learn_grad_combine(hs_learn_grad *out, const hs_learn_grad *const *g, const double *w, size_t n);
const double *hs_learn_grad_values(const hs_learn_grad *g); /* nparams values */
/* One optimiser step of params along g (the state belongs to this model copy). */
void hs_learn_step(const hs_learner *l, hs_learn_optstate *s, float *params, const hs_learn_grad *g);
/* A state for this learner's optimiser and parameter count. */
hs_learn_optstate *hs_learn_optstate_for(const hs_learner *l);

/* ------------------------------------------------------------- evaluation */
/* Mean loss and accuracy (fraction of correct argmax / sign; NAN for
 * regression) of params on the first n held-out samples (0: all; n must not
 * exceed hs_learn_held_count, asserted: callers check it with the input, so
 * nothing is clamped silently). Computed in chunks of fixed size summed in order, so the thread
 * count does not change it. */
void hs_learn_eval(hs_learner *l, const float *params, size_t n, double *loss, double *accuracy);

#endif
