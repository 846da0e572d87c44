/* bench_learn.c: hs-bench-learn, training throughput (samples/s) through the
 * learner interface (hs_learn.h: one participant's job, local SGD) against
 * the harness's own trainer (lrn_trainer_type.train, what hetsim-probe
 * times) on the same data, batch and thread count 1, plus the learner with
 * P participants trained in parallel on T threads.
 * Each figure is the min and median of `reps` timed runs after one warm-up.
 *   hs-bench-learn [--task mnist|era5|imdb] [--data PATH] [--samples N]
 *                  [--batch B] [--reps R] [--participants P] [--threads T]
 * Exit 2 on bad arguments, 1 when the data cannot be loaded. */
#include "learn/hs_learn.h"
#include "learn/hs_learn_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Insertion sort: at most 99 figures. */
static void sort_d(double *x, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
      double t = x[j];
      x[j] = x[j - 1];
      x[j - 1] = t;
    }
}

static void report(const char *what, double *rate, int reps) {
  sort_d(rate, reps);
  /* rates: min and median of samples/s over the runs */
  printf("%-44s min %10.0f  median %10.0f samples/s\n", what, rate[0], rate[reps / 2]);
}

static int usage(const char *msg) {
  fprintf(stderr, "hs-bench-learn: %s\n", msg);
  return 2;
}

int main(int argc, char **argv) {
  const char *task = "mnist", *data = NULL;
  size_t samples = 6400, batch = 32;
  int reps = 3;
  unsigned parts = 4, threads = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage("every option takes a value");
    if (strcmp(a, "--task") == 0) task = v;
    else if (strcmp(a, "--data") == 0) data = v;
    else if (strcmp(a, "--samples") == 0) samples = strtoull(v, NULL, 10);
    else if (strcmp(a, "--batch") == 0) batch = strtoull(v, NULL, 10);
    else if (strcmp(a, "--reps") == 0) reps = atoi(v);
    else if (strcmp(a, "--participants") == 0) parts = (unsigned)atoi(v);
    else if (strcmp(a, "--threads") == 0) threads = (unsigned)atoi(v);
    else return usage("unknown option (see the file's header)");
    i++;
  }
  if (samples < 1 || batch < 1 || reps < 1 || reps > 99 || parts < 1 || threads < 1)
    return usage("--samples, --batch, --participants, --threads >= 1; --reps 1..99");
  double rate[99];
  hs_error err = {HS_OK, ""};

  /* The harness's trainer, one thread. */
  const lrn_trainer_type *t = lrn_trainer_find(task);
  if (!t) return usage("--task: not mnist, era5 or imdb");
  lrn_train_cfg tc = {data, 0, 1, 0, 0};
  void *st = NULL;
  if (t->load(&tc, &st, &err) != HS_OK) {
    fprintf(stderr, "hs-bench-learn: %s\n", err.msg);
    return 1;
  }
  size_t ntrain = t->train_count(st);
  uint32_t *idx = malloc(samples * sizeof *idx);
  for (size_t i = 0; i < samples; i++) idx[i] = (uint32_t)((i * 7919u) % ntrain);
  lrn_pool *pool = lrn_pool_create(1);
  t->train(st, idx, samples < 256 ? samples : 256, batch, pool);
  for (int r = 0; r < reps; r++) {
    double t0 = lrn_now_mono();
    t->train(st, idx, samples, batch, pool);
    rate[r] = (double)samples / (lrn_now_mono() - t0);
  }
  report("probe trainer (lrn_trainer_type.train, 1 thread)", rate, reps);
  lrn_pool_destroy(pool);
  t->destroy(st);
  free(idx);

  /* The learner: one participant holding the whole training set. */
  hs_learn_cfg c = {task, data, 0, 0, 1, batch, {HS_LEARN_SGD, 0, 0, 0, 0, 0, 0, 0}, threads, HS_LEARN_LAST_KEEP};
  hs_learner *l = NULL;
  if (hs_learn_create(&c, &l, &err) != HS_OK) {
    fprintf(stderr, "hs-bench-learn: %s\n", err.msg);
    return 1;
  }
  size_t np = hs_learn_nparams(l);
  float *g = malloc(np * sizeof *g), *outs = malloc((size_t)parts * np * sizeof *outs);
  hs_learn_init_params(l, g);
  hs_learn_part_cfg pc1 = {HS_LEARN_IID, 1, 0, NULL};
  int rc = 0;
  if (hs_learn_partition(l, &pc1, &err) != HS_OK) {
    fprintf(stderr, "hs-bench-learn: %s\n", err.msg);
    rc = 1;
    goto done;
  }
  hs_learn_job j = {0, 0, samples < 256 ? samples : 256, g, outs, NULL, 0, 0, 0, 0};
  hs_learn_train(l, &j, &err);
  j.samples = samples;
  for (int r = 0; r < reps; r++) {
    j.draw = (uint64_t)r + 1;
    double t0 = lrn_now_mono();
    hs_learn_train(l, &j, &err);
    rate[r] = (double)samples / (lrn_now_mono() - t0);
  }
  report("learner (hs_learn_train, 1 participant)", rate, reps);

  /* P participants, samples/P each, on the learner's threads. */
  hs_learn_part_cfg pcp = {HS_LEARN_IID, parts, 0, NULL};
  if (hs_learn_partition(l, &pcp, &err) != HS_OK) {
    fprintf(stderr, "hs-bench-learn: %s\n", err.msg);
    rc = 1;
    goto done;
  }
  hs_learn_job *jobs = calloc(parts, sizeof *jobs);
  for (int r = 0; r < reps; r++) {
    for (unsigned p = 0; p < parts; p++)
      jobs[p] = (hs_learn_job){p, (uint64_t)r, samples / parts, g, outs + (size_t)p * np, NULL, 0, 0, 0, 0};
    double t0 = lrn_now_mono();
    hs_learn_train_many(l, jobs, parts, &err);
    rate[r] = (double)(samples / parts * parts) / (lrn_now_mono() - t0);
  }
  char what[96];
  snprintf(what, sizeof what, "learner (hs_learn_train_many, %u x %zu, %u thr)", parts, samples / parts, threads);
  report(what, rate, reps);
  free(jobs);
done:
  free(g);
  free(outs);
  hs_learn_destroy(l);
  return rc;
}
