/* report.c: streaming writers for the run outputs (see hs_report.h).
 *
 * Each file is an hs_outfile (temporary name, renamed on commit). The Chrome
 * trace is written as a JSON array of events in the order spans arrive; track
 * names are "M" (metadata) events. Timestamps are microseconds, as the format
 * wants. Rejected: building the outputs in memory and writing at the end (a
 * 10^5-device run has 10^6 device rows).
 * learning.csv is an extra file like a regime's agc.csv; the extra files a
 * run may write (optional_files) are removed on commit when this run did not
 * write them, so a reused folder never mixes two runs' tables. */
#include "traces/hs_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_fmt.h"
#include "traces/hs_outfile.h"

struct hs_report {
  char *dir;
  char *made; /* the topmost folder hs_report_open created (NULL: none): removed on abort */
  hs_outfile *rounds, *devices, *trace;
  FILE *learning; /* learning.csv (one of the extras), when the run learns */
  hs_outfile *extra[HS_REPORT_EXTRA_MAX];
  char *xname[HS_REPORT_EXTRA_MAX]; /* the extras' names in the folder */
  size_t nextra;
  bool first_event;
  bool profiles; /* r->devices is device_profiles.csv */
  char **xkey, **xjson; /* hs_report_add_json members */
  size_t nx;
};

void hs_report_add_json(hs_report *r, const char *key, const char *json) {
  r->xkey = hs_reallocarray(r->xkey, r->nx + 1, sizeof *r->xkey);
  r->xjson = hs_reallocarray(r->xjson, r->nx + 1, sizeof *r->xjson);
  r->xkey[r->nx] = hs_strdup(key);
  r->xjson[r->nx] = hs_strdup(json);
  r->nx++;
}

/* The extra files some runs write and others do not. */
static const char *const optional_files[] = {"learning.csv", "agc.csv"};

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
  hs_free(r->dir);
  hs_free(r);
}

hs_report *hs_report_open(const char *dir, bool trace, hs_error *err) {
  return hs_report_open_as(dir, trace, false, err);
}

static const char *devices_file(bool profiles) {
  return profiles ? "device_profiles.csv" : "devices.csv";
}

hs_report *hs_report_open_as(const char *dir, bool trace, bool profiles, hs_error *err) {
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
  if (!(r->rounds = open_in(dir, "rounds.csv", err))) goto fail;
  if (!(r->devices = open_in(dir, devices_file(profiles), err))) goto fail;
  if (trace && !(r->trace = open_in(dir, "trace.json", err))) goto fail;
  fputs("round,start_s,end_s,duration_s,energy_j,compute_cv,max_wait_s,reallocated\n",
        hs_outfile_stream(r->rounds));
  if (profiles) {
    FILE *f = hs_outfile_stream(r->devices);
    fputs("round,profile,count,samples", f);
    static const char *const what[] = {"compute_s", "comm_s", "wait_s"};
    static const char *const pct[HS_REPORT_NPCT] = {"p0", "p50", "p90", "p99", "p100"};
    for (size_t w = 0; w < 3; w++)
      for (size_t k = 0; k < HS_REPORT_NPCT; k++) fprintf(f, ",%s_%s", what[w], pct[k]);
    fputs(",energy_j\n", f);
  } else {
    fputs("round,device,samples,compute_s,comm_s,wait_s,energy_j,profile\n",
          hs_outfile_stream(r->devices));
  }
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

hs_status hs_report_learning_open(hs_report *r, hs_error *err) {
  if (r->learning) return HS_OK;
  if (!(r->learning = hs_report_extra(r, "learning.csv", err))) return err ? err->status : HS_EIO;
  fputs("round,time_s,energy_j,samples,train_loss,test_loss,test_accuracy,lr,target_met\n", r->learning);
  return HS_OK;
}

void hs_report_learning(hs_report *r, const hs_learning_row *row) {
  if (!r || !r->learning) return;
  FILE *f = r->learning;
  fprintf(f, "%u,", row->round);
  num(f, row->time_s);
  fputc(',', f);
  num(f, row->energy_j);
  fprintf(f, ",%llu,", (unsigned long long)row->samples);
  num(f, row->train_loss);
  fputc(',', f);
  num(f, row->test_loss);
  fputc(',', f);
  num(f, row->test_accuracy);
  fputc(',', f);
  num(f, row->lr);
  fputc(',', f);
  num(f, row->target_met);
  fputc('\n', f);
}

void hs_report_round(hs_report *r, const hs_round_row *row) {
  FILE *f = hs_outfile_stream(r->rounds);
  fprintf(f, "%u,", row->round);
  num(f, row->start_s);
  fputc(',', f);
  num(f, row->end_s);
  fputc(',', f);
  num(f, row->end_s - row->start_s);
  fputc(',', f);
  num(f, row->energy_j);
  fputc(',', f);
  num(f, row->compute_cv);
  fputc(',', f);
  num(f, row->max_wait_s);
  fprintf(f, ",%d\n", row->reallocated ? 1 : 0);
}

void hs_report_device(hs_report *r, const hs_device_row *row) {
  FILE *f = hs_outfile_stream(r->devices);
  fprintf(f, "%u,%s,%llu,", row->round, row->device, (unsigned long long)row->samples);
  num(f, row->compute_s);
  fputc(',', f);
  num(f, row->comm_s);
  fputc(',', f);
  num(f, row->wait_s);
  fputc(',', f);
  num(f, row->energy_j);
  fprintf(f, ",%s\n", row->profile ? row->profile : "");
}

void hs_report_profile(hs_report *r, const hs_profile_row *row) {
  FILE *f = hs_outfile_stream(r->devices);
  fprintf(f, "%u,%s,%llu,%llu", row->round, row->profile, (unsigned long long)row->count,
          (unsigned long long)row->samples);
  const double *v[3] = {row->compute_s, row->comm_s, row->wait_s};
  for (size_t w = 0; w < 3; w++)
    for (size_t k = 0; k < HS_REPORT_NPCT; k++) {
      fputc(',', f);
      num(f, v[w][k]);
    }
  fputc(',', f);
  num(f, row->energy_j);
  fputc('\n', f);
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
  bool wrote[sizeof optional_files / sizeof *optional_files] = {false};
  for (size_t i = 0; i < r->nextra; i++) {
    if (st == HS_OK) st = hs_outfile_commit(r->extra[i], err);
    else hs_outfile_abort(r->extra[i]);
    r->extra[i] = NULL;
    for (size_t k = 0; k < sizeof optional_files / sizeof *optional_files; k++)
      if (!strcmp(r->xname[i], optional_files[k])) wrote[k] = true;
  }
  r->learning = NULL;
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
  for (size_t k = 0; st == HS_OK && k < sizeof optional_files / sizeof *optional_files; k++) {
    if (wrote[k]) continue;
    /* The same for an extra table an earlier run wrote (learning.csv of a run
     * with learning on, agc.csv of an AGC run). */
    char *old = join(r->dir, optional_files[k]);
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
