/* cli_opts.c: shared option parsing for run and compare (see cli_opts.h). */
#include "cli_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_alloc.h"
#include "hs_status.h"

int cli_bad_input(const char *cmd, const char *msg) {
  fprintf(stderr, "hetsim %s: ", cmd);
  for (const char *p = msg; *p; p++) fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
  fputc('\n', stderr);
  return HS_EXIT_BADINPUT;
}

char *cli_opt_value(int argc, char **argv, int *i, const char *opt) {
  size_t n = strlen(opt);
  if (!strncmp(argv[*i], opt, n) && argv[*i][n] == '=') return argv[*i] + n + 1;
  return *i + 1 < argc ? argv[++*i] : NULL;
}

bool cli_is_opt(const char *a, const char *opt) {
  size_t n = strlen(opt);
  return !strncmp(a, opt, n) && (a[n] == '\0' || a[n] == '=');
}

int cli_opts_parse(cli_opts *o, const char *cmd, int argc, char **argv, bool multi) {
  memset(o, 0, sizeof *o);
  o->cmd = cmd;
  o->ovr = hs_calloc((size_t)argc + 1, sizeof *o->ovr);
  char msg[256];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      o->help = true;
      return 0;
    } else if (cli_is_opt(a, "--set")) {
      char *kv = cli_opt_value(argc, argv, &i, "--set");
      hs_error err = {0};
      if (!kv) return cli_bad_input(cmd, "--set: expected key=value (e.g. --set policy.w_e=0.25)");
      if (hs_override_parse(kv, &o->ovr[o->novr], &err) != HS_OK) return cli_bad_input(cmd, err.msg);
      o->novr++;
    } else if (cli_is_opt(a, "--seed")) {
      const char *v = cli_opt_value(argc, argv, &i, "--seed");
      char *end;
      errno = 0;
      /* Seeds go through JSON numbers (doubles): above 2^53 two seeds would
       * silently run as one, so say so instead. */
      unsigned long long seed = v && *v && v[0] != '-' ? strtoull(v, &end, 10) : 0;
      if (!v || !*v || v[0] == '-' || seed > (1ULL << 53) || errno || *end) {
        snprintf(msg, sizeof msg,
                 "--seed: expected a whole number >= 0, at most 2^53 = 9007199254740992 "
                 "(got \"%.60s\")",
                 v ? v : "");
        return cli_bad_input(cmd, msg);
      }
      /* As plain decimal: "+7" or " 7" are numbers to strtoull, not to JSON. */
      snprintf(o->seed, sizeof o->seed, "%llu", seed);
      o->ovr[o->novr++] = (hs_override){"seed", o->seed};
    } else if (cli_is_opt(a, "--policy") || (multi && cli_is_opt(a, "--policies"))) {
      const char *v = cli_opt_value(argc, argv, &i, cli_is_opt(a, "--policy") ? "--policy" : "--policies");
      if (!v || !*v) {
        snprintf(msg, sizeof msg, "%s: expected a policy name (see hetsim %s --help)", a, cmd);
        return cli_bad_input(cmd, msg);
      }
      o->policies = v;
    } else if (multi && cli_is_opt(a, "--scenarios")) {
      o->scenarios = cli_opt_value(argc, argv, &i, "--scenarios");
      if (!o->scenarios || !*o->scenarios)
        return cli_bad_input(cmd, "--scenarios: expected a comma-separated list of files");
    } else if (cli_is_opt(a, "--out")) {
      o->out_dir = cli_opt_value(argc, argv, &i, "--out");
      if (!o->out_dir || !*o->out_dir) return cli_bad_input(cmd, "--out: expected a folder");
    } else if (!multi && !strcmp(a, "--trace")) {
      o->trace = true;
    } else if (!multi && !strcmp(a, "--measure-overhead")) {
      o->measure_overhead = true;
    } else if (!multi && (!strcmp(a, "--quiet") || !strcmp(a, "-q"))) {
      o->quiet = true;
    } else if (a[0] == '-' && a[1]) {
      snprintf(msg, sizeof msg, "unknown option \"%.100s\" (see hetsim %s --help)", a, cmd);
      return cli_bad_input(cmd, msg);
    } else if (o->scenario) {
      snprintf(msg, sizeof msg, "one scenario at a time (got \"%.60s\" and \"%.60s\")",
               o->scenario, a);
      return cli_bad_input(cmd, msg);
    } else {
      o->scenario = a;
    }
  }
  return 0;
}

void cli_opts_fini(cli_opts *o) {
  hs_free(o->ovr);
  o->ovr = NULL;
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
  if (!sc) *rc = cli_bad_input(o->cmd, err.msg);
  return sc;
}
