/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_expect.h: compare an output against a golden one and name the first
 * difference (`hetsim replay --expect`, `hetsim run --expect`).
 *
 * CSV: the golden and the output are read with hs_csv (RFC 4180), record by
 * record; the header row is compared as a record (a changed column is a
 * difference, not a broken golden). Two cells are equal when their text is,
 * or, with rtol > 0, when both parse wholly as numbers (strtod) and
 * |a - b| <= rtol * max(|a|, |b|) (two NaNs are equal). A golden with fewer
 * or more records differs at the first record one side lacks.
 * JSON: both parsed with cJSON; objects compared key by key in the golden's
 * order (then keys only the output has), arrays index by index, numbers as
 * CSV cells are (rtol), everything else exactly. Top-level keys listed in
 * `skip` are ignored (summary.json's hetsim_version: a golden survives an
 * upgrade that changes nothing else).
 *
 * Results: HS_EXPECT_SAME, HS_EXPECT_DIFF (*d filled), or HS_EXPECT_BAD when
 * the golden itself cannot be read as CSV/JSON (err: "<golden>: line N:
 * reason"; a CSV golden is also malformed when it is empty or a row's field
 * count is not its header's: a broken golden is bad input, not a difference). An output that does not parse is a difference at that place.
 * O(bytes) time; memory O(one record) for CSV, O(tree) for JSON. */
#ifndef HS_EXPECT_H
#define HS_EXPECT_H

#include <stddef.h>

#include "base/hs_status.h"

enum { HS_EXPECT_SAME = 0, HS_EXPECT_DIFF = 1, HS_EXPECT_BAD = -1 };

typedef struct hs_expect_diff {
  size_t line;       /* CSV: the golden's line (1-based; 0 past its end) */
  size_t record;     /* CSV: 0 the header, k the k-th data row */
  char where[256];   /* CSV: the column's name; JSON: the key path ("a.b[2]") */
  char want[256];    /* the golden's value ("(none)" when it has none) */
  char got[256];     /* the output's value ("(none)" when it has none) */
} hs_expect_diff;

int hs_expect_csv(const char *gold, size_t glen, const char *gold_origin, const char *got,
                  size_t len, double rtol, hs_expect_diff *d, hs_error *err);

int hs_expect_json(const char *gold, const char *gold_origin, const char *got, double rtol,
                   const char *const *skip, size_t nskip, hs_expect_diff *d, hs_error *err);

/* Why two summaries differ in identity: the first of the top-level keys
 * (e.g. "sets", then "scenario_resolved") whose values differ exactly, with
 * d->where its path ("scenario_resolved.policy.deadband", "sets[1]") and both
 * values. HS_EXPECT_SAME when they agree on every key, HS_EXPECT_BAD when
 * either text is not JSON. For `run --expect`, whose run_identity alone is a
 * hash that names nothing. */
int hs_expect_json_cause(const char *gold, const char *got, const char *const *keys, size_t nkeys,
                         hs_expect_diff *d);

/* Are the two cells equal under rtol (see above)? */
int hs_expect_cell_eq(const char *a, const char *b, double rtol);

#endif
