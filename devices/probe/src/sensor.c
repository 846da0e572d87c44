/* sensor.c: the registry of power/energy sources (name -> function table),
 * the spec parser behind --sensor, the `auto` search order and the helpers
 * the sources share (counter unwrap).
 *
 * A source is one of two shapes: a reader (RAPL counter, hwmon power, Pi 5
 * PMIC) that the sampling thread polls, or a window integrator (an external
 * meter's log) asked afterwards for the energy between two wall-clock
 * instants. `none` is not a source: it opens to type NULL and the caller
 * marks energy as not measured. Adding a source is a file and a line here. */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const probe_sensor_type probe_sensor_rapl, probe_sensor_hwmon, probe_sensor_pmic, probe_sensor_meter;

static const probe_sensor_type *const SENSORS[] = {&probe_sensor_rapl, &probe_sensor_hwmon, &probe_sensor_pmic,
                                                   &probe_sensor_meter};

const probe_sensor_type *probe_sensor_type_at(size_t i) {
  return i < sizeof SENSORS / sizeof SENSORS[0] ? SENSORS[i] : NULL;
}

const probe_sensor_type *probe_sensor_type_find(const char *name) {
  for (size_t i = 0; probe_sensor_type_at(i); i++)
    if (strcmp(SENSORS[i]->name, name) == 0) return SENSORS[i];
  return NULL;
}

uint64_t probe_counter_delta(uint64_t prev, uint64_t cur, uint64_t range) {
  if (cur >= prev) return cur - prev;
  /* Wrapped once (the sampler polls far faster than a wrap period, which is
   * minutes to hours for RAPL). range == 0: unknown range, assume 2^32. */
  uint64_t r = range ? range : ((uint64_t)1 << 32);
  return (r - prev) + cur; /* what the powercap docs and turbostat use */
}

hs_status probe_sensor_open(const char *spec, const probe_sensor_cfg *cfg, probe_sensor *s, hs_error *err) {
  s->type = NULL;
  s->state = NULL;
  if (strcmp(spec, "none") == 0) return HS_OK;
  probe_sensor_cfg c = *cfg;
  if (strcmp(spec, "auto") == 0) {
    /* Board sensors in order of coverage; an external meter is never guessed. */
    const char *try[] = {"rapl", "hwmon", "pi5-pmic"};
    char tried[HS_ERROR_MSG_MAX] = "";
    for (size_t i = 0; i < 3; i++) {
      hs_error e = {HS_OK, ""};
      c.arg = NULL;
      const probe_sensor_type *t = probe_sensor_type_find(try[i]);
      if (t->open(&c, &s->state, &e) == HS_OK) {
        s->type = t;
        return HS_OK;
      }
      size_t l = strlen(tried);
      snprintf(tried + l, sizeof tried - l, "%s%s", l ? "; " : "", e.msg);
    }
    return hs_error_set(err, HS_ENOENT,
                        "--sensor auto: no power sensor found (%s); without one: --sensor none --busy-w W "
                        "--busy-w-source TEXT --idle-w W --idle-w-source TEXT",
                        tried);
  }
  const char *colon = strchr(spec, ':');
  char kind[32];
  size_t kl = colon ? (size_t)(colon - spec) : strlen(spec);
  if (kl >= sizeof kind) kl = sizeof kind - 1;
  memcpy(kind, spec, kl);
  kind[kl] = '\0';
  const probe_sensor_type *t = probe_sensor_type_find(kind);
  if (!t)
    return hs_error_set(err, HS_EINVAL,
                         "--sensor: unknown sensor \"%s\" (auto, rapl, hwmon:NAME[:CH], pi5-pmic, meter:FILE.csv, none)",
                         spec);
  c.arg = colon ? colon + 1 : NULL;
  hs_status st = t->open(&c, &s->state, err);
  if (st != HS_OK) {
    hs_error_prefix(err, "--sensor %s", spec);
    return st;
  }
  s->type = t;
  return HS_OK;
}

void probe_sensor_close(probe_sensor *s) {
  if (s->type && s->state) s->type->close(s->state);
  s->type = NULL;
  s->state = NULL;
}
