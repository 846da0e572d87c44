/* select.c: the O(n) kernels under every split: quickselect (for medians and
 * for the k largest remainders) and largest-remainder apportionment with a floor.
 *
 * Quickselect is the tree's one (base/hs_select.h: Hoare partition,
 * median-of-three pivot, narrows to one side only: expected O(n), no
 * allocation), on doubles (hs_select) and, instantiated here, on the
 * remainders' order (pol_top_k). A Lomuto and a three-way (Dijkstra)
 * partition were tried first and were slower at 10^6 (sim/doc/performance.md).
 * Rejected: a full sort (O(n log n): several times slower at 10^6
 * participants, against the update's time budget),
 * and introselect's median-of-medians fallback (only defends against adversarial
 * inputs, which telemetry is not).
 *
 * pol_flag_top_k (oort's selections) takes the sample bracket of pol_kth and
 * pol_median (a Floyd-Rivest idea: a strided sample brackets the k-th) to flags: one
 * pass counts the keys above the bracket and collects those inside it, and
 * only those (~5 %) are ordered exactly; which set comes out is defined by
 * the order (key desc, index asc) alone, so it equals what a full sort would
 * give (tests/unit/test_policy_select.c checks it against one). Rejected for
 * it: copying keys and indices into pairs and quickselecting them (four
 * passes over 16-byte pairs; oort spent a third of its update there).
 *
 * Apportionment invariants: out[] sums to the budget exactly; every participant
 * gets >= floor; a participant whose exact share q_i is >= floor gets floor(q_i)
 * or floor(q_i)+1, the +1 going to the largest fractional parts, ties to the
 * lower index (the order is total, so the result never depends on the input
 * permutation). The floor is water-filled: participants whose share falls below
 * it are pinned at it and the others share the rest in proportion; each pass is
 * O(active), and passes repeat only while someone new falls below the floor
 * (one or two in practice; pathological weight ladders could need more).
 * The usual pass pins nobody: the pass that sums the weights also takes
 * their minimum, and nobody is pinned when it is above the floor's weight
 * (no copy of the index list, no counting pass); the pass that makes the
 * remainders also makes plus_one_top's histogram, so a split at 10^6 reads
 * its weights three times, twice when the caller sums them as it makes them
 * (pol_apportion_sum).
 *
 * Memory (issue 13): each exact share q is written over the weight it comes
 * from (w[i] is read for the last time there), and its base and remainder
 * are derived from q where needed, so the apportionment's scratch per
 * participant is the 4-byte active list alone; every count is written once
 * at the end, into out or (out NULL) back into w as an exact integer, so a
 * caller may need no count array either. The exact order of the one
 * histogram slice that needs it goes through a fixed buffer of POL_PAIRS
 * pairs. A slice crowded past it (ties: equal weights; or remainders within
 * 1/4096 of each other) is ordered without a buffer: its k-th key is
 * narrowed by radix passes (rem_select), ties by index in one more pass,
 * which needs the index list ascending (asserted; a group's always is).
 * Rejected: a 16-byte (remainder, index) pair per participant, as before
 * (24 B per participant with its quickselect copy, for a path that at 10^6
 * orders ~250 of them), and a second weights array for recomputing
 * remainders. */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_select.h"
#include "pol_select.h"

void pol_scratch_init(pol_scratch *s, size_t n) {
  s->act = hs_calloc(n, sizeof *s->act);
  s->cap = n < POL_PAIRS ? n : POL_PAIRS;
  s->pairs = hs_calloc(s->cap ? s->cap : 1, sizeof *s->pairs);
  s->hist = hs_calloc(POL_BUCKETS, sizeof *s->hist);
}

void pol_scratch_fini(pol_scratch *s) {
  hs_free(s->act);
  hs_free(s->pairs);
  hs_free(s->hist);
  memset(s, 0, sizeof *s);
}

/* The k-th and (k+1)-th smallest through a sample bracket (Floyd-Rivest
 * idea): select two order statistics of a strided sample that bracket k with
 * high probability, keep the band between them in one pass, select inside the
 * band. About 1.2 passes instead of quickselect's ~3. Deterministic (strided
 * sample, no random draws); returns false when the bracket missed, and the
 * caller then falls back to plain quickselect. */
#define SAMPLE_N 2048
/* The bracket [*pl, *ph] from SAMPLE_N strided values of a[0..m) (copied
 * into smp): the sample's order statistics d ranks either side of where the
 * k-th should fall. A side that runs off the sample is open (-inf/+inf):
 * near the ends (oort's top 0.01 %) the sample's extreme would often fall
 * short of the k-th. */
static void sample_bracket(const double *a, size_t m, size_t k, double *smp, double *pl,
                           double *ph) {
  size_t stride = m / SAMPLE_N;
  for (size_t j = 0; j < SAMPLE_N; j++) smp[j] = a[j * stride];
  size_t centre = (size_t)((double)k / (double)m * SAMPLE_N);
  size_t d = 96; /* ~4 sd of a sample quantile at n = 2048 */
  *pl = centre > d ? hs_select(smp, SAMPLE_N, centre - d) : -INFINITY;
  *ph = centre + d < SAMPLE_N ? hs_select(smp, SAMPLE_N, centre + d) : INFINITY;
}

static bool median_bracket(double *a, size_t m, size_t k, double *lo_out, double *hi_out) {
  double smp[SAMPLE_N], pl, ph;
  sample_bracket(a, m, k, smp, &pl, &ph);
  size_t below = 0, nb = 0;
  for (size_t j = 0; j < m; j++) {
    /* no branch at all: v < pl is a coin toss around the median, and "in
     * the bracket" (~10 %) mispredicted often enough to cost a millisecond
     * per median at 10^6; the swap is always made (a no-op when out) */
    double v = a[j], w = a[nb];
    below += (size_t)(v < pl);
    unsigned in = (unsigned)(v >= pl) & (unsigned)(v <= ph);
    a[j] = pol_sel(in, w, v); /* a stays a permutation, for the fallback */
    a[nb] = pol_sel(in, v, w);
    nb += in;
  }
  if (below > k || k + 1 >= below + nb) return false;
  *lo_out = hs_select(a, nb, k - below);
  double hi = a[k - below + 1];
  for (size_t j = k - below + 2; j < nb; j++)
    if (a[j] < hi) hi = a[j];
  *hi_out = hi;
  return true;
}

double pol_kth(double *a, size_t m, size_t k) {
  assert(k < m);
  if (m >= 16 * SAMPLE_N && k + 1 < m) {
    double lo, hi;
    /* a miss (an unrepresentative sample, e.g. periodic data aliasing with the
     * stride) only costs time: a is still a permutation of the input */
    if (median_bracket(a, m, k, &lo, &hi)) return lo;
  }
  return hs_select(a, m, k);
}

double pol_kth_of(const double *a, size_t m, size_t k, double *tmp) {
  assert(k < m);
  if (m >= 16 * SAMPLE_N) {
    /* the bracket of median_bracket, without reordering a: count below it
     * and copy what is inside (~10 %) into tmp, select there */
    double pl, ph;
    sample_bracket(a, m, k, tmp, &pl, &ph);
    size_t below = 0, nb = 0;
    for (size_t j = 0; j < m; j++) {
      double v = a[j];
      below += (size_t)(v < pl);
      tmp[nb] = v; /* branch-free compaction: nb <= j */
      nb += (size_t)(v >= pl) & (size_t)(v <= ph);
    }
    if (below <= k && k < below + nb) return pol_kth(tmp, nb, k - below);
  }
  memcpy(tmp, a, m * sizeof *tmp);
  return pol_kth(tmp, m, k);
}

/* The mean of the two middle values; lo + hi overflows past DBL_MAX/2, and
 * then the halves are added instead (only then: the common case keeps its
 * rounding, so results do not move). */
static double mid(double lo, double hi) {
  double m = 0.5 * (lo + hi);
  return isinf(m) && isfinite(lo) && isfinite(hi) ? 0.5 * lo + 0.5 * hi : m;
}

double pol_median(double *a, size_t m) {
  assert(m >= 1);
  size_t k = (m - 1) / 2;
  if (m >= 16 * SAMPLE_N) {
    double lo, hi;
    if (median_bracket(a, m, k, &lo, &hi)) return m % 2 ? lo : mid(lo, hi);
  }
  double lo = hs_select(a, m, k);
  if (m % 2) return lo;
  double hi = a[k + 1];
  for (size_t i = k + 2; i < m; i++)
    if (a[i] < hi) hi = a[i];
  return mid(lo, hi);
}

/* The median of the selected values by one pass over them, no copy of them
 * all: a strided sample of the selected brackets the median, the pass counts
 * the selected below the bracket and copies those inside it (~10 %) into
 * tmp, and the median (both middle values when the count is even) is
 * selected there; the sample missing only costs the plain way (copy, then
 * pol_median). The same value as pol_median of the copy: it is the k-th
 * smallest of the multiset either way. */
double pol_median_of(const double *x, const uint32_t *idx, size_t m, const unsigned char *sel,
                     double *tmp, size_t *count) {
  if (m >= 16 * SAMPLE_N) {
    double smp[SAMPLE_N];
    size_t stride = m / SAMPLE_N, ns = 0;
    for (size_t j = 0; j < SAMPLE_N; j++) {
      uint32_t i = idx[j * stride];
      if (sel[i]) smp[ns++] = x[i];
    }
    if (ns >= SAMPLE_N / 4) {
      size_t centre = (ns - 1) / 2, d = (size_t)(4.5 * sqrt((double)ns) / 2) + 1;
      double pl = centre > d ? hs_select(smp, ns, centre - d) : -INFINITY;
      double ph = centre + d < ns ? hs_select(smp, ns, centre + d) : INFINITY;
      size_t cnt = 0, below = 0, nb = 0;
      for (size_t j = 0; j < m; j++) { /* branch-free: selected or not is a coin toss */
        uint32_t i = idx[j];
        size_t h = sel[i] != 0;
        double v = x[i];
        cnt += h;
        below += h & (size_t)(v < pl);
        tmp[nb] = v; /* nb <= j */
        nb += h & (size_t)(v >= pl) & (size_t)(v <= ph);
      }
      *count = cnt;
      if (cnt == 0) return 0.0;
      size_t k = (cnt - 1) / 2, last = cnt % 2 ? k : k + 1; /* the middle ranks */
      if (below <= k && last < below + nb) {
        double lo = hs_select(tmp, nb, k - below);
        if (cnt % 2) return lo;
        double hi = tmp[k - below + 1];
        for (size_t j = k - below + 2; j < nb; j++)
          if (tmp[j] < hi) hi = tmp[j];
        return mid(lo, hi);
      }
    }
  }
  size_t cnt = 0;
  for (size_t j = 0; j < m; j++)
    if (sel[idx[j]]) tmp[cnt++] = x[idx[j]];
  *count = cnt;
  return cnt ? pol_median(tmp, cnt) : 0.0;
}

/* (frac desc, idx asc): a strict total order, since indices are distinct */
static inline bool before(const pol_rem *a, const pol_rem *b) {
  return a->frac > b->frac || (a->frac == b->frac && a->idx < b->idx);
}

/* the one quickselect (base/hs_select.h) on that order */
#define POL_REM_BEFORE(x, y) before(x, y)
HS_SELECT_DEFINE(rem_select_kth, pol_rem, POL_REM_BEFORE)

void pol_top_k(pol_rem *r, size_t m, size_t k) {
  assert(k <= m);
  if (k == 0 || k == m) return;
  /* afterwards r[k-1] is the k-th in order and r[0..k-1) all precede it */
  rem_select_kth(r, m, k - 1);
}

/* Gives +1 to the k largest remainders of rem[0..m) (frac in about [0,1)).
 * A histogram over POL_BUCKETS equal slices of [0,1) (s->hist, made while
 * the remainders were, when m >= 4*POL_BUCKETS) finds the slice that
 * holds the k-th; everything above it gets +1 outright and only that slice is
 * ordered exactly (pol_top_k), so ties still go to the lower index. Two passes
 * instead of a quickselect over all m: this is what keeps a 10^6-participant
 * update inside its 50 ms. Fractions outside [0,1) (rounding at the floor) are
 * clamped into the end slices, which keeps the slice order monotone. */
/* The histogram slice of a remainder: [0,1) in POL_BUCKETS equal slices,
 * values outside clamped into the end slices. frac is in about [0,1), so the
 * signed conversion equals the unsigned one (and is one instruction). */
static inline size_t rem_bucket(double frac) {
  double f = frac * POL_BUCKETS;
  return f <= 0 ? 0 : f >= POL_BUCKETS - 1 ? POL_BUCKETS - 1 : (size_t)(int64_t)f;
}

/* An order-preserving image of a remainder as an unsigned integer: larger
 * value, larger key (+0.0 and -0.0 share one key, as they compare equal). */
static inline uint64_t ord_key(double v) {
  uint64_t b;
  v += 0.0; /* -0.0 -> +0.0 */
  memcpy(&b, &v, sizeof b);
  return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

/* The remainders' state after the share pass: w[i] holds participant i's
 * exact share q (as computed), from which its base (floor(q) clamped to
 * [floor, rest]) and its remainder q - base are derived where needed; each
 * active's final count is base + add + its move, written once, into out[i]
 * or (out NULL) into w[i] as an exact integer. Who takes part in a
 * selection: every active (REM_ALL), the actives whose remainder falls in
 * histogram slice `cut` (REM_SLICE: those above it get +1 outright), the
 * actives whose base is above the floor (REM_ABOVE). */
enum { REM_ALL, REM_SLICE, REM_ABOVE };

typedef struct rem_sel {
  const uint32_t *act; /* the actives, ascending index */
  size_t na;
  double *w;           /* shares q by participant index */
  uint64_t *out;       /* NULL: the counts go to w */
  uint64_t floor_n, rest, add;
  int who;             /* REM_* */
  size_t cut;          /* REM_SLICE */
  int dir;             /* +1: (rem desc, index asc) get +1; -1: (rem asc, index desc) get -1 */
} rem_sel;

static inline uint64_t q_base(const rem_sel *r, double q) {
  /* floor(q), as an integer: 0 <= q <= ~rest < 2^63, where truncation is
   * the floor and the signed conversion is exact (one instruction) */
  uint64_t base = (uint64_t)(int64_t)q;
  if (base < r->floor_n) base = r->floor_n; /* rounding at the floor's edge */
  if (base > r->rest) base = r->rest;
  return base;
}

/* base <= rest <= 2^53: the signed conversion is exact (and one instruction) */
static inline double q_rem(double q, uint64_t base) { return q - (double)(int64_t)base; }

static inline void put(const rem_sel *r, uint32_t i, uint64_t v) {
  if (r->out)
    r->out[i] = v;
  else
    r->w[i] = (double)(int64_t)v; /* <= 2^53: exact */
}

/* One active's remainder (frac), membership and, for a non-member, its
 * outright move (REM_SLICE: +1 above the cut). */
static inline bool rem_of(const rem_sel *r, double q, uint64_t base, double *frac,
                          unsigned *plus) {
  *frac = q_rem(q, base);
  *plus = 0;
  if (r->who == REM_ALL) return true;
  if (r->who == REM_ABOVE) return base > r->floor_n;
  size_t b = rem_bucket(*frac);
  *plus = b > r->cut;
  return b == r->cut;
}

/* The pair of a member in the pol_top_k order (frac desc, idx asc): dir < 0
 * reverses both parts. */
static inline pol_rem rem_pair(const rem_sel *r, double frac, uint32_t i) {
  return r->dir > 0 ? (pol_rem){frac, i} : (pol_rem){-frac, UINT32_MAX - i};
}

static inline uint64_t rem_key(const rem_sel *r, double frac) {
  return ord_key(r->dir > 0 ? frac : -frac);
}

/* Finishes every active: base + add + its move, the move going (r->dir) to
 * the `want` members first in r's order out of `cnt` members. Up to s->cap
 * members: their pairs in s->pairs, pol_top_k. More (ties, or remainders
 * crowding one histogram slice): no buffer for them all, so the want-th key
 * is narrowed down by radix passes over the actives (12 bits of ord_key at a
 * time, starting at the highest bit in which the members in range differ)
 * until the range holds one value or fits the buffer; then one pass writes
 * everyone: every member above the range moves and, in the range, the
 * buffer's top or the first ties in index order. Equal remainders take one
 * pass; the worst case ~12 passes (only crowded and finely spread
 * remainders, which no real weights give). */
static void rem_select(const rem_sel *r, size_t cnt, size_t want, pol_scratch *s) {
  assert(want >= 1 && want <= cnt);
  const uint32_t *act = r->act;
  const double *w = r->w;
  size_t na = r->na;
  uint64_t klo = 0, khi = UINT64_MAX; /* the range the want-th key lies in */
  size_t rank = want, count = cnt;   /* its rank from the top within the range */
  bool buffered = false;
  double frac;
  unsigned plus;
  for (;;) {
    if (count <= s->cap) { /* the range fits: exact order of its pairs */
      size_t nb = 0;
      for (size_t j = 0; j < na; j++) {
        uint32_t i = act[j];
        if (!rem_of(r, w[i], q_base(r, w[i]), &frac, &plus)) continue;
        uint64_t key = rem_key(r, frac);
        if (key >= klo && key <= khi) s->pairs[nb++] = rem_pair(r, frac, i);
      }
      assert(nb == count);
      pol_top_k(s->pairs, nb, rank);
      buffered = true;
      break;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t j = 0; j < na; j++) {
      uint32_t i = act[j];
      if (!rem_of(r, w[i], q_base(r, w[i]), &frac, &plus)) continue;
      uint64_t key = rem_key(r, frac);
      if (key < klo || key > khi) continue;
      lo = key < lo ? key : lo;
      hi = key > hi ? key : hi;
    }
    if (lo == hi) { /* one value: the rank first ties, in index order */
      klo = khi = lo;
      break;
    }
    int top = 63 - __builtin_clzll(lo ^ hi); /* highest differing bit */
    int shift = top >= 11 ? top - 11 : 0;
    uint64_t base = lo >> shift;
    uint32_t *h = s->hist;
    memset(h, 0, POL_BUCKETS * sizeof *h);
    for (size_t j = 0; j < na; j++) {
      uint32_t i = act[j];
      if (!rem_of(r, w[i], q_base(r, w[i]), &frac, &plus)) continue;
      uint64_t key = rem_key(r, frac);
      if (key < lo || key > hi) continue;
      h[(key >> shift) - base]++;
    }
    size_t d = (size_t)((hi >> shift) - base);
    while (rank > h[d]) rank -= h[d--];
    count = h[d];
    klo = (base + d) << shift;
    khi = klo + ((UINT64_C(1) << shift) - 1);
  }
  /* everyone's count: a member above the range moves; in it, the buffer's
   * top `rank` (below) or the first `rank` in index order (dir < 0: from the
   * highest index) */
  size_t ties = buffered ? 0 : rank;
  for (size_t q = 0; q < na; q++) {
    size_t j = r->dir > 0 ? q : na - 1 - q;
    uint32_t i = act[j];
    uint64_t base = q_base(r, w[i]);
    uint64_t v = base + r->add;
    if (rem_of(r, w[i], base, &frac, &plus)) {
      uint64_t key = rem_key(r, frac);
      unsigned move = key > khi;
      if (!buffered && key == klo && ties > 0) {
        move = 1;
        ties--;
      }
      v += (uint64_t)(int64_t)((int)move * r->dir);
    } else {
      v += plus;
    }
    put(r, i, v);
  }
  assert(ties == 0);
  if (buffered)
    for (size_t j = 0; j < rank; j++) {
      uint32_t id = s->pairs[j].idx;
      uint32_t i = r->dir > 0 ? id : UINT32_MAX - id;
      if (r->out)
        r->out[i] += (uint64_t)(int64_t)r->dir;
      else
        r->w[i] += (double)r->dir; /* an exact integer +-1 */
    }
}

/* Finishes every active with +1 for the k largest remainders, (remainder
 * desc, index asc). At m >= 4*POL_BUCKETS a histogram over POL_BUCKETS equal
 * slices of [0,1) (s->hist, made while the remainders were) finds the slice
 * that holds the k-th; everything above it gets +1 outright and only that
 * slice is ordered exactly (pairs, or rem_select when it is crowded), so
 * ties still go to the lower index. Two passes instead of a quickselect over
 * all m: this is what keeps a 10^6-participant update inside its 50 ms.
 * Remainders outside [0,1) (rounding at the floor) are clamped into the end
 * slices, which keeps the slice order monotone. */
static void plus_one_top(rem_sel *r, size_t k, pol_scratch *s) {
  const uint32_t *act = r->act;
  double *w = r->w;
  size_t na = r->na;
  if (k == 0) {
    for (size_t j = 0; j < na; j++) put(r, act[j], q_base(r, w[act[j]]) + r->add);
    return;
  }
  if (na < 4 * POL_BUCKETS) {
    r->who = REM_ALL;
    rem_select(r, na, k, s);
    return;
  }
  const uint32_t *h = s->hist; /* made by pol_apportion's share pass */
  size_t above = 0, cut = POL_BUCKETS - 1;
  while (above + h[cut] < k) above += h[cut--];
  size_t cnt = h[cut];
  if (cnt > s->cap) { /* crowded: rem_select finishes everyone */
    r->who = REM_SLICE;
    r->cut = cut;
    rem_select(r, cnt, k - above, s);
    return;
  }
  /* +1 without a branch (b > cut is a coin toss when k ~ m/2); a branch
   * only for the one slice ordered exactly. Two loops, one per destination:
   * into w the count is made in doubles (integers below 2^53: exact), which
   * spares a conversion per participant */
  size_t nb = 0;
  if (r->out) {
    for (size_t j = 0; j < na; j++) {
      uint32_t i = act[j];
      double q = w[i];
      uint64_t base = q_base(r, q);
      double frac = q_rem(q, base);
      size_t b = rem_bucket(frac);
      r->out[i] = base + r->add + (uint64_t)(b > cut);
      if (b == cut) s->pairs[nb++] = (pol_rem){frac, i};
    }
  } else {
    double add = (double)(int64_t)r->add;
    for (size_t j = 0; j < na; j++) {
      uint32_t i = act[j];
      double q = w[i], based = (double)(int64_t)q_base(r, q), frac = q - based;
      size_t b = rem_bucket(frac);
      w[i] = based + add + pol_sel(b > cut, 1.0, 0.0);
      if (b == cut) s->pairs[nb++] = (pol_rem){frac, i};
    }
  }
  pol_top_k(s->pairs, nb, k - above);
  for (size_t j = 0; j < k - above; j++) {
    uint32_t i = s->pairs[j].idx;
    if (r->out)
      r->out[i]++;
    else
      w[i] += 1.0; /* an exact integer */
  }
}

/* The bracket of pol_flag_top_k: a strided sample of the free keys (into
 * smp, POL_FLAG_SAMPLE doubles) and its order statistics d ranks either side
 * of where the wanted key should fall (-inf/+inf when a side runs off the
 * sample). d = 4.5 sd of a sample quantile: a miss costs one more pass. */
static void flag_bracket(const double *key, size_t n, size_t nfree, size_t k,
                         const unsigned char *flag, double *smp, double *lo, double *hi) {
  size_t stride = n / POL_FLAG_SAMPLE, ns = 0;
  for (size_t j = 0; j < POL_FLAG_SAMPLE; j++)
    if (!flag[j * stride]) smp[ns++] = key[j * stride];
  *lo = -INFINITY;
  *hi = INFINITY;
  if (ns < POL_FLAG_SAMPLE / 4) return; /* mostly flagged: no useful sample */
  /* the wanted key is the (nfree-k)-th smallest free one (0-based) */
  size_t centre = (size_t)((double)(nfree - k) / (double)nfree * (double)ns);
  size_t d = (size_t)(4.5 * sqrt((double)ns) / 2) + 1; /* >= 4.5 sd of a sample quantile */
  if (centre > d) *lo = hs_select(smp, ns, centre - d);
  if (centre + d < ns) *hi = hs_select(smp, ns, centre + d);
}

void pol_flag_top_k(const double *key, size_t n, size_t k, unsigned char *flag, double *tmp,
                    uint32_t *band) {
  if (k == 0) return;
  size_t nfree = 0;
  for (size_t i = 0; i < n; i++) nfree += !flag[i];
  assert(k <= nfree);
  double lo = -INFINITY, hi = INFINITY;
  if (n >= 4 * POL_FLAG_SAMPLE) flag_bracket(key, n, nfree, k, flag, tmp, &lo, &hi);
  size_t above, nb;
  for (;;) {
    /* one pass: count the free keys above the bracket and tag them (bit 1,
     * no branch: above/below is a coin toss when k ~ nfree/2); collect the
     * free ones inside it, in index order (branch-free compaction: band[nb]
     * is always written, nb <= i < n) */
    above = 0;
    nb = 0;
    for (size_t i = 0; i < n; i++) {
      double v = key[i];
      assert(v == v && "pol_flag_top_k: NaN key");
      unsigned f = flag[i], free_ = f == 0, up = v > hi;
      above += free_ & up;
      flag[i] = (unsigned char)(f | up << 1);
      band[nb] = (uint32_t)i;
      nb += free_ & (v >= lo) & (v <= hi);
    }
    if (above < k && k <= above + nb) break;
    /* the sample missed (it only costs time): untag, take everything */
    for (size_t i = 0; i < n; i++) flag[i] &= 1;
    lo = -INFINITY;
    hi = INFINITY;
  }
  /* the tagged are in (whatever they were); within the band the
   * (k-above)-th largest is the threshold thr: above it in, equal to it the
   * first ones in index order */
  for (size_t i = 0; i < n; i++) flag[i] = (unsigned char)((flag[i] | flag[i] >> 1) & 1);
  size_t want = k - above;
  for (size_t j = 0; j < nb; j++) tmp[j] = key[band[j]];
  double thr = pol_kth(tmp, nb, nb - want);
  size_t gt = 0;
  for (size_t j = 0; j < nb; j++) {
    unsigned up = key[band[j]] > thr;
    flag[band[j]] = (unsigned char)up;
    gt += up;
  }
  size_t ties = want - gt;
  for (size_t j = 0; j < nb && ties > 0; j++)
    if (key[band[j]] == thr) {
      flag[band[j]] = 1;
      ties--;
    }
  assert(ties == 0);
}

/* stats: NULL, or the caller's {sum, min} of w over idx (pol_apportion_sum) */
static void apportion(const uint32_t *idx, size_t m, double *w, const double *stats,
                      uint64_t budget, uint64_t floor_n, uint64_t *out, pol_scratch *s) {
  if (m == 0) return;
  assert(floor_n == 0 || budget / floor_n >= m);
#ifndef NDEBUG
  for (size_t j = 1; j < m; j++) assert(idx[j - 1] < idx[j] && "pol_apportion: idx not ascending");
  if (stats) {
    double sum = 0.0, lo = INFINITY;
    for (size_t j = 0; j < m; j++) {
      sum += w[idx[j]];
      lo = w[idx[j]] < lo ? w[idx[j]] : lo;
    }
    assert(sum == stats[0] && lo == stats[1] && "pol_apportion_sum: not the weights' sum/min");
  }
#endif
  /* the active participants: idx itself until someone is pinned at the
   * floor, then the compacted copy in s->act (no copy in the usual case) */
  const uint32_t *act = idx;
  size_t na = m;
  uint64_t rest = budget;
  double wsum = 0.0;
  /* water-filling passes; one reads the weights for their sum and their
   * minimum (the caller's when it has them), and nobody is below the floor
   * when the minimum is not: the usual split needs no second pass */
  for (bool first = true;; first = false) {
    double lo;
    if (first && stats) {
      wsum = stats[0];
      lo = stats[1];
    } else {
      wsum = 0.0;
      lo = INFINITY;
      for (size_t j = 0; j < na; j++) {
        double v = w[act[j]];
        wsum += v;
        lo = v < lo ? v : lo;
      }
    }
    assert(wsum > 0.0 && isfinite(wsum));
    if (floor_n == 0) break;
    /* share_i < floor  <=>  w_i < floor*wsum/rest: one division per pass */
    double wmin = (double)floor_n * wsum / (double)rest;
    if (!(lo < wmin)) break;
    uint32_t *keep_to = s->act; /* in place once act is s->act: keep <= j */
    size_t keep = 0;
    for (size_t j = 0; j < na; j++) {
      uint32_t i = act[j];
      if (w[i] < wmin) {
        if (out)
          out[i] = floor_n;
        else
          w[i] = (double)(int64_t)floor_n; /* its weight is not read again */
        rest -= floor_n;
      } else {
        keep_to[keep++] = i;
      }
    }
    act = keep_to;
    na = keep;
    if (na == 0) {
      assert(rest == 0);
      return;
    }
  }
  double scale = (double)rest / wsum;
  rem_sel r = {.act = act, .na = na, .w = w, .out = out, .floor_n = floor_n, .rest = rest,
               .dir = 1};
  uint64_t given = 0;
  bool hist = na >= 4 * POL_BUCKETS; /* plus_one_top's histogram, made here */
  uint32_t *h = s->hist;              /* in a register, not reloaded per store */
  if (hist) memset(h, 0, POL_BUCKETS * sizeof *h);
  for (size_t j = 0; j < na; j++) {
    uint32_t i = act[j];
    double q = w[i] * scale;
    assert(q >= 0 && q < 0x1p62);
    uint64_t base = q_base(&r, q);
    given += base;
    w[i] = q; /* the weight is read for the last time just above */
    if (hist) h[rem_bucket(q_rem(q, base))]++;
  }
  if (given <= rest) {
    uint64_t left = rest - given;
    if (left >= na) { /* only when rounding lost whole units */
      r.add = left / na;
      left -= r.add * na;
    }
    plus_one_top(&r, (size_t)left, s);
  } else {
    /* rounding overshoot (rare): take one back from the smallest fractional
     * parts above the floor, the higher index first */
    uint64_t over = given - rest;
    size_t ne = 0;
    for (size_t j = 0; j < na; j++) ne += q_base(&r, w[act[j]]) > floor_n;
    assert(over <= ne);
    r.who = REM_ABOVE;
    r.dir = -1;
    rem_select(&r, ne, (size_t)over, s);
  }
}

void pol_apportion(const uint32_t *idx, size_t m, double *w, uint64_t budget, uint64_t floor_n,
                   uint64_t *out, pol_scratch *s) {
  apportion(idx, m, w, NULL, budget, floor_n, out, s);
}

void pol_apportion_sum(const uint32_t *idx, size_t m, double *w, double wsum, double wlo,
                       uint64_t budget, uint64_t floor_n, uint64_t *out, pol_scratch *s) {
  double stats[2] = {wsum, wlo};
  apportion(idx, m, w, stats, budget, floor_n, out, s);
}
