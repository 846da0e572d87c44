/* main.c: `hetsim COMMAND [ARGS]`: dispatch to the command registry.
 * Only main decides process-wide things: GSL's aborting error handler is turned
 * off here, once, and every GSL return code is checked where it is called.
 * `hetsim --version` prints hs_version() (hs_run.h), the one version string
 * summary.json's hetsim_version carries too: project(VERSION) plus `git
 * describe` at configure time, set in sim/CMakeLists.txt on run_describe.c.
 * Rejected: a second definition for this file (two strings drifted: --version
 * said 0.1.0 while summary.json said 0.1.0 (049196b)). */
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "commands.h"
#include "base/hs_status.h"
#include "base/hs_util.h"
#include "sim/hs_run.h"

int hs_cmd_version(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("hetsim %s\n", hs_version());
  return 0;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: hetsim COMMAND [ARGS]\n"
          "\n"
          "A discrete-event simulator of heterogeneous training clusters.\n"
          "\n"
          "commands:\n");
  for (size_t i = 0; i < hs_ncommands; i++)
    fprintf(out, "  %-10s %s\n", hs_commands[i].name, hs_commands[i].summary);
  fprintf(out, "\n`hetsim COMMAND --help` explains one command, with an example.\n");
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  if (argc < 2) {
    usage(stderr);
    return HS_EXIT_BADINPUT;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) return hs_cmd_version(argc - 1, argv + 1);
  for (size_t i = 0; i < hs_ncommands; i++)
    if (!strcmp(argv[1], hs_commands[i].name)) return hs_commands[i].main(argc - 1, argv + 1);
  const char *names[32], *near;
  size_t n = 0;
  for (size_t i = 0; i < hs_ncommands && n < sizeof names / sizeof names[0]; i++)
    names[n++] = hs_commands[i].name;
  if ((near = hs_nearest(argv[1], names, n)) != NULL)
    fprintf(stderr, "hetsim: unknown command \"%s\" (did you mean %s? see hetsim --help)\n", argv[1],
            near);
  else
    fprintf(stderr, "hetsim: unknown command \"%s\" (see hetsim --help)\n", argv[1]);
  return HS_EXIT_BADINPUT;
}
