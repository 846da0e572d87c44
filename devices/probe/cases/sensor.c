/* sensor.c: the power sensors' cases on fake sysfs trees and meter logs:
 * RAPL (wrap, missing, permission denied), hwmon (by name, index changed),
 * PMIC, the external meter (window, a log being written), --sensor specs. */
#include "cases.h"

/* ----------------------------------------------------------------- sensors */
PROBE_CASE_FN(sensor, rapl_wrap) {
  CHECK(probe_counter_delta(999000, 1000, 1000000) == 2000, "delta over a wrap");
  CHECK(probe_counter_delta(5, 9, 1000000) == 4, "plain delta");
  const char *z = "sys/class/powercap/intel-rapl:0/";
  char f[128];
  snprintf(f, sizeof f, "%sname", z);
  probe_put(tmp, f, "package-0\n");
  snprintf(f, sizeof f, "%smax_energy_range_uj", z);
  probe_put(tmp, f, "1000000\n");
  snprintf(f, sizeof f, "%senergy_uj", z);
  probe_put(tmp, f, "999000\n");
  probe_put(tmp, "sys/class/powercap/intel-rapl:0:0/name", "core\n"); /* a subzone: not summed */
  probe_put(tmp, "sys/class/powercap/intel-rapl:0:0/energy_uj", "5\n");
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  CHECK(probe_sensor_open("rapl", &cfg, &s, &e) == HS_OK, "rapl open: %s", e.msg);
  probe_put(tmp, f, "1000\n"); /* wrapped: 999000 -> 1000000 -> 1000 = 2000 uJ */
  double j1 = 0, j2 = 0;
  hs_status st1 = s.type->read(s.state, &j1, &e);
  probe_put(tmp, f, "501000\n");
  hs_status st2 = s.type->read(s.state, &j2, &e);
  bool id = strcmp(s.type->id(s.state), "rapl:package-0") == 0 && strstr(s.type->covers(s.state), "package only");
  probe_sensor_close(&s);
  CHECK(st1 == HS_OK && NEAR(j1, 0.002, 1e-12), "after wrap %g J (want 0.002)", j1);
  CHECK(st2 == HS_OK && NEAR(j2, 0.502, 1e-12), "then %g J (want 0.502)", j2);
  CHECK(id, "id/covers wrong");
  return true;
}

PROBE_CASE_FN(sensor, rapl_missing_and_denied) {
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  CHECK(probe_sensor_open("rapl", &cfg, &s, &e) == HS_ENOENT && strstr(e.msg, "powercap"), "no powercap: \"%s\"",
        e.msg);
  probe_put(tmp, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
  probe_put(tmp, "sys/class/powercap/intel-rapl:0/energy_uj", "100\n");
  char *ep = probe_cs_path(tmp, "sys/class/powercap/intel-rapl:0/energy_uj");
  chmod(ep, 0000); /* unreadable for nobody and for a non-root owner alike */
  /* As root, file modes do not bite: drop to nobody in a child, as a non-root
   * user on kernel >= 5.10 would be. */
  pid_t pid = fork();
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    probe_sensor s2;
    hs_error e2 = {HS_OK, ""};
    hs_status st = probe_sensor_open("rapl", &cfg, &s2, &e2);
    _exit(st == HS_EPERM && strstr(e2.msg, "5.10") && strstr(e2.msg, "root") ? 0 : 1);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  free(ep);
  CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
        "permission denied not explained (child status %d; 3 = could not drop root)", WEXITSTATUS(ws));
  probe_put(tmp, "plain", "12\n");
  char *pp = probe_cs_path(tmp, "plain/x");
  int64_t v = 0;
  CHECK(probe_read_i64(pp, &v, &e) == HS_ENOENT, "ENOTDIR maps to not found: \"%s\"", e.msg);
  free(pp);
  return true;
}

PROBE_CASE_FN(sensor, hwmon_by_name) {
  probe_put(tmp, "sys/class/hwmon/hwmon0/name", "k10temp\n");
  probe_put(tmp, "sys/class/hwmon/hwmon0/temp1_input", "45000\n");
  probe_put(tmp, "sys/class/hwmon/hwmon3/name", "ina226\n");
  probe_put(tmp, "sys/class/hwmon/hwmon3/power1_input", "5250000\n"); /* uW */
  probe_put(tmp, "sys/class/hwmon/hwmon5/name", "ina3221\n");
  probe_put(tmp, "sys/class/hwmon/hwmon5/in1_input", "5000\n");   /* mV */
  probe_put(tmp, "sys/class/hwmon/hwmon5/curr1_input", "1200\n"); /* mA */
  probe_put(tmp, "sys/class/hwmon/hwmon5/in2_input", "3300\n");
  probe_put(tmp, "sys/class/hwmon/hwmon5/curr2_input", "500\n");
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  double w = 0;
  CHECK(probe_sensor_open("hwmon:ina226", &cfg, &s, &e) == HS_OK, "ina226: %s", e.msg);
  hs_status st = s.type->read(s.state, &w, &e);
  probe_sensor_close(&s);
  CHECK(st == HS_OK && NEAR(w, 5.25, 1e-9), "ina226 power1_input: %g W (want 5.25)", w);
  CHECK(probe_sensor_open("hwmon:ina3221", &cfg, &s, &e) == HS_OK, "ina3221: %s", e.msg);
  st = s.type->read(s.state, &w, &e);
  probe_sensor_close(&s);
  CHECK(st == HS_OK && NEAR(w, 6.0, 1e-9), "ina3221 5000 mV x 1200 mA: %g W (want 6)", w);
  CHECK(probe_sensor_open("hwmon:ina3221:2", &cfg, &s, &e) == HS_OK, "ina3221:2: %s", e.msg);
  st = s.type->read(s.state, &w, &e);
  probe_sensor_close(&s);
  CHECK(st == HS_OK && NEAR(w, 1.65, 1e-9), "channel 2: %g W (want 1.65)", w);
  CHECK(probe_sensor_open("hwmon:ina219", &cfg, &s, &e) == HS_ENOENT && strstr(e.msg, "ina226"),
        "unknown name should list what exists: \"%s\"", e.msg);
  CHECK(probe_sensor_open("hwmon:ina3221:x", &cfg, &s, &e) == HS_EINVAL, "bad channel accepted");
  CHECK(probe_sensor_open("auto", &cfg, &s, &e) == HS_OK && strncmp(s.type->id(s.state), "hwmon:ina226", 12) == 0,
        "auto should find hwmon ina226 (lowest index with power): %s", e.msg);
  probe_sensor_close(&s);
  return true;
}

PROBE_CASE_FN(sensor, hwmon_index_changed) {
  probe_put(tmp, "sys/class/hwmon/hwmon2/name", "ina219\n");
  probe_put(tmp, "sys/class/hwmon/hwmon2/power1_input", "2000000\n");
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  CHECK(probe_sensor_open("hwmon:ina219", &cfg, &s, &e) == HS_OK, "open: %s", e.msg);
  char *a = probe_cs_path(tmp, "sys/class/hwmon/hwmon2"), *b = probe_cs_path(tmp, "sys/class/hwmon/hwmon7");
  int r = rename(a, b); /* driver rebound: same chip, new index */
  probe_put(tmp, "sys/class/hwmon/hwmon7/power1_input", "3000000\n");
  double w = 0;
  hs_status st = s.type->read(s.state, &w, &e);
  char *c = probe_cs_path(tmp, "gone");
  rename(b, c); /* now it is gone for good */
  hs_status st2 = s.type->read(s.state, &w, &e);
  probe_sensor_close(&s);
  free(a);
  free(b);
  free(c);
  CHECK(r == 0 && st == HS_OK && NEAR(w, 3.0, 1e-9), "after renumbering: %d, %g W", st, w);
  CHECK(st2 == HS_ENOENT && strstr(e.msg, "disappeared"), "vanished sensor: \"%s\"", e.msg);
  return true;
}

PROBE_CASE_FN(sensor, pmic) {
  const char *out = "     3V7_WL_SW_A current(0)=0.10000000A\n"
                    "     VDD_CORE_A current(7)=2.00000000A\n"
                    "     3V7_WL_SW_V volt(8)=3.70000000V\n"
                    "     VDD_CORE_V volt(15)=0.80000000V\n"
                    "     EXT5V_V volt(24)=5.10000000V\n"
                    "     BATT_V volt(25)=0.00000000V\n";
  double w = 0;
  hs_error e = {HS_OK, ""};
  CHECK(probe_pmic_parse(out, &w, &e) == HS_OK && NEAR(w, 0.37 + 1.6, 1e-9),
        "pmic sum %g W (want 1.97: 0.1 A x 3.7 V + 2 A x 0.8 V; EXT5V has no current)", w);
  CHECK(probe_pmic_parse("garbage\n", &w, &e) == HS_EPARSE, "garbage parsed");
  CHECK(probe_put(tmp, "pmic.txt", out), "write");
  char *cmd = probe_xasprintf("cat '%s/pmic.txt'", tmp);
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, cmd, 0};
  hs_status st = probe_sensor_open("pi5-pmic", &cfg, &s, &e);
  double w2 = 0;
  if (st == HS_OK) {
    st = s.type->read(s.state, &w2, &e);
    probe_sensor_close(&s);
  }
  free(cmd);
  CHECK(st == HS_OK && NEAR(w2, 1.97, 1e-9), "pi5-pmic via command: %d %s %g", st, e.msg, w2);
  cfg.pmic_cmd = "false";
  CHECK(probe_sensor_open("pi5-pmic", &cfg, &s, &e) == HS_ENOENT && strstr(e.msg, "vcgencmd"),
        "failing command: \"%s\"", e.msg);
  return true;
}

PROBE_CASE_FN(sensor, meter_window) {
  /* power rises linearly 10 W -> 20 W over t = 1000..1010: integral over
   * [1002, 1008] = 6 s x mean(12, 18) = 90 J; interpolation at both ends. */
  probe_put(tmp, "meter.csv", "time_s,power_w,voltage_v\n1000,10,5\n1004,14,5\n1010,20,5\n");
  char *p = probe_cs_path(tmp, "meter.csv");
  char *spec = probe_xasprintf("meter:%s", p);
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  hs_status st = probe_sensor_open(spec, &cfg, &s, &e);
  double j = 0;
  hs_status w1 = st == HS_OK ? s.type->window(s.state, 1002, 1008, &j, &e) : st;
  double j2 = 0;
  hs_status w2 = st == HS_OK ? s.type->window(s.state, 995, 1008, &j2, &e) : st;
  if (st == HS_OK) probe_sensor_close(&s);
  cfg.meter_offset_s = 10; /* meter clock 10 s behind: its 1000 is our 1010 */
  hs_status st3 = probe_sensor_open(spec, &cfg, &s, &e);
  double j3 = 0;
  hs_status w3 = st3 == HS_OK ? s.type->window(s.state, 1012, 1018, &j3, &e) : st3;
  if (st3 == HS_OK) probe_sensor_close(&s);
  free(p);
  free(spec);
  CHECK(w1 == HS_OK && NEAR(j, 90.0, 1e-9), "meter window %g J (want 90)", j);
  CHECK(w2 == HS_ERANGE, "window before the log must fail, got %d", w2);
  CHECK(w3 == HS_OK && NEAR(j3, 90.0, 1e-9), "with offset %g J (want 90)", j3);
  return true;
}

PROBE_CASE_FN(sensor, meter_log_being_written) {
  /* The logger is still appending: the file ends inside a line ("1012," or a
   * time cut to "10"). That line is not data yet; the rows before it are. */
  static const char *const torn[] = {"1012,", "10", "1011.5,1"};
  for (size_t k = 0; k < sizeof torn / sizeof *torn; k++) {
    char *text = probe_xasprintf("time_s,power_w\n1000,10\n1004,14\n1010,20\n%s", torn[k]);
    probe_put(tmp, "live.csv", text);
    free(text);
    char *p = probe_cs_path(tmp, "live.csv");
    char *spec = probe_xasprintf("meter:%s", p);
    probe_sensor s;
    probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
    hs_error e = {HS_OK, ""};
    hs_status st = probe_sensor_open(spec, &cfg, &s, &e);
    double j = 0;
    hs_status w = st == HS_OK ? s.type->window(s.state, 1002, 1008, &j, &e) : st;
    if (st == HS_OK) probe_sensor_close(&s);
    free(p);
    free(spec);
    CHECK(w == HS_OK && NEAR(j, 90.0, 1e-9), "torn last line \"%s\": %g J (want 90): %s", torn[k], j, e.msg);
  }
  /* a complete line that is wrong is still an error, with its line */
  probe_put(tmp, "live.csv", "time_s,power_w\n1000,10\n1004,x\n1010,20\n");
  char *p = probe_cs_path(tmp, "live.csv");
  char *spec = probe_xasprintf("meter:%s", p);
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, NULL, 0};
  hs_error e = {HS_OK, ""};
  hs_status st = probe_sensor_open(spec, &cfg, &s, &e);
  double j = 0;
  hs_status w = st == HS_OK ? s.type->window(s.state, 1002, 1008, &j, &e) : st;
  if (st == HS_OK) probe_sensor_close(&s);
  free(p);
  free(spec);
  CHECK(w == HS_EPARSE && strstr(e.msg, "live.csv") && strstr(e.msg, "line 3"), "bad row: %d \"%s\"", w, e.msg);
  return true;
}

PROBE_CASE_FN(sensor, spec) {
  probe_sensor s;
  probe_sensor_cfg cfg = {tmp, NULL, "false", 0};
  hs_error e = {HS_OK, ""};
  CHECK(probe_sensor_open("none", &cfg, &s, &e) == HS_OK && s.type == NULL, "none");
  CHECK(probe_sensor_open("bogus", &cfg, &s, &e) == HS_EINVAL && strstr(e.msg, "bogus"), "unknown: \"%s\"", e.msg);
  CHECK(probe_sensor_open("auto", &cfg, &s, &e) == HS_ENOENT && strstr(e.msg, "--sensor none"),
        "auto with nothing: \"%s\"", e.msg);
  return true;
}
