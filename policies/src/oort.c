/* oort.c: Oort-style participant selection (Lai et al., OSDI'21), shaped after
 * FedScale's selector, on the telemetry a meter sees.
 *
 * Per participant: the statistical utility of its last run (|B_i| times the
 * root-mean-square loss in Oort, when the caller passes it through
 * hs_controller_set_utility, e.g. the simulator with learning on; a
 * time/energy meter alone has no loss, so the utility is then the sample count
 * it trained), the round it last ran, and the
 * smoothed per-sample time tau (costs.c, shared with the adaptive policies).
 * Each update (round r):
 *   1. expected duration if selected: d_i = tau_i * budget/K;
 *   2. T_pref starts as the K-th smallest d (the round K participants can
 *      finish); every `oort_pacer_window` W rounds the pacer compares the
 *      exploitation utility of the last W rounds with the W before: flat
 *      (change <= 10 %) relaxes T_pref by `oort_pacer_step`, a jump (>= 5x)
 *      tightens it;
 *   3. score_i = util_i/mean(util) + sqrt(0.1 ln(r+1) / last_i), times
 *      (T_pref/d_i)^alpha when d_i > T_pref (the straggler penalty);
 *   4. exploration factor eps <- max(eps*decay, eps_min); exploit
 *      L = min(floor(K(1-eps)), explored) participants: take the top scores
 *      down to 95 % of the L-th (at least 10L+1 of them, as FedScale does) and
 *      sample L of them without replacement with probability proportional to
 *      score (Efraimidis-Spirakis keys ln(u)/score);
 *   5. explore the other K-L slots: never-measured participants first, then
 *      the rest, uniformly at random;
 *   6. the budget is split equally over the K selected; the others get 0.
 * Random numbers: one hs_rng stream per round keyed (seed, round,
 * HS_RNG_POLICY), drawn in participant order, so a run is a pure function of
 * (seed, telemetry). Selections go through pol_kth thresholds and
 * pol_flag_top_k (expected O(n)), never a sort; the per-participant passes
 * are branch-free where the condition is a coin toss (ran last round or not,
 * straggler or not: K ~ n/2 makes both 50/50), and log() is taken only for
 * the candidates whose key can be among the L largest (es_keys). That nearly
 * halved an update at 10^6 participants with the same decisions
 * (tests/unit/test_policy_oort.c compares every selection with a plain
 * sorting reference). Its own arrays, per participant: six 8-byte values,
 * two 4-byte indices, four flags (60 B; the 16-byte candidate pairs went);
 * the controller's c->w, c->sd and scratch.act (20 B) serve as its
 * uniforms, exploration keys and index lists, and o->key and o->score as
 * the selections' scratch once free (no other scratch per participant).
 * Rejected: FedScale's blacklist of over-selected clients and its
 * wall-clock-based staleness (not measurable from round telemetry). */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_rng.h"
#include "pol_costs.h"

/* Slots in the key table (and in hs_policy_config.value). */
enum {
  K_EMA,
  K_MIN_SAMPLES,
  K_K,
  K_ALPHA,
  K_EXPLORE,
  K_EXPLORE_DECAY,
  K_EXPLORE_MIN,
  K_PACER_STEP,
  K_PACER_WINDOW
};
static const pol_key oort_keys[] = {
    [K_EMA] = {"ema", POL_REAL, 0.5, 0, 1, false, true, NULL,
               "smoothing of the per-sample time: x <- ema*x + (1-ema)*obs"},
    [K_MIN_SAMPLES] = {"min_samples", POL_UINT64, 1, 0, 0, false, false, NULL,
                       "floor per selected participant"},
    [K_K] = {"oort_k", POL_UINT32, 0, 0, 0, false, false, NULL,
             "participants per round (0: half of n, at least 1)"},
    [K_ALPHA] = {"oort_alpha", POL_REAL, 2, 0, INFINITY, false, false, NULL,
                 "straggler penalty exponent"},
    [K_EXPLORE] = {"oort_explore", POL_REAL, 0.9, 0, 1, false, false, NULL,
                   "initial exploration factor"},
    [K_EXPLORE_DECAY] = {"oort_explore_decay", POL_REAL, 0.98, 0, 1, true, false, NULL,
                         "multiplicative decay of the exploration factor per round"},
    [K_EXPLORE_MIN] = {"oort_explore_min", POL_REAL, 0.3, 0, 1, false, false, NULL,
                       "floor of the exploration factor"},
    [K_PACER_STEP] = {"oort_pacer_step", POL_REAL, 0, 0, INFINITY, false, false, NULL,
                      "seconds T_pref moves when utility stalls (0: a tenth of the first)"},
    [K_PACER_WINDOW] = {"oort_pacer_window", POL_UINT32, 20, 1, 0, false, false, NULL,
                        "rounds per pacer decision"},
};

typedef struct oort_state {
  pol_costs costs;     /* smoothed per-sample time (eps is kept, unused) */
  /* key values, read once at creation */
  double ema, alpha, explore_decay, explore_min, pacer_step_cfg;
  uint64_t window;
  uint32_t k;
  double explore;
  double t_pref;       /* seconds; 0 until the first measurement */
  double pacer_step;   /* seconds (resolved from auto) */
  uint64_t round;
  double *util;
  uint64_t *last;      /* round last run, 0: never */
  unsigned char *exploited; /* picked by exploitation in the last selection */
  unsigned char *picked;
  /* exploitation scratch, compacted over the explored (position p < m in
   * index order): their index, uniform (in c->w), score, candidate flag, and
   * the sampling keys computed with their positions */
  uint32_t *eidx;
  double *score;
  unsigned char *cflag;
  double *key;
  uint32_t *pos;
  double *hist;        /* exploitation utility per round, ring of 2W; it grows
                          with the rounds run (2W may be 2^33 entries) */
  uint64_t hist_cap;
  double *uncert;      /* uncert[j-1] = sqrt(0.1 ln(r+1) / j) when stamp[j-1] == r */
  uint64_t *stamp;
  uint64_t uncert_cap;
} oort_state;

static hs_status oort_create(hs_controller *c, hs_error *err) {
  pol_make_scratch(c);                    /* c->w, c->scratch.act */
  c->cand_w = true;                       /* no c->next: it writes c->alloc */
  c->sd = hs_calloc(c->n, sizeof *c->sd); /* freed by the controller */
  uint64_t min_samples = pol_uint(c, K_MIN_SAMPLES);
  uint64_t k = pol_uint(c, K_K) ? pol_uint(c, K_K) : c->n / 2;
  if (k == 0) k = 1;
  if (k > c->n) k = c->n;
  if (min_samples > 0 && c->budget / min_samples < k)
    return hs_error_set(err, HS_ERANGE,
                        "budget: %llu samples is below K = %llu selected x min_samples %llu",
                        (unsigned long long)c->budget, (unsigned long long)k,
                        (unsigned long long)min_samples);
  oort_state *o = hs_calloc(1, sizeof *o);
  pol_costs_init(&o->costs, c->n, c->ngroups);
  o->ema = pol_real(c, K_EMA);
  o->alpha = pol_real(c, K_ALPHA);
  o->explore_decay = pol_real(c, K_EXPLORE_DECAY);
  o->explore_min = pol_real(c, K_EXPLORE_MIN);
  o->pacer_step_cfg = pol_real(c, K_PACER_STEP);
  o->window = pol_uint(c, K_PACER_WINDOW);
  o->k = (uint32_t)k;
  o->explore = pol_real(c, K_EXPLORE);
  o->util = hs_calloc(c->n, sizeof *o->util);
  o->last = hs_calloc(c->n, sizeof *o->last);
  o->exploited = hs_calloc(c->n, sizeof *o->exploited);
  o->picked = hs_calloc(c->n, sizeof *o->picked);
  o->score = hs_calloc(c->n, sizeof *o->score);
  o->key = hs_calloc(c->n, sizeof *o->key);
  o->eidx = hs_calloc(c->n, sizeof *o->eidx);
  o->pos = hs_calloc(c->n, sizeof *o->pos);
  o->cflag = hs_calloc(c->n, sizeof *o->cflag);
  c->state = o;
  return HS_OK;
}

static void oort_destroy(hs_controller *c) {
  oort_state *o = c->state;
  if (!o) return;
  pol_costs_fini(&o->costs);
  hs_free(o->util);
  hs_free(o->last);
  hs_free(o->exploited);
  hs_free(o->picked);
  hs_free(o->score);
  hs_free(o->key);
  hs_free(o->eidx);
  hs_free(o->pos);
  hs_free(o->cflag);
  hs_free(o->hist);
  hs_free(o->uncert);
  hs_free(o->stamp);
  hs_free(o);
  c->state = NULL;
}

/* (T_pref/d)^alpha. Integer exponents (the default is 2) by multiplication:
 * exact, and pow() was an eighth of an update at 10^6 participants. */
static double penalty(double x, double alpha) {
  if (alpha == 2.0) return x * x;
  if (alpha == 1.0) return x;
  if (alpha == 3.0) return x * x * x;
  return pow(x, alpha);
}

static void pacer(oort_state *o) {
  uint64_t w = o->window, r = o->round;
  if (r < 2 * w || r % w != 0 || o->t_pref <= 0) return;
  double prev = 0, cur = 0;
  for (uint64_t j = r - 2 * w; j < r - w; j++) prev += o->hist[j % (2 * w)];
  for (uint64_t j = r - w; j < r; j++) cur += o->hist[j % (2 * w)];
  double change = fabs(cur - prev);
  if (change <= 0.1 * prev)
    o->t_pref += o->pacer_step;
  else if (change >= 5.0 * prev)
    o->t_pref = fmax(o->pacer_step, o->t_pref - o->pacer_step);
}

/* The straggler factor of every explored participant is computed, and kept
 * only when d > T_pref (no branch: with K ~ n/2 that test is a coin toss);
 * a non-integer exponent keeps the branch (pow() is dearer than a miss). */
static double straggler_score(double sc, double d, double t_pref, double alpha) {
  unsigned strag = (t_pref > 0) & (d > t_pref);
  if (alpha != 1.0 && alpha != 2.0 && alpha != 3.0) return strag ? sc * pow(t_pref / d, alpha) : sc;
  return pol_sel(strag, sc * penalty(t_pref / d, alpha), sc);
}

/* The Efraimidis-Spirakis keys log(u)/score of the candidates among m
 * explored (cand[p] set, or all when cand is NULL), except those certainly
 * not among the L largest: key[q] for the positions pos[q], q < the count
 * returned, in position order. log() was a quarter of an update, so:
 *  - lo: a strided sample of exact keys, its order statistic d ranks below
 *    where the L-th largest should fall (smp: POL_FLAG_SAMPLE doubles);
 *  - a candidate is left out when u - 1 < lo*score*(1 + 1e-9): since
 *    log(u) <= u - 1 (u in (0,1)), its key is <= (u-1)/score up to three
 *    roundings (libm's log within an ulp, the division, the test's own
 *    products; an underflow of the product only leaves out keys far below
 *    lo), which the factor 1 + 1e-9 covers many times over: its key is < lo
 *    and it cannot be among the L largest (lo <= 0: keys are < 0);
 *  - verified: unless at least L computed keys are >= lo (the sample
 *    missed), every candidate's key is computed.
 * The L largest of the keys returned are therefore the L largest of all,
 * ties and their order included; about L + 5 % of the candidates need a
 * log(). */
static size_t es_keys(double *key, uint32_t *pos, const double *u, const double *score,
                      const unsigned char *cand, size_t m, size_t ncand, size_t L, double *smp) {
  double lo = -INFINITY;
  if (m >= 4 * POL_FLAG_SAMPLE && L < ncand) {
    size_t stride = m / POL_FLAG_SAMPLE, ns = 0;
    for (size_t j = 0; j < POL_FLAG_SAMPLE; j++) {
      size_t p = j * stride;
      if (!cand || cand[p]) smp[ns++] = log(u[p]) / score[p];
    }
    if (ns >= POL_FLAG_SAMPLE / 4) {
      size_t d = (size_t)(4.5 * sqrt((double)ns) / 2) + 1;
      size_t top = (size_t)((double)L / (double)ncand * (double)ns) + d; /* 0: the largest */
      if (top < ns) lo = hs_select(smp, ns, ns - 1 - top);
    }
  }
  double lo_s = lo * (1.0 + 1e-9); /* lo <= 0: a little lower still */
  /* the ones to compute, listed without a branch (a coin toss at ~20 %) */
  size_t nl = 0;
  for (size_t p = 0; p < m; p++) {
    pos[nl] = (uint32_t)p;
    unsigned c = cand ? cand[p] : 1u;
    nl += c & !(u[p] - 1.0 < lo_s * score[p]);
  }
  size_t ge = 0;
  for (size_t q = 0; q < nl; q++) {
    key[q] = log(u[pos[q]]) / score[pos[q]];
    ge += key[q] >= lo;
  }
  if (ge >= L) return nl;
  nl = 0;
  for (size_t p = 0; p < m; p++)
    if (!cand || cand[p]) {
      pos[nl] = (uint32_t)p;
      key[nl++] = log(u[p]) / score[p];
    }
  return nl;
}

static void oort_update(hs_controller *c, const hs_telemetry *t) {
  oort_state *o = c->state;
  const unsigned char *have = o->costs.have;
  const double *tau = o->costs.tau;
  size_t n = c->n;
  o->round++;
  uint64_t r = o->round, w = o->window;
  /* pass 1, branch-free (whether a participant ran is a coin toss when half
   * are selected): utilities from this round, their sum over the explored
   * (measured after this round's observation) in index order, and the list
   * of those that ran, whose costs are then observed */
  uint32_t *ran = c->scratch.act;
  const double *uset = c->utility_set ? c->utility : NULL;
  double exploit_util = 0, usum = 0;
  size_t nexp = 0, nran = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned s = t[i].samples > 0;
    /* Oort's own utility when a trainer measured it (learning in the loop),
     * else the sample count, the stand-in a time/energy meter allows. */
    double un = uset ? uset[i] : (double)t[i].samples;
    double u = pol_sel(s, un, o->util[i]);
    o->util[i] = u;
    o->last[i] ^= (o->last[i] ^ r) & ((uint64_t)0 - s);
    /* + 0.0 changes no sum here: it starts at +0 and adds values >= 0 */
    exploit_util += pol_sel(s & (o->exploited[i] != 0), u, 0.0);
    unsigned h = (have[i] != 0) | s;
    nexp += h;
    usum += pol_sel(h, u, 0.0);
    ran[nran] = (uint32_t)i;
    nran += s;
  }
  pol_costs_observe_list(&o->costs, t, ran, nran, o->ema);
  if (r <= 2 * w && r > o->hist_cap) { /* rounds below 2W index the ring directly */
    uint64_t cap = o->hist_cap ? 2 * o->hist_cap : 64;
    if (cap > 2 * w) cap = 2 * w;
    o->hist = hs_reallocarray(o->hist, (size_t)cap, sizeof *o->hist);
    memset(o->hist + o->hist_cap, 0, (size_t)(cap - o->hist_cap) * sizeof *o->hist);
    o->hist_cap = cap;
  }
  o->hist[(r - 1) % (2 * w)] = exploit_util;

  /* T_pref from the first expected durations d_i = tau_i * budget/K */
  double share = (double)c->budget / (double)o->k;
  if (o->t_pref <= 0 && nexp > 0) {
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
      if (have[i]) c->sd[j++] = tau[i] * share;
    size_t kk = o->k <= nexp ? o->k - 1 : nexp - 1;
    o->t_pref = hs_select(c->sd, nexp, kk);
    o->pacer_step = o->pacer_step_cfg > 0 ? o->pacer_step_cfg : 0.1 * o->t_pref;
  }
  pacer(o);

  o->explore = fmax(o->explore * o->explore_decay, o->explore_min);
  size_t k = o->k;
  size_t nexploit = (size_t)floor((double)k * (1.0 - o->explore));
  if (nexploit > nexp) nexploit = nexp;
  /* exploitation candidates: everyone scoring >= 95 % of the L-th best, and
   * at least 10L+1 of them; all the explored when 10L+1 >= nexp (the cut-off
   * cannot matter then) */
  size_t want = 10 * nexploit + 1;
  bool cut = nexploit > 0 && want < nexp;

  /* pass 2: the round's uniforms (one stream per round, two per
   * participant, in index order), the exploration keys (unexplored first),
   * the scores of the explored (-inf: unexplored) and, for the cut-off, the
   * explored's scores in a row */
  double umean = nexp ? usum / (double)nexp : 1.0;
  if (!(umean > 0)) umean = 1.0;
  double lr = log((double)r + 1.0);
  /* the temporal-uncertainty term depends only on (r, last_i): memoised per
   * round, one sqrt per distinct last round instead of one per participant */
  if (r > o->uncert_cap) {
    uint64_t cap = 2 * r;
    o->uncert = hs_reallocarray(o->uncert, cap, sizeof *o->uncert);
    o->stamp = hs_reallocarray(o->stamp, cap, sizeof *o->stamp);
    memset(o->stamp + o->uncert_cap, 0, (cap - o->uncert_cap) * sizeof *o->stamp);
    o->uncert_cap = cap;
  }
  hs_rng rng;
  hs_rng_init(&rng, c->cfg.seed, r, HS_RNG_POLICY);
  double *uexp = c->w;          /* m: the explored's exploitation uniforms */
  double *xkey = c->sd;         /* n: exploration keys */
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    double ue = hs_rng_uniform_pos(&rng);
    xkey[i] = (have[i] ? 0.0 : 1.0) + hs_rng_uniform(&rng);
    if (!have[i]) continue;
    uint64_t last = o->last[i] ? o->last[i] : 1;
    if (o->stamp[last - 1] != r) {
      o->uncert[last - 1] = sqrt(0.1 * lr / (double)last);
      o->stamp[last - 1] = r;
    }
    double sc = o->util[i] / umean + o->uncert[last - 1];
    sc = straggler_score(sc, tau[i] * share, o->t_pref, o->alpha);
    o->score[m] = sc > 1e-300 ? sc : 1e-300;
    uexp[m] = ue;
    o->eidx[m++] = (uint32_t)i;
  }
  assert(m == nexp);
  memset(o->picked, 0, n);
  memset(o->exploited, 0, n);

  if (nexploit > 0) {
    /* the candidates (positions among the explored): all, or those past the
     * cut-off: the max(above, want) best, i.e. exactly those >= thr when
     * more than want are, else the want best by (score desc, index asc) */
    const unsigned char *cand = NULL;
    size_t ncand = m;
    if (cut) {
      /* o->key is free until es_keys: the scratch of these two */
      double thr = 0.95 * pol_kth_of(o->score, m, m - nexploit, o->key);
      size_t above = 0;
      for (size_t p = 0; p < m; p++) {
        unsigned char f = o->score[p] >= thr;
        o->cflag[p] = f;
        above += f;
      }
      ncand = above;
      if (above <= want) {
        memset(o->cflag, 0, m);
        pol_flag_top_k(o->score, m, want, o->cflag, o->key, c->scratch.act);
        ncand = want;
      }
      cand = o->cflag;
    }
    /* its sample goes into o->key, whose keys it writes after the sample */
    size_t nl = es_keys(o->key, o->pos, uexp, o->score, cand, m, ncand, nexploit, o->key);
    memset(o->cflag, 0, nl);
    /* the scores are spent: their array is the selection's scratch */
    pol_flag_top_k(o->key, nl, nexploit, o->cflag, o->score, c->scratch.act);
    /* picked is all zero: one store per computed key, no branch */
    for (size_t q = 0; q < nl; q++) o->picked[o->eidx[o->pos[q]]] = o->cflag[q];
    memcpy(o->exploited, o->picked, n); /* exactly the exploited */
  }
  /* explore the other K-L slots among the unpicked (n - L >= K - L of them) */
  pol_flag_top_k(xkey, n, k - nexploit, o->picked, o->score, c->scratch.act);

  /* equal split over the selected (exactly k: the selections above pick
   * nexploit + slots participants), extras to the lower indices, written
   * into the allocation itself (oort has no deadband: the controller would
   * take any candidate), so no candidate array and no comparison pass */
  size_t nsel = k;
  uint64_t each = c->budget / nsel, extra = c->budget % nsel;
  size_t j = 0, i = 0;
  uint64_t *alloc = c->alloc;
  const unsigned char *picked = o->picked;
  bool moved = false;
  /* branch-free: half the participants are picked; the old split is read
   * only up to its first difference (reading it all cost 3 % of an update) */
  for (; i < n && !moved; i++) {
    uint64_t p = picked[i], v = p * (each + (j < extra));
    moved = alloc[i] != v;
    alloc[i] = v;
    j += p;
  }
  for (; i < n; i++) {
    uint64_t p = picked[i];
    alloc[i] = p * (each + (j < extra));
    j += p;
  }
  assert(j == k);
  c->keep = true; /* no deadband: the selection is the split */
  c->moved = moved;
}

/* Saved: the measurements, the pacer, the utilities and the exploitation
 * history; picked, score, cand and the uncertainty cache are scratch (the
 * cache is a pure function of (round, j), so stale entries stay right). */
static size_t oort_state_fields(const hs_controller *c, pol_state_field *f) {
  oort_state *o = c->state;
  size_t n = c->n, m = pol_costs_state(&o->costs, n, f);
  f[m++] = (pol_state_field){"explore", POL_S_REAL, &o->explore, 1, NULL, 0, 0, 1};
  f[m++] = (pol_state_field){"t_pref", POL_S_REAL, &o->t_pref, 1, NULL, 0, 0, HUGE_VAL};
  f[m++] = (pol_state_field){"pacer_step", POL_S_REAL, &o->pacer_step, 1, NULL, 0, 0, HUGE_VAL};
  f[m++] = (pol_state_field){"round", POL_S_U64, &o->round, 1, NULL, 0, 0, 0x1p63};
  f[m++] = (pol_state_field){"util", POL_S_REAL, o->util, n, NULL, 0, 0, HUGE_VAL};
  f[m++] = (pol_state_field){"last", POL_S_U64, o->last, n, NULL, 0, 0, 0x1p63};
  f[m++] = (pol_state_field){"exploited", POL_S_FLAG, o->exploited, n, NULL, 0, 0, 1};
  f[m++] = (pol_state_field){"hist", POL_S_REAL, &o->hist, (size_t)o->hist_cap, &o->hist_cap,
                             2 * o->window, 0, HUGE_VAL};
  return m;
}

/* The history ring must hold every round below 2W that was run; a round last
 * run cannot be later than the round count. */
static hs_status oort_state_check(const hs_controller *c, hs_error *err) {
  const oort_state *o = c->state;
  uint64_t need = o->round < 2 * o->window ? o->round : 2 * o->window;
  if (o->hist_cap < need)
    return hs_error_set(err, HS_EINVAL, "state.hist: %llu values for round %llu (need %llu)",
                        (unsigned long long)o->hist_cap, (unsigned long long)o->round,
                        (unsigned long long)need);
  for (size_t i = 0; i < c->n; i++)
    if (o->last[i] > o->round)
      return hs_error_set(err, HS_EINVAL, "state.last[%zu]: round %llu is after round %llu", i,
                          (unsigned long long)o->last[i], (unsigned long long)o->round);
  return HS_OK;
}

const pol_type pol_oort = {
    .name = "oort",
    .summary = "Oort-style selection of K participants (FedScale)",
    .caps = HS_POLICY_CAP_SELECTS,
    /* the cost estimates, then util .. pos and the controller's c->sd */
    .bytes_per_participant = POL_COSTS_BYTES + 8 + 8 + 1 + 1 + 4 + 8 + 1 + 8 + 4 + 8,
    .keys = oort_keys,
    .nkeys = POL_NKEYS(oort_keys),
    .create = oort_create,
    .destroy = oort_destroy,
    .update = oort_update,
    .state = oort_state_fields,
    .state_check = oort_state_check,
};
