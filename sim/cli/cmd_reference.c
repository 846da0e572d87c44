/* cmd_reference.c: `hetsim reference scenario-keys|columns|metrics`.
 *
 * Prints one reference page as Markdown, from the tables the loader and the
 * writers read (hs_scenario_reference, hs_reference_columns,
 * hs_reference_metrics). The pages in sim/doc/reference/ are this output,
 * checked in; the reference-pages test regenerates them and fails on any
 * difference, so a key, column or metric added to a table without its page
 * is caught. Thin: parse, call the room, print. */
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "sim/hs_reference.h"
#include "sim/hs_scenario.h"

typedef struct page {
  const char *name;
  void (*print)(FILE *out);
} page;

static const page pages[] = {
    {"scenario-keys", hs_scenario_reference},
    {"columns", hs_reference_columns},
    {"metrics", hs_reference_metrics},
};
#define NPAGES (sizeof pages / sizeof pages[0])

static void usage(FILE *out) {
  fputs("usage: hetsim reference scenario-keys|columns|metrics\n"
        "\n"
        "Print a reference page as Markdown, from the tables hetsim itself reads:\n"
        "  scenario-keys  every top-level key (type, default, range), each block's keys,\n"
        "                 every regime's options and every policy's keys\n"
        "  columns        every CSV file a run, a sweep and optimize write, column by\n"
        "                 column with its unit\n"
        "  metrics        every metric of summary.json, sweeps and compare\n"
        "\n"
        "The pages in sim/doc/reference/ are this output. After changing a table:\n"
        "  for p in scenario-keys columns metrics; do\n"
        "    hetsim reference $p > sim/doc/reference/$p.md; done\n"
        "\n"
        "exit status: 0 printed; 1 cannot write stdout; 2 unknown page\n",
        out);
}

int hs_cmd_reference(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
    usage(stdout);
    return 0;
  }
  if (argc != 2) {
    fputs("hetsim reference: expected one page: scenario-keys, columns or metrics "
          "(see hetsim reference --help)\n",
          stderr);
    return HS_EXIT_BADINPUT;
  }
  for (size_t i = 0; i < NPAGES; i++) {
    if (strcmp(argv[1], pages[i].name)) continue;
    pages[i].print(stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fputs("hetsim reference: cannot write to stdout\n", stderr);
      return 1;
    }
    return 0;
  }
  fprintf(stderr,
          "hetsim reference: no page \"%.60s\" (expected scenario-keys, columns or metrics)\n",
          argv[1]);
  return HS_EXIT_BADINPUT;
}
