/* cmd_validate.c: `hetsim validate [SCENARIO] [--set key=value ...]`.
 *
 * Loads the scenario exactly as `hetsim run` would (same loader, same
 * overrides) and prints it back with every default filled in, so what a run
 * will use is visible before it starts. The whole text is built before the
 * first byte is written: an error never leaves half a scenario on stdout. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"
#include "cli_suggest.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "sim/hs_scenario.h"
#include "base/hs_status.h"

static void validate_usage(FILE *out) {
  fprintf(out,
          "usage: hetsim validate [SCENARIO] [--set key=value ...]\n"
          "\n"
          "Check a scenario file and print it as JSON with every default filled in\n"
          "(the policy's applicable options, the regime's options, device counts,\n"
          "links). SCENARIO is a file, or the name of a shipped scenario (a file of\n"
          "scenarios/ without .json, e.g. testbed-era5-pma; a name that is not a file\n"
          "is looked up there). Without SCENARIO, the built-in default scenario:\n"
          "  %s\n"
          "\n"
          "options:\n"
          "  --set key=value  override one key before validation; key is a JSON path\n"
          "                   (policy.w_e, devices[2].count,\n"
          "                   network.links.wan.bandwidth_mbps); value is JSON, or a\n"
          "                   string when it is not JSON; null removes the key.\n"
          "                   policy.kind=NAME restarts the policy from NAME's defaults.\n"
          "                   devices[i].count=0 excludes entry i: it is still checked\n"
          "                   and printed (\"excluded\": true) but gives no device; a\n"
          "                   run equals the run with the entry deleted.\n"
          "  -h, --help       this text\n"
          "\n"
          "exit status: 0 valid; 1 cannot read a file or write stdout; 2 invalid (one line on\n"
          "stderr: file, JSON path, reason)\n"
          "\n"
          "example:\n"
          "  hetsim validate scenarios/testbed-mnist-pma.json --set policy.kind=adaptive \\\n"
          "      --set policy.w_e=0.25 --set 'devices[0].count=4' --set 'devices[2].count=0'\n",
          hs_scenario_default_path());
}

/* One line on stderr, whatever the message holds. */
static int bad_input(const char *msg) {
  fputs("hetsim validate: ", stderr);
  for (const char *p = msg; *p; p++) fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
  fputc('\n', stderr);
  return HS_EXIT_BADINPUT;
}

int hs_cmd_validate(int argc, char **argv) {
  const char *path = NULL;
  hs_override *ovr = hs_calloc((size_t)argc, sizeof *ovr);
  size_t novr = 0;
  hs_error err = {0};
  int rc = 0;
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                           {"set", required_argument, NULL, 's'},
                                           {NULL, 0, NULL, 0}};
  cli_parser p;
  cli_parser_init(&p, argc, argv, "h", longopts);
  for (int c; (c = cli_next(&p)) != CLI_END;) {
    if (c == 'h') {
      validate_usage(stdout);
      goto done;
    }
    if (c == 's') {
      if (!p.arg) {
        rc = bad_input("--set: expected key=value after it (e.g. --set policy.w_e=0.25)");
        goto done;
      }
      if (hs_override_parse(p.arg, &ovr[novr], &err) != HS_OK) {
        rc = bad_input(err.msg);
        goto done;
      }
      novr++;
    } else if (c != CLI_OPERAND) {
      char msg[200];
      const char *near = cli_nearest_option(p.text, longopts);
      if (near)
        snprintf(msg, sizeof msg, "unknown option \"%.100s\" (did you mean \"--%s\"? see hetsim validate --help)",
                 p.text, near);
      else
        snprintf(msg, sizeof msg, "unknown option \"%.100s\" (see hetsim validate --help)", p.text);
      rc = bad_input(msg);
      goto done;
    } else if (path) {
      char msg[160];
      snprintf(msg, sizeof msg, "one scenario at a time (got \"%.60s\" and \"%.60s\")", path,
               p.arg);
      rc = bad_input(msg);
      goto done;
    } else {
      path = p.arg;
    }
  }
  hs_scenario *sc = hs_scenario_load(path ? path : hs_scenario_default_path(), ovr, novr, &err);
  if (!sc) {
    rc = cli_fail("validate", &err); /* 1: the file cannot be read (permission, I/O) */
    goto done;
  }
  char *text = hs_scenario_to_json(sc);
  hs_scenario_destroy(sc);
  if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
    fprintf(stderr, "hetsim validate: cannot write to stdout\n");
    rc = 1;
  }
  hs_free(text);
done:
  hs_free(ovr);
  return rc;
}
