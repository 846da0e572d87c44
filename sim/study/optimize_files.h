/* optimize_files.h (private to sim/study): the search's state, shared by
 * optimize_search.c (validation, evaluation, the run across ranks) and
 * optimize_files.c (FILE's header and rows, resume, the front and history
 * writers). See hs_opt_search.h for the files' contract. */
#ifndef HS_OPTIMIZE_FILES_H
#define HS_OPTIMIZE_FILES_H

#include <stddef.h>

#include "optimize_ranks.h"
#include "sim/hs_opt_search.h"
#include "sim/hs_optimize.h"

struct hs_opt_search {
  const hs_opt_job *a;
  hs_opt_var *vars;
  size_t nvars;
  bool pareto;
  size_t obj[2];   /* sweep metric indexes of f[0], f[1] */
  double sign[2];  /* f[k] = sign[k] * metric: +1 minimised, -1 maximised */
  size_t hist[2];  /* sweep metric indexes of the history's two columns */
  int fd;          /* FILE, open for appending (rank 0, while running) */
  size_t appended;
  opt_ranks ranks;
  size_t *per_rank; /* rank 0 with ranks: points each rank simulated */
};

/* FILE's first two lines (the search; the columns). Owned by the caller. */
char *opt_header(const hs_opt_search *s);
/* One evaluation row with its '\n' into buf: its length, or cap when it did
 * not fit (callers refuse it). */
size_t opt_format_eval(const hs_opt_search *s, const hs_opt_eval *e, char *buf, size_t cap);
/* Rank 0: FILE checked (resume: its rows read into *prior, a torn last line
 * cut) and opened for appending into s->fd, the header written when new. */
hs_status opt_open_file(hs_opt_search *s, const char *hdr, hs_opt_eval **prior, size_t *nprior,
                        hs_error *err);
/* Rank 0: FILE sorted, FILE.front.csv and FILE.history.csv, each written to
 * a temporary name and renamed; rep filled. */
hs_status opt_write_outputs(const hs_opt_search *s, const hs_opt_spec *sp, const char *hdr,
                            const hs_opt_eval *ev, size_t n, hs_opt_report *rep, hs_error *err);

#endif
