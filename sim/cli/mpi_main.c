/* mpi_main.c: `hetsim-mpi [sweep] ARGS` and `hetsim-mpi optimize ARGS`: the
 * two commands that spread their runs over MPI ranks. A separate binary so
 * that `hetsim` never loads an MPI library (and runs where none is
 * installed); under mpirun/srun every rank runs this main. The word `sweep`
 * is optional (older job scripts omit it); `optimize` asks MPI for
 * MPI_THREAD_FUNNELED (its rank 0 runs NLopt on threads that never call MPI),
 * the sweep keeps its plain MPI_Init. The commands are hetsim's own
 * (cmd_sweep.c, cmd_optimize.c), run on the MPI transport. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "commands.h"
#include "sim/hs_transport_mpi.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: mpirun -np N hetsim-mpi sweep SCENARIO --grid KEY=VALUES ... --out RESULTS.csv\n"
          "       mpirun -np N hetsim-mpi optimize SCENARIO --vary KEY=RANGE|SET ...\n"
          "                    --objective OBJ [--budget N] --out FILE.csv\n"
          "\n"
          "The same arguments and the same output files (byte for byte) as `hetsim sweep`\n"
          "and `hetsim optimize`, with the runs spread over the MPI ranks (mpirun, or srun\n"
          "--mpi=pmix under Slurm); -j N is threads per rank. Rank 0 alone writes the\n"
          "files; --resume continues a killed job. `hetsim-mpi ARGS` without a command\n"
          "is the sweep.\n"
          "  sweep     rows of the grid go to the ranks round-robin, in waves\n"
          "  optimize  rank 0 runs NLopt; each batch of proposed points (one per\n"
          "            pareto weighted sum) is spread over the ranks\n"
          "\n"
          "hetsim-mpi sweep --help, hetsim-mpi optimize --help: the options.\n");
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  const char *cmd = argc > 1 ? argv[1] : "";
  bool optimize = !strcmp(cmd, "optimize");
  bool help = argc < 2 || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help");
  hs_transport_mpi_init(&argc, &argv, optimize);
  const hs_transport *t = hs_transport_mpi();
  int rc;
  if (help) {
    if (t->rank() == 0) usage(argc < 2 ? stderr : stdout);
    rc = argc < 2 ? 2 : 0;
  } else {
    int shift = optimize || !strcmp(cmd, "sweep") ? 1 : 0;
    rc = optimize ? hs_cmd_optimize_on(t, argc - shift, argv + shift)
                  : hs_cmd_sweep_on(t, argc - shift, argv + shift);
  }
  hs_transport_mpi_fini();
  return rc;
}
