/* cli_opts.h: the options `hetsim run` and `hetsim compare` share (scenario,
 * --set, --seed, --policy/--policies, --out, --trace, --measure-overhead), parsed
 * in one place so they mean the same in both. */
#ifndef HS_CLI_OPTS_H
#define HS_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "hs_scenario.h"

typedef struct cli_opts {
  const char *cmd;        /* "run" or "compare", for messages */
  const char *scenario;   /* NULL: the built-in default */
  hs_override *ovr;       /* --set and --seed, in order; owned */
  size_t novr;
  const char *policies;   /* --policy NAME or --policies a,b,c; NULL when absent */
  const char *scenarios;  /* compare --scenarios a.json,b.json: rows are scenarios */
  const char *out_dir;
  bool trace;
  bool measure_overhead;
  bool quiet;
  bool help;
  char seed[24];          /* --seed as a plain decimal (what the overrides point to) */
} cli_opts;

/* Parse argv[1..]; `multi` (compare) allows --policies and refuses the options
 * of a single run (--trace, --measure-overhead, --quiet), which it would
 * otherwise ignore. Returns 0, or HS_EXIT_BADINPUT after printing one line on
 * stderr. */
int cli_opts_parse(cli_opts *o, const char *cmd, int argc, char **argv, bool multi);
void cli_opts_fini(cli_opts *o);
/* Option helpers every command uses: is `a` the option `opt` (alone or as
 * opt=value)? Its value: the text after '=' or the next argument (advancing
 * *i), NULL when there is none. */
bool cli_is_opt(const char *a, const char *opt);
char *cli_opt_value(int argc, char **argv, int *i, const char *opt);
/* One line on stderr: "hetsim CMD: msg" (newlines folded). Returns 2. */
int cli_bad_input(const char *cmd, const char *msg);
/* Load the scenario with the options' overrides, plus policy.kind=policy when
 * policy is not NULL. NULL (message printed, *rc = 2) on error. */
hs_scenario *cli_load(const cli_opts *o, const char *policy, int *rc);

#endif
