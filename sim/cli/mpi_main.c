/* mpi_main.c: `hetsim-mpi [sweep] ARGS`: the sweep command alone, with MPI.
 * A separate binary so that `hetsim` never loads an MPI library (and runs
 * where none is installed); under mpirun/srun every rank runs this main. */
#include <string.h>

#include <gsl/gsl_errno.h>

#include "sim/hs_sweep_mpi.h"

int hs_cmd_sweep_mpi(int argc, char **argv);

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  hs_sweep_mpi_init(&argc, &argv);
  /* "hetsim-mpi sweep ..." reads like "hetsim sweep ..."; the word is optional. */
  int shift = argc > 1 && !strcmp(argv[1], "sweep") ? 1 : 0;
  int rc = hs_cmd_sweep_mpi(argc - shift, argv + shift);
  hs_sweep_mpi_fini();
  return rc;
}
