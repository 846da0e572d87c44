/* bench_pma.c: PMA at scale, with every upload contending for one server link.
 *
 * For each (devices, rounds) pair: build a population of six board types
 * (lognormal speed and power spread), run PMA under the time-only controller
 * with no outputs, and print the wall and CPU seconds of the run, device-rounds
 * per second of each, and the peak resident memory. Target on the 2-core
 * reference machine (issue 13): 10^6 devices x 100 rounds in <= 30 s and
 * <= 1 GiB, i.e. >= 3.3 M device-rounds/s; memory linear in devices.
 * The same population under another regime: --regime JSON, the scenario's
 * regime object (e.g. fl hierarchical, fedasync, ddp, hfl-ddp with silos of
 * the board types' entries: sim/doc or the README's benchmark table has the
 * commands), so that scale is measured for more than PMA.
 * usage: hs-bench-pma [--regime JSON] [DEVICES:ROUNDS ...]
 *        (default 10000:20 100000:10) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "sim/hs_run.h"
#include "sim/hs_scenario.h"

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

/* The regime object (NULL: pma) and its kind (/topology) for the output line. */
static const char *regime_json;
static char regime_kind[64] = "pma";

static int bench(unsigned long devices, unsigned rounds) {
  static const char *types[6][3] = {{"rpi4", "rpi4", "wifi"},       {"rpi5", "rpi5", "wifi"},
                                    {"vf2", "visionfive2", "wifi"}, {"jetson", "jetson-orin-nano-cpu", "gbe"},
                                    {"n100", "intel-n100", "gbe"},  {"ryzen", "ryzen-5800u", "gbe"}};
  size_t cap = 8192 + (regime_json ? strlen(regime_json) : 0);
  char *text = malloc(cap);
  int n = snprintf(text, cap,
                   "{\"name\": \"bench-pma\", \"model_bytes\": 407080, \"rounds\": %u,"
                   " \"samples_per_round\": %lu, \"policy\": {\"kind\": \"time-only\"},"
                   "%s%s%s \"devices\": [",
                   rounds, devices * 100, regime_json ? " \"regime\": " : "",
                   regime_json ? regime_json : "", regime_json ? "," : "");
  for (int t = 0; t < 6; t++) {
    unsigned long c = devices / 6 + (t < (int)(devices % 6) ? 1 : 0);
    n += snprintf(text + n, cap - (size_t)n,
                  "%s{\"name\": \"%s\", \"profile\": \"%s\", \"link\": \"%s\", \"count\": %lu,"
                  " \"speed_spread\": 0.2, \"power_spread\": 0.1}",
                  t ? "," : "", types[t][0], types[t][1], types[t][2], c);
  }
  snprintf(text + n, cap - (size_t)n,
           "], \"network\": {\"server\": \"server\", \"links\": {"
           "\"wifi\": {\"bandwidth_mbps\": 50, \"latency_ms\": 5},"
           "\"gbe\": {\"bandwidth_mbps\": 1000, \"latency_ms\": 0.5},"
           "\"server\": {\"bandwidth_mbps\": 10000, \"latency_ms\": 0.5}}}}");
  hs_error err = {0};
  hs_scenario *sc = hs_scenario_parse(text, "bench-pma.json", ".", NULL, 0, &err);
  free(text);
  if (!sc) {
    fprintf(stderr, "hs-bench-pma: %s\n", err.msg);
    return 2;
  }
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  hs_summary s;
  if (hs_run(sc, NULL, &s, &err) != HS_OK) {
    fprintf(stderr, "hs-bench-pma: %s\n", err.msg);
    hs_scenario_destroy(sc);
    return 1;
  }
  double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  double dr = (double)devices * rounds;
  /* Per CPU second too: the steadier figure when the machine is shared. */
  /* bytes_per_device: the process's peak RSS over the devices (an upper
   * bound: it includes the binary, the scenario and the libraries; measure
   * each size in its own process), beside the estimate run_memory.c refuses
   * runs by. */
  double rss = (double)peak_rss_kb() * 1024.0;
  printf("%s  devices=%-7lu rounds=%-3u wall_s=%.3f  cpu_s=%.3f  device_rounds_per_s=%.0f  "
         "per_cpu_s=%.0f  peak_rss_mib=%.1f  bytes_per_device=%.0f  sim_makespan_s=%.1f\n",
         regime_kind, devices, rounds, dt, dc, dr / dt, dr / dc, rss / 1048576.0, rss / (double)devices,
         s.makespan_s);
  hs_scenario_destroy(sc);
  return 0;
}

int main(int argc, char **argv) {
  gsl_set_error_handler_off();
  if (argc > 2 && !strcmp(argv[1], "--regime")) {
    regime_json = argv[2];
    const char *k = strstr(regime_json, "\"kind\"");
    /* a space in the format matches any white space, none included */
    if (!k || sscanf(k, "\"kind\" : \"%63[^\"]\"", regime_kind) != 1) {
      fprintf(stderr, "hs-bench-pma: --regime: expected a regime object with a \"kind\"\n");
      return 2;
    }
    char topo[32];
    const char *t = strstr(regime_json, "\"topology\"");
    size_t len = strlen(regime_kind);
    if (t && sscanf(t, "\"topology\" : \"%31[^\"]\"", topo) == 1)
      snprintf(regime_kind + len, sizeof regime_kind - len, "/%s", topo);
    argv += 2;
    argc -= 2;
  }
  if (argc > 1 && argv[1][0] == '-') {
    printf("usage: hs-bench-pma [--regime JSON] [DEVICES:ROUNDS ...]\n"
           "PMA with server-link contention; default 10000:20 100000:10.\n"
           "--regime: the same population under another regime (the scenario's regime\n"
           "object), e.g. --regime '{\"kind\": \"fedasync\"}'.\n"
           "Each size is best run in its own process to read its peak memory:\n"
           "  hs-bench-pma 10000:20 && hs-bench-pma 100000:10\n");
    return 0;
  }
  if (argc == 1) {
    int rc = bench(10000, 20);
    return rc ? rc : bench(100000, 10);
  }
  for (int i = 1; i < argc; i++) {
    unsigned long d;
    unsigned r;
    if (sscanf(argv[i], "%lu:%u", &d, &r) != 2 || d < 6 || r < 1) {
      fprintf(stderr, "hs-bench-pma: %s: expected DEVICES:ROUNDS (e.g. 10000:20)\n", argv[i]);
      return 2;
    }
    int rc = bench(d, r);
    if (rc) return rc;
  }
  return 0;
}
