/* bridge.c: hs-policy-bridge, the controller behind a pipe, for a training loop
 * written in Python or shell on a real board.
 *
 * Protocol (text, one line per round): the bridge first prints the initial
 * allocation (N integers), then reads one telemetry line per round,
 * "t_0 e_0 n_0 t_1 e_1 n_1 ..." (time_s, energy_j, samples per participant;
 * blanks or commas between numbers), and answers with the next allocation.
 * Lines that are empty or start with '#' are skipped. stdout is flushed after
 * every line so the trainer can read the answer at once.
 *
 * It links hetsim::policies and nothing else of hetsim: this file is the proof
 * that the controller runs outside the simulator unchanged. Options are read
 * with getopt_long (so --policy=NAME works too); getopt's own messages are off
 * (opterr = 0) because bad input is one line in this program's voice. The line
 * buffer grows with the input (getline); numbers are parsed with
 * strtod/strtoll and rejected unless the whole token is consumed. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "hs_alloc.h"
#include "hs_policy.h"
#include "hs_status.h"

static void usage(FILE *out) {
  fputs("usage: hs-policy-bridge --policy NAME --participants N --budget SAMPLES\n"
        "                        [--set KEY=VALUE ...]\n"
        "\n"
        "Runs the hetsim controller behind a pipe. Prints the initial allocation\n"
        "(N sample counts), then for every telemetry line read on stdin,\n"
        "  time_s energy_j samples   (repeated for each of the N participants)\n"
        "prints the allocation for the next round. Bad input: one line on stderr,\n"
        "exit status 2.\n"
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

static void print_alloc(const hs_controller *c) {
  const uint64_t *a = hs_controller_allocation(c);
  size_t n = hs_controller_size(c);
  for (size_t i = 0; i < n; i++) printf("%s%llu", i ? " " : "", (unsigned long long)a[i]);
  putchar('\n');
  fflush(stdout);
}

/* The options, read into *o; 0 to go on, else the exit status (help: 0). */
typedef struct opts {
  const char *policy;
  unsigned long long n, budget;
  bool have_budget;
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

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
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
  print_alloc(c);

  hs_telemetry *t = hs_calloc((size_t)n, sizeof *t);
  char *line = NULL;
  size_t cap = 0;
  unsigned long lineno = 0;
  for (ssize_t got; (got = getline(&line, &cap, stdin)) >= 0;) {
    lineno++;
    if (memchr(line, '\0', (size_t)got)) { /* strtok would stop there unseen */
      rc = bad("stdin: line %lu: contains a NUL byte", lineno);
      goto done;
    }
    char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\n' || *p == '\r' || *p == '\0' || *p == '#') continue;
    char where[64];
    snprintf(where, sizeof where, "stdin: line %lu", lineno);
    size_t field = 0;
    const char *delim = " \t,\r\n";
    for (char *tok = strtok(p, delim); tok; tok = strtok(NULL, delim), field++) {
      if (field >= 3 * n) {
        rc = bad("%s: more than 3 numbers per participant", where);
        goto done;
      }
      size_t i = field / 3;
      char *end;
      errno = 0;
      if (field % 3 == 2) {
        long long v = strtoll(tok, &end, 10);
        if (*end || errno) {
          fprintf(stderr, "hs-policy-bridge: %s: participant %zu: samples: \"%s\" is not an integer\n",
                  where, i, tok);
          rc = HS_EXIT_BADINPUT;
          goto done;
        }
        t[i].samples = v;
      } else {
        /* errno is not consulted: strtod sets ERANGE for subnormal results
         * (finite numbers), and an overflow (inf) is the controller's to name */
        double v = strtod(tok, &end);
        if (*end) {
          fprintf(stderr, "hs-policy-bridge: %s: participant %zu: %s: \"%s\" is not a number\n",
                  where, i, field % 3 ? "energy_j" : "time_s", tok);
          rc = HS_EXIT_BADINPUT;
          goto done;
        }
        if (field % 3)
          t[i].energy_j = v;
        else
          t[i].time_s = v;
      }
    }
    if (field != 3 * n) {
      fprintf(stderr, "hs-policy-bridge: %s: %zu numbers, expected %llu (time_s energy_j samples "
                      "per participant)\n",
              where, field, 3 * n);
      rc = HS_EXIT_BADINPUT;
      goto done;
    }
    if (hs_controller_update(c, t, (size_t)n, &err) != HS_OK) {
      fprintf(stderr, "hs-policy-bridge: %s: %s\n", where, err.msg);
      rc = HS_EXIT_BADINPUT;
      goto done;
    }
    print_alloc(c);
  }
done:
  if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) { /* a full disk, a closed pipe */
    fprintf(stderr, "hs-policy-bridge: stdout: write failed: %s\n", strerror(errno));
    rc = 1;
  }
  free(line);
  hs_free(t);
  hs_controller_destroy(c);
  return rc;
}
