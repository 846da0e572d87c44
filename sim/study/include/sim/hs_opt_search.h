/* [sim/study/include/sim -> hetsim::sim; not installed]
 * hs_opt_search.h: `hetsim optimize` as a library: an NLopt search
 * (hs_optimize.h) whose evaluations are one-point sweeps (hs_sweep_create +
 * hs_sweep_run_row), so a point is loaded, validated and run exactly as
 * `hetsim sweep` would run it; its files, its resume and its ranks.
 *
 * Objectives come from the metric table (hs_metrics.h): a sweep metric by
 * its name, or its name without the unit suffix ("makespan" for
 * makespan_s), minimised (maximised when its table line says higher is
 * better); or a pair for a Pareto search: "pareto" (makespan_s, energy_j),
 * "pareto_system" (makespan_s, energy_system_j). A metric of an optional
 * group is an objective only where the search's runs report its group;
 * otherwise the search is refused, saying who reports it (hs_metric_needs).
 *
 * Files (FILE = job.out):
 *   FILE            every evaluation, appended as it finishes (one write(2) a
 *                   line, O_APPEND: a kill leaves whole lines, a torn last line
 *                   is cut by resume), sorted by (sub, index) at the end.
 *                   Line 1 records the search; resume refuses another.
 *                   Numbers with 17 significant digits: a resumed search
 *                   replays the very doubles NLopt saw.
 *   FILE.front.csv  the non-dominated evaluations (pareto), or the best one
 *                   (one objective): FILE's columns plus tied_points. ONE ROW
 *                   PER DISTINCT OBJECTIVE VECTOR (hs_opt_front): points that
 *                   differ only in keys without effect tie; the first of them
 *                   in FILE's order stands for them, tied_points says how many
 *                   distinct points it stands for. Rejected: every tied point
 *                   (a thousand rows for a handful of fronts on the MNIST
 *                   testbed); a tie broken by key values (needs an order).
 *   FILE.history.csv the front after 25, 50, 75 and 100 % of every
 *                   sub-problem's budget (stage,evaluations,<keys>,<the two
 *                   objectives' metrics; one objective: makespan_s,energy_j>,
 *                   tied_points): hetsim plot.
 * Validation before any run: every --vary key at both ends of its range (and
 * every value of a set) in one sweep, so a key that does not exist is bad
 * input (HS_EINVAL) before a file is touched.
 *
 * Ranks (hs_transport.h): every rank creates the search (validates); the
 * caller agrees on failures across ranks (hs_transport_first_failure) before
 * hs_opt_search_run, which is collective: rank 0 alone reads and writes the
 * files and runs NLopt, in batch mode when the transport has more than one
 * rank (ranks x jobs sub-problem threads); each batch (a point per waiting
 * sub-problem) is spread over the ranks while the others serve. Every rank
 * returns rank 0's status; only rank 0 has a message. Why not every rank
 * running NLopt in lockstep: resume and files stay in one process (no shared
 * file system needed), the other ranks are stateless, NLopt's state never
 * has to agree across nodes. Rejected: sub-problems sending points to idle
 * ranks (a scheduler for batches no wider than the sums). */
#ifndef HS_OPT_SEARCH_H
#define HS_OPT_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/hs_status.h"
#include "sim/hs_scenario.h"
#include "sim/hs_transport.h"

typedef struct hs_opt_job {
  const char *scenario, *out;
  const char *objective;          /* see above */
  const char *algorithm;          /* NULL: GN_DIRECT_L */
  const char *seed;               /* NULL: the scenario's; else a whole number */
  const hs_override *set;         /* --set, at every point */
  size_t nset;
  const char *const *vary;        /* --vary specs (hs_optimize.h) */
  size_t nvary;
  size_t budget, weights;
  unsigned jobs;                  /* threads (per rank) */
  bool resume;
  /* Called on rank 0 after each line appended to FILE (n in all so far);
   * may be NULL. The CLI's kill hook for the resume tests. */
  void (*appended)(size_t n, void *ud);
  void *ud;
} hs_opt_job;

/* What a finished search wrote (rank 0). */
typedef struct hs_opt_report {
  size_t evaluations, distinct; /* rows of FILE; distinct points among them */
  size_t front_rows, front_points; /* rows of the front; points they stand for */
  char *front_path, *history_path; /* owned */
  size_t *per_rank; /* with ranks: points each rank simulated; NULL otherwise */
  size_t nranks;
} hs_opt_report;

typedef struct hs_opt_search hs_opt_search;

/* Validate the job (the objective, every --vary spec, the budget and
 * algorithm, every key at both ends): the search, or NULL with err (HS_EIO
 * when the scenario cannot be read, HS_EINVAL for bad input). The job and
 * its strings must outlive the search. Not collective. */
hs_opt_search *hs_opt_search_create(const hs_opt_job *job, hs_error *err);
void hs_opt_search_destroy(hs_opt_search *s);
/* Run the search and write its files (collective over t: see above). */
hs_status hs_opt_search_run(hs_opt_search *s, const hs_transport *t, hs_opt_report *rep,
                            hs_error *err);
void hs_opt_report_fini(hs_opt_report *rep);

#endif
