/* cli_opts.c: the getopt_long scanner every command uses (cli_next), the
 * options run and compare share, the options sweep and optimize share
 * (cli_study_opt: one wording of -j, --set, --out and unknown options, with
 * a nearest-name hint from cli_suggest.c), and the agreement of ranks after
 * validation (cli_ranks_agree). See cli_opts.h. One argument at a time,
 * O(arguments x long options).
 * Rejected: one parser per study command (sweep and optimize had drifted: -j
 * with and without the value in its message, --set with and without an
 * example). */
#include "cli_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "cli_suggest.h"
#include "policies/hs_policy.h"
#include "sim/hs_run.h"
#include "base/hs_status.h"

int cli_bad_input(const char *cmd, const char *msg) {
  fprintf(stderr, "hetsim %s: ", cmd);
  for (const char *p = msg; *p; p++) fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
  fputc('\n', stderr);
  return HS_EXIT_BADINPUT;
}

int cli_exit_code(hs_status st) {
  return st == HS_EIO || st == HS_EPERM || st == HS_ENOMEM ? HS_EXIT_CANNOT : HS_EXIT_BADINPUT;
}

int cli_fail(const char *cmd, const hs_error *e) {
  cli_bad_input(cmd, e->msg);
  return cli_exit_code(e->status);
}

int cli_flush_stdout(const char *cmd) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  fprintf(stderr, "hetsim %s: stdout: write failed: %s\n", cmd, strerror(errno));
  return HS_EXIT_CANNOT;
}

void cli_parser_init(cli_parser *p, int argc, char **argv, const char *shortopts,
                     const struct option *longopts) {
  memset(p, 0, sizeof *p);
  p->argc = argc;
  p->argv = argv;
  p->longopts = longopts;
  /* '+': stop at the first operand (cli_next hands it out and goes on), so
   * argv is never permuted; ':': a missing value is reported, not printed. */
  snprintf(p->spec, sizeof p->spec, "+:%s", shortopts);
  /* A fresh scan, also when a process parses twice (tests): optind = 0 makes
   * getopt_long forget a previous scan; a call over argv[0] alone does that
   * and returns at once, so cli_next may then step over operands itself. */
  opterr = 0;
  optind = 0;
  (void)getopt_long(1, argv, p->spec, longopts, NULL);
  optind = 1;
}

/* The long option text names (up to '=' or the end), written in full; NULL
 * when it names none exactly. */
static const struct option *long_named(const cli_parser *p, const char *text) {
  if (strncmp(text, "--", 2)) return NULL;
  const char *name = text + 2;
  size_t n = strcspn(name, "=");
  for (const struct option *o = p->longopts; o && o->name; o++)
    if (strlen(o->name) == n && !strncmp(o->name, name, n)) return o;
  return NULL;
}

int cli_next(cli_parser *p) {
  p->arg = NULL;
  /* Between calls optind is the next argument, or the one whose short
   * options ("-qj4") getopt_long is still reading: never an operand or "--",
   * so those two are recognised here before getopt_long sees them. */
  if (optind >= p->argc) return CLI_END;
  char *a = p->argv[optind];
  p->text = a;
  if (p->operands_only || a[0] != '-' || a[1] == '\0') {
    optind++;
    p->arg = a;
    return CLI_OPERAND;
  }
  if (!strcmp(a, "--")) {
    optind++;
    p->operands_only = true;
    return cli_next(p);
  }
  int index = -1;
  int c = getopt_long(p->argc, p->argv, p->spec, p->longopts, &index);
  if (c == -1) return CLI_END;
  const struct option *lo = NULL;
  if (a[1] == '-') { /* a long option: written in full, or unknown */
    lo = long_named(p, a);
    if (!lo) return CLI_UNKNOWN;
  }
  if (c == '?') return CLI_UNKNOWN;
  if (c == ':') return lo ? lo->val : optopt; /* value missing: arg stays NULL */
  p->arg = optarg;
  return c;
}

enum {
  OPT_SET = 256, OPT_SEED, OPT_POLICY, OPT_POLICIES, OPT_OUT, OPT_TRACE, OPT_OVERHEAD,
  OPT_FORCE, OPT_EXPECT, OPT_RTOL, OPT_FORMAT, OPT_PROGRESS, OPT_SCENARIOS, OPT_DEVICES,
  OPT_DEVICES_THRESHOLD, OPT_TRACE_DEVICES
};

static const struct option run_longopts[] = {
    {"help", no_argument, NULL, 'h'},           {"set", required_argument, NULL, OPT_SET},
    {"seed", required_argument, NULL, OPT_SEED}, {"policy", required_argument, NULL, OPT_POLICY},
    {"out", required_argument, NULL, OPT_OUT},   {"trace", no_argument, NULL, OPT_TRACE},
    {"measure-overhead", no_argument, NULL, OPT_OVERHEAD},
    {"quiet", no_argument, NULL, 'q'},           {"force", no_argument, NULL, OPT_FORCE},
    {"expect", required_argument, NULL, OPT_EXPECT}, {"rtol", required_argument, NULL, OPT_RTOL},
    {"progress", required_argument, NULL, OPT_PROGRESS},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"devices-threshold", required_argument, NULL, OPT_DEVICES_THRESHOLD},
    {"trace-devices", required_argument, NULL, OPT_TRACE_DEVICES}, {NULL, 0, NULL, 0}};

/* compare: --policies besides --policy; no options of a single run. */
static const struct option compare_longopts[] = {
    {"help", no_argument, NULL, 'h'},           {"set", required_argument, NULL, OPT_SET},
    {"seed", required_argument, NULL, OPT_SEED}, {"policy", required_argument, NULL, OPT_POLICY},
    {"policies", required_argument, NULL, OPT_POLICIES},
    {"scenarios", required_argument, NULL, OPT_SCENARIOS},
    {"out", required_argument, NULL, OPT_OUT},   {"force", no_argument, NULL, OPT_FORCE},
    {"format", required_argument, NULL, OPT_FORMAT}, {NULL, 0, NULL, 0}};

int cli_seed_arg(const char *cmd, const char *v, char out[24]) {
  char *end;
  errno = 0;
  /* Seeds go through JSON numbers (doubles): above 2^53 two seeds would
   * silently run as one, so say so instead. */
  unsigned long long seed = v && *v && v[0] != '-' ? strtoull(v, &end, 10) : 0;
  if (!v || !*v || v[0] == '-' || seed > (1ULL << 53) || errno || *end) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "--seed: expected a whole number >= 0, at most 2^53 = 9007199254740992 "
             "(got \"%.60s\")",
             v ? v : "");
    return cli_bad_input(cmd, msg);
  }
  /* As plain decimal: "+7" or " 7" are numbers to strtoull, not to JSON. */
  snprintf(out, 24, "%llu", seed);
  return 0;
}

int cli_opts_parse(cli_opts *o, const char *cmd, int argc, char **argv, bool multi) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->ovr = hs_calloc((size_t)argc + 1, sizeof *o->ovr);
  o->sets = hs_calloc((size_t)argc + 1, sizeof *o->sets);
  o->progress_s = -1;
  char msg[256];
  cli_parser p;
  cli_parser_init(&p, argc, argv, multi ? "h" : "hq", multi ? compare_longopts : run_longopts);
  for (int c; (c = cli_next(&p)) != CLI_END;) {
    const char *a = p.text;
    char *v = p.arg;
    switch (c) {
    case 'h':
      o->help = true;
      return 0;
    case OPT_SET: {
      hs_error err = {0};
      if (!v) return cli_bad_input(cmd, "--set: expected key=value (e.g. --set policy.w_e=0.25)");
      if (hs_override_parse(v, &o->ovr[o->novr], &err) != HS_OK) return cli_bad_input(cmd, err.msg);
      o->sets[o->nsets++] = o->ovr[o->novr++];
      break;
    }
    case OPT_SEED: {
      int bad = cli_seed_arg(cmd, v, o->seed);
      if (bad) return bad;
      o->ovr[o->novr++] = (hs_override){"seed", o->seed};
      break;
    }
    case OPT_POLICY:
      /* compare --policy X ran the default list and ignored X; it names the
       * one policy of --scenarios only as --policies does. */
      if (multi) {
        snprintf(msg, sizeof msg,
                 "--policy: compare takes --policies a,b,... (one policy alone: hetsim run "
                 "--policy %.60s)",
                 v ? v : "NAME");
        return cli_bad_input(cmd, msg);
      }
      /* fall through */
    case OPT_POLICIES:
      if (!v || !*v) {
        snprintf(msg, sizeof msg, "%s: expected a policy name (see hetsim %s --help)", a, cmd);
        return cli_bad_input(cmd, msg);
      }
      o->policies = v;
      break;
    case OPT_SCENARIOS:
      o->scenarios = v;
      if (!v || !*v)
        return cli_bad_input(cmd, "--scenarios: expected a comma-separated list of files");
      break;
    case OPT_OUT:
      o->out_dir = v;
      if (!o->out_dir || !*o->out_dir) return cli_bad_input(cmd, "--out: expected a folder");
      break;
    case OPT_TRACE:
      o->trace = true;
      break;
    case OPT_OVERHEAD:
      o->measure_overhead = true;
      break;
    case 'q':
      o->quiet = true;
      break;
    case OPT_FORCE:
      o->force = true;
      break;
    case OPT_DEVICES:
      if (v && !strcmp(v, "full")) o->devices = HS_DEVICES_FULL;
      else if (v && !strcmp(v, "profiles")) o->devices = HS_DEVICES_PROFILES;
      else if (v && !strcmp(v, "auto")) o->devices = HS_DEVICES_AUTO;
      else {
        snprintf(msg, sizeof msg, "--devices: expected full, profiles or auto (got \"%.60s\")",
                 v ? v : "");
        return cli_bad_input(cmd, msg);
      }
      break;
    case OPT_DEVICES_THRESHOLD: {
      char *end = NULL;
      errno = 0;
      unsigned long long n = v && *v && v[0] != '-' ? strtoull(v, &end, 10) : 0;
      if (!v || !*v || v[0] == '-' || errno || *end || n < 1 || n > 10000000) {
        snprintf(msg, sizeof msg,
                 "--devices-threshold: expected a whole number of devices in 1..10000000 "
                 "(got \"%.60s\")",
                 v ? v : "");
        return cli_bad_input(cmd, msg);
      }
      o->devices_threshold = (size_t)n;
      break;
    }
    case OPT_TRACE_DEVICES:
      if (!v || !*v) return cli_bad_input(cmd, "--trace-devices: expected device names a,b,...");
      o->trace_devices = v;
      break;
    case OPT_EXPECT:
      if (!v || !*v) return cli_bad_input(cmd, "--expect: expected a golden run folder");
      o->expect = v;
      break;
    case OPT_RTOL:
    case OPT_PROGRESS: {
      char *end = NULL;
      double x = v && *v ? strtod(v, &end) : -1;
      if (!v || !*v || *end || !(x >= 0) || x > 1e9) {
        snprintf(msg, sizeof msg, "%s: expected a number >= 0 (got \"%.60s\")",
                 c == OPT_RTOL ? "--rtol" : "--progress", v ? v : "");
        return cli_bad_input(cmd, msg);
      }
      if (c == OPT_RTOL) o->rtol = x;
      else o->progress_s = x;
      break;
    }
    case OPT_FORMAT:
      if (!v || (strcmp(v, "table") && strcmp(v, "csv") && strcmp(v, "json"))) {
        snprintf(msg, sizeof msg, "--format: expected table, csv or json (got \"%.60s\")",
                 v ? v : "");
        return cli_bad_input(cmd, msg);
      }
      o->format = v;
      break;
    case CLI_OPERAND:
      if (o->scenario) {
        snprintf(msg, sizeof msg, "one scenario at a time (got \"%.60s\" and \"%.60s\")",
                 o->scenario, v);
        return cli_bad_input(cmd, msg);
      }
      o->scenario = v;
      break;
    default: { /* CLI_UNKNOWN */
      const char *near = cli_nearest_option(a, p.longopts);
      if (near)
        snprintf(msg, sizeof msg, "unknown option \"%.100s\" (did you mean \"--%s\"? see hetsim %s --help)",
                 a, near, cmd);
      else
        snprintf(msg, sizeof msg, "unknown option \"%.100s\" (see hetsim %s --help)", a, cmd);
      return cli_bad_input(cmd, msg);
    }
    }
  }
  return 0;
}

void cli_opts_fini(cli_opts *o) {
  hs_free(o->ovr);
  hs_free(o->sets);
  o->ovr = NULL;
  o->sets = NULL;
}

hs_scenario *cli_load(const cli_opts *o, const char *policy, int *rc) {
  size_t n = o->novr;
  hs_override *ovr = hs_calloc(n + 1, sizeof *ovr);
  memcpy(ovr, o->ovr, n * sizeof *ovr);
  if (policy) ovr[n++] = (hs_override){"policy.kind", policy};
  hs_error err = {0};
  hs_scenario *sc =
      hs_scenario_load(o->scenario ? o->scenario : hs_scenario_default_path(), ovr, n, &err);
  hs_free(ovr);
  if (!sc) *rc = cli_fail(o->cmd, &err);
  return sc;
}

int cli_close_buffer(const char *cmd, FILE **mem) {
  int bad = fclose(*mem) != 0;
  *mem = NULL;
  if (bad) fprintf(stderr, "hetsim %s: cannot finish the output buffer\n", cmd);
  return bad;
}

int cli_write_stdout(const char *cmd, const char *buf, size_t len) {
  if (fwrite(buf, 1, len, stdout) == len && fflush(stdout) == 0) return 0;
  fprintf(stderr, "hetsim %s: stdout: write failed\n", cmd);
  return 1;
}

/* --- the options sweep and optimize share ------------------------------------ */

void cli_study_init(cli_study_opts *s, const char *prog, const char *out_what,
                    const char *out_example, int argc) {
  memset(s, 0, sizeof *s);
  s->prog = prog;
  s->out_what = out_what;
  s->out_example = out_example;
  s->set = hs_calloc((size_t)argc + 1, sizeof *s->set);
  s->jobs = 1;
}

void cli_study_fini(cli_study_opts *s) {
  hs_free(s->set);
  s->set = NULL;
}

int cli_study_opt(cli_study_opts *s, const cli_parser *p, int c, char *why, size_t cap) {
  char *v = p->arg;
#define BAD(...)                     \
  do {                               \
    snprintf(why, cap, __VA_ARGS__); \
    return HS_EXIT_BADINPUT;         \
  } while (0)
  switch (c) {
  case 'h':
    s->help = true;
    return 1;
  case CLI_OPT_SET: {
    hs_error err = {0};
    if (!v) BAD("--set: expected key=value (e.g. --set rounds=3)");
    if (hs_override_parse(v, &s->set[s->nset], &err) != HS_OK) BAD("%s", err.msg);
    s->nset++;
    return 1;
  }
  case CLI_OPT_OUT:
    if (!v || !*v) BAD("--out: expected a file name (e.g. --out %s)", s->out_example);
    s->out = v;
    return 1;
  case 'j': {
    char *end;
    errno = 0;
    long j = v && *v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || errno || *end || j < 1 || j > 1024)
      BAD("-j: expected a number of threads in [1, 1024] (got \"%.40s\")", v ? v : "");
    s->jobs = (unsigned)j;
    return 1;
  }
  case CLI_OPT_RESUME:
    s->resume = true;
    return 1;
  case 'q':
    s->quiet = true;
    return 1;
  case CLI_OPERAND:
    if (s->scenario) BAD("one scenario at a time (got \"%.60s\" and \"%.60s\")", s->scenario, v);
    s->scenario = v;
    return 1;
  case CLI_UNKNOWN: {
    const char *near = cli_nearest_option(p->text, p->longopts);
    if (near) BAD("unknown option \"%.100s\" (did you mean \"--%s\"? see %s --help)", p->text, near,
                  s->prog);
    BAD("unknown option \"%.100s\" (see %s --help)", p->text, s->prog);
  }
  default:
    return 0;
  }
#undef BAD
}

int cli_study_need_scenario(const cli_study_opts *s, char *why, size_t cap) {
  if (s->scenario) return 0;
  snprintf(why, cap, "expected a scenario file (see %s --help)", s->prog);
  return HS_EXIT_BADINPUT;
}

int cli_study_need_out(const cli_study_opts *s, char *why, size_t cap) {
  if (s->out) return 0;
  snprintf(why, cap, "--out: required: %s (e.g. --out %s)", s->out_what, s->out_example);
  return HS_EXIT_BADINPUT;
}

int cli_ranks_agree(const hs_transport *t, int rc, char *why, size_t cap) {
  int first = hs_transport_first_failure(t, rc != 0), rank = t->rank();
  if (first < 0) return 0;
  rc = hs_transport_bcast_int(t, rc, first);
  if (first != rank) {
    why[0] = '\0';
  } else if (rank) {
    char *msg = hs_malloc(cap);
    snprintf(msg, cap, "rank %d: %s", rank, why);
    memcpy(why, msg, cap);
    hs_free(msg);
  }
  return rc;
}

void cli_policy_names(char *buf, size_t cap, int indent) {
  size_t used = 0;
  int col = indent;
  buf[0] = '\0';
  for (size_t i = 0; i < hs_policy_count(); i++) {
    const char *name = hs_policy_name(i);
    int w = (int)strlen(name) + (i ? 3 : 0);
    int n;
    if (i && col + w + 2 > 78) { /* " |" ends the line, the name starts the next */
      n = snprintf(buf + used, cap - used, " |\n%*s%s", indent, "", name);
      col = indent + (int)strlen(name);
    } else {
      n = snprintf(buf + used, cap - used, "%s%s", i ? " | " : "", name);
      col += w;
    }
    if (n < 0 || (size_t)n >= cap - used) break;
    used += (size_t)n;
  }
}
