/* sensor_pmic.c: the Raspberry Pi 5 PMIC through `vcgencmd pmic_read_adc`,
 * which prints one line per rail and quantity, e.g.
 *     VDD_CORE_A current(7)=2.21440000A
 *     VDD_CORE_V volt(15)=0.84000000V
 * Power is the sum over rails that have both a current and a voltage line
 * (rail = the name without its _A / _V suffix). It covers the PMIC's rails
 * (SoC, DRAM, I/O), not the 5 V input, USB devices or regulator losses:
 * expect it to read below a wall meter.
 * The command is configurable (--pmic-cmd) so tests replay recorded output.
 * Each poll runs the command (about 10 ms on a Pi 5), so keep --hz modest. */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PMIC_MAX_RAILS 64

hs_status probe_pmic_parse(const char *text, double *watts, hs_error *err) {
  char rail[PMIC_MAX_RAILS][40];
  double amps[PMIC_MAX_RAILS], volts[PMIC_MAX_RAILS];
  bool has_a[PMIC_MAX_RAILS], has_v[PMIC_MAX_RAILS];
  size_t n = 0;
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char line[160];
    if (len >= sizeof line) len = sizeof line - 1;
    memcpy(line, p, len);
    line[len] = '\0';
    p += eol ? (size_t)(eol - p) + 1 : strlen(p);
    char name[40], what[16];
    int idx = 0;
    double val = 0;
    char unit = 0;
    if (sscanf(line, " %39[A-Za-z0-9_] %15[a-z](%d)=%lf%c", name, what, &idx, &val, &unit) != 5) continue;
    size_t nl = strlen(name);
    bool cur = strcmp(what, "current") == 0 && unit == 'A', vol = strcmp(what, "volt") == 0 && unit == 'V';
    if ((!cur && !vol) || nl < 3 || name[nl - 2] != '_') continue;
    name[nl - 2] = '\0';
    size_t r = 0;
    while (r < n && strcmp(rail[r], name) != 0) r++;
    if (r == n) {
      if (n == PMIC_MAX_RAILS) continue;
      snprintf(rail[n], sizeof rail[n], "%s", name);
      has_a[n] = has_v[n] = false;
      n++;
    }
    if (cur) {
      amps[r] = val;
      has_a[r] = true;
    } else {
      volts[r] = val;
      has_v[r] = true;
    }
  }
  double w = 0;
  size_t used = 0;
  for (size_t r = 0; r < n; r++)
    if (has_a[r] && has_v[r]) {
      w += amps[r] * volts[r];
      used++;
    }
  if (used == 0) return hs_error_set(err, HS_EPARSE, "pmic_read_adc output has no rail with both current and volt lines");
  *watts = w;
  return HS_OK;
}

typedef struct {
  char *cmd;
  char id[64], covers[256];
} pmic_state;

static hs_status pmic_read(void *state, double *watts, hs_error *err) {
  pmic_state *s = state;
  FILE *f = popen(s->cmd, "r");
  if (!f) return hs_error_set(err, HS_EIO, "pi5-pmic: cannot run \"%s\"", s->cmd);
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  int rc = pclose(f);
  if (rc != 0)
    return hs_error_set(err, HS_ENOENT,
                         "pi5-pmic: \"%s\" failed (status %d): vcgencmd comes with Raspberry Pi OS (package "
                         "raspi-utils) and pmic_read_adc needs a Pi 5",
                         s->cmd, rc);
  hs_status st = probe_pmic_parse(buf, watts, err);
  if (st != HS_OK) hs_error_prefix(err, "pi5-pmic: \"%s\"", s->cmd);
  return st;
}

static void pmic_close(void *state) {
  pmic_state *s = state;
  free(s->cmd);
  free(s);
}

static hs_status pmic_open(const probe_sensor_cfg *cfg, void **state, hs_error *err) {
  pmic_state *s = hs_calloc(1, sizeof *s);
  s->cmd = probe_xasprintf("%s 2>/dev/null", cfg->pmic_cmd ? cfg->pmic_cmd : "vcgencmd pmic_read_adc");
  double w = 0;
  hs_status st = pmic_read(s, &w, err);
  if (st != HS_OK) {
    pmic_close(s);
    return st;
  }
  snprintf(s->id, sizeof s->id, "pi5-pmic");
  snprintf(s->covers, sizeof s->covers,
           "Raspberry Pi 5 PMIC rails (SoC, DRAM, I/O) summed; not the 5 V input, USB devices or regulator losses");
  *state = s;
  return HS_OK;
}

static const char *pmic_id(const void *state) { return ((const pmic_state *)state)->id; }
static const char *pmic_covers(const void *state) { return ((const pmic_state *)state)->covers; }

const probe_sensor_type probe_sensor_pmic = {"pi5-pmic", PROBE_POWER_W, pmic_open, pmic_read, NULL,
                                             pmic_id, pmic_covers, pmic_close};
