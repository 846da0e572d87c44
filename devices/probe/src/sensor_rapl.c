/* sensor_rapl.c: Intel/AMD RAPL energy counters through powercap sysfs
 * (<root>/sys/class/powercap/intel-rapl:N/energy_uj).
 *
 * State: per zone the last raw counter and its wrap range
 * (max_energy_range_uj); the cumulative energy is the sum of unwrapped deltas,
 * so a wrap between two polls is invisible to the caller. Invariant: at most
 * one wrap between polls (a package wraps after minutes at full load; we poll
 * at >= 1 Hz). Default zones: every top-level zone named package-*, summed
 * (multi-socket); `rapl:NAME` picks zones by name (e.g. psys, dram).
 * Since Linux 5.10 energy_uj is mode 0400 (CVE-2020-8694, "PLATYPUS"), so a
 * non-root user gets EACCES: the message says so and how to proceed. */
#include "probe.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RAPL_MAX_ZONES 16

typedef struct {
  char *path[RAPL_MAX_ZONES];  /* energy_uj files */
  uint64_t last[RAPL_MAX_ZONES], range[RAPL_MAX_ZONES];
  size_t n;
  double total_j;
  char id[128], covers[256];
} rapl_state;

static void rapl_close(void *state) {
  rapl_state *s = state;
  for (size_t i = 0; i < s->n; i++) free(s->path[i]);
  free(s);
}

static hs_status rapl_read_raw(const char *path, uint64_t *v, hs_error *err) {
  int64_t x = 0;
  hs_status st = probe_read_i64(path, &x, err);
  if (st == HS_EPERM)
    return hs_error_set(err, HS_EPERM,
                         "%s: permission denied: since Linux 5.10 RAPL energy counters are readable by root only "
                         "(CVE-2020-8694); run as root, or `sudo chmod o+r` that file until reboot, or pick another "
                         "--sensor",
                         path);
  if (st != HS_OK) return st;
  if (x < 0) return hs_error_set(err, HS_EPARSE, "%s: negative counter %lld", path, (long long)x);
  *v = (uint64_t)x;
  return HS_OK;
}

static int rapl_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static hs_status rapl_open(const probe_sensor_cfg *cfg, void **state, hs_error *err) {
  char *base = probe_path(cfg->root, "/sys/class/powercap");
  DIR *d = opendir(base);
  if (!d) {
    hs_status st = hs_error_set(err, HS_ENOENT, "rapl: %s: no powercap folder (no RAPL on this machine or kernel)", base);
    free(base);
    return st;
  }
  char *names[64];
  size_t nn = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && nn < 64) {
    const char *c = strchr(e->d_name, ':');
    /* top-level zones only: intel-rapl:0, not intel-rapl:0:1 (unless named explicitly) */
    if (strncmp(e->d_name, "intel-rapl:", 11) != 0 || !c) continue;
    if (strchr(c + 1, ':') && !cfg->arg) continue;
    names[nn++] = hs_strdup(e->d_name);
  }
  closedir(d);
  qsort(names, nn, sizeof *names, rapl_cmp);
  rapl_state *s = hs_calloc(1, sizeof *s);
  hs_status st = HS_OK;
  char zones[96] = "";
  for (size_t i = 0; i < nn && st == HS_OK; i++) {
    char *np = probe_xasprintf("%s/%s/name", base, names[i]);
    char zname[64];
    hs_error e2;
    if (probe_read_line(np, zname, sizeof zname, &e2) == HS_OK && s->n < RAPL_MAX_ZONES &&
        (cfg->arg ? strcmp(zname, cfg->arg) == 0 : strncmp(zname, "package", 7) == 0)) {
      char *ep = probe_xasprintf("%s/%s/energy_uj", base, names[i]);
      char *rp = probe_xasprintf("%s/%s/max_energy_range_uj", base, names[i]);
      int64_t range = 0;
      hs_error e3;
      if (probe_read_i64(rp, &range, &e3) != HS_OK || range <= 0) range = 0;
      st = rapl_read_raw(ep, &s->last[s->n], err);
      s->range[s->n] = (uint64_t)range;
      s->path[s->n++] = ep;
      size_t l = strlen(zones);
      snprintf(zones + l, sizeof zones - l, "%s%s", l ? "+" : "", zname);
      free(rp);
    }
    free(np);
  }
  for (size_t i = 0; i < nn; i++) free(names[i]);
  if (st == HS_OK && s->n == 0)
    st = hs_error_set(err, HS_ENOENT, "rapl: %s: no zone named %s", base, cfg->arg ? cfg->arg : "package-*");
  free(base);
  if (st != HS_OK) {
    rapl_close(s);
    return st;
  }
  snprintf(s->id, sizeof s->id, "rapl:%s", zones);
  if (cfg->arg && strcmp(cfg->arg, "psys") == 0)
    snprintf(s->covers, sizeof s->covers, "RAPL psys: the platform as the firmware defines it (SoC, often DRAM and "
                                          "chipset); no display, no PSU losses");
  else if (cfg->arg && strcmp(cfg->arg, "dram") == 0)
    snprintf(s->covers, sizeof s->covers, "RAPL dram: memory only");
  else
    snprintf(s->covers, sizeof s->covers, "CPU package only (%s: cores, caches, uncore); no DRAM, no board, no PSU "
                                          "losses", zones);
  *state = s;
  return HS_OK;
}

static hs_status rapl_read(void *state, double *joules, hs_error *err) {
  rapl_state *s = state;
  for (size_t i = 0; i < s->n; i++) {
    uint64_t v = 0;
    hs_status st = rapl_read_raw(s->path[i], &v, err);
    if (st != HS_OK) return st;
    s->total_j += 1e-6 * (double)probe_counter_delta(s->last[i], v, s->range[i]);
    s->last[i] = v;
  }
  *joules = s->total_j;
  return HS_OK;
}

static const char *rapl_id(const void *state) { return ((const rapl_state *)state)->id; }
static const char *rapl_covers(const void *state) { return ((const rapl_state *)state)->covers; }

const probe_sensor_type probe_sensor_rapl = {"rapl", PROBE_ENERGY_J, rapl_open, rapl_read, NULL,
                                             rapl_id, rapl_covers, rapl_close};
