/* bridge.c: hs-policy-bridge, the controller behind a pipe, for a training loop
 * written in Python or shell on a real board.
 *
 * Protocol (text, one line per round): the bridge first prints the initial
 * allocation (N integers), then reads one telemetry line per round,
 * "t_0 e_0 n_0 t_1 e_1 n_1 ..." (time_s, energy_j, samples per participant;
 * blanks or commas between numbers), and answers with the next allocation.
 * With --comm each participant gives a fourth number, comm_s (its download
 * plus upload of the round, seconds: hs_controller_set_comm before the
 * update).
 * A line it cannot use is answered with ONE line "error: stdin: line L: ..."
 * (also on stderr) and changes nothing: the controller keeps its state and the
 * next good line is answered as if the bad one had not been sent; the exit
 * status is then 2 at the end of input. Lines that are empty or start with '#'
 * are skipped. stdout is flushed after every line so the trainer can read the
 * answer at once.
 *
 * --state FILE: the controller's state (hs_controller_save, JSON documented in
 * hs_policy.h) is restored from FILE when it exists, and written to FILE after
 * the start and after every answered round (FILE.tmp, then rename: a crash
 * never leaves half a file), so a trainer that restarts keeps its estimates.
 *
 * It links hetsim::policies and nothing else of hetsim: this file is the proof
 * that the controller runs outside the simulator unchanged (libc + libm; it
 * builds against an installed prefix with pkg-config hetsim-policies). Options
 * are read with getopt_long (so --policy=NAME works too); getopt's own
 * messages are off (opterr = 0) because bad input is one line in this
 * program's voice. The line buffer grows with the input (getline); numbers are
 * parsed with strtod/strtoll and rejected unless the whole token is consumed.
 * Rejected: exiting on the first bad line (a trainer would lose its
 * estimates to one garbled write). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "policies/hs_policy.h"
#include "base/hs_status.h"
#include "base/hs_util.h"

/* What cannot be read or written (COMMON rule: exit 1). */
#define BRIDGE_EXIT_IO 1

static void usage(FILE *out) {
  fputs("usage: hs-policy-bridge --policy NAME --participants N --budget SAMPLES\n"
        "                        [--set KEY=VALUE ...] [--state FILE] [--comm]\n"
        "\n"
        "Runs the hetsim controller behind a pipe. Prints the initial allocation\n"
        "(N sample counts), then for every telemetry line read on stdin,\n"
        "  time_s energy_j samples   (repeated for each of the N participants)\n"
        "prints the allocation for the next round. With --comm each participant\n"
        "adds comm_s, its download plus upload time of the round in seconds\n"
        "(round-time balances whole rounds with it; other policies ignore it).\n"
        "A bad line is answered with one line \"error: ...\" (also on stderr) and\n"
        "changes nothing; the exit status is then 2 at the end of input. Bad\n"
        "options: one line on stderr, exit 2.\n"
        "\n"
        "--state FILE  restore the controller from FILE when it exists, and save it\n"
        "              there after every round (JSON, see hs_policy.h), so a\n"
        "              restarted trainer keeps its estimates. A state saved with\n"
        "              another policy, configuration, N or budget is refused\n"
        "              (exit 2); a FILE that cannot be written: exit 1.\n"
        "\n"
        "example (3 boards, 300 samples per round, time-only):\n"
        "  printf '1.0 5 100 2.0 6 100 4.0 9 100\\n' |\n"
        "    hs-policy-bridge --policy time-only --participants 3 --budget 300\n"
        "  100 100 100\n"
        "  171 86 43\n"
        "\n"
        "policies:",
        out);
  for (size_t i = 0; i < hs_policy_count(); i++) fprintf(out, " %s", hs_policy_name(i));
  fputs("\n", out);
}

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* one line, whatever an option value holds */
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  fprintf(stderr, "hs-policy-bridge: %s\n", msg);
  return HS_EXIT_BADINPUT;
}

static int parse_u64(const char *s, unsigned long long *out) {
  char *end;
  errno = 0;
  if (!s || *s < '0' || *s > '9') return -1; /* strtoull would take " -5" as 2^64-5 */
  *out = strtoull(s, &end, 10);
  return (*end || errno) ? -1 : 0;
}

/* An answer reached the trainer, or it did not (a closed pipe, a full disk):
 * 0, or BRIDGE_EXIT_IO with one line on stderr. */
static int flushed(void) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  fprintf(stderr, "hs-policy-bridge: stdout: cannot write: %s\n", strerror(errno));
  return BRIDGE_EXIT_IO;
}

static int print_alloc(const hs_controller *c) {
  const uint64_t *a = hs_controller_allocation(c);
  size_t n = hs_controller_size(c);
  for (size_t i = 0; i < n; i++) printf("%s%llu", i ? " " : "", (unsigned long long)a[i]);
  putchar('\n');
  return flushed();
}

/* The options, read into *o; 0 to go on, else the exit status (help: 0). */
typedef struct opts {
  const char *policy;
  unsigned long long n, budget;
  bool have_budget;
  const char *state; /* --state FILE, or NULL */
  bool comm;         /* --comm: a fourth number per participant, comm_s */
  int nset;
  char **sets; /* argv entries of --set, argc slots */
} opts;

static int parse_opts(int argc, char **argv, opts *o, bool *help) {
  static const struct option longs[] = {
      {"help", no_argument, NULL, 'h'},
      {"policy", required_argument, NULL, 'p'},
      {"participants", required_argument, NULL, 'n'},
      {"budget", required_argument, NULL, 'b'},
      {"set", required_argument, NULL, 's'},
      {"state", required_argument, NULL, 'S'},
      {"comm", no_argument, NULL, 'c'},
      {NULL, 0, NULL, 0},
  };
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
    switch (ch) {
    case 'h':
      *help = true;
      return 0;
    case 'p':
      o->policy = optarg;
      break;
    case 'n':
      if (parse_u64(optarg, &o->n) || o->n == 0)
        return bad("--participants: \"%s\" is not a positive integer", optarg);
      break;
    case 'b':
      if (parse_u64(optarg, &o->budget))
        return bad("--budget: \"%s\" is not a non-negative integer", optarg);
      o->have_budget = true;
      break;
    case 's':
      o->sets[o->nset++] = optarg;
      break;
    case 'S':
      if (!*optarg) return bad("--state: empty file name");
      o->state = optarg;
      break;
    case 'c':
      o->comm = true;
      break;
    case ':':
      return bad("%s: missing value (see --help)", argv[optind - 1]);
    default: /* optopt: the unknown short option; 0 for a long one */
      if (optopt) return bad("-%c: unknown option (see --help)", optopt);
      return bad("%s: unknown option (see --help)", argv[optind - 1]);
    }
  }
  if (optind < argc) return bad("%s: unexpected argument (see --help)", argv[optind]);
  if (!o->policy || !o->n || !o->have_budget)
    return bad("--policy, --participants and --budget are required (see --help)");
  return 0;
}

/* --state: writes c's state to path through path.tmp and a rename. 0, or
 * BRIDGE_EXIT_IO with one line on stderr. */
static int save_state(const hs_controller *c, const char *path) {
  hs_error err = {0};
  char *text = hs_controller_save(c, &err);
  if (!text) {
    fprintf(stderr, "hs-policy-bridge: --state %s: %s\n", path, err.msg);
    return HS_EXIT_BADINPUT;
  }
  size_t pl = strlen(path);
  char *tmp = hs_malloc(pl + 5);
  memcpy(tmp, path, pl);
  memcpy(tmp + pl, ".tmp", 5);
  FILE *f = fopen(tmp, "w");
  int rc = 0;
  if (!f) {
    fprintf(stderr, "hs-policy-bridge: %s: cannot write: %s\n", tmp, strerror(errno));
    rc = BRIDGE_EXIT_IO;
  } else {
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
      fprintf(stderr, "hs-policy-bridge: %s: cannot write: %s\n", path, strerror(errno));
      remove(tmp);
      rc = BRIDGE_EXIT_IO;
    }
  }
  hs_free(tmp);
  hs_free(text);
  return rc;
}

/* --state: restores c from path when the file exists. 0, HS_EXIT_BADINPUT (a
 * state that does not fit c) or BRIDGE_EXIT_IO, with one line on stderr. */
static int load_state(hs_controller *c, const char *path) {
  hs_error err = {0};
  FILE *probe = fopen(path, "r");
  if (!probe) {
    if (errno == ENOENT) return 0; /* first start: nothing to restore */
    fprintf(stderr, "hs-policy-bridge: %s: cannot open: %s\n", path, strerror(errno));
    return BRIDGE_EXIT_IO;
  }
  fclose(probe);
  size_t len;
  char *text = hs_read_file(path, &len, &err);
  if (!text) {
    fprintf(stderr, "hs-policy-bridge: %s\n", err.msg);
    return BRIDGE_EXIT_IO;
  }
  int rc = 0;
  if (hs_text_check_nul(text, len, path, &err) != HS_OK) { /* zero-filled by a crash */
    fprintf(stderr, "hs-policy-bridge: %s\n", err.msg);
    rc = HS_EXIT_BADINPUT;
  } else if (hs_controller_restore(c, text, &err) != HS_OK) {
    fprintf(stderr, "hs-policy-bridge: %s: %s\n", path, err.msg);
    rc = HS_EXIT_BADINPUT;
  }
  hs_free(text);
  return rc;
}

/* One telemetry line into t (n records) and, with comm (non-NULL), the comm_s
 * of each participant: per = 3 or 4 numbers each. HS_OK or a status with the
 * reason in why (without the "stdin: line L: " prefix). strtok: p is this
 * line's copy. */
static hs_status parse_line(char *p, size_t n, hs_telemetry *t, double *comm, char *why,
                            size_t cap) {
  size_t field = 0, per = comm ? 4 : 3;
  const char *delim = " \t,\r\n";
  for (char *tok = strtok(p, delim); tok; tok = strtok(NULL, delim), field++) {
    if (field >= per * n) {
      snprintf(why, cap, "more than %zu numbers per participant", per);
      return HS_EINVAL;
    }
    size_t i = field / per;
    char *end;
    errno = 0;
    if (field % per == 3) { /* comm_s: its range is the controller's to check */
      double v = strtod(tok, &end);
      if (*end) {
        snprintf(why, cap, "participant %zu: comm_s: \"%.64s\" is not a number", i, tok);
        return HS_EPARSE;
      }
      comm[i] = v;
    } else if (field % per == 2) {
      long long v = strtoll(tok, &end, 10);
      if (*end || errno) {
        snprintf(why, cap, "participant %zu: samples: \"%.64s\" is not an integer", i, tok);
        return HS_EPARSE;
      }
      t[i].samples = v;
    } else {
      /* errno is not consulted: strtod sets ERANGE for subnormal results
       * (finite numbers), and an overflow (inf) is the controller's to name */
      double v = strtod(tok, &end);
      if (*end) {
        snprintf(why, cap, "participant %zu: %s: \"%.64s\" is not a number", i,
                 field % per ? "energy_j" : "time_s", tok);
        return HS_EPARSE;
      }
      if (field % per)
        t[i].energy_j = v;
      else
        t[i].time_s = v;
    }
  }
  if (field != per * n) {
    snprintf(why, cap, "%zu numbers, expected %zu (time_s energy_j samples%s per participant)",
             field, per * n, comm ? " comm_s" : "");
    return HS_EINVAL;
  }
  return HS_OK;
}

int main(int argc, char **argv) {
  opts o = {.sets = hs_calloc((size_t)argc, sizeof *o.sets)};
  bool help = false;
  int rc = parse_opts(argc, argv, &o, &help);
  if (rc || help) {
    if (help) usage(stdout);
    hs_free(o.sets);
    return rc;
  }
  unsigned long long n = o.n, budget = o.budget;
  hs_error err = {0};
  hs_policy_config cfg;
  if (hs_policy_config_init(&cfg, o.policy, &err) != HS_OK) {
    hs_free(o.sets);
    return bad("--policy: %s", err.msg);
  }
  for (int k = 0; k < o.nset; k++) {
    char *eq = strchr(o.sets[k], '=');
    if (!eq) {
      rc = bad("--set %s: expected KEY=VALUE", o.sets[k]);
      hs_free(o.sets);
      return rc;
    }
    *eq = '\0';
    if (hs_policy_config_set(&cfg, o.sets[k], eq + 1, &err) != HS_OK) {
      hs_free(o.sets);
      return bad("--set: %s", err.msg);
    }
  }
  hs_free(o.sets);
  hs_controller *c = hs_controller_create(&cfg, (size_t)n, NULL, budget, &err);
  if (!c) return bad("%s", err.msg);
  if (o.state && ((rc = load_state(c, o.state)) || (rc = save_state(c, o.state)))) {
    hs_controller_destroy(c);
    return rc;
  }
  if ((rc = print_alloc(c))) {
    hs_controller_destroy(c);
    return rc;
  }

  hs_telemetry *t = hs_calloc((size_t)n, sizeof *t);
  double *comm = o.comm ? hs_calloc((size_t)n, sizeof *comm) : NULL;
  char *line = NULL;
  size_t cap = 0;
  unsigned long lineno = 0;
  bool refused = false;
  ssize_t len;
  while ((len = getline(&line, &cap, stdin)) >= 0) {
    lineno++;
    char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    char why[sizeof err.msg];
    hs_status st = HS_OK;
    if (strlen(line) != (size_t)len) { /* a NUL byte: text a crash left zero-filled */
      snprintf(why, sizeof why, "contains a NUL byte");
      st = HS_EPARSE;
    } else if (*p == '\n' || *p == '\r' || *p == '\0' || *p == '#') {
      continue;
    }
    if (st == HS_OK) st = parse_line(p, (size_t)n, t, comm, why, sizeof why);
    if (st == HS_OK && comm && (st = hs_controller_set_comm(c, comm, (size_t)n, &err)) != HS_OK)
      snprintf(why, sizeof why, "%s", err.msg);
    if (st == HS_OK && (st = hs_controller_update(c, t, (size_t)n, &err)) != HS_OK)
      snprintf(why, sizeof why, "%s", err.msg);
    if (st != HS_OK) {
      /* one line back in the protocol, one in the log; the state is kept */
      printf("error: stdin: line %lu: %s\n", lineno, why);
      if ((rc = flushed())) break;
      fprintf(stderr, "hs-policy-bridge: stdin: line %lu: %s\n", lineno, why);
      refused = true;
      continue;
    }
    if (o.state && (rc = save_state(c, o.state))) break;
    if ((rc = print_alloc(c))) break;
  }
  free(line);
  hs_free(t);
  hs_free(comm);
  hs_controller_destroy(c);
  if (rc) return rc;
  return refused ? HS_EXIT_BADINPUT : 0;
}
