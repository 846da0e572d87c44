/* [sim/study/mpi/include/sim -> hetsim::sweep_mpi; not installed]
 * hs_sweep_mpi.h: a sweep spread across MPI ranks (target hetsim::sweep_mpi,
 * built only when CMake finds MPI; used by the `hetsim-mpi` binary).
 *
 * Every rank builds the same hs_sweep from the same arguments; rank 0 alone
 * owns the results file. Rows go to ranks round-robin in waves; each wave's
 * results are gathered to rank 0 (MPI_Gather), which hands them to its
 * callback in row order and so appends them as waves finish. The files are
 * therefore the same bytes as a single-machine run (same binary and libm on
 * every node: results are computed, not just copied, on each rank). */
#ifndef HS_SWEEP_MPI_H
#define HS_SWEEP_MPI_H

#include "sim/hs_sweep.h"

/* MPI_Init / MPI_Finalize (call once each, from main). */
void hs_sweep_mpi_init(int *argc, char ***argv);
void hs_sweep_mpi_fini(void);
int hs_sweep_mpi_rank(void);
int hs_sweep_mpi_size(void);
/* Rank 0's v, on every rank (collective). */
int hs_sweep_mpi_bcast_int(int v);
/* The lowest rank that passes failed = true, or -1 when none does, on every
 * rank (collective): lets every rank stop when any one of them cannot go on. */
int hs_sweep_mpi_first_failure(bool failed);

/* Collective. rows[0..n) (significant on rank 0 only: the rows to run, in
 * ascending order) are broadcast, run on every rank with `jobs` threads each,
 * and fn (rank 0 only) sees each result in rows[] order. On a failure every
 * rank stops after the current wave; the rank whose row failed returns its
 * error in *err, the others return HS_ESTATE with an empty message. When fn
 * returns false, every rank stops after the current wave and returns HS_OK
 * (unless a row failed too). */
hs_status hs_sweep_mpi_run(const hs_sweep *sw, const size_t *rows, size_t n, unsigned jobs,
                           hs_sweep_done_fn fn, void *userdata, hs_error *err);

#endif
