/* [sim/study/mpi/include/sim -> hetsim::transport_mpi; not installed]
 * hs_transport_mpi.h: the study transport (hs_transport.h) over MPI, for the
 * `hetsim-mpi` binary. Built only when CMake finds MPI, so that `hetsim`
 * never loads an MPI library. Results are the same bytes as in one process
 * as long as every node runs the same binary and libm (every rank computes
 * its results; only the bits travel). */
#ifndef HS_TRANSPORT_MPI_H
#define HS_TRANSPORT_MPI_H

#include <stdbool.h>

#include "sim/hs_transport.h"

/* MPI_Init, or MPI_Init_thread asking for MPI_THREAD_FUNNELED when threads
 * (worker threads that never call MPI run beside the caller); once, from
 * main. hs_transport_mpi_fini: MPI_Finalize. */
void hs_transport_mpi_init(int *argc, char ***argv, bool threads);
void hs_transport_mpi_fini(void);
/* The transport over MPI_COMM_WORLD (after hs_transport_mpi_init). */
const hs_transport *hs_transport_mpi(void);

#endif
