/* report.c: streaming writers for the run outputs (see hs_report.h).
 *
 * Each file is an hs_outfile (temporary name, renamed on commit). The Chrome
 * trace is written as a JSON array of events in the order spans arrive; track
 * names are "M" (metadata) events. Timestamps are microseconds, as the format
 * wants. Rejected: building the outputs in memory and writing at the end (a
 * 10^5-device run has 10^6 device rows).
 * The CSV files are written from their column tables (hs_columns.h), which
 * `hetsim reference columns` prints too: a new column is one line below.
 * learning.csv is an extra file like a regime's own table; the extra files a
 * run may write (learning.csv, and the names its caller declares with
 * hs_report_optional: every regime's csv file) are removed on commit when
 * this run did not write them, so a reused folder never mixes two runs'
 * tables. */
#include "traces/hs_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_fmt.h"
#include "traces/hs_columns.h"
#include "traces/hs_outfile.h"

/* --- the files' columns (hs_columns.h: a new column is one line) ------------ */

#define COL(row, field, type) type, offsetof(row, field), NULL, 0
/* A meter-scope column (report.meter_scopes only; hs_columns.h groups). */
#define METER(row, field) HS_COL_F64, offsetof(row, field), NULL, HS_COL_METER

static double round_duration(const void *row) {
  const hs_round_row *r = row;
  return r->end_s - r->start_s;
}

static const hs_column round_cols[] = {
    {"round", "1", "the round, from 0", COL(hs_round_row, round, HS_COL_U32)},
    {"start_s", "s", "simulated time the round started", COL(hs_round_row, start_s, HS_COL_F64)},
    {"end_s", "s", "simulated time the round ended", COL(hs_round_row, end_s, HS_COL_F64)},
    {"duration_s", "s", "end_s - start_s", HS_COL_F64, 0, round_duration, 0},
    {"energy_j", "J", "energy of every device in the round (compute + comm + idle-wait)",
     COL(hs_round_row, energy_j, HS_COL_F64)},
    {"energy_idle_baseline_j", "J", "every device's idle power x the seconds it was on in the "
     "round, summed (meter.csv's, summed over devices)", METER(hs_round_row, idle_baseline_j)},
    {"energy_above_idle_j", "J", "energy_j - energy_idle_baseline_j: the round's dynamic energy",
     METER(hs_round_row, above_idle_j)},
    {"energy_training_j", "J", "training-only: what the devices' meters reported to the "
     "controller (before telemetry noise); <= energy_j, except in fedasync (an update counts in "
     "the window it arrives in)", METER(hs_round_row, training_j)},
    {"compute_cv", "1", "coefficient of variation of the devices' compute times",
     COL(hs_round_row, compute_cv, HS_COL_F64)},
    {"max_wait_s", "s", "the longest a device waited for the others",
     COL(hs_round_row, max_wait_s, HS_COL_F64)},
    {"reallocated", "1", "1 when the controller changed the allocation after this round",
     COL(hs_round_row, reallocated, HS_COL_BOOL)},
};

static const hs_column device_cols[] = {
    {"round", "1", "the round, from 0", COL(hs_device_row, round, HS_COL_U32)},
    {"device", "-", "the device's name (\"<entry>\" or \"<entry>-<k>\")",
     COL(hs_device_row, device, HS_COL_STR)},
    {"samples", "1", "samples allocated to it this round", COL(hs_device_row, samples, HS_COL_U64)},
    {"compute_s", "s", "time it computed", COL(hs_device_row, compute_s, HS_COL_F64)},
    {"comm_s", "s", "time it sent or received the model", COL(hs_device_row, comm_s, HS_COL_F64)},
    {"wait_s", "s", "time it waited for the others, powered on",
     COL(hs_device_row, wait_s, HS_COL_F64)},
    {"energy_j", "J", "its energy in the round: compute + comm + idle-wait",
     COL(hs_device_row, energy_j, HS_COL_F64)},
    /* Last, so readers by position of the older columns keep working. */
    {"profile", "-", "its profile's name", COL(hs_device_row, profile, HS_COL_STR)},
};

/* The percentiles of hs_profile_row, one line each (HS_REPORT_NPCT of them). */
#define PCT(what, k, name)                                                                  \
  {#what "_" name, "s", name " of the devices' " #what " (nearest rank)", HS_COL_F64,       \
   offsetof(hs_profile_row, what) + (k) * sizeof(double), NULL, 0}
#define PCTS(what) PCT(what, 0, "p0"), PCT(what, 1, "p50"), PCT(what, 2, "p90"), \
    PCT(what, 3, "p99"), PCT(what, 4, "p100")
_Static_assert(HS_REPORT_NPCT == 5, "PCTS lists every percentile");

static const hs_column profile_cols[] = {
    {"round", "1", "the round, from 0", COL(hs_profile_row, round, HS_COL_U32)},
    {"profile", "-", "the profile's name", COL(hs_profile_row, profile, HS_COL_STR)},
    {"count", "1", "devices of that profile", COL(hs_profile_row, count, HS_COL_U64)},
    {"samples", "1", "samples allocated to them, summed", COL(hs_profile_row, samples, HS_COL_U64)},
    PCTS(compute_s),
    PCTS(comm_s),
    PCTS(wait_s),
    {"energy_j", "J", "their energy in the round, summed in device order",
     COL(hs_profile_row, energy_j, HS_COL_F64)},
    {"energy_idle_baseline_j", "J", "their idle power x the seconds they were on in the round, "
     "summed", METER(hs_profile_row, idle_baseline_j)},
    {"energy_above_idle_j", "J", "energy_j - energy_idle_baseline_j",
     METER(hs_profile_row, above_idle_j)},
    {"energy_training_j", "J", "training-only: what their meters reported (before noise), summed",
     METER(hs_profile_row, training_j)},
};

static const hs_column learning_cols[] = {
    {"round", "1", "the round (fedasync: reporting window) of the evaluation",
     COL(hs_learning_row, round, HS_COL_U32)},
    {"time_s", "s", "simulated time since t = 0", COL(hs_learning_row, time_s, HS_COL_F64)},
    {"energy_j", "J", "energy of every device since t = 0",
     COL(hs_learning_row, energy_j, HS_COL_F64)},
    {"energy_idle_baseline_j", "J", "every device's idle power x its seconds on, since t = 0 "
     "(rounds.csv's, summed to this round)", METER(hs_learning_row, idle_baseline_j)},
    {"energy_above_idle_j", "J", "energy_j - energy_idle_baseline_j, since t = 0",
     METER(hs_learning_row, above_idle_j)},
    {"energy_training_j", "J", "training-only energy the meters reported, since t = 0 "
     "(<= energy_j)", METER(hs_learning_row, training_j)},
    {"samples", "1", "samples trained so far", COL(hs_learning_row, samples, HS_COL_U64)},
    {"train_loss", "1", "mean training loss since the previous row",
     COL(hs_learning_row, train_loss, HS_COL_F64)},
    {"test_loss", "1", "held-out loss (nan: none)", COL(hs_learning_row, test_loss, HS_COL_F64)},
    {"test_accuracy", "1", "held-out accuracy (nan: regression or curve mode)",
     COL(hs_learning_row, test_accuracy, HS_COL_F64)},
    {"lr", "1", "the learning rate of the round, after its schedule and warm-up, before DDP's "
     "lr_scaling, which scales each step by its batch (nan: curve mode)",
     COL(hs_learning_row, lr, HS_COL_F64)},
    {"target_met", "1", "1 when this evaluation meets the target, 0 when not (nan: no target)",
     COL(hs_learning_row, target_met, HS_COL_F64)},
};

static const hs_csv_table rounds_csv = {"rounds.csv", "Every run; one row per round.",
                                        HS_COLUMNS(round_cols)};
static const hs_csv_table devices_csv = {
    "devices.csv", "Runs up to `--devices-threshold` devices; one row per round and device.",
    HS_COLUMNS(device_cols)};
static const hs_csv_table profiles_csv = {
    "device_profiles.csv",
    "Instead of devices.csv above `--devices-threshold` devices; one row per round and profile.",
    HS_COLUMNS(profile_cols)};
static const hs_column telemetry_cols[] = {
    {"round", "1", "the round the controller saw", COL(hs_telemetry_row, round, HS_COL_U32)},
    {"device", "", "the device's name", COL(hs_telemetry_row, device, HS_COL_STR)},
    {"time_s", "s", "training time its meter reported (telemetry noise included; 0: no samples)",
     COL(hs_telemetry_row, time_s, HS_COL_F64)},
    {"energy_j", "J", "training energy its meter reported (the controller's view, not the "
     "device's whole energy of devices.csv)", COL(hs_telemetry_row, energy_j, HS_COL_F64)},
    {"samples", "1", "samples it trained in the round", COL(hs_telemetry_row, samples, HS_COL_U64)},
    {"comm_s", "s", "its communication time in the round: the model's download plus its upload "
     "(no telemetry noise; optional for `hetsim replay`, which passes it to the controller)",
     COL(hs_telemetry_row, comm_s, HS_COL_F64)},
};

static const hs_csv_table telemetry_csv = {
    "telemetry.csv",
    "Runs with devices.csv; one row per device and round: what the controller saw, in the "
    "format `hetsim replay` reads.",
    HS_COLUMNS(telemetry_cols)};

static const hs_column meter_cols[] = {
    {"round", "1", "the round", COL(hs_meter_row, round, HS_COL_U32)},
    {"device", "", "the device's name", COL(hs_meter_row, device, HS_COL_STR)},
    {"energy_j", "J", "wall: the device's energy in the round (devices.csv's energy_j)",
     COL(hs_meter_row, energy_j, HS_COL_F64)},
    {"energy_idle_baseline_j", "J", "its idle power x the seconds it was on in the round",
     COL(hs_meter_row, idle_baseline_j, HS_COL_F64)},
    {"energy_above_idle_j", "J", "energy_j - energy_idle_baseline_j: the dynamic energy",
     COL(hs_meter_row, above_idle_j, HS_COL_F64)},
    {"energy_training_j", "J", "training-only: what its meter reported to the controller "
     "(before telemetry noise; 0 without samples); <= energy_j per round, except in fedasync, "
     "whose update counts in the window it arrives in (<= over the run)",
     COL(hs_meter_row, training_j, HS_COL_F64)},
};

static const hs_csv_table meter_csv = {
    "meter.csv",
    "Runs with report.meter_scopes and devices.csv; one row per device and round: its energy "
    "under each meter scope.",
    HS_COLUMNS(meter_cols)};

static const hs_csv_table learning_csv = {
    "learning.csv", "Runs that learn (a learning block); one row per evaluation.",
    HS_COLUMNS(learning_cols)};

static const hs_csv_table *const files[] = {&rounds_csv, &devices_csv, &profiles_csv,
                                            &learning_csv, &telemetry_csv, &meter_csv};

size_t hs_report_table_count(void) { return sizeof files / sizeof files[0]; }
const hs_csv_table *hs_report_table_at(size_t i) { return files[i]; }

struct hs_report {
  char *dir;
  char *made; /* the topmost folder hs_report_open created (NULL: none): removed on abort */
  hs_outfile *rounds, *devices, *trace;
  FILE *learning; /* learning.csv (one of the extras), when the run learns */
  FILE *telemetry; /* telemetry.csv (one of the extras), with devices.csv */
  FILE *meter;     /* meter.csv (one of the extras), with report.meter_scopes */
  hs_outfile *extra[HS_REPORT_EXTRA_MAX];
  char *xname[HS_REPORT_EXTRA_MAX]; /* the extras' names in the folder */
  size_t nextra;
  bool first_event;
  bool profiles; /* r->devices is device_profiles.csv */
  unsigned groups; /* the optional columns written (hs_columns.h HS_COL_*) */
  char **xkey, **xjson; /* hs_report_add_json members */
  size_t nx;
  char **opt; /* hs_report_optional names */
  size_t nopt;
};

void hs_report_optional(hs_report *r, const char *name) {
  r->opt = hs_reallocarray(r->opt, r->nopt + 1, sizeof *r->opt);
  r->opt[r->nopt++] = hs_strdup(name);
}

/* Whether this run opened the extra file `name`. */
static bool wrote_extra(const hs_report *r, const char *name) {
  for (size_t i = 0; i < r->nextra; i++)
    if (!strcmp(r->xname[i], name)) return true;
  return false;
}

void hs_report_add_json(hs_report *r, const char *key, const char *json) {
  r->xkey = hs_reallocarray(r->xkey, r->nx + 1, sizeof *r->xkey);
  r->xjson = hs_reallocarray(r->xjson, r->nx + 1, sizeof *r->xjson);
  r->xkey[r->nx] = hs_strdup(key);
  r->xjson[r->nx] = hs_strdup(json);
  r->nx++;
}

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = hs_malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static hs_outfile *open_in(const char *dir, const char *name, hs_error *err) {
  char *p = join(dir, name);
  hs_outfile *f = hs_outfile_open(p, err);
  hs_free(p);
  return f;
}

/* Drop trailing slashes ("out//" is "out"). */
static void parent_trim(char *p) {
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
}

/* Cut p to its parent folder; false when it has none to name ("out", "/x"). */
static bool parent(char *p) {
  parent_trim(p);
  char *slash = strrchr(p, '/');
  if (!slash || slash == p) return false;
  *slash = '\0';
  parent_trim(p);
  return true;
}

void hs_report_abort(hs_report *r) {
  if (!r) return;
  hs_outfile_abort(r->rounds);
  hs_outfile_abort(r->devices);
  hs_outfile_abort(r->trace);
  for (size_t i = 0; i < r->nextra; i++) {
    hs_outfile_abort(r->extra[i]);
    hs_free(r->xname[i]);
  }
  /* No empty output folder after a failed run (a full disk): remove, deepest
   * first, the folders this report made; rmdir leaves any that hold files. */
  if (r->made) {
    char *p = hs_strdup(r->dir);
    size_t keep = strlen(r->made);
    while (strlen(p) >= keep && rmdir(p) == 0 && parent(p)) {}
    hs_free(p);
  }
  hs_free(r->made);
  for (size_t i = 0; i < r->nx; i++) {
    hs_free(r->xkey[i]);
    hs_free(r->xjson[i]);
  }
  hs_free(r->xkey);
  hs_free(r->xjson);
  for (size_t i = 0; i < r->nopt; i++) hs_free(r->opt[i]);
  hs_free(r->opt);
  hs_free(r->dir);
  hs_free(r);
}

hs_report *hs_report_open(const char *dir, bool trace, hs_error *err) {
  return hs_report_open_as(dir, trace, false, err);
}

static const char *devices_file(bool profiles) {
  return profiles ? profiles_csv.file : devices_csv.file;
}

hs_report *hs_report_open_as(const char *dir, bool trace, bool profiles, hs_error *err) {
  return hs_report_open_with(dir, trace, profiles, 0, err);
}

hs_report *hs_report_open_with(const char *dir, bool trace, bool profiles, unsigned groups,
                               hs_error *err) {
  /* The topmost missing folder of dir's chain, found before mkdir -p makes it. */
  char *made = NULL, *p = hs_strdup(dir);
  struct stat sb;
  parent_trim(p);
  while (stat(p, &sb) != 0 && errno == ENOENT) {
    hs_free(made);
    made = hs_strdup(p);
    if (!parent(p)) break;
  }
  hs_free(p);
  if (hs_mkdir_p(dir, err) != HS_OK) {
    hs_free(made);
    return NULL;
  }
  hs_report *r = hs_calloc(1, sizeof *r);
  r->dir = hs_strdup(dir);
  r->made = made;
  r->profiles = profiles;
  r->groups = groups;
  if (!(r->rounds = open_in(dir, rounds_csv.file, err))) goto fail;
  if (!(r->devices = open_in(dir, devices_file(profiles), err))) goto fail;
  if (trace && !(r->trace = open_in(dir, "trace.json", err))) goto fail;
  hs_csv_write_header_with(hs_outfile_stream(r->rounds), &rounds_csv, groups);
  hs_csv_write_header_with(hs_outfile_stream(r->devices), profiles ? &profiles_csv : &devices_csv,
                           groups);
  if (r->trace) fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", hs_outfile_stream(r->trace));
  r->first_event = true;
  return r;
fail:
  hs_report_abort(r);
  return NULL;
}

FILE *hs_report_extra(hs_report *r, const char *name, hs_error *err) {
  if (r->nextra == HS_REPORT_EXTRA_MAX) {
    hs_error_set(err, HS_ERANGE, "%s/%s: more than %d extra output files", r->dir, name,
                 HS_REPORT_EXTRA_MAX);
    return NULL;
  }
  hs_outfile *f = open_in(r->dir, name, err);
  if (!f) return NULL;
  r->xname[r->nextra] = hs_strdup(name);
  r->extra[r->nextra++] = f;
  return hs_outfile_stream(f);
}

/* The shortest text that reads back to the same double (hs_fmt.h); non-finite
 * values as nan, inf, -inf. */
static void num(FILE *f, double v) {
  char b[HS_FMT_DOUBLE_MAX];
  fwrite(b, 1, hs_fmt_double(b, v), f);
}

/* An extra table of the run (learning.csv, telemetry.csv, meter.csv): opened
 * once into *slot, with its header. */
static hs_status open_table(hs_report *r, FILE **slot, const hs_csv_table *t, hs_error *err) {
  if (*slot) return HS_OK;
  if (!(*slot = hs_report_extra(r, t->file, err))) return err ? err->status : HS_EIO;
  hs_csv_write_header_with(*slot, t, r->groups);
  return HS_OK;
}

hs_status hs_report_learning_open(hs_report *r, hs_error *err) {
  return open_table(r, &r->learning, &learning_csv, err);
}

void hs_report_learning(hs_report *r, const hs_learning_row *row) {
  if (!r || !r->learning) return;
  hs_csv_write_row_with(r->learning, &learning_csv, row, r->groups);
}

hs_status hs_report_telemetry_open(hs_report *r, hs_error *err) {
  return open_table(r, &r->telemetry, &telemetry_csv, err);
}

void hs_report_telemetry(hs_report *r, const hs_telemetry_row *row) {
  if (!r || !r->telemetry) return;
  hs_csv_write_row(r->telemetry, &telemetry_csv, row);
}

hs_status hs_report_meter_open(hs_report *r, hs_error *err) {
  return open_table(r, &r->meter, &meter_csv, err);
}

void hs_report_meter(hs_report *r, const hs_meter_row *row) {
  if (!r || !r->meter) return;
  hs_csv_write_row(r->meter, &meter_csv, row);
}

void hs_report_round(hs_report *r, const hs_round_row *row) {
  hs_csv_write_row_with(hs_outfile_stream(r->rounds), &rounds_csv, row, r->groups);
}

void hs_report_device(hs_report *r, const hs_device_row *row) {
  hs_csv_write_row_with(hs_outfile_stream(r->devices), &devices_csv, row, r->groups);
}

void hs_report_profile(hs_report *r, const hs_profile_row *row) {
  hs_csv_write_row_with(hs_outfile_stream(r->devices), &profiles_csv, row, r->groups);
}

void hs_json_fputs(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\t': fputs("\\t", out); break;
      case '\r': fputs("\\r", out); break;
      default:
        if (*p < 0x20)
          fprintf(out, "\\u%04x", *p);
        else
          fputc(*p, out);
    }
  }
  fputc('"', out);
}

bool hs_report_tracing(const hs_report *r) { return r && r->trace; }

static FILE *next_event(hs_report *r) {
  FILE *f = hs_outfile_stream(r->trace);
  fputs(r->first_event ? "\n" : ",\n", f);
  r->first_event = false;
  return f;
}

void hs_report_track(hs_report *r, uint32_t track, const char *name) {
  if (!r->trace) return;
  FILE *f = next_event(r);
  fprintf(f, "{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":", track);
  hs_json_fputs(f, name);
  fputs("}}", f);
}

void hs_report_span(hs_report *r, uint32_t track, const char *name, double start_s,
                    double end_s) {
  if (!r->trace) return;
  FILE *f = next_event(r);
  fputs("{\"ph\":\"X\",\"pid\":1,\"tid\":", f);
  fprintf(f, "%u,\"name\":", track);
  hs_json_fputs(f, name);
  fprintf(f, ",\"ts\":%.3f,\"dur\":%.3f}", start_s * 1e6, (end_s - start_s) * 1e6);
}

hs_status hs_report_commit(hs_report *r, const char *const *str_keys, const char *const *str_vals,
                           size_t nstr, const hs_report_field *fields, size_t nfields,
                           hs_error *err) {
  char *spath = join(r->dir, "summary.json");
  hs_outfile *s = hs_outfile_open(spath, err);
  hs_free(spath);
  if (!s) {
    hs_report_abort(r);
    return err ? err->status : HS_EIO;
  }
  FILE *f = hs_outfile_stream(s);
  fputs("{\n", f);
  for (size_t i = 0; i < nstr; i++) {
    fputs("  ", f);
    hs_json_fputs(f, str_keys[i]);
    fputs(": ", f);
    hs_json_fputs(f, str_vals[i]);
    fputs(i + 1 < nstr || nfields || r->nx ? ",\n" : "\n", f);
  }
  for (size_t i = 0; i < nfields; i++) {
    fputs("  ", f);
    hs_json_fputs(f, fields[i].key);
    fputs(": ", f);
    double v = fields[i].value;
    if (isfinite(v))
      num(f, v); /* exact; counts and seeds up to 2^53 in full, never in exponent form */
    else
      fputs("null", f);
    fputs(i + 1 < nfields || r->nx ? ",\n" : "\n", f);
  }
  for (size_t i = 0; i < r->nx; i++) {
    fputs("  ", f);
    hs_json_fputs(f, r->xkey[i]);
    fprintf(f, ": %s%s", r->xjson[i], i + 1 < r->nx ? ",\n" : "\n");
  }
  fputs("}\n", f);
  bool traced = r->trace != NULL;
  if (r->trace) fputs("\n]}\n", hs_outfile_stream(r->trace));
  /* Every file is written out before any is renamed into place: a write that
   * failed (a full disk) must not leave this run's rounds.csv beside an
   * earlier run's devices.csv. */
  hs_outfile *all[4 + HS_REPORT_EXTRA_MAX] = {r->rounds, r->devices, r->trace, s};
  for (size_t i = 0; i < r->nextra; i++) all[4 + i] = r->extra[i];
  for (size_t i = 0; i < 4 + r->nextra; i++) {
    if (!all[i]) continue;
    FILE *fp = hs_outfile_stream(all[i]);
    if (fflush(fp) != 0 || ferror(fp)) {
      hs_status st = hs_error_set(err, HS_EIO, "%s: write failed (disk full?)",
                                  hs_outfile_path(all[i]));
      hs_outfile_abort(s);
      hs_report_abort(r);
      return st;
    }
  }
  hs_status st = hs_outfile_commit(r->rounds, err);
  r->rounds = NULL;
  if (st == HS_OK) st = hs_outfile_commit(r->devices, err);
  else hs_outfile_abort(r->devices);
  r->devices = NULL;
  if (r->trace) {
    if (st == HS_OK) st = hs_outfile_commit(r->trace, err);
    else hs_outfile_abort(r->trace);
    r->trace = NULL;
  }
  for (size_t i = 0; i < r->nextra; i++) {
    if (st == HS_OK) st = hs_outfile_commit(r->extra[i], err);
    else hs_outfile_abort(r->extra[i]);
    r->extra[i] = NULL;
  }
  r->learning = NULL;
  r->telemetry = NULL;
  r->meter = NULL;
  if (st == HS_OK) st = hs_outfile_commit(s, err);
  else hs_outfile_abort(s);
  if (st == HS_OK) {
    /* The per-device file of the other kind, left by an earlier run. */
    char *old = join(r->dir, devices_file(!r->profiles));
    unlink(old);
    hs_free(old);
  }
  if (st == HS_OK && !traced) {
    /* A trace.json left by an earlier run into the same folder would describe
     * another run than the files beside it. */
    char *old = join(r->dir, "trace.json");
    unlink(old);
    hs_free(old);
  }
  const char *const own[] = {learning_csv.file, telemetry_csv.file, meter_csv.file};
  for (size_t k = 0; st == HS_OK && k < r->nopt + sizeof own / sizeof own[0]; k++) {
    const char *name = k < r->nopt ? r->opt[k] : own[k - r->nopt];
    if (wrote_extra(r, name)) continue;
    /* The same for an extra table an earlier run wrote (learning.csv of a run
     * with learning on, a regime's own table). */
    char *old = join(r->dir, name);
    unlink(old);
    hs_free(old);
  }
  if (st == HS_OK) { /* the folder is the run's now */
    hs_free(r->made);
    r->made = NULL;
  }
  hs_report_abort(r);
  return st;
}
