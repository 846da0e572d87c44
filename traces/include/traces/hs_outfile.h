/* [traces/include/traces -> hetsim::traces; not installed]
 * hs_outfile.h: output files that are never seen half-written.
 *
 * hs_outfile_open writes to a temporary name in the destination's folder
 * ("<path>.tmp.XXXXXX"); hs_outfile_commit flushes, closes and renames it over
 * the destination (atomic on POSIX); hs_outfile_abort removes it. Either call
 * frees the handle. */
#ifndef HS_OUTFILE_H
#define HS_OUTFILE_H

#include <stdio.h>

#include "base/hs_status.h"
#include "base/hs_util.h" /* hs_read_file, for the readers that include this header */

typedef struct hs_outfile hs_outfile;

hs_outfile *hs_outfile_open(const char *path, hs_error *err);
FILE *hs_outfile_stream(hs_outfile *f);
const char *hs_outfile_path(const hs_outfile *f); /* the final destination */
hs_status hs_outfile_commit(hs_outfile *f, hs_error *err);
void hs_outfile_abort(hs_outfile *f);

/* Whole buffer to path through a temporary file. */
hs_status hs_write_file_atomic(const char *path, const char *data, size_t len, hs_error *err);

/* mkdir -p; an existing directory is fine. */
hs_status hs_mkdir_p(const char *dir, hs_error *err);


#endif
