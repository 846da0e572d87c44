/* [devices/learn/include/learn -> hetsim::learn; not installed]
 * hs_learn_parts.h: the parts of the learner library (devices/learn,
 * hetsim::learn) that came from the board harness hetsim-probe: data readers
 * (gzip, IDX, ERA5 CSV, aclImdb text), the synthetic data writers, the thread
 * pool, the one-hidden-layer MLP and the trainer registry the harness times.
 * The harness (devices/probe) and the learner interface (hs_learn.h) both
 * build on these. libc, libm and pthreads only (plus hetsim::status, libc
 * only too), so it cross-builds for the boards; it knows nothing of the
 * simulator. Prefix lrn_ (library-internal names shared with the harness);
 * the simulator should use hs_learn.h, not this header. */
#ifndef HS_LEARN_PARTS_H
#define HS_LEARN_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hs_alloc.h"
#include "base/hs_status.h"

#if defined(__GNUC__)
#define LRN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LRN_PRINTF(a, b)
#endif

/* File helpers (util.c). Heap string from a format. */
char *lrn_xasprintf(const char *fmt, ...) LRN_PRINTF(1, 2);
/* Whole file into a heap buffer with a NUL after it. ENOENT / EPERM / EIO with
 * "<path>: <reason>". */
hs_status lrn_read_file(const char *path, unsigned char **data, size_t *len, hs_error *err);
bool lrn_exists(const char *path);
/* Write `text` to `path` atomically: a temp file in the same folder, then rename. */
hs_status lrn_write_atomic(const char *path, const char *text, size_t len, hs_error *err);
/* errno -> HS_ENOENT (missing), HS_EPERM (denied), HS_EIO (anything else). */
hs_status lrn_errno_status(int e);
/* CLOCK_MONOTONIC, s. */
double lrn_now_mono(void);

/* ------------------------------------------------------------------- gzip */
/* Decompress one gzip member. When max_out > 0 only the first max_out bytes
 * are kept, but the whole member is still decoded (in a 32 KiB window, so
 * memory stays max_out + 128 KiB) and its CRC-32 and length checked: a
 * truncated or corrupt archive is refused even when a prefix is all the
 * caller wants. Errors name the offset in the compressed input: "offset 1234:
 * invalid distance code". */
hs_status lrn_gunzip(const unsigned char *in, size_t inlen, size_t max_out,
                          unsigned char **out, size_t *outlen, hs_error *err);
/* The first max_out (> 0) bytes only, unchecked: decoding stops there (to
 * peek at a header before deciding how much to read). */
hs_status lrn_gunzip_head(const unsigned char *in, size_t inlen, size_t max_out,
                          unsigned char **out, size_t *outlen, hs_error *err);
uint32_t lrn_crc32(uint32_t crc, const unsigned char *p, size_t n);

/* -------------------------------------------------------------------- IDX */
typedef struct lrn_idx {
  int ndims;
  uint32_t dims[4];
  size_t count;          /* items held (dims[0], or fewer when truncated by max_items) */
  size_t item_size;      /* bytes per item (product of dims[1..]) */
  unsigned char *data;   /* count * item_size bytes, owned */
} lrn_idx;
/* Parse an IDX buffer of unsigned bytes (type 0x08). max_items 0 = all. */
hs_status lrn_idx_parse(const unsigned char *buf, size_t len, size_t max_items,
                             lrn_idx *out, hs_error *err);
/* Load a plain or gzip-compressed IDX file; messages start with the path. */
hs_status lrn_idx_load(const char *path, size_t max_items, lrn_idx *out, hs_error *err);
/* Whether lrn_idx_load, keeping only max_items of a .gz file, still decodes
 * and checks the whole member (lrn_gunzip) rather than stopping after the
 * prefix (lrn_gunzip_head). Off by default: the simulator's learner loads its
 * prefix at every scenario load, and a whole decode of the 26 MB MNIST
 * archive costs a second there (ten under the fuzzer's sanitizers); a prefix
 * is still checked as it is decoded. hetsim-probe calibrate turns it on: a
 * calibration must not take data from a corrupt archive (issue 16 defect 7).
 * Call before any thread starts. */
void lrn_idx_verify_whole(bool on);
void lrn_idx_fini(lrn_idx *x);

/* ------------------------------------------------------------ ERA5 (CSV) */
/* One grid point, rows in time order. Header line required; column `time`
 * (any text, kept out of the features), every other column numeric. */
typedef struct lrn_table {
  size_t rows, cols;     /* numeric columns only */
  char **names;          /* cols names */
  double *v;             /* rows * cols, row-major */
} lrn_table;
hs_status lrn_csv_parse(const char *text, size_t len, lrn_table *t, hs_error *err);
hs_status lrn_csv_load(const char *path, lrn_table *t, hs_error *err);
void lrn_table_fini(lrn_table *t);
int lrn_table_col(const lrn_table *t, const char *name); /* -1 when absent */

/* ------------------------------------------------------------- IMDB text */
#define LRN_IMDB_BUCKETS (1u << 16)
/* Hashed unigram ids of one review (lower-case letters, digits, apostrophes;
 * "<br />" removed). Returns the count written (at most cap). */
size_t lrn_tokenize(const char *text, uint32_t *ids, size_t cap);
typedef struct lrn_docs {
  size_t n;
  uint32_t **tok;        /* tok[i][0..len[i]) */
  uint32_t *len;
  uint8_t *label;        /* 1 = pos */
} lrn_docs;
/* Read <dir>/{pos,neg}/ *.txt (sorted by name, alternating pos/neg up to
 * max_docs, 0 = all). ENOENT names the expected folder. */
hs_status lrn_docs_load(const char *dir, size_t max_docs, lrn_docs *d, hs_error *err);
void lrn_docs_fini(lrn_docs *d);

/* ------------------------------------------------------------ thread pool */
typedef struct lrn_pool lrn_pool;
typedef void (*lrn_pool_fn)(void *ctx, unsigned tid, unsigned nthreads);
lrn_pool *lrn_pool_create(unsigned nthreads); /* the caller is thread 0 */
/* Run fn on every thread (caller included) and wait for all of them. */
void lrn_pool_run(lrn_pool *p, lrn_pool_fn fn, void *ctx);
unsigned lrn_pool_size(const lrn_pool *p);
void lrn_pool_destroy(lrn_pool *p);

/* --------------------------------------------------------------- trainers */
typedef struct lrn_train_cfg {
  const char *data;      /* file or folder; NULL = the trainer's default */
  size_t max_samples;    /* cap on training samples loaded (0 = trainer default) */
  uint64_t seed;
  double lr;             /* 0 = trainer default */
  size_t max_held;       /* cap on held-out files loaded (t10k, test/); 0 = 1000 / 500 */
} lrn_train_cfg;

/* The learner's view of a task (learner.c). A model is a flat float vector:
 * rows x row_dim "rows" (an embedding: a sample touches a few, and the
 * learner tracks which) followed by `dense` parameters. */
typedef struct lrn_model {
  size_t rows, row_dim, dense;
  int classes;           /* 0: regression */
} lrn_model;
/* Rows a gradient touched: indices in first-touch order, one mark per row,
 * and a scalar per row for models whose row gradient is a scalar times a
 * vector known at the end of the batch (the embedding bag: sum of dz/len over
 * a row's occurrences, times the output weights; see `finish`). */
typedef struct lrn_rows {
  uint32_t *list;
  size_t n, cap;
  uint8_t *mark;         /* rows bytes */
  double *coef;          /* rows values, zero outside the listed rows */
} lrn_rows;
void lrn_rows_touch(lrn_rows *r, uint32_t row);

/* A trainer: a task name and its function table (registry in trainers.c). */
typedef struct lrn_trainer_type {
  const char *name;
  const char *default_data;      /* where Debian or the docs put the data */
  const char *data_help;         /* how to get it (package, layout) */
  hs_status (*load)(const lrn_train_cfg *cfg, void **state, hs_error *err);
  size_t (*train_count)(const void *state);
  /* SGD over the samples idx[0..n) in batches of `batch`, batch split over
   * the pool's threads; returns the mean training loss. */
  double (*train)(void *state, const uint32_t *idx, size_t n, size_t batch, lrn_pool *pool);
  double (*eval_loss)(void *state); /* held-out loss */
  const char *(*describe)(const void *state); /* data used, incl. "synthetic" */
  void (*destroy)(void *state);
  /* The learner's hooks: they read the loaded data, never the state's own
   * model, and may run on several threads at once (one scratch each). */
  void (*model)(const void *state, lrn_model *m);
  void (*params)(const void *state, float *p);     /* the seeded initial model, flat */
  int (*label)(const void *state, size_t i);       /* class of training sample i; -1: regression */
  size_t (*held_count)(const void *state);
  void *(*scratch_create)(const void *state);      /* per thread; may be NULL */
  void (*scratch_free)(void *scratch);
  /* Add the gradient at p of training sample i into g (flat, double) and mark
   * the rows it touches; returns its loss. */
  double (*grad)(const void *state, void *scratch, const float *p, size_t i, double *g, lrn_rows *rows);
  /* After a batch of grad calls at p: turn what they left in rows->coef into
   * the rows' values in g, and zero the coefficients. NULL when not needed. */
  void (*finish)(const void *state, const float *p, double *g, lrn_rows *rows);
  /* Loss of held-out sample i at p; *correct = 1 when classified right. */
  double (*eval1)(const void *state, void *scratch, const float *p, size_t i, int *correct);
  double default_lr;     /* the harness's SGD rate, the learner's default */
} lrn_trainer_type;
const lrn_trainer_type *lrn_trainer_find(const char *name);
const lrn_trainer_type *lrn_trainer_at(size_t i); /* NULL past the end */

/* A one-hidden-layer perceptron shared by mnist (softmax) and era5 (MSE). */
typedef struct lrn_mlp {
  int nin, nhid, nout;   /* nout == 1: regression with squared error */
  float *w1, *b1, *w2, *b2;
} lrn_mlp;
typedef struct lrn_mlp_grad {
  float *w1, *b1, *w2, *b2, *h, *o;
  double loss;
} lrn_mlp_grad;
void lrn_mlp_init(lrn_mlp *m, int nin, int nhid, int nout, uint64_t seed);
void lrn_mlp_fini(lrn_mlp *m);
void lrn_mlp_grad_init(lrn_mlp_grad *g, const lrn_mlp *m);
void lrn_mlp_grad_fini(lrn_mlp_grad *g);
/* Loss of one sample (target: class index, or value when nout == 1); when g is
 * non-NULL its gradient is added to g. */
double lrn_mlp_sample(const lrn_mlp *m, lrn_mlp_grad *g, const float *x, int cls, float y,
                        float *scratch_h, float *scratch_o);
/* The learner's flat layout: w1 (nhid x nin) | b1 | w2 (nout x nhid) | b2.
 * view: m's pointers into p (borrowed; not freed, not written). */
size_t lrn_mlp_nparams(int nin, int nhid, int nout);
void lrn_mlp_view(lrn_mlp *m, int nin, int nhid, int nout, const float *p);
void lrn_mlp_flatten(const lrn_mlp *m, float *p);
/* lrn_mlp_sample with the gradient added in double into g (flat layout, when
 * non-NULL) and the predicted class in *pred (when non-NULL; 0 for regression). */
double lrn_mlp_sample_d(const lrn_mlp *m, double *g, const float *x, int cls, float y, float *h, float *o,
                        int *pred);
/* Sum the first n gradients, step by lr/batch, zero them. */
void lrn_mlp_apply(lrn_mlp *m, lrn_mlp_grad *g, unsigned n, float lr_over_batch);

/* ------------------------------------------------- synthetic data (labelled) */
/* ERA5-layout CSV of `rows` hourly rows and a FILE.synthetic marker. */
hs_status lrn_synth_era5(const char *path, size_t rows, uint64_t seed, hs_error *err);
/* aclImdb-layout folder (train/ and test/, pos/ and neg/) and DIR/SYNTHETIC. */
hs_status lrn_synth_imdb(const char *dir, size_t docs, uint64_t seed, hs_error *err);

#endif
