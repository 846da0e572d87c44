/* scenario_learning.c: the scenario's "learning" block (issue 10): read,
 * check, print back (hetsim validate) and free.
 *
 *   "learning": {"mode": "off" | "real" | "curve",      default off
 *                "data": path (real; default the task's: Debian's
 *                        /usr/share/datasets/fashion-mnist for mnist),
 *                "partition": "iid" | "dirichlet" | "counts", "alpha": > 0,
 *                "counts": [one size per expanded device],
 *                "optimizer": "sgd" | "momentum" | "adam", "lr": > 0,
 *                "eval_every": k >= 1 rounds, "eval_samples": n (0: all),
 *                "max_samples": training samples loaded (0: task default),
 *                "target_loss": number, "target_accuracy": in (0, 1],
 *                "threads": learner threads (default the machine's cores),
 *                "curve_profile": profile name (curve mode),
 *                training options, real mode only (issue 25; defaults and
 *                meaning in sim/doc/findings/learning.md):
 *                "weights": "data" | "samples" | "uniform"        (data),
 *                "last_batch": "keep" | "drop" | "merge"          (keep),
 *                "lr_schedule": "constant" | "step" | "cosine"    (constant),
 *                "lr_step_rounds" (10), "lr_gamma" (0.1): step only,
 *                "lr_min" (0): cosine only, "lr_warmup_rounds" (0),
 *                "lr_scaling": "none" | "linear"                  (none),
 *                "weight_decay" (0), "clip_norm" (0: off),
 *                "server_optimizer": "none" | "fedavgm" | "fedadam" (none),
 *                "server_lr" (fedavgm 1, fedadam 0.01),
 *                "server_momentum" (0.9): with a server optimiser only,
 *                "utility": "loss" | "samples"                     (loss)}
 *
 * Invariant: sc->learning is NULL when mode is off (absent block or "off"),
 * so every scenario without learning loads, prints and runs exactly as before.
 * With mode off the block's other keys are accepted and ignored: their names
 * are checked (a typo is still caught) but not their values, so `--set
 * learning.mode=off` turns a learning scenario off without editing it.
 * eval_samples is honoured: the learner loads that many held-out samples (0:
 * all there are), and a value above what exists is refused at load, naming
 * the maximum (never clamped).
 *
 * Real mode is checked in full before anything runs: the learner is created
 * once here (data files read, optimiser checked) and the partition drawn with
 * one participant per expanded device, so a missing file, a bad alpha or a
 * split that leaves a device with no data is one line and exit 2 at load.
 * Cost: one load of the data set per scenario load (Fashion-MNIST, 20000
 * images: ~0.1 s). Rejected: caching the learner in the scenario (it is used
 * by one thread at a time, and sweeps share a scenario across threads).
 * Curve mode takes the loss curve from curve_profile, or else from the first
 * device entry whose profile has one for the task; it has loss only, so a
 * target_accuracy is refused there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "learn/hs_learn.h"
#include "base/hs_util.h"
#include "scenario_internal.h"
#include "scn_learning.h"

/* Models real mode may hold at once (devices x parameters x 4 bytes). */
#define REAL_MODE_MAX_BYTES (4.0 * 1073741824.0)

/* The spec and what it owns beyond the public fields. */
typedef struct learn_own {
  hs_learning_spec pub; /* first */
  hs_profile *curve_owner;
} learn_own;

static const char *const modes[] = {"off", "real", "curve", NULL};
static const char *const parts[] = {"iid", "dirichlet", "counts", NULL};
static const char *const opts[] = {"sgd", "momentum", "adam", NULL};
static const char *const weightings[] = {"samples", "data", "uniform", NULL};
static const char *const last_batches[] = {"keep", "drop", "merge", NULL};
static const char *const schedules[] = {"constant", "step", "cosine", NULL};
static const char *const scalings[] = {"none", "linear", NULL};
static const char *const server_opts[] = {"none", "fedavgm", "fedadam", NULL};
static const char *const utilities[] = {"loss", "samples", NULL};

/* Every key of the block (mode off accepts them all). */
const char *const scn_learning_keys[] = {
    "mode",         "data",          "partition",       "alpha",          "counts",
    "optimizer",    "lr",            "eval_every",      "eval_samples",   "max_samples",
    "target_loss",  "target_accuracy", "threads",       "curve_profile",  "weights",
    "last_batch",   "lr_schedule",   "lr_step_rounds",  "lr_gamma",       "lr_min",
    "lr_warmup_rounds", "lr_scaling", "weight_decay",   "clip_norm",      "server_optimizer",
    "server_lr",    "server_momentum", "utility", NULL};
/* The keys that shape training: real mode only (curve mode trains nothing). */
static const char *const real_keys[] = {
    "weights",      "last_batch",    "lr_schedule",  "lr_step_rounds", "lr_gamma",
    "lr_min",       "lr_warmup_rounds", "lr_scaling", "weight_decay",  "clip_norm",
    "server_optimizer", "server_lr", "server_momentum", "utility", NULL};

void scn_free_learning(hs_scenario *sc) {
  learn_own *o = (learn_own *)sc->learning;
  if (!o) return;
  hs_free(o->pub.mode);
  hs_free(o->pub.data);
  hs_free(o->pub.partition);
  hs_free(o->pub.counts);
  hs_free(o->pub.optimizer);
  hs_free(o->pub.curve_profile);
  hs_free(o->pub.weights);
  hs_free(o->pub.last_batch);
  hs_free(o->pub.lr_schedule);
  hs_free(o->pub.lr_scaling);
  hs_free(o->pub.server_optimizer);
  hs_free(o->pub.utility);
  hs_profile_destroy(o->curve_owner);
  hs_free(o);
  sc->learning = NULL;
}

unsigned sim_learning_threads(const hs_learning_spec *l) {
  if (l && l->threads) return l->threads;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (unsigned)(n > 256 ? 256 : n) : 1;
}

hs_status sim_learning_learner_cfg(const hs_scenario *sc, hs_learn_cfg *cfg, hs_error *err) {
  const hs_learning_spec *l = sc->learning;
  memset(cfg, 0, sizeof *cfg);
  cfg->task = sc->task;
  cfg->data = l->data;
  cfg->max_samples = l->max_samples;
  cfg->seed = sc->seed;
  cfg->batch = sc->batch_size;
  int k = hs_learn_opt_kind_find(l->optimizer);
  if (k < 0)
    return hs_error_set(err, HS_EINVAL, "learning.optimizer: unknown \"%s\"", l->optimizer);
  cfg->opt.kind = (hs_learn_opt_kind)k;
  cfg->opt.lr = l->lr;
  cfg->opt.weight_decay = l->weight_decay;
  cfg->opt.clip_norm = l->clip_norm;
  cfg->max_held = l->eval_samples;
  int lb = hs_learn_last_batch_find(l->last_batch ? l->last_batch : "keep");
  if (lb < 0) return hs_error_set(err, HS_EINVAL, "learning.last_batch: unknown \"%s\"", l->last_batch);
  cfg->last_batch = (hs_learn_last_batch)lb;
  cfg->threads = sim_learning_threads(l);
  return HS_OK;
}

hs_status sim_learning_partition_cfg(const hs_scenario *sc, hs_learn_part_cfg *pc) {
  const hs_learning_spec *l = sc->learning;
  memset(pc, 0, sizeof *pc);
  pc->participants = (unsigned)sc->total_devices;
  pc->alpha = l->alpha;
  pc->kind = !strcmp(l->partition, "dirichlet") ? HS_LEARN_DIRICHLET
             : !strcmp(l->partition, "counts")  ? HS_LEARN_COUNTS
                                                : HS_LEARN_IID;
  pc->counts = (const size_t *)(const void *)l->counts;
  return HS_OK;
}

/* The key a learner message is about ("partition.alpha: ..." -> alpha). */
static const char *key_of(const char *msg) {
  if (!strncmp(msg, "opt.lr", 6)) return "lr";
  if (!strncmp(msg, "opt.weight_decay", 16)) return "weight_decay";
  if (!strncmp(msg, "opt.clip_norm", 13)) return "clip_norm";
  if (!strncmp(msg, "opt.", 4)) return "optimizer";
  if (!strncmp(msg, "partition.counts", 16)) return "counts";
  if (!strncmp(msg, "partition.alpha", 15)) return "alpha";
  if (!strncmp(msg, "partition", 9)) return "partition";
  if (!strncmp(msg, "task", 4)) return "mode";
  return "data";
}

/* Create the learner and draw the partition (then drop both). */
static hs_status check_real(ctx *c, hs_scenario *sc) {
  hs_learn_cfg cfg;
  hs_error e = {0};
  hs_learner *l = NULL;
  hs_status st = sim_learning_learner_cfg(sc, &cfg, &e);
  cfg.threads = 1;
  if (st == HS_OK) st = hs_learn_create(&cfg, &l, &e);
  if (st == HS_OK) {
    /* Real mode keeps a model per participant of a round (and per device
     * under fedasync): refuse what cannot fit rather than fail mid-run. */
    size_t np = hs_learn_nparams(l);
    double bytes = (double)sc->total_devices * (double)np * sizeof(float);
    if (bytes > REAL_MODE_MAX_BYTES) {
      hs_learn_destroy(l);
      size_t m = sim_jpath_key(&c->path, "mode");
      st = scn_fail(c, HS_ERANGE,
                    "real mode keeps a model per device: %zu devices x %zu parameters = %.1f GiB "
                    "(limit %.0f GiB); use mode \"curve\" for populations",
                    sc->total_devices, np,
                    bytes / 1073741824.0, REAL_MODE_MAX_BYTES / 1073741824.0);
      sim_jpath_pop(&c->path, m);
      return st;
    }
    size_t held = hs_learn_held_count(l), want = sc->learning->eval_samples;
    if (want > held) {
      hs_learn_destroy(l);
      size_t m = sim_jpath_key(&c->path, "eval_samples");
      st = scn_fail(c, HS_ERANGE, "%zu held-out samples asked, the data has %zu (the maximum; 0 = all)",
                    want, held);
      sim_jpath_pop(&c->path, m);
      return st;
    }
    if (hs_learn_classes(l) == 0 && !isnan(sc->learning->target_accuracy)) {
      hs_learn_destroy(l);
      size_t m = sim_jpath_key(&c->path, "target_accuracy");
      st = scn_fail(c, HS_EINVAL, "task \"%s\" is a regression (no accuracy): use target_loss",
                    sc->task);
      sim_jpath_pop(&c->path, m);
      return st;
    }
    hs_learn_part_cfg pc;
    sim_learning_partition_cfg(sc, &pc);
    st = hs_learn_partition(l, &pc, &e);
  }
  hs_learn_destroy(l);
  if (st == HS_OK) return HS_OK;
  size_t m = sim_jpath_key(&c->path, key_of(e.msg));
  /* A participant is an expanded device: say which. */
  const char *p = strstr(e.msg, "participant ");
  char dev[160] = "";
  if (p && p[12] >= '0' && p[12] <= '9') {
    unsigned long k = strtoul(p + 12, NULL, 10);
    if (k < sc->total_devices)
      snprintf(dev, sizeof dev, " (participant %lu is device \"%s\")", k,
               hs_scenario_device_name(sc, k));
  }
  /* Missing or unreadable data is bad input (exit 2), like a missing profile. */
  st = scn_fail(c, st == HS_EIO || st == HS_ENOENT ? HS_ENOENT : st, "%s%s", e.msg, dev);
  sim_jpath_pop(&c->path, m);
  return st;
}

/* The loss curve of curve mode. */
static hs_status find_curve(ctx *c, learn_own *o) {
  hs_scenario *sc = &c->s->pub;
  hs_learning_spec *l = &o->pub;
  const hs_task_profile *t = NULL;
  if (l->curve_profile) {
    hs_error e = {0};
    char *path = hs_profile_find(l->curve_profile, c->dir, &e);
    if (path) o->curve_owner = hs_profile_load(path, &e);
    hs_free(path);
    size_t m = sim_jpath_key(&c->path, "curve_profile");
    if (!o->curve_owner) {
      hs_status st = scn_fail(c, HS_ENOENT, "%s", e.msg);
      sim_jpath_pop(&c->path, m);
      return st;
    }
    t = hs_profile_task(o->curve_owner, sc->task);
    if (!t || t->loss_points == 0) {
      hs_status st = scn_fail(c, HS_EINVAL, "profile \"%s\" has no loss_curve for task \"%s\"",
                              l->curve_profile, sc->task);
      sim_jpath_pop(&c->path, m);
      return st;
    }
    sim_jpath_pop(&c->path, m);
  } else {
    for (size_t i = 0; i < sc->ndevices && !t; i++) {
      const hs_task_profile *d = hs_profile_task(sc->devices[i].profile, sc->task);
      if (d && d->loss_points > 0) t = d;
    }
    if (!t) {
      size_t m = sim_jpath_key(&c->path, "mode");
      hs_status st = scn_fail(c, HS_EINVAL,
                              "curve mode needs a loss_curve for task \"%s\": no device's "
                              "profile has one (name one with learning.curve_profile)",
                              sc->task);
      sim_jpath_pop(&c->path, m);
      return st;
    }
  }
  l->curve_samples = t->loss_samples;
  l->curve_loss = t->loss_values;
  l->curve_points = t->loss_points;
  return HS_OK;
}

static hs_status get_counts(ctx *c, const cJSON *b, learn_own *o) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *n = scn_member(b, "counts");
  bool want = !strcmp(o->pub.partition, "counts");
  if (!n && !want) return HS_OK;
  if (!n) return scn_missing(c, "counts");
  size_t m = sim_jpath_key(&c->path, "counts");
  hs_status st = HS_OK;
  if (!want)
    st = scn_fail(c, HS_EINVAL, "applies only to partition \"counts\"");
  else if (!cJSON_IsArray(n) || (size_t)cJSON_GetArraySize(n) != sc->total_devices)
    st = scn_fail(c, HS_EINVAL, "expected an array of %zu sizes (one per expanded device)",
                  sc->total_devices);
  if (st) {
    sim_jpath_pop(&c->path, m);
    return st;
  }
  o->pub.counts = hs_calloc(sc->total_devices, sizeof *o->pub.counts);
  size_t i = 0;
  for (const cJSON *e = n->child; e && !st; e = e->next, i++) {
    size_t mi = sim_jpath_index(&c->path, i);
    if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1) || e->valuedouble > 1e9 ||
        floor(e->valuedouble) != e->valuedouble)
      st = scn_fail(c, HS_ERANGE, "expected an integer in [1, 1000000000]");
    else
      o->pub.counts[i] = (uint64_t)e->valuedouble;
    sim_jpath_pop(&c->path, mi);
  }
  sim_jpath_pop(&c->path, m);
  return st;
}

/* A key that only applies when `applies` holds: refused when present otherwise. */
static hs_status only_if(ctx *c, const cJSON *b, const char *key, bool applies, const char *why) {
  if (applies || !scn_member(b, key)) return HS_OK;
  size_t m = sim_jpath_key(&c->path, key);
  hs_status st = scn_fail(c, HS_EINVAL, "applies only %s", why);
  sim_jpath_pop(&c->path, m);
  return st;
}

/* The training options (real mode; defaults in the header comment). */
static hs_status parse_training(ctx *c, const cJSON *b, hs_learning_spec *l) {
  hs_status st;
  double step_rounds, warmup;
  if ((st = scn_get_choice(c, b, "weights", "data", weightings, &l->weights)) ||
      (st = scn_get_choice(c, b, "last_batch", "keep", last_batches, &l->last_batch)) ||
      (st = scn_get_choice(c, b, "lr_schedule", "constant", schedules, &l->lr_schedule)) ||
      (st = scn_get_choice(c, b, "lr_scaling", "none", scalings, &l->lr_scaling)) ||
      (st = scn_get_choice(c, b, "server_optimizer", "none", server_opts, &l->server_optimizer)) ||
      (st = scn_get_choice(c, b, "utility", "loss", utilities, &l->utility)))
    return st;
  bool step = !strcmp(l->lr_schedule, "step"), cosine = !strcmp(l->lr_schedule, "cosine");
  bool server = strcmp(l->server_optimizer, "none") != 0;
  bool adam = !strcmp(l->server_optimizer, "fedadam");
  if ((st = only_if(c, b, "lr_step_rounds", step, "to lr_schedule \"step\"")) ||
      (st = only_if(c, b, "lr_gamma", step, "to lr_schedule \"step\"")) ||
      (st = only_if(c, b, "lr_min", cosine, "to lr_schedule \"cosine\"")) ||
      (st = only_if(c, b, "server_lr", server, "with a server_optimizer")) ||
      (st = only_if(c, b, "server_momentum", server, "with a server_optimizer")) ||
      (st = scn_get_uint(c, b, "lr_step_rounds", false, 10, 1, 1e9, &step_rounds)) ||
      (st = scn_get_num(c, b, "lr_gamma", false, 0.1, 0, true, 1, false, &l->lr_gamma)) ||
      (st = scn_get_num(c, b, "lr_min", false, 0, 0, false, INFINITY, false, &l->lr_min)) ||
      (st = scn_get_uint(c, b, "lr_warmup_rounds", false, 0, 0, 1e9, &warmup)) ||
      (st = scn_get_num(c, b, "weight_decay", false, 0, 0, false, INFINITY, false, &l->weight_decay)) ||
      (st = scn_get_num(c, b, "clip_norm", false, 0, 0, false, INFINITY, false, &l->clip_norm)) ||
      (st = scn_get_num(c, b, "server_lr", false, adam ? 0.01 : 1.0, 0, true, INFINITY, false,
                        &l->server_lr)) ||
      (st = scn_get_num(c, b, "server_momentum", false, 0.9, 0, true, 1, true, &l->server_momentum)))
    return st;
  l->lr_step_rounds = (uint32_t)step_rounds;
  l->lr_warmup_rounds = (uint32_t)warmup;
  return HS_OK;
}

static hs_status parse_block(ctx *c, const cJSON *b, learn_own *o) {
  hs_scenario *sc = &c->s->pub;
  hs_learning_spec *l = &o->pub;
  hs_status st;
  double every, evaln, maxs, thr;
  if ((st = scn_check_keys(c, b, scn_learning_keys)) ||
      (st = scn_get_choice(c, b, "partition", "iid", parts, &l->partition)) ||
      (st = scn_get_choice(c, b, "optimizer", "sgd", opts, &l->optimizer)) ||
      (st = scn_get_num(c, b, "lr", false, 0, 0, true, INFINITY, false, &l->lr)) ||
      (st = scn_get_uint(c, b, "eval_every", false, 1, 1, 1e9, &every)) ||
      (st = scn_get_uint(c, b, "eval_samples", false, 0, 0, 1e9, &evaln)) ||
      (st = scn_get_uint(c, b, "max_samples", false, 0, 0, 1e9, &maxs)) ||
      (st = scn_get_num(c, b, "target_loss", false, NAN, 0, false, INFINITY, false,
                        &l->target_loss)) ||
      (st = scn_get_num(c, b, "target_accuracy", false, NAN, 0, true, 1, false,
                        &l->target_accuracy)) ||
      (st = scn_get_uint(c, b, "threads", false, 0, 1, 256, &thr)))
    return st;
  l->eval_every = (uint32_t)every;
  l->eval_samples = (uint32_t)evaln;
  l->max_samples = (uint32_t)maxs;
  l->threads = (uint32_t)thr;
  bool dir = !strcmp(l->partition, "dirichlet");
  const cJSON *a = scn_member(b, "alpha");
  if (a && !dir) {
    size_t m = sim_jpath_key(&c->path, "alpha");
    st = scn_fail(c, HS_EINVAL, "applies only to partition \"dirichlet\"");
    sim_jpath_pop(&c->path, m);
    return st;
  }
  if (dir && (st = scn_get_num(c, b, "alpha", false, 0.5, 0, true, INFINITY, false, &l->alpha)))
    return st;
  if ((st = get_counts(c, b, o))) return st;
  bool curve = !strcmp(l->mode, "curve");
  const cJSON *d = scn_member(b, "data");
  const cJSON *cp = scn_member(b, "curve_profile");
  if (d && curve) {
    size_t m = sim_jpath_key(&c->path, "data");
    st = scn_fail(c, HS_EINVAL, "applies only to mode \"real\" (curve mode reads no data)");
    sim_jpath_pop(&c->path, m);
    return st;
  }
  if (cp && !curve) {
    size_t m = sim_jpath_key(&c->path, "curve_profile");
    st = scn_fail(c, HS_EINVAL, "applies only to mode \"curve\"");
    sim_jpath_pop(&c->path, m);
    return st;
  }
  char *raw = NULL;
  if ((st = scn_get_str(c, b, "data", false, NULL, &raw))) return st;
  if (raw) {
    /* Relative to the scenario's folder, like profiles and speed traces. */
    l->data = raw[0] == '/' ? raw : hs_path_join(c->dir, raw);
    if (l->data != raw) hs_free(raw);
  }
  if ((st = scn_get_str(c, b, "curve_profile", false, NULL, &l->curve_profile))) return st;
  for (const char *const *k = real_keys; curve && *k; k++)
    if ((st = only_if(c, b, *k, false, "to mode \"real\" (curve mode trains no model)"))) return st;
  if (!curve && (st = parse_training(c, b, l))) return st;
  if (curve) {
    if (!isnan(l->target_accuracy)) {
      size_t m = sim_jpath_key(&c->path, "target_accuracy");
      st = scn_fail(c, HS_EINVAL, "curve mode has loss only (a loss_curve): use target_loss");
      sim_jpath_pop(&c->path, m);
      return st;
    }
    return find_curve(c, o);
  }
  (void)sc;
  return check_real(c, &c->s->pub);
}

hs_status scn_parse_learning(ctx *c, const cJSON *root) {
  hs_scenario *sc = &c->s->pub;
  const cJSON *b = scn_member(root, "learning");
  if (!b) return HS_OK;
  size_t m0 = sim_jpath_key(&c->path, "learning");
  hs_status st;
  if ((st = scn_need_object(c, b))) return st;
  char *mode = NULL;
  if ((st = scn_get_choice(c, b, "mode", "off", modes, &mode))) {
    hs_free(mode);
    return st;
  }
  if (!strcmp(mode, "off")) {
    hs_free(mode);
    /* Off: the other keys are accepted and ignored; their names are still
     * checked, so a typo is caught. */
    if (b->child && (st = scn_check_keys(c, b, scn_learning_keys))) return st;
    sim_jpath_pop(&c->path, m0);
    return HS_OK;
  }
  learn_own *o = hs_calloc(1, sizeof *o);
  o->pub.mode = mode;
  sc->learning = &o->pub;
  if ((st = scn_regime_can(c, SIM_CAN_LEARN,
                           "does not learn in the loop (no FedAvg round, DDP step or "
                           "asynchronous arrival)")))
    return st;
  if ((st = parse_block(c, b, o))) return st;
  sim_jpath_pop(&c->path, m0);
  return HS_OK;
}

static void add_num(cJSON *o, const char *key, double v) {
  if (!cJSON_AddNumberToObject(o, key, v)) abort();
}
static void add_str(cJSON *o, const char *key, const char *v) {
  if (!cJSON_AddStringToObject(o, key, v)) abort();
}

void scn_print_learning(const hs_scenario *sc, cJSON *root) {
  const hs_learning_spec *l = sc->learning;
  if (!l) return;
  cJSON *o = cJSON_AddObjectToObject(root, "learning");
  if (!o) abort();
  add_str(o, "mode", l->mode);
  if (l->data) add_str(o, "data", l->data);
  add_str(o, "partition", l->partition);
  if (!strcmp(l->partition, "dirichlet")) add_num(o, "alpha", l->alpha);
  if (l->counts) {
    cJSON *a = cJSON_AddArrayToObject(o, "counts");
    if (!a) abort();
    for (size_t i = 0; i < sc->total_devices; i++)
      cJSON_AddItemToArray(a, cJSON_CreateNumber((double)l->counts[i]));
  }
  add_str(o, "optimizer", l->optimizer);
  if (l->lr > 0) add_num(o, "lr", l->lr);
  add_num(o, "eval_every", l->eval_every);
  add_num(o, "eval_samples", l->eval_samples);
  if (l->max_samples) add_num(o, "max_samples", l->max_samples);
  if (!isnan(l->target_loss)) add_num(o, "target_loss", l->target_loss);
  if (!isnan(l->target_accuracy)) add_num(o, "target_accuracy", l->target_accuracy);
  if (l->threads) add_num(o, "threads", l->threads);
  if (l->curve_profile) add_str(o, "curve_profile", l->curve_profile);
  if (!l->weights) return; /* curve mode: no training options */
  add_str(o, "weights", l->weights);
  add_str(o, "last_batch", l->last_batch);
  add_str(o, "lr_schedule", l->lr_schedule);
  if (!strcmp(l->lr_schedule, "step")) {
    add_num(o, "lr_step_rounds", l->lr_step_rounds);
    add_num(o, "lr_gamma", l->lr_gamma);
  }
  if (!strcmp(l->lr_schedule, "cosine")) add_num(o, "lr_min", l->lr_min);
  add_num(o, "lr_warmup_rounds", l->lr_warmup_rounds);
  add_str(o, "lr_scaling", l->lr_scaling);
  add_num(o, "weight_decay", l->weight_decay);
  add_num(o, "clip_norm", l->clip_norm);
  add_str(o, "server_optimizer", l->server_optimizer);
  if (strcmp(l->server_optimizer, "none")) {
    add_num(o, "server_lr", l->server_lr);
    add_num(o, "server_momentum", l->server_momentum);
  }
  add_str(o, "utility", l->utility);
}

/* --- its block: lines of the loader's block table (scenario.c) --- */

const scn_block scn_block_learning = {
    .key = "learning", .step = 190, .first_format = true,
    .parse = scn_parse_learning, .print = scn_print_learning, .free = scn_free_learning,
    .type = SCN_OBJECT, .def_text = "off", .keys = scn_learning_keys,
    .doc = "learning in the loop: data, partition, optimiser, evaluation"};
