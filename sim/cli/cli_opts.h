/* cli_opts.h: the options `hetsim run` and `hetsim compare` share (scenario,
 * --set, --seed, --policy/--policies, --out, --trace, --measure-overhead), parsed
 * in one place so they mean the same in both. */
#ifndef HS_CLI_OPTS_H
#define HS_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/hs_scenario.h"
#include "sim/hs_transport.h"

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
  hs_override *sets;      /* the --set entries alone, in order (summary.json); owned */
  size_t nsets;
  bool force;             /* --force: replace a folder holding another run */
  const char *expect;     /* run --expect DIR: the golden run folder */
  double rtol;            /* run --rtol X (>= 0; 0: exact) */
  const char *format;     /* compare --format table|csv|json (NULL: table) */
  double progress_s;      /* run --progress SECONDS (< 0: the default; 0: off) */
  int devices;            /* run --devices full|profiles|auto (HS_DEVICES_*) */
  size_t devices_threshold; /* run --devices-threshold N (0: the default) */
  const char *trace_devices; /* run --trace-devices a,b */
} cli_opts;

/* Parse argv[1..]; `multi` (compare) allows --policies and refuses the options
 * of a single run (--trace, --measure-overhead, --quiet), which it would
 * otherwise ignore. Returns 0, or HS_EXIT_BADINPUT after printing one line on
 * stderr. */
int cli_opts_parse(cli_opts *o, const char *cmd, int argc, char **argv, bool multi);
void cli_opts_fini(cli_opts *o);
/* The tail of a command that builds its whole output in an open_memstream
 * buffer and writes it once: cli_close_buffer closes *mem (setting it to NULL
 * whatever happens), cli_write_stdout writes buf and flushes. Each returns 0,
 * or 1 after one line "hetsim CMD: ..." on stderr. */
int cli_close_buffer(const char *cmd, FILE **mem);
int cli_write_stdout(const char *cmd, const char *buf, size_t len);
/* Option scanning for every command: getopt_long (libc) one argument at a
 * time, with the rules hetsim's commands share:
 *   - options and operands mix in any order; operands come back in order as
 *     CLI_OPERAND (argv is never permuted);
 *   - "--" ends the options: every later argument is an operand;
 *   - long options are written in full, as "--name value" or "--name=value";
 *     getopt_long's unique-prefix abbreviations are refused as unknown (a
 *     prefix that means one option today would mean another tomorrow);
 *   - an option whose value is missing (last argument) comes back as that
 *     option with arg NULL, so each command words the message itself;
 *   - nothing is printed: CLI_UNKNOWN leaves the argument as written in text.
 * Rejected: one more hand-written loop per command (six of them had drifted
 * apart in what they accepted). */
struct option;
enum { CLI_END = -1, CLI_OPERAND = -2, CLI_UNKNOWN = -3 };
typedef struct cli_parser {
  int argc;
  char **argv;
  const struct option *longopts;
  char spec[48];     /* "+:" and the short options, for getopt_long */
  bool operands_only;
  const char *text;  /* the argument being looked at, as written */
  char *arg;         /* the option's value (NULL: none given), or the operand */
} cli_parser;
/* shortopts in getopt syntax ("hqj:"); longopts end with a zero entry. */
void cli_parser_init(cli_parser *p, int argc, char **argv, const char *shortopts,
                     const struct option *longopts);
/* The next option's val, CLI_OPERAND, CLI_UNKNOWN or CLI_END. */
int cli_next(cli_parser *p);
/* One line on stderr: "hetsim CMD: msg" (newlines folded). Returns 2. */
int cli_bad_input(const char *cmd, const char *msg);
/* The one rule for exit codes: 1 (HS_EXIT_CANNOT) when a file cannot be read
 * or written or memory ran out (HS_EIO, HS_EPERM, HS_ENOMEM), 2 for anything
 * else (bad input). cli_fail prints e's message as cli_bad_input does and
 * returns that code. */
int cli_exit_code(hs_status st);
int cli_fail(const char *cmd, const hs_error *e);
/* fflush + ferror on stdout: 0, or 1 after "hetsim CMD: stdout: write failed". */
int cli_flush_stdout(const char *cmd);
/* The registered policies' names "a | b | ...", wrapped before column 79 with
 * continuation lines indented by indent spaces (for a --help). */
void cli_policy_names(char *buf, size_t cap, int indent);
/* --seed's value v (NULL: missing) as plain decimal into out: 0, or
 * HS_EXIT_BADINPUT after one line (a whole number in 0..2^53). */
int cli_seed_arg(const char *cmd, const char *v, char out[24]);
/* Load the scenario with the options' overrides, plus policy.kind=policy when
 * policy is not NULL. NULL (message printed, *rc = cli_fail's code) on error. */
hs_scenario *cli_load(const cli_opts *o, const char *policy, int *rc);

/* The options `sweep` and `optimize` share, parsed by one function so that
 * -j, --set, --out, --resume, --quiet, the scenario operand and unknown
 * options read and are worded the same in both (and in hetsim-mpi). A
 * command puts CLI_STUDY_LONGOPTS in its getopt_long table and "hqj:" in its
 * short options, and hands every cli_next result to cli_study_opt first. */
enum { CLI_OPT_SET = 512, CLI_OPT_OUT, CLI_OPT_RESUME };
#define CLI_STUDY_LONGOPTS                                                                  \
  {"help", no_argument, NULL, 'h'}, {"set", required_argument, NULL, CLI_OPT_SET},          \
      {"out", required_argument, NULL, CLI_OPT_OUT}, {"jobs", required_argument, NULL, 'j'}, \
      {"resume", no_argument, NULL, CLI_OPT_RESUME}, {"quiet", no_argument, NULL, 'q'}
typedef struct cli_study_opts {
  const char *prog;        /* "hetsim sweep", "hetsim-mpi optimize": the --help pointer */
  const char *out_what;    /* "the results file": --out's required message */
  const char *out_example; /* "results.csv" */
  const char *scenario, *out;
  hs_override *set; /* --set, in order; owned */
  size_t nset;
  unsigned jobs; /* -j N, --jobs N: 1..1024 (default 1) */
  bool resume, quiet, help;
} cli_study_opts;
/* argc bounds the --set entries. */
void cli_study_init(cli_study_opts *s, const char *prog, const char *out_what,
                    const char *out_example, int argc);
void cli_study_fini(cli_study_opts *s);
/* c is cli_next's result on p: 1 when it was a shared option (or the
 * scenario operand) and is taken, 0 when it is the command's own, or
 * HS_EXIT_BADINPUT with the one-line reason in why (unknown options get the
 * nearest option of longopts as a hint). */
int cli_study_opt(cli_study_opts *s, const cli_parser *p, int c, char *why, size_t cap);
/* After the scan: 0, or HS_EXIT_BADINPUT with why, when there is no
 * scenario / no --out. */
int cli_study_need_scenario(const cli_study_opts *s, char *why, size_t cap);
int cli_study_need_out(const cli_study_opts *s, char *why, size_t cap);
/* Every rank validated; rc is this rank's outcome (0 or an exit code), why
 * its reason. Collective over t: returns the lowest failing rank's code on
 * every rank (0 when none failed); that rank alone keeps why (prefixed
 * "rank N: " when N > 0), every other rank's why becomes "". Each rank reads
 * the scenario and profiles from its own node, so a rank may fail alone; it
 * must not leave the others waiting in the next collective. */
int cli_ranks_agree(const hs_transport *t, int rc, char *why, size_t cap);

#endif
