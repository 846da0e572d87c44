/* cmd_compare.c: `hetsim compare`: one scenario under several policies, one
 * table. Every policy runs on the same scenario and seed; the first policy is
 * the reference the percentages compare against. With --scenarios the rows
 * are scenario files instead (e.g. one per regime: a regime's options belong
 * to its kind, so regimes compare as files, not as a --set of regime.kind),
 * each under its own policy or the one --policies names. */
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "sim/hs_metrics.h"
#include "sim/hs_run.h"

#define DEFAULT_POLICIES "equal,static,time-only,low-energy,balanced,energy-only"
#define MAX_POLICIES 32

static void compare_usage(FILE *out) {
  fprintf(out,
          "usage: hetsim compare [SCENARIO] [--policies a,b,...] [--set key=value ...]\n"
          "                      [--seed N] [--out DIR] [--force] [--format table|csv|json]\n"
          "\n"
          "Run one scenario under each policy and print one table: makespan, energy\n"
          "(total, compute, comm, idle-wait) in kJ, the change against the FIRST policy\n"
          "in percent, the mean compute CV and the wait fraction.\n"
          "SCENARIO is a file, or a shipped scenario's name (testbed-era5-pma).\n"
          "Without SCENARIO, the built-in default: %s\n"
          "\n"
          "options:\n"
          "  --policies LIST  comma-separated (default " DEFAULT_POLICIES ")\n"
          "  --scenarios LIST compare scenario files instead (one row each, e.g. one\n"
          "                   per regime); --policies then names at most one policy\n"
          "  --set key=value  override a scenario key for every run\n"
          "  --seed N         the master seed\n"
          "  --out DIR        also write each run's outputs to DIR/<policy>/\n"
          "  --force          replace DIR/<policy>/ even when it holds another run\n"
          "  --format F       table (default: for people, kJ), csv or json (for tools:\n"
          "                   every metric in its own unit, %%.10g, and each vs_1st\n"
          "                   column as <metric>_vs_first_pct); json wraps the runs in\n"
          "                   {\"scenario\", \"regime\", \"task\", \"devices\", \"rounds\",\n"
          "                   \"seed\", \"runs\": [...]}\n"
          "\n"
          "exit status: 0 done; 1 cannot read or write (stdout too), or not enough memory;\n"
          "             2 bad input (one line on stderr)\n"
          "\n"
          "example:\n"
          "  hetsim compare scenarios/testbed-mnist-pma.json \\\n"
          "      --policies equal,static,time-only,low-energy,energy-only\n",
          hs_scenario_default_path());
}

/* "scenario": ..., "regime": ..., "task": ..., "devices": N, "rounds": R, "seed": S */
static void json_scenario_fields(const hs_scenario *sk) {
  fputs("\"scenario\": ", stdout);
  hs_json_fputs(stdout, sk->name);
  fputs(", \"regime\": ", stdout);
  hs_json_fputs(stdout, sk->regime.kind);
  fputs(", \"task\": ", stdout);
  hs_json_fputs(stdout, sk->task);
  printf(", \"devices\": %zu, \"rounds\": %u, \"seed\": %llu", sk->total_devices, sk->rounds,
         (unsigned long long)sk->seed);
}

int hs_cmd_compare(int argc, char **argv) {
  cli_opts o;
  int rc = cli_opts_parse(&o, "compare", argc, argv, true);
  if (rc || o.help) {
    if (o.help) compare_usage(stdout);
    cli_opts_fini(&o);
    return rc;
  }
  bool by_file = o.scenarios != NULL;
  if (by_file && o.scenario) {
    cli_opts_fini(&o);
    return cli_bad_input("compare", "give SCENARIO or --scenarios, not both");
  }
  char list[1024];
  snprintf(list, sizeof list, "%s",
           by_file ? o.scenarios : o.policies ? o.policies : DEFAULT_POLICIES);
  char *names[MAX_POLICIES];
  size_t n = 0;
  const char *what = by_file ? "--scenarios" : "--policies";
  char emsg[1200];
  /* As --seeds: an empty item or a repeat is a typo, not something to drop or run twice. */
  size_t ll = strlen(list);
  if (ll && (list[0] == ',' || list[ll - 1] == ',' || strstr(list, ",,"))) {
    snprintf(emsg, sizeof emsg, "%s %s: empty item in the list", what, list);
    cli_opts_fini(&o);
    return cli_bad_input("compare", emsg);
  }
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == MAX_POLICIES) {
      cli_opts_fini(&o);
      return cli_bad_input("compare", by_file ? "--scenarios: at most 32 files"
                                              : "--policies: at most 32 policies");
    }
    for (size_t k = 0; k < n; k++)
      if (!strcmp(names[k], tok)) {
        snprintf(emsg, sizeof emsg, "%s: %s\"%.100s\" appears twice", what,
                 by_file ? "" : "policy ", tok);
        cli_opts_fini(&o);
        return cli_bad_input("compare", emsg);
      }
    names[n++] = tok;
  }
  if (n == 0 || (by_file && o.policies && strchr(o.policies, ','))) {
    char msg[96];
    snprintf(msg, sizeof msg, "%s: expected a comma-separated list of %s", what,
             by_file && n ? "files (and one policy at most)" : by_file ? "files" : "names");
    cli_opts_fini(&o);
    return cli_bad_input("compare", msg);
  }
  /* Load every scenario first, so a bad name fails before any run. */
  hs_scenario *sc[MAX_POLICIES] = {0};
  for (size_t k = 0; k < n && !rc; k++) {
    if (by_file) o.scenario = names[k];
    sc[k] = cli_load(&o, by_file ? o.policies : names[k], &rc);
  }
  /* Rows by file are named by the scenario's name (output folders too). */
  for (size_t k = 0; k < n && !rc && by_file; k++) names[k] = sc[k]->name;
  hs_summary s[MAX_POLICIES];
  for (size_t k = 0; k < n && !rc; k++) {
    char *dir = NULL; /* DIR/<policy>, sized to fit: a fixed buffer cut long paths short */
    if (o.out_dir) {
      size_t len = strlen(o.out_dir) + strlen(names[k]) + 2;
      dir = hs_malloc(len);
      snprintf(dir, len, "%s/%s", o.out_dir, names[k]);
    }
    hs_run_opts ro = {.out_dir = dir, .sets = o.sets, .nsets = o.nsets, .force = o.force};
    hs_error err = {0};
    if (hs_run(sc[k], &ro, &s[k], &err) != HS_OK) rc = cli_fail("compare", &err);
    hs_free(dir);
  }
  const char *fmt = o.format ? o.format : "table";
  const char *label = by_file ? "scenario" : "policy"; /* what a row is */
  if (!rc && !strcmp(fmt, "csv")) {
    hs_metric_compare_csv(stdout, label, (const char *const *)names, s, n);
  } else if (!rc && !strcmp(fmt, "json")) {
    /* One scenario: its fields, then the runs. --scenarios: an array of
     * every row's own scenario (each has its regime, task, devices, rounds). */
    size_t ns = by_file ? n : 1;
    fputs(by_file ? "{\"scenarios\": [" : "{", stdout);
    for (size_t k = 0; k < ns; k++) {
      if (by_file) fputs(k ? ",\n  {" : "\n  {", stdout);
      json_scenario_fields(sc[k]);
      if (by_file) fputs("}", stdout);
    }
    fputs(by_file ? "],\n\"runs\": " : ",\n\"runs\": ", stdout);
    hs_metric_compare_json(stdout, label, (const char *const *)names, s, n);
    fputs("}\n", stdout);
  } else if (!rc) {
    for (size_t k = 0; k < (by_file ? n : 1); k++) {
      const hs_scenario *sk = sc[k];
      printf("scenario %s  regime %s  task %s  devices %zu  rounds %u  seed %llu\n", sk->name,
             sk->regime.kind, sk->task, sk->total_devices, sk->rounds, (unsigned long long)sk->seed);
    }
    /* The columns are the table's HS_METRIC_COMPARE metrics (hs_metrics.h). */
    hs_metric_compare_table(stdout, label, (const char *const *)names, s, n);
    rc = cli_flush_stdout("compare");
  }
  for (size_t k = 0; k < n; k++) hs_scenario_destroy(sc[k]);
  cli_opts_fini(&o);
  return rc;
}
