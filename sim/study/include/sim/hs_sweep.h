/* [sim/study/include/sim -> hetsim::sim; not installed]
 * hs_sweep.h: parameter sweeps: the Cartesian product of grids over scenario
 * keys, times a list of seeds, each (point, seed) one hs_run; the crash-safe
 * results file; per-point aggregates and the makespan-energy Pareto front.
 *
 * Vocabulary.
 *   axis   one grid: a scenario key and its values as --set text
 *          ("policy.w_e=0,0.5,1" or the range "policy.w_e=0:1:0.5").
 *   point  one combination of axis values. Axes are ordered: the policy.kind
 *          axis (from --policies) first, then the --grid axes in command-line
 *          order; the LAST axis varies fastest. Point indexes start at 0.
 *   row    one (point, seed): row = point * nseeds + seed_index.
 *
 * A row's scenario is the base scenario text with, in this order, the base
 * --set overrides, the point's axis values and "seed" (when --seeds is given)
 * applied as hs_scenario_parse overrides (so policy.kind still applies first
 * and resets the policy's defaults). hs_sweep_create reads the scenario file
 * once and validates EVERY point before anything runs.
 *
 * Results file (RESULTS, e.g. results.csv), one line per row, appendable:
 *   line 1  "# hetsim sweep v1 | scenario <basename> fnv1a64=<hash> | set k=v |
 *            grid k=v1,v2 | ... | seeds s1,s2"   (records the sweep; --resume
 *            refuses a file whose line 1 differs). <hash> covers the scenario
 *            text and the contents of every profile and speed trace the
 *            points read, wherever those files are found.
 *   line 2  point,<axis keys>,seed,<the sweep metrics of hs_metrics.h>, today
 *           makespan_s,energy_j,energy_compute_j,energy_comm_j,energy_idle_j,
 *           compute_cv,wait_fraction
 *   rows    in completion order while running; sorted by row at the end.
 * Per-point file (RESULTS with ".csv" replaced by ".points.csv"): written once
 * every row is present, through a temporary file and a rename:
 *   line 1  as above; line 2 point,<axis keys>,seeds,<metric>_<stat> for each
 *           metric above and each statistic the table gives it (today all of
 *           mean,median,min,max),pareto_front (1: no other point has a mean
 *           makespan and a mean energy both <= and one <).
 *
 * Everything here is deterministic: the bytes of both files depend only on the
 * sweep, never on the number of threads or processes or on interruptions. */
#ifndef HS_SWEEP_H
#define HS_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/hs_metrics.h"
#include "sim/hs_scenario.h"
#include "base/hs_status.h"

/* Room for the metrics of a row: the HS_METRIC_SWEEP metrics of the table
 * (hs_metrics.h), hs_metric_sweep_count() of them, in column order; the rest
 * of m[] is zero. The table's room (HS_METRIC_SWEEP_MAX, asserted there). */
#define HS_SWEEP_NMETRICS HS_METRIC_SWEEP_MAX

/* One grid axis. Owned strings; release with hs_sweep_axis_fini. */
typedef struct hs_sweep_axis {
  char *spec;     /* as given, for messages ("policy.w_e=0:1:0.25"); past 80
                     bytes cut, with "...", so a message keeps its reason */
  char *key;
  char **values;  /* --set value text; ranges expanded */
  size_t nvalues; /* >= 1 */
} hs_sweep_axis;

/* "key=v1,v2,..." (values as --set text; none may be empty or contain '"',
 * '|', '#' or a control character) or "key=start:stop:step" (numbers, step != 0,
 * stop included when start + i*step reaches it within 1e-9 steps; value i is
 * start + i*step printed with 15 significant digits, so 0:1:0.1 gives 0.3,
 * not 0.30000000000000004, and whole numbers up to 2^53 in full; a step so
 * small that two values print alike is an error). At most 1,000,000 values.
 * Errors (HS_EINVAL) start with "--grid SPEC: ". */
hs_status hs_sweep_axis_parse(const char *spec, hs_sweep_axis *out, hs_error *err);
void hs_sweep_axis_fini(hs_sweep_axis *a);

/* "1-10", "1,2,5", "3-5,9": whole numbers in [0, 2^53], no repeats, at most
 * 1,000,000. *seeds is heap (hs_free). Errors start with "--seeds SPEC: ". */
hs_status hs_sweep_seeds_parse(const char *spec, uint64_t **seeds, size_t *nseeds,
                               hs_error *err);

/* What to sweep. Pointers are borrowed for the duration of hs_sweep_create. */
typedef struct hs_sweep_spec {
  const char *scenario;      /* path of the scenario file */
  const hs_override *set;    /* base --set overrides, applied to every row */
  size_t nset;
  const char *policies;      /* "a,b" -> an axis over policy.kind; NULL: none */
  const char *const *grids;  /* --grid specs */
  size_t ngrids;
  const char *seeds;         /* --seeds spec; NULL: the scenario's own seed */
} hs_sweep_spec;

typedef struct hs_sweep hs_sweep;

/* Parse, expand and validate every point. NULL with *err set on bad input; a
 * message about a grid value starts with the spec ("--grid policy.w_e=...: ").
 * The caller owns the result (hs_sweep_destroy). */
hs_sweep *hs_sweep_create(const hs_sweep_spec *spec, hs_error *err);
void hs_sweep_destroy(hs_sweep *sw);

size_t hs_sweep_naxes(const hs_sweep *sw);
const hs_sweep_axis *hs_sweep_axis_at(const hs_sweep *sw, size_t a);
size_t hs_sweep_npoints(const hs_sweep *sw);
size_t hs_sweep_nseeds(const hs_sweep *sw);
size_t hs_sweep_nrows(const hs_sweep *sw);
uint64_t hs_sweep_seed_at(const hs_sweep *sw, size_t s);
/* Value text of axis a at point p (owned by sw). */
const char *hs_sweep_value(const hs_sweep *sw, size_t point, size_t a);
/* Line 1 and line 2 of both files, each ending in '\n' (owned by sw). */
const char *hs_sweep_header(const hs_sweep *sw);
const char *hs_sweep_columns(const hs_sweep *sw);
const char *hs_sweep_point_columns(const hs_sweep *sw);

/* --- running --------------------------------------------------------------- */

typedef struct hs_sweep_result {
  size_t row;
  double m[HS_SWEEP_NMETRICS]; /* hs_metric_sweep_at(k) in m[k]; unused slots 0 */
} hs_sweep_result;

/* Load row's scenario and hs_run it (no output files). Re-entrant. */
hs_status hs_sweep_run_row(const hs_sweep *sw, size_t row, hs_sweep_result *out, hs_error *err);

/* Called once per finished row, never concurrently; i is its position in rows[].
 * Returns false to stop the sweep (its results cannot be kept: a full disk),
 * true to go on. */
typedef bool (*hs_sweep_done_fn)(size_t i, const hs_sweep_result *r, void *userdata);

/* Run rows[0..n) on `jobs` threads (>= 1; 1 runs on the caller's thread), in
 * rows[] order of starting; fn sees them in completion order. On the first
 * failure, or when fn returns false, no new row starts and the rows in flight
 * finish (fn sees them); the error of the lowest failed position is returned
 * (HS_OK when fn stopped the sweep and no row failed). */
hs_status hs_sweep_run_rows(const hs_sweep *sw, const size_t *rows, size_t n, unsigned jobs,
                            hs_sweep_done_fn fn, void *userdata, hs_error *err);

/* The same across the ranks of transport t (hs_transport.h), collectively:
 * rows[0..n) (significant on rank 0 only: the rows to run, in ascending
 * order) are broadcast, run on every rank with `jobs` threads each, and fn
 * (rank 0 only) sees each result in rows[] order, wave by wave. On a failure
 * every rank stops after the current wave; the rank whose row failed returns
 * its error in *err, the others HS_ESTATE with an empty message. When fn
 * returns false, every rank stops after the current wave and returns HS_OK
 * (unless a row failed too). One rank: hs_sweep_run_rows. */
struct hs_transport;
hs_status hs_sweep_run_ranks(const struct hs_transport *t, const hs_sweep *sw, const size_t *rows,
                             size_t n, unsigned jobs, hs_sweep_done_fn fn, void *userdata,
                             hs_error *err);

/* The row's CSV line with its '\n'. Returns the length, or the length needed
 * (like snprintf) when cap is too small. */
size_t hs_sweep_format_row(const hs_sweep *sw, const hs_sweep_result *r, char *buf, size_t cap);

/* --- the results file ------------------------------------------------------ */

typedef struct hs_sweep_file hs_sweep_file;

/* Open RESULTS for appending rows. Fresh (resume false): the file must not
 * exist (HS_EINVAL "... exists: add --resume to continue it, or remove it");
 * it is created with its two header lines. Resume: a missing or empty file
 * starts fresh; otherwise its header must match this sweep, every complete
 * row is checked against the grid, and a torn last line (no '\n': the process
 * died in the middle of a write) is cut off. done (nrows entries, caller's)
 * receives which rows are present. The caller owns the result. */
hs_sweep_file *hs_sweep_file_open(const hs_sweep *sw, const char *path, bool resume, bool *done,
                                  hs_error *err);
/* Append one whole line with a single write(2) on an O_APPEND descriptor: a
 * reader (or --resume after SIGKILL) sees the line entirely or not at all,
 * except for a torn last line when the system itself fails mid-write. */
hs_status hs_sweep_file_append(hs_sweep_file *f, const char *line, size_t len, hs_error *err);
/* fsync(2): rows appended so far survive a power cut. */
hs_status hs_sweep_file_sync(hs_sweep_file *f, hs_error *err);
/* fsync and close (NULL is fine). */
hs_status hs_sweep_file_close(hs_sweep_file *f, hs_error *err);

/* Aggregates of one point over its seeds. */
/* The statistics of hs_metric_stats, in the order of hs_stat_names. */
typedef struct hs_sweep_stat {
  double mean, median, min, max, sd, ci95_lo, ci95_hi;
} hs_sweep_stat;
typedef struct hs_sweep_point {
  hs_sweep_stat m[HS_SWEEP_NMETRICS]; /* as hs_sweep_result.m */
  bool pareto; /* on the (makespan_s mean, energy_j mean) front, both minimised */
} hs_sweep_point;

/* "<path minus .csv>.points.csv" (heap, hs_free). */
char *hs_sweep_points_path(const char *results_path);

/* When every row is in RESULTS: rewrite it sorted by row (temporary file +
 * rename) and write the per-point file; aggregates come from the numbers as
 * printed in RESULTS, so a resumed sweep gives the same bytes. HS_ESTATE when
 * rows are missing. points (may be NULL) receives npoints aggregates (heap,
 * hs_free). */
hs_status hs_sweep_finalize(const hs_sweep *sw, const char *path, hs_sweep_point **points,
                            hs_error *err);

/* Pareto front of n points (x[i], y[i]), both minimised: front[i] is true when
 * no j has x[j] <= x[i], y[j] <= y[i] and one of them strictly. Equal points
 * are both on the front. O(n log n). */
void hs_sweep_pareto(const double *x, const double *y, size_t n, bool *front);

#endif
