/* main.c: the hetsim-probe command line. Thin: parse and check options,
 * open the sensor, call probe_calibrate, decide busy/idle/comm power and
 * their provenance, render (merging into an existing profile) and write
 * atomically. Subcommands: calibrate, sensors, synth.
 *
 * Honesty rules enforced here: energy_measured is true only when busy_w came
 * from the sensor; without a sensor, busy_w and idle_w must be explicit
 * estimates with a stated source (provenance kind "mixed"), or nothing is
 * written. Bad input exits 2 with one line on stderr; no output file is ever
 * left half-written (temp file + rename). What a run needs is checked before
 * any training: without a sensor, every missing estimate and source is named
 * in one message (not one per attempt); the output's folder must exist.
 * A loaded machine (1-minute load average above --threads, or steal time
 * during the runs) gets a warning on stderr, and the load goes into the
 * profile's provenance notes: such a calibration measures the load too. */
#include "probe.h"
#include "probe_cluster.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#define PROBE_MAX_THREADS 64

static const char USAGE[] =
    "hetsim-probe: calibrate a hetsim device profile on this board (libc + libm + pthreads only)\n"
    "\n"
    "usage:\n"
    "  hetsim-probe calibrate --task mnist|era5|imdb --out FILE.json [options]\n"
    "  hetsim-probe sensors [--root DIR]        which power sensors and thermal data this board has\n"
    "  hetsim-probe synth era5 FILE.csv [--rows N]   synthetic data in the real ERA5 CSV layout\n"
    "  hetsim-probe synth imdb DIR [--docs N]        synthetic reviews in the real aclImdb layout\n"
    "  hetsim-probe import --task NAME --times T.csv --threads N --out FILE.json [--power P.csv]\n"
    "                       a profile from your own training log: T.csv one row per batch with\n"
    "                       samples,time_s[,round][,start_s]; P.csv time_s,power_w on start_s's clock;\n"
    "                       without P.csv give --busy-w/--idle-w W with --*-w-source TEXT;\n"
    "                       --run-times B.csv (repeatable): the other boards' logs of the same run,\n"
    "                       to split the shared per-round noise off (--shared equal|loadings: every\n"
    "                       board alike, or a loading per board, 3+ boards)\n"
    "  hetsim-probe serve|board|box ...  a real pma/ddp/fedasync run on loopback (--help)\n"
    "\n";
/* The rest of --help (one string would pass the 4095 characters C99 promises). */
static const char USAGE_OPTIONS[] =
    "calibrate trains the task for real (warm-up discarded, then --runs timed rounds), measures\n"
    "idle and busy power with --sensor, records the held-out loss curve, and writes (or merges\n"
    "into) a profile that `hetsim` loads unchanged. Running it again for another task adds that\n"
    "task to the same file.\n"
    "\n"
    "options (calibrate):\n"
    "  --task NAME          mnist (MLP on IDX images), era5 (windowed regressor on a CSV extract),\n"
    "                       imdb (embedding bag on the aclImdb layout)\n"
    "  --data PATH          mnist: folder of IDX files (default /usr/share/datasets/fashion-mnist,\n"
    "                       Debian package dataset-fashion-mnist); era5: CSV file; imdb: aclImdb folder\n"
    "  --out FILE.json      profile to write or merge into\n"
    "  --name ID            profile id [a-z0-9._-]+ (default: FILE's base name)\n"
    "  --sensor SPEC        auto | rapl[:ZONE] | hwmon:NAME[:CH] | pi5-pmic | meter:FILE.csv | none\n"
    "                       (default auto: rapl, then hwmon power sensors, then the Pi 5 PMIC)\n"
    "  --busy-w W --busy-w-source TEXT   busy power estimate and where it comes from (needed with none)\n"
    "  --idle-w W --idle-w-source TEXT   idle power estimate and its source (needed with none)\n"
    "  --comm-w W --comm-w-source TEXT   communication power (default: idle_w, stated as an assumption)\n"
    "  --batch N (32)  --threads N (1)  --runs N (5)  --samples N (per run; default: sized to --run-s)\n"
    "  --run-s S (3)  --warmup N (default: 20 batches, repeated until 0.5 s have passed)\n"
    "  --max-samples N      training samples loaded (mnist 20000, imdb 5000 reviews, era5 all)\n"
    "  --idle-s S (5)       idle baseline before the runs    --hz HZ (10) sensor sampling rate\n"
    "  --seed N (1)  --lr X  --root DIR (/: sysfs root)  --board TEXT  --cpu TEXT\n"
    "  --pmic-cmd CMD       pi5-pmic command (default: vcgencmd pmic_read_adc)\n"
    "  --meter-offset-s S   added to the meter log's Unix timestamps to align them to this board\n"
    "  --notes TEXT         appended to provenance.notes    --quiet\n"
    "  --sustain-s S        first train S seconds from a cool board recording temperature (thermal\n"
    "                       zones), cpufreq and throughput, and fit the profile's thermal block\n"
    "                       (RC, throttle levels, trip/recover points) when throttling is seen\n"
    "\n"
    "sensors: RAPL needs root since Linux 5.10 (energy_uj is mode 0400); hwmon sensors are\n"
    "found by their name file (ina219, ina226, ina3221, ...), never by hwmonN; pi5-pmic needs\n"
    "vcgencmd (Raspberry Pi OS); a meter log is CSV with columns time_s (Unix s) and power_w.\n"
    "\n"
    "example (a Raspberry Pi 4 with an INA226 on the 5 V input):\n"
    "  hetsim-probe calibrate --task mnist --out rpi4.json --sensor hwmon:ina226 --threads 4\n"
    "example (no power sensor: state the estimate and its source):\n"
    "  hetsim-probe calibrate --task mnist --out myvm.json --sensor none \\\n"
    "      --busy-w 12 --busy-w-source \"vendor TDP share\" --idle-w 4 --idle-w-source \"vendor idle figure\"\n"
    "\n"
    "exit status: 0 written; 1 a file cannot be read or written (the profile, synth's output);\n"
    "             2 bad input (one line on stderr saying why). Nothing is half-written.\n";

static int die(const char *fmt, ...) PROBE_PRINTF(1, 2);
static int die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = probe_vsay(HS_EXIT_BADINPUT, NULL, fmt, ap);
  va_end(ap);
  return rc;
}

/* die() with err's message; 1 when a file cannot be read or written (the
 * house rule: HS_EIO, HS_EPERM, HS_ENOMEM), else 2. */
static int die_err(const hs_error *err) {
  die("%s", err->msg);
  return err->status == HS_EIO || err->status == HS_EPERM || err->status == HS_ENOMEM ? 1
                                                                                        : HS_EXIT_BADINPUT;
}

typedef struct {
  const char *task, *data, *out, *name, *sensor, *root, *board, *cpu, *pmic_cmd, *notes;
  probe_estimate busy, idle, comm;
  double batch, threads, runs, samples, run_s, warmup, max_samples, idle_s, hz, seed, lr, meter_offset;
  double sustain_s;
  bool quiet;
} cli_opts;

/* A number option: finite, within [lo, hi], integral when asked. */
static bool cli_num(const char *opt, const char *v, double lo, double hi, bool integer, double *out) {
  char *end = NULL;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || *end != '\0' || !isfinite(x) || x < lo || x > hi || (integer && x != floor(x))) {
    die("%s: \"%s\" is not %s in [%g, %g]", opt, v, integer ? "an integer" : "a number", lo, hi);
    return false;
  }
  *out = x;
  return true;
}

static int cli_parse(int argc, char **argv, cli_opts *o) {
  *o = (cli_opts){.sensor = "auto", .root = "/", .busy = {NAN, NULL}, .idle = {NAN, NULL}, .comm = {NAN, NULL},
                  .batch = 32, .threads = 1, .runs = 5, .run_s = 3, .idle_s = 5, .hz = 10, .seed = 1};
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--quiet") == 0) {
      o->quiet = true;
      continue;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
      fputs(USAGE_OPTIONS, stdout);
      exit(0);
    }
    if (i + 1 >= argc) return die("%s: missing value (see hetsim-probe --help)", a);
    const char *v = argv[++i];
    struct {
      const char *opt;
      const char **s;
    } strs[] = {{"--task", &o->task}, {"--data", &o->data}, {"--out", &o->out}, {"--name", &o->name},
                {"--sensor", &o->sensor}, {"--root", &o->root}, {"--board", &o->board}, {"--cpu", &o->cpu},
                {"--pmic-cmd", &o->pmic_cmd}, {"--notes", &o->notes}, {"--busy-w-source", &o->busy.source},
                {"--idle-w-source", &o->idle.source}, {"--comm-w-source", &o->comm.source}};
    struct {
      const char *opt;
      double *d, lo, hi;
      bool integer;
    } nums[] = {{"--batch", &o->batch, 1, 1 << 20, true}, {"--threads", &o->threads, 1, PROBE_MAX_THREADS, true},
                {"--runs", &o->runs, 1, 1000, true}, {"--samples", &o->samples, 1, 1e9, true},
                {"--run-s", &o->run_s, 0.01, 3600, false}, {"--sustain-s", &o->sustain_s, 1, 86400, false}, {"--warmup", &o->warmup, 1, 1e9, true},
                {"--max-samples", &o->max_samples, 10, 1e9, true}, {"--idle-s", &o->idle_s, 0, 3600, false},
                {"--hz", &o->hz, 0.1, 1000, false}, {"--seed", &o->seed, 0, 9007199254740992.0, true},
                {"--lr", &o->lr, 1e-9, 100, false}, {"--meter-offset-s", &o->meter_offset, -1e9, 1e9, false},
                {"--busy-w", &o->busy.w, 1e-6, 1e5, false}, {"--idle-w", &o->idle.w, 1e-6, 1e5, false},
                {"--comm-w", &o->comm.w, 1e-6, 1e5, false}}; /* the loader's 100 kW */
    bool known = false;
    for (size_t k = 0; k < sizeof strs / sizeof *strs && !known; k++)
      if (strcmp(a, strs[k].opt) == 0) {
        *strs[k].s = v;
        known = true;
      }
    for (size_t k = 0; k < sizeof nums / sizeof *nums && !known; k++)
      if (strcmp(a, nums[k].opt) == 0) {
        if (!cli_num(a, v, nums[k].lo, nums[k].hi, nums[k].integer, nums[k].d)) return HS_EXIT_BADINPUT;
        known = true;
      }
    if (!known) return die("%s: unknown option (see hetsim-probe --help)", a);
  }
  return 0;
}

static int cmd_sensors(int argc, char **argv) {
  cli_opts o;
  int rc = cli_parse(argc, argv, &o);
  if (rc) return rc;
  probe_sensor_cfg sc = {o.root, NULL, o.pmic_cmd, 0};
  printf("sysfs root: %s\n", o.root);
  for (size_t i = 0; probe_sensor_type_at(i); i++) {
    const probe_sensor_type *t = probe_sensor_type_at(i);
    if (t->window) {
      printf("%-9s needs a log file: --sensor meter:FILE.csv\n", t->name);
      continue;
    }
    void *st = NULL;
    hs_error e = {HS_OK, ""};
    sc.arg = NULL;
    if (t->open(&sc, &st, &e) == HS_OK) {
      double v = 0;
      hs_error e2 = {HS_OK, ""};
      bool ok = t->read(st, &v, &e2) == HS_OK;
      printf("%-9s available: %s, covers %s%s%s\n", t->name, t->id(st), t->covers(st), ok ? "" : "; read failed: ",
             ok ? "" : e2.msg);
      t->close(st);
    } else {
      printf("%-9s unavailable: %s\n", t->name, e.msg);
    }
  }
  char buf[512];
  probe_hwmon_list(o.root, buf, sizeof buf);
  printf("hwmon power devices: %s\n", buf[0] ? buf : "none");
  double t = probe_max_temp_c(o.root);
  int64_t th = probe_throttle_count(o.root);
  if (isnan(t)) printf("thermal zones: none\n");
  else printf("thermal zones: hottest %.1f C\n", t);
  if (th < 0) printf("throttle counters: none\n");
  else printf("throttle counters: %lld events so far\n", (long long)th);
  probe_sysinfo si;
  probe_sysinfo_read(o.root, &si);
  printf("board: %s (from %s)\ncpu: %s\narch: %s\nkernel: %s\n", si.board, si.board_source, si.cpu, si.arch, si.kernel);
  return 0;
}

static int cmd_synth(int argc, char **argv) {
  if (argc < 4) return die("synth: usage: hetsim-probe synth era5 FILE.csv [--rows N] | synth imdb DIR [--docs N]");
  double n = 0;
  if (argc == 6 && !cli_num(argv[4], argv[5], 10, 1e7, true, &n)) return HS_EXIT_BADINPUT;
  if (argc != 4 && argc != 6) return die("synth: unexpected arguments (see hetsim-probe --help)");
  hs_error err = {HS_OK, ""};
  hs_status st;
  if (strcmp(argv[2], "era5") == 0) {
    if (argc == 6 && strcmp(argv[4], "--rows") != 0) return die("%s: unknown option for synth era5", argv[4]);
    st = lrn_synth_era5(argv[3], n > 0 ? (size_t)n : 8784, 1, &err);
  } else if (strcmp(argv[2], "imdb") == 0) {
    if (argc == 6 && strcmp(argv[4], "--docs") != 0) return die("%s: unknown option for synth imdb", argv[4]);
    st = lrn_synth_imdb(argv[3], n > 0 ? (size_t)n : 5000, 1, &err);
  } else {
    return die("synth: \"%s\" is not era5 or imdb", argv[2]);
  }
  if (st != HS_OK) return die_err(&err);
  printf("wrote synthetic %s data to %s (marked as synthetic)\n", argv[2], argv[3]);
  return 0;
}

static bool cli_est_ok(const char *opt, const probe_estimate *e) {
  if (isnan(e->w) != (e->source == NULL)) {
    die("%s%s: an estimate needs both the value (%s) and where it comes from (%s-source)",
        opt, isnan(e->w) ? "-source" : "", opt, opt);
    return false;
  }
  if (e->source && !e->source[0]) {
    die("%s-source: empty; say where the figure comes from", opt);
    return false;
  }
  return true;
}

/* --sustain-s: fit the thermal block from the sustained record and add it to
 * the rendered profile; without throttling in the record, or when the record
 * cannot be fitted, say so on stderr and keep the profile as it is. Frees
 * the record. NULL with err when the block cannot be added. */
static char *sustain_attach(char *text, probe_thermal_series *ts, double temp_idle, double idle, double busy,
                            double sustain_s, hs_error *err) {
  probe_thermal_out th;
  size_t points = ts->n;
  hs_status st = probe_thermal_fit(ts, temp_idle, idle, busy, &th, err);
  probe_thermal_series_fini(ts);
  if (st != HS_OK) { /* the calibration itself stands: write it, say why there is no block */
    fprintf(stderr, "hetsim-probe: warning: no thermal block: %s\n", err->msg);
    return text;
  }
  if (th.nlevels < 2) {
    fprintf(stderr,
            "hetsim-probe: sustained run: no throttling in %.0f s (heating towards %.1f C; R %.3g C/W, C %.3g J/C): "
            "no thermal block written\n",
            sustain_s, th.t_inf_c, th.r_c_per_w, th.c_j_per_c);
    return text;
  }
  char what[96];
  snprintf(what, sizeof what, "%.0f s of training, %zu points", sustain_s, points);
  char *out = probe_thermal_attach(text, &th, what, err);
  free(text);
  return out;
}

static int cmd_calibrate(int argc, char **argv) {
  cli_opts o;
  int rc = cli_parse(argc, argv, &o);
  if (rc) return rc;
  lrn_idx_verify_whole(true); /* --max-samples must not hide a corrupt .gz (issue 16 defect 7) */
  if (!o.task) return die("--task: missing (mnist, era5 or imdb)");
  const lrn_trainer_type *tr = lrn_trainer_find(o.task);
  if (!tr) return die("--task: unknown task \"%s\" (mnist, era5 or imdb)", o.task);
  if (!o.out) return die("--out: missing (the profile file to write or merge into)");
  bool none = strcmp(o.sensor, "none") == 0;
  if (none) { /* everything a calibration without a sensor needs, in one message */
    char miss[160] = "";
    const char *opt[] = {"--busy-w", "--busy-w-source", "--idle-w", "--idle-w-source"};
    bool lacks[] = {isnan(o.busy.w), !o.busy.source, isnan(o.idle.w), !o.idle.source};
    for (int k = 0; k < 4; k++)
      if (lacks[k]) snprintf(miss + strlen(miss), sizeof miss - strlen(miss), "%s%s", *miss ? ", " : "", opt[k]);
    if (*miss)
      return die("--sensor none measures no power, and the simulator needs busy and idle power with where they "
                 "come from: missing %s (e.g. --busy-w 12 --busy-w-source \"vendor TDP share\" --idle-w 4 "
                 "--idle-w-source \"vendor idle figure\"; not writing a profile)",
                 miss);
  }
  const char *slash = strrchr(o.out, '/');
  if (slash && slash != o.out) { /* the folder must exist before minutes of measuring */
    char dir[1024];
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - o.out < 1023 ? slash - o.out : 1023), o.out);
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
      return die("--out %s: the folder %s does not exist (create it first; nothing was measured)", o.out, dir);
  }
  if (!cli_est_ok("--busy-w", &o.busy) || !cli_est_ok("--idle-w", &o.idle) || !cli_est_ok("--comm-w", &o.comm))
    return HS_EXIT_BADINPUT;
  char name[128];
  if (o.name) {
    snprintf(name, sizeof name, "%s", o.name);
  } else {
    const char *b = strrchr(o.out, '/');
    b = b ? b + 1 : o.out;
    size_t l = strlen(b);
    if (l > 5 && strcmp(b + l - 5, ".json") == 0) l -= 5;
    snprintf(name, sizeof name, "%.*s", (int)l, b);
  }
  if (!name[0] || name[0] == '.' || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(name))
    return die("--name: \"%s\" must match [a-z0-9._-]+ (default: the --out file's base name)", name);

  /* What the simulator's loader would refuse, refused before any run. */
  if (!isnan(o.busy.w) && !isnan(o.idle.w) && o.busy.w < o.idle.w)
    return die("--busy-w: %g W is below --idle-w %g W: training cannot draw less than idling (the simulator "
               "refuses such a profile)",
               o.busy.w, o.idle.w);
  if ((o.board && !o.board[0]) || (o.cpu && !o.cpu[0]))
    return die("%s: empty (leave it out to use the detected one)", o.board && !o.board[0] ? "--board" : "--cpu");

  probe_sysinfo si;
  probe_sysinfo_read(o.root, &si);
  const char *board = o.board ? o.board : si.board, *cpu = o.cpu ? o.cpu : si.cpu;

  /* Refuse a bad merge before spending minutes measuring. */
  unsigned char *existing = NULL;
  size_t elen = 0;
  hs_error err = {HS_OK, ""};
  if (probe_exists(o.out)) {
    if (probe_read_file(o.out, &existing, &elen, &err) != HS_OK) return die_err(&err);
    probe_json *j = probe_json_parse((const char *)existing, elen, &err);
    hs_status cst = j ? probe_profile_check(j, &err) : HS_EPARSE;
    const char *fn[] = {"name", "board", "arch"}, *mine[] = {name, board, si.arch};
    for (int k = 0; k < 3 && cst == HS_OK; k++)
      if (strcmp(probe_json_get(j, fn[k])->str, mine[k]) != 0)
        cst = hs_error_set(&err, HS_EINVAL,
                            "%s: the file says \"%s\", this board \"%s\": one profile per board type (use another "
                            "--out, or --name/--board to match)",
                            fn[k], probe_json_get(j, fn[k])->str, mine[k]);
    probe_json_destroy(j);
    if (cst != HS_OK) {
      free(existing);
      return die("%s: %s", o.out, err.msg);
    }
  }

  probe_sensor sensor = {NULL, NULL};
  probe_sensor_cfg sc = {o.root, NULL, o.pmic_cmd, o.meter_offset};
  if (probe_sensor_open(o.sensor, &sc, &sensor, &err) != HS_OK) {
    free(existing);
    return die("%s", err.msg);
  }
  probe_calib_cfg cc = {tr, {o.data, (size_t)o.max_samples, (uint64_t)o.seed, o.lr, 0}, (unsigned)o.runs,
                        (unsigned)o.threads, (size_t)o.batch, (size_t)o.samples, (size_t)o.warmup, o.run_s,
                        o.idle_s, o.hz, o.root, &sensor, o.quiet};
  probe_task_result res;
  double idle_meas = NAN, temp_idle = NAN;
  probe_thermal_series ts = {0};
  if (o.sustain_s > 0 && probe_sustain(&cc, o.sustain_s, &ts, &temp_idle, &err) != HS_OK) {
    probe_sensor_close(&sensor);
    free(existing);
    return die("%s", err.msg);
  }
  probe_load l0, l1;
  probe_load_read(o.root, &l0);
  hs_status st = probe_calibrate(&cc, &res, &idle_meas, &err);
  probe_load_read(o.root, &l1);
  double steal = probe_steal_fraction(&l0, &l1);
  char load_note[200] = "";
  size_t ln = 0;
  if (l0.have_loadavg)
    ln += (size_t)snprintf(load_note, sizeof load_note, "; machine load: 1-min load average %.2f before the runs",
                           l0.loadavg1);
  if (!isnan(steal))
    ln += (size_t)snprintf(load_note + ln, sizeof load_note - ln, "%s steal %.1f %% during them",
                           ln ? "," : "; machine load:", 100 * steal);
  if (ln && ((l0.have_loadavg && l0.loadavg1 > o.threads) || steal > 0.02))
    snprintf(load_note + ln, sizeof load_note - ln, " (LOADED: timings may read high)");
  const char *sid = sensor.type ? sensor.type->id(sensor.state) : NULL;
  const char *cov = sensor.type ? sensor.type->covers(sensor.state) : NULL;
  char sid_copy[320] = "", cov_copy[320] = "";
  if (sid) snprintf(sid_copy, sizeof sid_copy, "%s on %s", sid, board);
  if (cov) snprintf(cov_copy, sizeof cov_copy, "%s", cov);
  probe_sensor_close(&sensor);
  if (st != HS_OK) {
    free(existing);
    return die("%s", err.msg);
  }

  /* Which figures are measured, which are estimates, and say so. */
  char src[4][600];
  const char *sources[5] = {NULL};
  int ns = 0;
  double busy = res.busy_w, idle = idle_meas, comm;
  if (!res.energy_measured) {
    if (isnan(o.busy.w)) {
      probe_task_result_fini(&res);
      free(existing);
      return die("busy_w: the sensor measured no run (%s) and no --busy-w estimate was given: not writing a profile "
                 "the simulator cannot use",
                 res.notes);
    }
    busy = o.busy.w;
    snprintf(src[ns], sizeof src[ns], "busy_w %g W: estimate, %s", busy, o.busy.source);
    sources[ns] = src[ns];
    ns++;
  }
  if (isnan(idle)) {
    if (isnan(o.idle.w)) {
      probe_task_result_fini(&res);
      free(existing);
      return die("idle_w: idle power was not measured and no --idle-w estimate was given: not writing a profile");
    }
    idle = o.idle.w;
    snprintf(src[ns], sizeof src[ns], "idle_w %g W: estimate, %s", idle, o.idle.source);
    sources[ns] = src[ns];
    ns++;
  }
  if (!isnan(o.comm.w)) {
    comm = o.comm.w;
    snprintf(src[ns], sizeof src[ns], "comm_w %g W: estimate, %s", comm, o.comm.source);
  } else {
    comm = idle;
    snprintf(src[ns], sizeof src[ns],
             "comm_w = idle_w (%g W): assumption; the harness does not drive the network, so communication power is "
             "not measured",
             comm);
  }
  sources[ns] = src[ns];
  ns++;
  snprintf(src[ns], sizeof src[ns], "tau_s, tau_cv, overhead_s, loss_curve: measured by hetsim-probe on this board%s",
           res.energy_measured ? "; busy_w and idle_w: measured by the sensor" : "");
  sources[ns] = src[ns];
  ns++;
  sources[ns] = NULL;
  /* "measured" would claim comm_w too; the harness never measures it. */
  const char *kind = "mixed";
  res.busy_w = busy;
  time_t now = time(NULL);
  struct tm tmv;
  gmtime_r(&now, &tmv);
  char date[16];
  strftime(date, sizeof date, "%Y-%m-%d", &tmv);
  char notes[2400];
#ifdef __OPTIMIZE__
  const char *opt = "optimised";
#else
  const char *opt = "NOT optimised (-O0: timings are pessimistic)";
#endif
  char bsrc[400];
  if (o.board) snprintf(bsrc, sizeof bsrc, "board as given with --board (detected: %.200s, from %s)", si.board, si.board_source);
  else snprintf(bsrc, sizeof bsrc, "board from %s", si.board_source);
  snprintf(notes, sizeof notes, "%s; built with gcc %s, %s, build type %s; %s%s%s%s", bsrc,
           __VERSION__, opt, PROBE_BUILD_TYPE,
           res.energy_measured ? "energy measured by the sensor" : "energy NOT measured (no sensor)", load_note,
           o.notes ? "; " : "", o.notes ? o.notes : "");
  probe_profile_in in = {name, board, si.arch, cpu, si.kernel, date, idle, comm, kind,
                         sid ? sid_copy : NULL, cov ? cov_copy : NULL, sid ? o.hz : 0, sources, notes, &res};
  char *text = probe_profile_render(&in, (const char *)existing, elen, &err);
  free(existing);
  if (text && ts.n) text = sustain_attach(text, &ts, temp_idle, idle, busy, o.sustain_s, &err);
  if (!text) {
    probe_task_result_fini(&res);
    return die("%s: %s", o.out, err.msg);
  }
  st = probe_write_atomic(o.out, text, strlen(text), &err);
  free(text);
  if (st != HS_OK) {
    probe_task_result_fini(&res);
    return die_err(&err);
  }
  /* Warnings once the profile is written (a refusal stays one line). */
  if (l0.have_loadavg && l0.loadavg1 > o.threads)
    fprintf(stderr,
            "hetsim-probe: warning: load average %.2f is above the %g thread(s) calibrating: other work shares "
            "the CPUs and tau_s will read high (recorded in provenance.notes)\n",
            l0.loadavg1, o.threads);
  if (steal > 0.02)
    fprintf(stderr,
            "hetsim-probe: warning: %.1f %% of CPU time was stolen by the hypervisor during the runs: tau_s will "
            "read high (recorded in provenance.notes)\n",
            100 * steal);
  fflush(stderr);
  if (!o.quiet)
    printf("wrote %s: task %s: tau_s %.4g s/sample (cv %.3f, %u/%u runs kept), overhead_s %.3g, busy_w %.3g W (%s), "
         "idle_w %.3g W (%s)\n",
         o.out, res.task, res.tau_s, res.tau_cv, res.runs_kept, res.runs, res.overhead_s, busy,
         res.energy_measured ? "measured" : "estimate", idle, isnan(idle_meas) ? "estimate" : "measured");
  probe_task_result_fini(&res);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return die("no command: calibrate, sensors or synth (see hetsim-probe --help)");
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    fputs(USAGE, stdout);
    fputs(USAGE_OPTIONS, stdout);
    return 0;
  }
  if (strcmp(argv[1], "calibrate") == 0) return cmd_calibrate(argc, argv);
  if (strcmp(argv[1], "sensors") == 0) return cmd_sensors(argc, argv);
  if (strcmp(argv[1], "synth") == 0) return cmd_synth(argc, argv);
  if (strcmp(argv[1], "import") == 0) return probe_cmd_import(argc, argv);
  if (strcmp(argv[1], "serve") == 0) return probe_cmd_serve(argc, argv);
  if (strcmp(argv[1], "board") == 0) return probe_cmd_board(argc, argv);
  if (strcmp(argv[1], "box") == 0) return probe_cmd_box(argc, argv);
  return die("%s: unknown command (calibrate, sensors, synth, import, serve, board, box; see hetsim-probe --help)",
             argv[1]);
}
