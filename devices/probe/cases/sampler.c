/* sampler.c: the sampler's cases (power integration, counters, the
 * Raspberry Pi throttle flags) on fake sysfs trees. */
#include "cases.h"

/* ---------------------------------------------------------------- sampler */
PROBE_CASE_FN(sampler, power) {
  probe_put(tmp, "sys/class/hwmon/hwmon0/name", "ina226\n");
  probe_put(tmp, "sys/class/hwmon/hwmon0/power1_input", "4000000\n");
  probe_put(tmp, "sys/class/thermal/thermal_zone0/temp", "51234\n");
  probe_put(tmp, "sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count", "3\n");
  probe_put(tmp, "sys/devices/system/cpu/cpu1/thermal_throttle/core_throttle_count", "4\n");
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  CHECK(probe_sensor_open("hwmon:ina226", &cfg, &s, &e) == HS_OK, "open: %s", e.msg);
  probe_sampler *sm = probe_sampler_create(&s, tmp, 50);
  probe_mark a, b, c;
  probe_sampler_mark(sm, &a, &e);
  struct timespec ts = {0, 200000000};
  nanosleep(&ts, NULL);
  probe_sampler_mark(sm, &b, &e);
  double j = 0;
  hs_status st = probe_sampler_energy(sm, &a, &b, &j, &e);
  double dt = b.t_mono - a.t_mono;
  double temp = probe_sampler_max_temp_c(sm, false);
  size_t count = probe_sampler_count(sm);
  /* the sensor disappears: later marks fail, earlier energy stays */
  char *dir = probe_cs_path(tmp, "sys/class/hwmon/hwmon0"), *gone = probe_cs_path(tmp, "gone");
  rename(dir, gone);
  nanosleep(&ts, NULL);
  hs_status stc = probe_sampler_mark(sm, &c, &e);
  double j2 = 0;
  hs_status st2 = probe_sampler_energy(sm, &b, &c, &j2, &e);
  hs_error fe;
  bool failed = probe_sampler_failed(sm, &fe);
  probe_sampler_destroy(sm);
  probe_sensor_close(&s);
  free(dir);
  free(gone);
  CHECK(st == HS_OK && NEAR(j, 4.0 * dt, 1e-6), "4 W for %g s: %g J", dt, j);
  /* 3 readings come from create and the two marks; the rest from the thread */
  CHECK(count >= 5, "only %zu readings at 50 Hz in 0.2 s", count);
  CHECK(NEAR(temp, 51.234, 1e-9), "max temp %g", temp);
  CHECK(a.throttle == 7, "throttle sum %lld (want 7)", (long long)a.throttle);
  CHECK(stc != HS_OK && st2 != HS_OK && isnan(j2) && failed && strstr(fe.msg, "disappeared"),
        "vanished sensor mid-run: %d %d \"%s\"", stc, st2, fe.msg);
  return true;
}

PROBE_CASE_FN(sampler, rpi_throttle) {
  const char *f = "sys/devices/platform/soc/soc:firmware/get_throttled";
  CHECK(probe_rpi_throttled(tmp) == -1, "no file must read as -1");
  probe_put(tmp, f, "0x50000\n"); /* throttled earlier (sticky bits), not now */
  CHECK(probe_rpi_throttled(tmp) == 0, "sticky bits only: %lld", (long long)probe_rpi_throttled(tmp));
  probe_sensor none = {NULL, NULL};
  probe_sampler *sm = probe_sampler_create(&none, tmp, 100);
  probe_mark a, b, c;
  hs_error e = {HS_OK, ""};
  probe_sampler_mark(sm, &a, &e);
  probe_put(tmp, f, "0x50005\n"); /* under-voltage + throttled now */
  struct timespec ts = {0, 50000000};
  nanosleep(&ts, NULL);
  probe_sampler_mark(sm, &b, &e);
  probe_put(tmp, f, "0x50000\n");
  probe_sampler_mark(sm, &c, &e);
  nanosleep(&ts, NULL);
  probe_mark d;
  probe_sampler_mark(sm, &d, &e);
  probe_sampler_destroy(sm);
  CHECK(a.throttle == 0, "before: %lld", (long long)a.throttle);
  CHECK(b.throttle > a.throttle, "a throttled run must be flagged: %lld -> %lld", (long long)a.throttle,
        (long long)b.throttle);
  CHECK(d.throttle == c.throttle, "a clean run must not be flagged: %lld -> %lld", (long long)c.throttle,
        (long long)d.throttle);
  return true;
}

PROBE_CASE_FN(sampler, counter) {
  probe_put(tmp, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
  probe_put(tmp, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "262143328850\n");
  probe_put(tmp, "sys/class/powercap/intel-rapl:0/energy_uj", "262143000000\n");
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  CHECK(probe_sensor_open("rapl", &cfg, &s, &e) == HS_OK, "open: %s", e.msg);
  probe_sampler *sm = probe_sampler_create(&s, tmp, 1);
  probe_mark a, b;
  probe_sampler_mark(sm, &a, &e);
  /* +328850 to the range, then wrap to 671150: 1000000 uJ = 1 J */
  probe_put(tmp, "sys/class/powercap/intel-rapl:0/energy_uj", "671150\n");
  probe_sampler_mark(sm, &b, &e);
  double j = 0;
  hs_status st = probe_sampler_energy(sm, &a, &b, &j, &e);
  probe_sampler_destroy(sm);
  probe_sensor_close(&s);
  CHECK(st == HS_OK && NEAR(j, 1.0, 1e-9), "energy over a wrap %g J (want 1)", j);
  return true;
}
