/* pol_internal.h: what the files of policies/src share and nothing else sees:
 * the controller struct, the policy descriptor (name + function table) and the
 * registry, and the O(n) selection / apportionment kernels. */
#ifndef POL_INTERNAL_H
#define POL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hs_policy.h"
#include "hs_status.h"

/* Keys a policy accepts (bitmask over the config fields). */
enum {
  POL_K_W_E = 1u << 0,
  POL_K_EMA = 1u << 1,
  POL_K_DEADBAND = 1u << 2,
  POL_K_MIN_SAMPLES = 1u << 3,
  POL_K_OORT_K = 1u << 4,
  POL_K_OORT_ALPHA = 1u << 5,
  POL_K_OORT_EXPLORE = 1u << 6,
  POL_K_OORT_EXPLORE_DECAY = 1u << 7,
  POL_K_OORT_EXPLORE_MIN = 1u << 8,
  POL_K_OORT_PACER_STEP = 1u << 9,
  POL_K_OORT_PACER_WINDOW = 1u << 10,
  POL_K_EMA_BATCH_BETA = 1u << 11,
  POL_K_SEED = 1u << 12,
  POL_K_STEPS = 1u << 13
};

typedef enum pol_family {
  POL_EQUAL,
  POL_STATIC,
  POL_ADAPTIVE,
  POL_OORT,
  POL_EMA_BATCH
} pol_family;

typedef struct pol_oort pol_oort;
typedef struct pol_ebatch pol_ebatch;

/* A policy descriptor. Adding a policy is a descriptor and a registry line
 * (config.c); the family says which update function runs. */
typedef struct pol_type {
  const char *name;
  const char *summary;
  pol_family family;
  double preset_w_e; /* w_e the preset fixes; < 0 when w_e is free or unused */
  unsigned keys;     /* POL_K_* accepted by hs_policy_config_set */
  bool deadband;     /* the common update applies the deadband */
} pol_type;

const pol_type *pol_lookup(const char *name);

/* A remainder for largest-remainder apportionment: larger frac first, then the
 * lower participant index. */
typedef struct pol_rem {
  double frac;
  uint32_t idx;
} pol_rem;

/* Scratch for apportionment, sized for n participants. */
typedef struct pol_scratch {
  double *q;      /* n: exact shares by participant index */
  pol_rem *rem;   /* n */
  uint32_t *act;  /* n: active (not floored) participants */
  uint32_t *hist; /* POL_BUCKETS: remainder histogram */
} pol_scratch;

#define POL_BUCKETS 4096

void pol_scratch_init(pol_scratch *s, size_t n);
void pol_scratch_fini(pol_scratch *s);

/* Reorders a[0..m) so that a[k] is the k-th smallest, a[0..k) <= a[k] <= a[k+1..m).
 * Expected O(m) (quickselect, median-of-three pivot). m > k. */
double pol_select(double *a, size_t m, size_t k);
/* Same contract as pol_select, faster for large m (sample bracket, ~1.2
 * passes); reorders a. */
double pol_kth(double *a, size_t m, size_t k);
/* Median of a[0..m) (reorders a); m >= 1. Even m: mean of the two middle values. */
double pol_median(double *a, size_t m);
/* Reorders r[0..m) so that its first k entries are the k largest by (frac desc,
 * idx asc). Expected O(m). k <= m. */
void pol_top_k(pol_rem *r, size_t m, size_t k);

/* Sets flag[idx] = 1 for the k entries of r[0..m) that come first by (frac
 * desc, idx asc), and flag[idx] = 0 for the other entries of r (flags of
 * indices not in r are untouched). r must be in ascending idx order (ties are then taken in array
 * order); tmp is scratch for m doubles. Expected O(m) via pol_kth on the keys,
 * which beats pol_top_k's struct swaps when m is large. */
void pol_mark_top_k(const pol_rem *r, size_t m, size_t k, double *tmp, unsigned char *flag);

/* Split `budget` over the m participants idx[0..m) in proportion to w[idx[j]]
 * (finite, > 0), each getting >= floor (water-filling), integers by largest
 * remainder, ties to the lower index. Writes out[idx[j]] only. Requires
 * budget >= m*floor (asserted). */
void pol_apportion(const uint32_t *idx, size_t m, const double *w, uint64_t budget,
                   uint64_t floor, uint64_t *out, pol_scratch *s);

struct hs_controller {
  hs_policy_config cfg;
  const pol_type *type;
  size_t n;
  uint64_t budget;
  uint64_t rounds;
  bool reallocated;
  uint64_t *alloc; /* current allocation */
  uint64_t *next;  /* candidate built by an update */
  /* groups: order[] lists participants by (group, index); group g is
   * order[gstart[g] .. gstart[g+1]) with budget gbudget[g] */
  size_t ngroups;
  uint32_t *order;
  size_t *gstart;
  uint64_t *gbudget;
  /* smoothed per-sample costs; have[i] once participant i reported samples */
  double *tau;
  double *eps;
  unsigned char *have;
  double *w;  /* n: weights for apportionment */
  double *sd; /* n: scratch for medians */
  pol_scratch scratch;
  bool frozen; /* static: measured once */
  pol_oort *oort;
  pol_ebatch *eb;
};

/* Family hooks (oort.c, ddp.c). create may fail on config; update writes
 * c->next from validated telemetry and cannot fail. */
hs_status pol_oort_create(hs_controller *c, hs_error *err);
void pol_oort_destroy(hs_controller *c);
void pol_oort_update(hs_controller *c, const hs_telemetry *t);

void pol_ebatch_create(hs_controller *c);
void pol_ebatch_destroy(hs_controller *c);
void pol_ebatch_update(hs_controller *c, const hs_telemetry *t);

/* EMA of the per-sample costs (tau, eps) from the records with samples > 0;
 * the first observation is taken as is. */
void pol_observe(hs_controller *c, const hs_telemetry *t, double ema);

/* Equal split of each group's budget over its members into out. */
void pol_equal_split(hs_controller *c, uint64_t *out);

#endif
