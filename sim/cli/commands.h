/* commands.h: the subcommands of `hetsim`, one file each (cli/cmd_<name>.c),
 * listed in one table in commands.c. Adding a command is a file and a line.
 *
 * Every command: returns the process exit status (0 ok, 1 runtime failure,
 * HS_EXIT_BADINPUT = 2 for bad input or usage, with one line on stderr). */
#ifndef HS_CLI_COMMANDS_H
#define HS_CLI_COMMANDS_H

#include <stddef.h>

typedef struct hs_command {
  const char *name;
  const char *summary; /* one line for `hetsim --help` */
  int (*main)(int argc, char **argv); /* argv[0] is the command name */
} hs_command;

extern const hs_command hs_commands[];
extern const size_t hs_ncommands;

int hs_cmd_version(int argc, char **argv);
int hs_cmd_run(int argc, char **argv);
int hs_cmd_compare(int argc, char **argv);
int hs_cmd_replay(int argc, char **argv);
int hs_cmd_check(int argc, char **argv);
int hs_cmd_validate(int argc, char **argv);
int hs_cmd_sweep(int argc, char **argv);
int hs_cmd_plot(int argc, char **argv);
int hs_cmd_optimize(int argc, char **argv);
int hs_cmd_agc_plan(int argc, char **argv);
int hs_cmd_reference(int argc, char **argv);

/* sweep and optimize on a transport (hs_transport.h): hs_cmd_sweep and
 * hs_cmd_optimize pass the in-process one; hetsim-mpi (mpi_main.c) passes
 * the MPI one. The same code for both programs. */
struct hs_transport;
int hs_cmd_sweep_on(const struct hs_transport *t, int argc, char **argv);
int hs_cmd_optimize_on(const struct hs_transport *t, int argc, char **argv);

#endif
