/* cmd_run.c: `hetsim run`: one scenario, one policy, outputs in a folder.
 *
 * --expect DIR compares the run's outputs with a golden run folder
 * (run_expect.c); without --out the run then goes to a temporary folder that
 * is removed afterwards, so a CI check leaves nothing behind. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opts.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "sim/hs_metrics.h"
#include "sim/hs_run.h"
#include "base/hs_util.h"
#include "progress.h"
#include "run_expect.h"

static void run_usage(FILE *out) {
  char policies[1024]; /* the registry's names, never a copy of them */
  cli_policy_names(policies, sizeof policies, 23);
  fprintf(out,
          "usage: hetsim run [SCENARIO] [--policy NAME] [--set key=value ...] [--seed N]\n"
          "                  [--out DIR] [--trace] [--measure-overhead] [--quiet] [--force]\n"
          "                  [--expect DIR [--rtol X]] [--progress SECONDS]\n"
          "                  [--devices full|profiles|auto] [--devices-threshold N]\n"
          "                  [--trace-devices NAME,NAME...]\n"
          "\n"
          "Simulate one scenario with one policy and write, in DIR:\n"
          "  summary.json  makespan_s, energy_j (+ compute/comm/idle split), compute_cv,\n"
          "                wait_fraction, controller_overhead_fraction, ...\n"
          "  rounds.csv    round,start_s,end_s,duration_s,energy_j,compute_cv,max_wait_s,reallocated\n"
          "  devices.csv   round,device,samples,compute_s,comm_s,wait_s,energy_j,profile\n"
          "  device_profiles.csv  instead of devices.csv above %d devices (see\n"
          "                --devices): per round and profile, count, samples, the p0 p50 p90\n"
          "                p99 p100 of compute_s, comm_s and wait_s, and energy_j\n"
          "  trace.json    with --trace: Chrome trace format, one track per device\n"
          "                (open it in https://ui.perfetto.dev or chrome://tracing)\n"
          "  learning.csv  with a scenario learning block: round,time_s,energy_j,samples,\n"
          "                train_loss,test_loss,test_accuracy\n"
          "SCENARIO is a file, or a shipped scenario's name (testbed-era5-pma: see\n"
          "hetsim validate --help). Without SCENARIO, the built-in default: %s\n"
          "\n"
          "options:\n"
          "  --policy NAME        %s\n"
          "                       (starts the policy from NAME's defaults)\n"
          "  --set key=value      override a scenario key (see hetsim validate --help)\n"
          "  --seed N             the master seed (same scenario + seed = same bytes)\n"
          "  --out DIR            output folder (default hetsim-out/<scenario>-<policy>)\n"
          "  --trace              also write trace.json\n"
          "  --measure-overhead   time the controller with the wall clock and report\n"
          "                       controller_overhead_fraction (the output is then not\n"
          "                       byte-reproducible; without it the field is null)\n"
          "  --quiet              print nothing on success\n"
          "  --force              replace DIR even when it holds another run (a different\n"
          "                       scenario, seed, policy or --set list; the same run again\n"
          "                       always may)\n"
          "  --expect DIR         compare the outputs with a golden run folder DIR (exact;\n"
          "                       summary.json's hetsim_version is not compared) and name\n"
          "                       the first difference; without --out the run goes to a\n"
          "                       temporary folder, removed afterwards\n"
          "  --rtol X             with --expect: numbers equal within relative tolerance X\n"
          "  --progress SECONDS   a progress line on stderr every SECONDS when stderr is\n"
          "                       not a terminal (default %g; 0: off)\n"
          "  --devices MODE       full: devices.csv whatever the size; profiles:\n"
          "                       device_profiles.csv; auto (default): devices.csv up to\n"
          "                       the threshold, device_profiles.csv above it\n"
          "  --devices-threshold N  the auto threshold in devices (default %d)\n"
          "  --trace-devices A,B  trace only these devices (implies --trace)\n"
          "\n"
          "summary.json also records hetsim_version, run_identity, the --set list, the\n"
          "policy's full configuration, fnv1a64 hashes of every input file and the\n"
          "resolved scenario (every default filled in).\n"
          "\n"
          "exit status: 0 done (and, with --expect, equal); 1 a file that cannot be read or\n"
          "written, or not enough memory; 2 bad input (one line on stderr: file, field,\n"
          "reason), also a malformed golden; 3 the outputs differ from the golden (one\n"
          "line: file, line, column, both values)\n"
          "\n"
          "example:\n"
          "  hetsim run scenarios/testbed-mnist-pma.json --policy time-only --seed 7 \\\n"
          "      --out out/tonly --trace\n"
          "  hetsim run scenarios/testbed-mnist-pma.json --policy time-only \\\n"
          "      --expect tests/golden/mnist-pma-time-only\n",
          HS_DEVICES_THRESHOLD, hs_scenario_default_path(), policies, CLI_PROGRESS_DEFAULT_S,
          HS_DEVICES_THRESHOLD);
}

static void safe_name(char *dst, size_t cap, const char *src) {
  size_t n = 0;
  for (; *src && n + 1 < cap; src++) {
    char c = *src;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '-' || c == '_' || c == '.';
    dst[n++] = ok ? c : '_';
  }
  dst[n] = '\0';
}

static void on_round(void *ud, uint32_t done, uint32_t total) {
  (void)total;
  cli_progress_tick(ud, done);
}

int hs_cmd_run(int argc, char **argv) {
  cli_opts o;
  int rc = cli_opts_parse(&o, "run", argc, argv, false);
  if (rc || o.help) {
    if (o.help) run_usage(stdout);
    cli_opts_fini(&o);
    return rc;
  }
  if (o.rtol > 0 && !o.expect) {
    cli_opts_fini(&o);
    return cli_bad_input("run", "--rtol: only with --expect DIR");
  }
  if (o.expect && (rc = run_expect_ready(o.expect)) != 0) {
    cli_opts_fini(&o);
    return rc;
  }
  hs_scenario *sc = cli_load(&o, o.policies, &rc);
  if (!sc) {
    cli_opts_fini(&o);
    return rc;
  }
  /* --out as given (a copy into a fixed buffer cut long paths short, and the
   * run wrote into another folder); the default is short by construction. */
  char def_dir[512], tmp_dir[512] = "";
  const char *out_dir = o.out_dir;
  if (!out_dir && o.expect) { /* a CI check leaves nothing behind */
    const char *t = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/hetsim-expect-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmp_dir)) {
      fprintf(stderr, "hetsim run: %s: cannot make a temporary folder for --expect\n", tmp_dir);
      hs_scenario_destroy(sc);
      cli_opts_fini(&o);
      return 1;
    }
    out_dir = tmp_dir;
  }
  if (!out_dir) {
    char a[256], b[64];
    safe_name(a, sizeof a, sc->name);
    safe_name(b, sizeof b, sc->policy.kind);
    snprintf(def_dir, sizeof def_dir, "hetsim-out/%s-%s", a, b);
    out_dir = def_dir;
  }
  cli_progress prog;
  /* --quiet silences the default, not an explicit --progress. */
  cli_progress_init(&prog, "run", "rounds", sc->rounds, 0,
                    o.quiet && o.progress_s < 0 ? 0 : o.progress_s, false);
  hs_run_opts ro = {.out_dir = out_dir,
                    .trace = o.trace,
                    .measure_overhead = o.measure_overhead,
                    .sets = o.sets,
                    .nsets = o.nsets,
                    .force = o.force || *tmp_dir,
                    .on_round = prog.out ? on_round : NULL,
                    .userdata = &prog,
                    .devices = o.devices,
                    .devices_threshold = o.devices_threshold,
                    .trace_devices = o.trace_devices};
  hs_summary s;
  hs_error err = {0};
  if (hs_run(sc, &ro, &s, &err) != HS_OK) {
    rc = cli_fail("run", &err);
  } else if (o.expect) {
    rc = run_expect_compare(o.expect, out_dir, o.rtol, o.quiet);
  } else if (!o.quiet) {
    printf("scenario %s  regime %s  policy %s  seed %llu  devices %zu  rounds %u\n", sc->name,
           sc->regime.kind, sc->policy.kind, (unsigned long long)sc->seed, sc->total_devices,
           s.rounds);
    printf("makespan_s     %.3f\n", s.makespan_s);
    printf("energy_j       %.1f  (compute %.1f, comm %.1f, idle-wait %.1f)\n", s.energy_j,
           s.compute_j, s.comm_j, s.idle_j);
    printf("compute_cv     %.4f\n", s.compute_cv);
    printf("wait_fraction  %.4f\n", s.wait_fraction);
    if (!isnan(s.controller_overhead_fraction))
      printf("controller_overhead_fraction %.3g\n", s.controller_overhead_fraction);
    /* learning in the loop: the target (NaN: not reached), the last evaluation */
    if (hs_metric_reported(&s, "learning"))
      printf("to_target      %.3f s, %.1f J, %.0f rounds; final test_loss %.4f, accuracy %.4f\n",
             s.time_to_target_s, s.energy_to_target_j, s.rounds_to_target, s.final_test_loss,
             s.final_test_accuracy);
    if (hs_metric_reported(&s, "learning"))
      printf("stable_target  %.3f s, %.0f rounds (every evaluation from there met the target)\n",
             s.time_to_stable_target_s, s.rounds_to_stable_target);
    /* What this run wrote: the folder holds exactly its files now. */
    const char *names[32];
    size_t nn = hs_run_output_files(names, 32);
    printf("outputs        %s/{", out_dir);
    for (size_t i = 0, k = 0; i < nn && i < 32; i++) {
      char *p = hs_path_join(out_dir, names[i]);
      if (access(p, F_OK) == 0) printf("%s%s", k++ ? "," : "", names[i]);
      hs_free(p);
    }
    printf("}\n");
  }
  if (*tmp_dir) {
    const char *files[32];
    size_t nf = hs_run_output_files(files, 32);
    for (size_t i = 0; i < nf && i < 32; i++) {
      char *p = hs_path_join(tmp_dir, files[i]);
      remove(p);
      hs_free(p);
    }
    rmdir(tmp_dir);
  }
  hs_scenario_destroy(sc);
  cli_opts_fini(&o);
  return rc;
}
