/* [sim/study/include/sim -> hetsim::sim; not installed]
 * hs_transport.h: how the processes of one study talk: the few collectives
 * a sweep or a search spread over ranks needs, as a descriptor of function
 * pointers. `hetsim` runs with the in-process transport (one rank: every
 * collective is a copy or nothing); `hetsim-mpi` with the MPI one
 * (sim/study/mpi, hs_transport_mpi.h). The study code above it (the sweep's
 * waves, the optimiser's batches, who validates and who writes) is the same
 * code for both, so both write the same bytes.
 *
 * Every collective is called by every rank in the same order (as MPI's).
 * Ranks are 0..size-1; rank 0 owns the files. Only the thread that set the
 * transport up calls it (MPI_THREAD_FUNNELED); worker threads never do.
 * Rejected: a build-time switch (HS_SWEEP_MPI) compiling the commands twice
 * with their MPI paths inline (21 conditionals, two binaries that could
 * drift); a transport that hands out work (a scheduler per transport). */
#ifndef HS_TRANSPORT_H
#define HS_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct hs_transport {
  const char *prog; /* "hetsim" | "hetsim-mpi": the program, in usage lines */
  bool ranks;       /* processes under a launcher (mpirun), even with one rank */
  int (*rank)(void);
  int (*size)(void);
  /* root's buf[0..bytes) on every rank. */
  void (*bcast)(void *buf, size_t bytes, int root);
  /* Each rank's mine[0..bytes) into root's all[rank * bytes ..] (all: size *
   * bytes, significant on root only); bytes the same on every rank. */
  void (*gather)(const void *mine, size_t bytes, void *all, int root);
} hs_transport;

/* One process, one rank: bcast does nothing, gather copies. */
const hs_transport *hs_transport_local(void);

/* Root's v on every rank. */
int hs_transport_bcast_int(const hs_transport *t, int v, int root);
/* The lowest rank that passes failed = true, or -1 when none does, on every
 * rank: lets every rank stop when any one of them cannot go on (a node that
 * cannot read a profile must not leave the others waiting). */
int hs_transport_first_failure(const hs_transport *t, bool failed);

#endif
