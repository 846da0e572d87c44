/* sensor_hwmon.c: power from a Linux hwmon device found by its `name` file
 * (ina219, ina226, ina3221, ...), never by its hwmonN index, which changes
 * with probe order and across reboots.
 *
 * Units (Documentation/hwmon/sysfs-interface): power*_input in microwatts,
 * in*_input in millivolts, curr*_input in milliamperes; mV x mA = uW.
 * A chip with power<CH>_input (INA219/INA226) is read directly; one without
 * (INA3221) gives in<CH>_input x curr<CH>_input. `hwmon:NAME:CH` picks the
 * channel (default 1). State: the resolved folder; when a read finds it gone
 * (driver rebind, hot-plug renumbering), the device is looked up again by name
 * once before giving up, so a changed index is survived. */
#include "probe.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *root, *name;
  int ch;
  char *dir;             /* current <root>/sys/class/hwmon/hwmonN */
  bool direct;           /* power<ch>_input exists */
  unsigned relocated;    /* times the index changed under us */
  char id[128], covers[256];
} hwmon_state;

/* The hwmon folder whose name file equals name (heap), or NULL. When name is
 * NULL, the first folder that exposes power in either form. */
static char *hwmon_find(const char *root, const char *name, int ch, char *found_name, size_t cap) {
  char *base = probe_path(root, "/sys/class/hwmon");
  DIR *d = opendir(base);
  char *hit = NULL;
  if (d) {
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "hwmon", 5) != 0) continue;
      char *np = probe_xasprintf("%s/%s/name", base, e->d_name);
      char nm[64];
      hs_error ig;
      bool ok = probe_read_line(np, nm, sizeof nm, &ig) == HS_OK;
      free(np);
      if (!ok || (name && strcmp(nm, name) != 0)) continue;
      char *dir = probe_xasprintf("%s/%s", base, e->d_name);
      char *p = probe_xasprintf("%s/power%d_input", dir, ch), *v = probe_xasprintf("%s/in%d_input", dir, ch),
           *c = probe_xasprintf("%s/curr%d_input", dir, ch);
      bool power = probe_exists(p) || (probe_exists(v) && probe_exists(c));
      free(p);
      free(v);
      free(c);
      /* Several matches: take the lowest folder name, so the choice is stable. */
      if ((name || power) && (!hit || strcmp(e->d_name, best) < 0)) {
        free(hit);
        hit = dir;
        snprintf(best, sizeof best, "%s", e->d_name);
        if (found_name) snprintf(found_name, cap, "%s", nm);
      } else {
        free(dir);
      }
    }
    closedir(d);
  }
  free(base);
  return hit;
}

void probe_hwmon_list(const char *root, char *buf, size_t cap) {
  buf[0] = '\0';
  char *base = probe_path(root, "/sys/class/hwmon");
  DIR *d = opendir(base);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "hwmon", 5) != 0) continue;
      char *np = probe_xasprintf("%s/%s/name", base, e->d_name);
      char nm[64];
      hs_error ig;
      bool ok = probe_read_line(np, nm, sizeof nm, &ig) == HS_OK;
      free(np);
      if (!ok) continue;
      char *dir = hwmon_find(root, nm, 1, NULL, 0);
      char *p = dir ? probe_xasprintf("%s/%s", base, e->d_name) : NULL;
      if (dir && strcmp(dir, p) == 0) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s (%s)", l ? ", " : "", nm, e->d_name);
      }
      free(p);
      free(dir);
    }
    closedir(d);
  }
  free(base);
}

static void hwmon_close(void *state) {
  hwmon_state *s = state;
  free(s->root);
  free(s->name);
  free(s->dir);
  free(s);
}

static hs_status hwmon_read_once(hwmon_state *s, double *watts, hs_error *err) {
  char *p = probe_xasprintf("%s/%s%d_input", s->dir, s->direct ? "power" : "in", s->ch);
  int64_t a = 0, b = 0;
  hs_status st = probe_read_i64(p, &a, err);
  free(p);
  if (st == HS_OK && !s->direct) {
    p = probe_xasprintf("%s/curr%d_input", s->dir, s->ch);
    st = probe_read_i64(p, &b, err);
    free(p);
  }
  if (st != HS_OK) return st;
  *watts = s->direct ? 1e-6 * (double)a : 1e-6 * (double)a * (double)b; /* uW, or mV x mA = uW */
  return HS_OK;
}

static hs_status hwmon_read(void *state, double *watts, hs_error *err) {
  hwmon_state *s = state;
  hs_status st = hwmon_read_once(s, watts, err);
  if (st != HS_ENOENT) return st;
  char *dir = hwmon_find(s->root, s->name, s->ch, NULL, 0);
  if (!dir) return hs_error_set(err, HS_ENOENT, "hwmon:%s: the device disappeared (%s)", s->name, err ? err->msg : "");
  free(s->dir);
  s->dir = dir;
  s->relocated++;
  return hwmon_read_once(s, watts, err);
}

static hs_status hwmon_open(const probe_sensor_cfg *cfg, void **state, hs_error *err) {
  hwmon_state *s = hs_calloc(1, sizeof *s);
  s->ch = 1;
  char name[64] = "";
  if (cfg->arg && cfg->arg[0]) {
    snprintf(name, sizeof name, "%s", cfg->arg);
    char *c = strchr(name, ':');
    if (c) {
      *c = '\0';
      char *end = NULL;
      long ch = strtol(c + 1, &end, 10);
      if (end == c + 1 || *end != '\0' || ch < 1 || ch > 64) {
        hwmon_close(s);
        return hs_error_set(err, HS_EINVAL, "hwmon: channel \"%s\" is not a number 1..64", c + 1);
      }
      s->ch = (int)ch;
    }
  }
  s->root = hs_strdup(cfg->root ? cfg->root : "/");
  char found[64] = "";
  s->dir = hwmon_find(s->root, name[0] ? name : NULL, s->ch, found, sizeof found);
  if (!s->dir) {
    char have[256];
    probe_hwmon_list(s->root, have, sizeof have);
    hs_status st = name[0]
                          ? hs_error_set(err, HS_ENOENT, "hwmon: no device named \"%s\" (power sensors here: %s)",
                                          name, have[0] ? have : "none")
                          : hs_error_set(err, HS_ENOENT, "hwmon: no device exposes power (power*_input or in*+curr*)");
    hwmon_close(s);
    return st;
  }
  s->name = hs_strdup(name[0] ? name : found);
  char *p = probe_xasprintf("%s/power%d_input", s->dir, s->ch);
  s->direct = probe_exists(p);
  free(p);
  double w = 0;
  hs_status st = hwmon_read_once(s, &w, err);
  if (st != HS_OK) {
    hwmon_close(s);
    return st;
  }
  snprintf(s->id, sizeof s->id, "hwmon:%s:%d", s->name, s->ch);
  snprintf(s->covers, sizeof s->covers,
           "the rail behind %s channel %d (%s): only what flows through its shunt; usually the board's input "
           "when wired there",
           s->name, s->ch, s->direct ? "power input" : "bus voltage x current");
  *state = s;
  return HS_OK;
}

static const char *hwmon_id(const void *state) { return ((const hwmon_state *)state)->id; }
static const char *hwmon_covers(const void *state) { return ((const hwmon_state *)state)->covers; }

const probe_sensor_type probe_sensor_hwmon = {"hwmon", PROBE_POWER_W, hwmon_open, hwmon_read, NULL,
                                              hwmon_id, hwmon_covers, hwmon_close};
