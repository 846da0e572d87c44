/* [devices/probe/include -> hetsim::probe_core; not installed]
 * probe.h: internal API of the board harness hetsim-probe (devices/probe).
 *
 * The harness is copied to a board and must build there with libc, libm and
 * pthreads only: no GSL, no cJSON, not even hetsim::base. So it carries its own
 * strict JSON, and links two libc-only libraries: hetsim::status (status
 * codes, "<file>: <where>: <reason>" messages) and hetsim::learn (gzip, IDX,
 * CSV and text readers, the pool, the MLP and the trainers: hs_learn_parts.h).
 * Everything here is folder-internal (prefix probe_); main.c is the CLI.
 *
 * Every reader of /sys, /proc or a command takes a root folder, so the tests
 * run the same code on fake trees ("/" on a real board). */
#ifndef PROBE_H
#define PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ status */
/* Status codes, error messages ("<file>: <where>: <reason>") and aborting
 * allocation are hetsim's own (hetsim::status: libc only, so it builds on a
 * bare board too): one table for the harness and the simulator. */
#include "base/hs_alloc.h"
#include "base/hs_status.h"
/* The data readers, the pool, the MLP and the trainers live in the learner
 * library (devices/learn, hetsim::learn); the harness links it. */
#include "learn/hs_learn_parts.h"

#if defined(__GNUC__)
#define PROBE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PROBE_PRINTF(a, b)
#endif

/* One line on stderr, "hetsim-probe[ who]: <message>" (line breaks in the
 * message become spaces, so a message is always one line); returns rc, the
 * exit status the caller passes on. The one error printer of the harness's
 * commands (calibrate, serve, board, box). */
#include <stdarg.h>
int probe_vsay(int rc, const char *who, const char *fmt, va_list ap) PROBE_PRINTF(3, 0);

/* Allocation comes from hs_alloc.h; this one formats into a new heap string
 * (the learner library's, under the harness's name). */
#define probe_xasprintf lrn_xasprintf

/* ------------------------------------------------------------------- files */
/* root + path ("/" or "" root means the real file system). Heap string. */
char *probe_path(const char *root, const char *path);
/* Whole file into a heap buffer with a NUL after it. ENOENT / EPERM / EIO with
 * "<path>: <reason>". */
hs_status probe_read_file(const char *path, unsigned char **data, size_t *len, hs_error *err);
/* First line of a small (sysfs) file, trailing whitespace removed. */
hs_status probe_read_line(const char *path, char *buf, size_t cap, hs_error *err);
/* A sysfs integer file; "<path>: not an integer" when it is not one. */
hs_status probe_read_i64(const char *path, int64_t *out, hs_error *err);
bool probe_exists(const char *path);
/* Write `text` to `path` atomically: a temp file in the same folder, then rename. */
hs_status probe_write_atomic(const char *path, const char *text, size_t len, hs_error *err);

/* The learner library's gzip reader and synthetic writers, under the names the
 * harness's tests use (util.c). */
hs_status probe_gunzip(const unsigned char *in, size_t inlen, size_t max_out,
                       unsigned char **out, size_t *outlen, hs_error *err);
hs_status probe_synth_era5(const char *path, size_t rows, uint64_t seed, hs_error *err);
hs_status probe_synth_imdb(const char *dir, size_t docs, uint64_t seed, hs_error *err);

/* ------------------------------------------------------------------- clock */
double probe_now_mono(void);     /* CLOCK_MONOTONIC, s */
double probe_now_real(void);     /* CLOCK_REALTIME, s since the epoch */

/* ----------------------------------------------------------------- stats */
double probe_median(const double *x, size_t n);    /* n > 0; x unchanged */
double probe_mean(const double *x, size_t n);
double probe_cv(const double *x, size_t n);        /* sample sd / mean; 0 for n < 2 */
double probe_mad(const double *x, size_t n);       /* median absolute deviation */
/* Trapezoid integral of y over t (t ascending). */
double probe_trapezoid(const double *t, const double *y, size_t n);

/* ---------------------------------------------------------------- sensors */
typedef struct probe_sensor_cfg {
  const char *root;      /* sysfs root, "/" on a board */
  const char *arg;       /* after "kind:" (hwmon name[:channel], meter file) */
  const char *pmic_cmd;  /* pi5-pmic: command to run (default vcgencmd pmic_read_adc) */
  double meter_offset_s; /* meter: added to the meter's timestamps */
} probe_sensor_cfg;

typedef enum probe_reading_kind { PROBE_ENERGY_J, PROBE_POWER_W } probe_reading_kind;

/* A power/energy source: name + table (registry in sensor.c). A sensor either
 * reads now (a cumulative energy counter, already unwrapped, or an instant
 * power), or integrates a time window afterwards (an external meter's log). */
typedef struct probe_sensor_type {
  const char *name;
  probe_reading_kind kind;
  hs_status (*open)(const probe_sensor_cfg *cfg, void **state, hs_error *err);
  hs_status (*read)(void *state, double *value, hs_error *err);   /* NULL for window sensors */
  /* Window sensors: energy in J between two CLOCK_REALTIME instants. */
  hs_status (*window)(void *state, double t0, double t1, double *joules, hs_error *err);
  const char *(*id)(const void *state);     /* "rapl:package-0", "hwmon:ina226" */
  const char *(*covers)(const void *state); /* what its figure includes */
  void (*close)(void *state);
} probe_sensor_type;

typedef struct probe_sensor {
  const probe_sensor_type *type;
  void *state;
} probe_sensor;

/* Open a sensor by spec: rapl | hwmon:NAME[:CH] | pi5-pmic | meter:FILE | none
 * | auto (the first of rapl, hwmon power sensors, pi5-pmic that works).
 * "none" yields type NULL. */
hs_status probe_sensor_open(const char *spec, const probe_sensor_cfg *cfg, probe_sensor *s,
                               hs_error *err);
void probe_sensor_close(probe_sensor *s);
const probe_sensor_type *probe_sensor_type_find(const char *name);
const probe_sensor_type *probe_sensor_type_at(size_t i);
/* Unwrap a counter: delta from prev to cur for a counter that wraps at range. */
uint64_t probe_counter_delta(uint64_t prev, uint64_t cur, uint64_t range);
/* Parse `vcgencmd pmic_read_adc` output: total W of rails with both a
 * current (_A) and a voltage (_V) line. EPARSE when there is none. */
hs_status probe_pmic_parse(const char *text, double *watts, hs_error *err);
/* Names of hwmon devices under root that expose power (power*_input or
 * in*_input with curr*_input), written comma-separated into buf. */
void probe_hwmon_list(const char *root, char *buf, size_t cap);

/* ---------------------------------------------------------------- sampler */
typedef struct probe_sampler probe_sampler;
/* Start a sampling thread at hz on CLOCK_MONOTONIC with absolute sleeps.
 * sensor may have type NULL (time and temperature only). */
probe_sampler *probe_sampler_create(probe_sensor *sensor, const char *root, double hz);
typedef struct probe_mark {
  double t_mono, t_real;
  double energy_j;       /* cumulative since start (NAN when not measured) */
  int64_t throttle;      /* x86 throttle counters + Pi throttled readings (-1: no source) */
} probe_mark;
/* A synchronous reading that also closes the current trapezoid piece. */
hs_status probe_sampler_mark(probe_sampler *s, probe_mark *m, hs_error *err);
/* Energy between two marks (window sensors are asked here). NAN and a
 * message when the sensor failed in between. */
hs_status probe_sampler_energy(probe_sampler *s, const probe_mark *a, const probe_mark *b,
                                  double *joules, hs_error *err);
double probe_sampler_max_temp_c(probe_sampler *s, bool reset); /* NAN when no zone */
/* Samples taken, and a sensor failure seen by the thread (message in err). */
size_t probe_sampler_count(probe_sampler *s);
bool probe_sampler_failed(probe_sampler *s, hs_error *err);
void probe_sampler_destroy(probe_sampler *s);
/* Sum of every throttle counter under root (x86 thermal_throttle); -1: none. */
int64_t probe_throttle_count(const char *root);
/* Raspberry Pi firmware throttle state (get_throttled bits 1-3, nonzero when
 * throttled now); -1 when the file does not exist. */
int64_t probe_rpi_throttled(const char *root);
/* Highest thermal zone temperature under root, C; NAN when none. */
double probe_max_temp_c(const char *root);

/* ------------------------------------------------------------------ JSON */
typedef enum probe_jtype { PJ_NULL, PJ_BOOL, PJ_NUM, PJ_STR, PJ_ARR, PJ_OBJ } probe_jtype;
typedef struct probe_json probe_json;
struct probe_json {
  probe_jtype type;
  bool b;
  double num;
  char *str;             /* PJ_STR value; PJ_NUM original text (kept verbatim on merge) */
  size_t n, cap;         /* children of ARR / OBJ */
  probe_json **kids;
  char **keys;           /* OBJ keys, in file order */
};
/* Strict RFC 8259: no comments, no trailing commas, no duplicate keys. */
probe_json *probe_json_parse(const char *text, size_t len, hs_error *err);
void probe_json_destroy(probe_json *j);
probe_json *probe_json_get(const probe_json *obj, const char *key);
probe_json *probe_json_new(probe_jtype t);
probe_json *probe_json_num(double v);
probe_json *probe_json_str(const char *s);
probe_json *probe_json_bool(bool b);
/* Insert or replace obj[key] (takes ownership of v); keeps the key's place. */
void probe_json_set(probe_json *obj, const char *key, probe_json *v);
void probe_json_push(probe_json *arr, probe_json *v);
/* Pretty text (heap, NUL-terminated). */
char *probe_json_write(const probe_json *j);

/* --------------------------------------------------------------- sysinfo */
typedef struct probe_sysinfo {
  char board[256], cpu[256], arch[64], kernel[128], board_source[64];
  unsigned ncpu;
  bool virtual_machine;
} probe_sysinfo;
/* Board from the device tree or DMI, CPU from /proc/cpuinfo under root; arch
 * and kernel from uname (not under root: they are the running system's). */
void probe_sysinfo_read(const char *root, probe_sysinfo *si);

/* How busy the machine is, under root: the 1-minute load average of
 * /proc/loadavg and the steal and total ticks of /proc/stat's "cpu" line
 * (steal: time a hypervisor gave this VM's CPUs to others). A calibration
 * taken on a loaded machine measures the load, not the board. */
typedef struct probe_load {
  bool have_loadavg, have_stat;
  double loadavg1;
  unsigned long long steal, total; /* ticks since boot */
} probe_load;
void probe_load_read(const char *root, probe_load *l);
/* Steal as a fraction of the ticks between two readings; NAN when either
 * lacks /proc/stat or no tick passed. */
double probe_steal_fraction(const probe_load *before, const probe_load *after);

/* ---------------------------------------------------- profile and merge */
typedef struct probe_estimate {
  double w;              /* NAN when not given */
  const char *source;
} probe_estimate;

typedef struct probe_task_result {
  const char *task;
  double tau_s, tau_cv, tau_median_s, tau_mad_s, busy_w, overhead_s;
  unsigned batch, threads, runs, runs_kept, runs_throttled, runs_with_energy;
  bool energy_measured;
  size_t loss_n;
  double *loss_samples, *loss_values;
  char notes[2048];
} probe_task_result;

typedef struct probe_profile_in {
  const char *name, *board, *arch, *cpu, *kernel, *date;
  double idle_w, comm_w;
  const char *kind;                 /* measured | mixed | estimated */
  const char *sensor, *covers;      /* NULL when none */
  double sample_hz;
  const char *const *sources;       /* NULL-terminated */
  const char *notes;
  const probe_task_result *task;
} probe_profile_in;
/* Build the profile JSON for one task, merged into existing JSON text when
 * `existing` is non-NULL (other tasks kept verbatim; the same board is
 * required). Returns heap text or NULL with err ("<where>: <reason>"). */
char *probe_profile_render(const probe_profile_in *in, const char *existing, size_t existing_len,
                           hs_error *err);
/* The checks the simulator's loader makes, so the harness never writes a
 * profile the simulator rejects. */
hs_status probe_profile_check(const probe_json *root, hs_error *err);

/* ------------------------------------------------- import of a user's log */
typedef struct probe_import_result {
  double tau_s, tau_cv;
  double busy_w, idle_w;   /* NAN when the power log does not give them */
  size_t batches, rounds;  /* rounds 0: no round column (tau_cv from batches) */
  size_t idle_readings;
  unsigned batch;          /* mean samples per batch, rounded */
  /* With both round and start_s: the per-round overhead fit (import.c).
   * overhead_fit 0: not fitted (overhead_s 0, as before); 1: every round the
   * same size (overhead = mean round span - its batches' time); 2: sizes vary
   * (least squares span = a + tau n: tau_s is the slope). overhead_raw is the
   * fitted a before the profile's overhead_s >= 0 is applied (negative: the
   * board is faster on short rounds; then overhead_s 0 and tau_s refitted
   * through the origin). */
  int overhead_fit;
  double overhead_s, overhead_raw;
} probe_import_result;

/* Several boards' logs of one run (logs[0] the board being imported): the
 * per-round per-sample time of board b in round r is taken as
 * tau_b * g_r * e_{b,r}, a shared factor g_r and each board's own e, both
 * lognormal; the two-way decomposition of its logarithm over the rounds all
 * logs have gives each board's own CV (own_cv[b]: what hetsim draws per
 * device, tau_cv) and the shared factor's CV (shared_cv), corrected for the
 * share of the boards' own noise in the round means. factor_min/max: the
 * range of the fitted g_r. See import.c. */
#define PROBE_SHARED_MAX 256
typedef struct probe_shared_result {
  size_t boards, rounds;
  double shared_cv, factor_min, factor_max;
  double own_cv[PROBE_SHARED_MAX];
  double loading[PROBE_SHARED_MAX]; /* how strongly board b takes the factor (1: all alike) */
} probe_shared_result;
hs_status probe_import_shared(const lrn_table *const *logs, size_t nlogs, probe_shared_result *out, hs_error *err);
/* The same with a loading per board (loadings true, at least 3 boards):
 * log per-sample time = a_b + l_b z_r + e_br, one factor z with a loading l_b
 * per board (principal-axis factor analysis of the boards' covariance over
 * the rounds), so boards that the machine's other load slows more or less
 * than the others are not read as noise of their own. shared_cv is the
 * factor's CV for the board that takes it most (loading 1); loading[b] in
 * [0, 1] scales it on log time (dynamics.devices.NAME.shared_loading);
 * own_cv[b] the rest. loadings false: probe_import_shared. */
hs_status probe_import_shared_model(const lrn_table *const *logs, size_t nlogs, bool loadings,
                                    probe_shared_result *out, hs_error *err);
/* The figures of a timing table (columns samples, time_s, optional round and
 * start_s) and an optional power table (time_s, power_w); see import.c.
 * Messages name the line ("line 7, column time_s: ..."). */
hs_status probe_import_compute(const lrn_table *times, const lrn_table *power, probe_import_result *out,
                               hs_error *err);
/* hetsim-probe import: the command (argv[1] == "import"); returns the exit status. */
int probe_cmd_import(int argc, char **argv);

/* ------------------------------------------- sustained run: thermal fit */
#define PROBE_THERMAL_LEVELS 16
typedef struct probe_thermal_series {
  size_t n;
  double *t_s, *temp_c, *freq_khz, *rate; /* time from the start, max zone, cpu0 clock (NAN: none),
                                             samples/s over the point's chunk */
} probe_thermal_series;
/* Frees the arrays probe_sustain allocated. */
void probe_thermal_series_fini(probe_thermal_series *s);
typedef struct probe_thermal_out {
  double ambient_c, r_c_per_w, c_j_per_c, t_inf_c;
  size_t nlevels; /* 1: no throttling seen (no block can be written) */
  double speed[PROBE_THERMAL_LEVELS], busy_factor[PROBE_THERMAL_LEVELS];
  double trip_c[PROBE_THERMAL_LEVELS], recover_c[PROBE_THERMAL_LEVELS];
  bool recover_seen[PROBE_THERMAL_LEVELS];
} probe_thermal_out;
/* cpu0's current clock in kHz (cpufreq), NAN when absent. */
double probe_cpufreq_khz(const char *root);
/* Fit the thermal block (sustain.c). temp_idle_c: the board idle before the run. */
hs_status probe_thermal_fit(const probe_thermal_series *s, double temp_idle_c, double idle_w, double busy_w,
                            probe_thermal_out *out, hs_error *err);
/* profile_text with the fitted block set (checked); `what` says how it was
 * recorded. Heap text or NULL with err. */
char *probe_thermal_attach(const char *profile_text, const probe_thermal_out *th, const char *what, hs_error *err);

/* ------------------------------------------------------------ calibration */
typedef struct probe_calib_cfg {
  const lrn_trainer_type *trainer;
  lrn_train_cfg train;
  unsigned runs, threads;
  size_t batch, samples, warmup;   /* samples 0: sized so a run lasts run_s */
  double run_s, idle_s, hz;
  const char *root;
  probe_sensor *sensor;            /* type NULL: time only */
  bool quiet;
} probe_calib_cfg;
/* Load the data, measure idle power, warm up, time `runs` rounds while the
 * sampler watches power and temperature, record the loss curve. res owns its
 * loss arrays (probe_task_result_fini). *idle_w is NAN when not measured.
 * A sensor that fails mid-way keeps the runs measured before it (a warning
 * goes to stderr). */
hs_status probe_calibrate(const probe_calib_cfg *cfg, probe_task_result *res, double *idle_w, hs_error *err);
void probe_task_result_fini(probe_task_result *r);

/* sustain.c: train for sustain_s seconds from a cool board, recording one point per
 * chunk of batches; the caller owns the arrays (free). *temp_idle_c: before. */
hs_status probe_sustain(const probe_calib_cfg *cfg, double sustain_s, probe_thermal_series *s, double *temp_idle_c,
                        hs_error *err);

#endif
