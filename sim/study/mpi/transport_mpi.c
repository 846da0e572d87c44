/* transport_mpi.c: hs_transport over MPI_COMM_WORLD (hs_transport_mpi.h).
 * The whole MPI dependency of hetsim: rank, size, a broadcast and a gather
 * of bytes. What the study sends (rows, batches of points, fixed-size result
 * blocks) is decided above, in sim/study, the same for every transport.
 *
 * Waiting: a rank waits in a non-blocking collective that it tests with
 * growing sleeps (0.05 ms up to 1 ms), not in a blocking one: OpenMPI's
 * blocking collectives spin, and a rank spinning while rank 0 simulates
 * alone (an optimiser batch of one point runs on rank 0) took as much CPU as
 * the simulation itself on a shared machine.
 * MPI counts are int: a broadcast goes in pieces of 2^24 bytes; a gather's
 * block is asserted to fit (a wave or a batch is a few hundred slots).
 * Only the thread that called hs_transport_mpi_init makes MPI calls. */
#include "sim/hs_transport_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <time.h>

#include "base/hs_assert.h"

#define CHUNK ((size_t)1 << 24)

void hs_transport_mpi_init(int *argc, char ***argv, bool threads) {
  if (!threads) {
    MPI_Init(argc, argv);
    return;
  }
  /* A library giving less than FUNNELED still works in practice (the sweep
   * runs threads that never call MPI under plain MPI_Init), so go on. */
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
}

void hs_transport_mpi_fini(void) { MPI_Finalize(); }

static int mpi_rank(void) {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static int mpi_size(void) {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/* Complete a non-blocking collective without spinning a core. */
static void wait_gently(MPI_Request *rq) {
  long ns = 50000;
  for (;;) {
    int done = 0;
    MPI_Test(rq, &done, MPI_STATUS_IGNORE);
    if (done) return;
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
    if (ns < 1000000) ns *= 2;
  }
}

static void mpi_bcast(void *buf, size_t bytes, int root) {
  for (size_t off = 0; off < bytes; off += CHUNK) {
    size_t k = bytes - off < CHUNK ? bytes - off : CHUNK;
    MPI_Request rq;
    MPI_Ibcast((char *)buf + off, (int)k, MPI_BYTE, root, MPI_COMM_WORLD, &rq);
    wait_gently(&rq);
  }
}

static void mpi_gather(const void *mine, size_t bytes, void *all, int root) {
  HS_ASSERT(bytes <= INT_MAX, "a gathered block fits an MPI count");
  MPI_Request rq;
  MPI_Igather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD, &rq);
  wait_gently(&rq);
}

static const hs_transport mpi = {.prog = "hetsim-mpi", .ranks = true, .rank = mpi_rank,
                                 .size = mpi_size, .bcast = mpi_bcast, .gather = mpi_gather};

const hs_transport *hs_transport_mpi(void) { return &mpi; }
