/* cluster_run.c: the reader of a real cluster run's records (hs_cluster_run.h).
 *
 * Each file is read whole (hs_read_file) and walked once through hs_csv,
 * columns by header name. rounds.csv fills a growing row-major array round
 * block by round block: round 0 fixes the boards (names checked unique by a
 * linear scan: a box has a handful of boards); a later row finds its board
 * by a scan of round 0's names, O(boards) per row, O(rows x boards) in all.
 * Rejected: requiring round 0's order in every round, as the telemetry
 * reader does (the runtime writes it, but a user who merges records by hand
 * should not have to, and the scan costs nothing at box sizes).
 * allocations.csv is then held against rounds.csv row by row (same round,
 * board, samples), server.csv gives one (round_s, server_s) per round, and
 * run.json the rounds' count and makespan_s. */
#include "traces/hs_cluster_run.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "traces/hs_csv.h"

const char *hs_energy_source_name(hs_energy_source s) {
  switch (s) {
    case HS_ENERGY_MEASURED:
      return "measured";
    case HS_ENERGY_STATED:
      return "stated";
    default:
      return "none";
  }
}

void hs_cluster_run_destroy(hs_cluster_run *c) {
  if (!c) return;
  for (size_t i = 0; i < c->nboards; i++) hs_free(c->boards[i]);
  hs_free(c->boards);
  hs_free(c->rows);
  hs_free(c->round_s);
  hs_free(c->server_s);
  hs_free(c->dir);
  hs_free(c);
}

/* Digits only, at most 2^64 - 1 (the base's count rule). */
static bool parse_u64(const char *s, uint64_t *v) { return hs_parse_count(s, v) == 1; }

/* A finite number >= 0. */
static bool parse_time(const char *s, double *v) {
  if (!*s || isspace((unsigned char)*s)) return false;
  char *end;
  double x = strtod(s, &end);
  if (*end || !isfinite(x) || x < 0) return false;
  *v = x;
  return true;
}

/* One file of the folder, read and opened as CSV with its header mapped. */
typedef struct csv_file {
  char *path, *text;
  hs_csv *csv;
  size_t col[16];
} csv_file;

static void csv_file_fini(csv_file *f) {
  hs_csv_destroy(f->csv);
  hs_free(f->text);
  hs_free(f->path);
}

static hs_status csv_file_open(csv_file *f, const char *dir, const char *name,
                               const char *const *cols, size_t ncols, hs_error *err) {
  memset(f, 0, sizeof *f);
  f->path = hs_path_join(dir, name);
  size_t len = 0;
  f->text = hs_read_file(f->path, &len, err);
  if (!f->text) return err ? err->status : HS_EIO;
  f->csv = hs_csv_create(f->text, len, f->path, HS_CSV_SKIP_BLANK, err);
  if (!f->csv) return HS_EPARSE;
  int k = hs_csv_next(f->csv, err);
  if (k < 0) return HS_EPARSE;
  if (k == 0) return hs_error_set(err, HS_EPARSE, "%s: empty (expected a header line)", f->path);
  return hs_csv_header(f->csv, cols, ncols, f->col, err);
}

/* Next record: 1, 0 at the end, -1 (err set) on a quoting error or a short row. */
static int csv_file_next(csv_file *f, size_t ncols, hs_error *err) {
  int k = hs_csv_next(f->csv, err);
  if (k <= 0) return k;
  size_t need = 0;
  for (size_t i = 0; i < ncols; i++)
    if (f->col[i] + 1 > need) need = f->col[i] + 1;
  if (hs_csv_nfields(f->csv) < need) {
    hs_error_set(err, HS_EPARSE, "%s: line %zu: %zu fields, the header has at least %zu", f->path,
                 hs_csv_line(f->csv), hs_csv_nfields(f->csv), need);
    return -1;
  }
  return 1;
}

static const char *field(const csv_file *f, size_t i) { return hs_csv_field(f->csv, f->col[i]); }

static hs_status bad_field(const csv_file *f, const char *name, const char *want, const char *got,
                           hs_error *err) {
  return hs_error_set(err, HS_EINVAL, "%s: line %zu: %s: expected %s (got \"%.60s\")", f->path,
                      hs_csv_line(f->csv), name, want, got);
}

static size_t board_index(const hs_cluster_run *c, const char *name) {
  for (size_t b = 0; b < c->nboards; b++)
    if (!strcmp(c->boards[b], name)) return b;
  return SIZE_MAX;
}

enum {
  R_ROUND,
  R_DEVICE,
  R_SAMPLES,
  R_START,
  R_DOWNLOAD,
  R_SETUP,
  R_TRAIN,
  R_PACK,
  R_UPLOAD,
  R_WAIT,
  R_ROUND_S,
  R_ENERGY_J,
  R_ENERGY,
  R_NCOLS
};
static const char *const rounds_cols[R_NCOLS] = {
    "round",  "device",   "samples", "start_s", "download_s", "setup_s", "train_s",
    "pack_s", "upload_s", "wait_s",  "round_s", "energy_j",   "energy"};

/* The rows of round `r` are complete: every board of round 0 has one. */
static hs_status round_complete(const hs_cluster_run *c, const csv_file *f, uint32_t r,
                                const bool *seen, hs_error *err) {
  for (size_t b = 0; b < c->nboards; b++)
    if (!seen[b])
      return hs_error_set(err, HS_EMISSING,
                          "%s: round %u: no row for device \"%s\" (round 0 has it)", f->path, r,
                          c->boards[b]);
  return HS_OK;
}

static hs_status read_rounds(hs_cluster_run *c, hs_error *err) {
  csv_file f;
  hs_status st = csv_file_open(&f, c->dir, "rounds.csv", rounds_cols, R_NCOLS, err);
  size_t cap = 0, n = 0, bcap = 0;
  bool *seen = NULL;
  uint32_t cur = 0;
  int k;
  while (st == HS_OK && (k = csv_file_next(&f, R_NCOLS, err)) != 0) {
    if (k < 0) {
      st = HS_EPARSE;
      break;
    }
    uint64_t round;
    const char *name = field(&f, R_DEVICE);
    if (!parse_u64(field(&f, R_ROUND), &round) || round > UINT32_MAX - 1) {
      st = bad_field(&f, "round", "a round index >= 0", field(&f, R_ROUND), err);
      break;
    }
    if (!*name) {
      st = bad_field(&f, "device", "a device name", name, err);
      break;
    }
    if (n == 0 && round != 0) {
      st = hs_error_set(err, HS_EINVAL,
                        "%s: line %zu: round: the first row is round %llu (expected 0)", f.path,
                        hs_csv_line(f.csv), (unsigned long long)round);
      break;
    }
    if (round != cur) {
      if (round != (uint64_t)cur + 1) {
        st = hs_error_set(err, HS_EINVAL,
                          "%s: line %zu: round: round %llu after round %u (rounds go 0, 1, ... in "
                          "blocks; round %u has no rows here)",
                          f.path, hs_csv_line(f.csv), (unsigned long long)round, cur, cur + 1);
        break;
      }
      if ((st = round_complete(c, &f, cur, seen, err)) != HS_OK) break;
      memset(seen, 0, c->nboards * sizeof *seen);
      cur = (uint32_t)round;
    }
    size_t b = board_index(c, name);
    if (cur == 0 && b == SIZE_MAX) { /* round 0 names the boards */
      if (c->nboards == bcap) {
        bcap = bcap ? 2 * bcap : 8;
        c->boards = hs_realloc(c->boards, bcap * sizeof *c->boards);
        seen = hs_realloc(seen, bcap * sizeof *seen);
      }
      b = c->nboards++;
      c->boards[b] = hs_strdup(name);
      seen[b] = false;
    } else if (b == SIZE_MAX) {
      const char *near = hs_nearest(name, (const char *const *)c->boards, c->nboards);
      st = hs_error_set(err, HS_EINVAL,
                        "%s: line %zu: device: \"%.60s\" is not a device of round 0%s%s%s", f.path,
                        hs_csv_line(f.csv), name, near ? " (did you mean \"" : "", near ? near : "",
                        near ? "\"?)" : "");
      break;
    }
    if (seen[b]) {
      st = hs_error_set(err, HS_EINVAL,
                        "%s: line %zu: device: a second row for \"%.60s\" in round %u", f.path,
                        hs_csv_line(f.csv), name, cur);
      break;
    }
    seen[b] = true;
    /* Round 0's rows are stored in order; a later round's by board, so the
     * array is rows[r * nboards + b] (a round's rows may come in any order). */
    size_t at = cur == 0 ? n : (size_t)cur * c->nboards + b;
    if (at >= cap) {
      cap = cap ? 2 * cap : 16;
      if (cap <= at) cap = 2 * at;
      c->rows = hs_realloc(c->rows, cap * sizeof *c->rows);
    }
    hs_cluster_row *row = &c->rows[at];
    row->line = hs_csv_line(f.csv);
    if (!parse_u64(field(&f, R_SAMPLES), &row->samples)) {
      st = bad_field(&f, "samples", "a whole number >= 0", field(&f, R_SAMPLES), err);
      break;
    }
    double *t[] = {&row->start_s,  &row->download_s, &row->setup_s, &row->train_s, &row->pack_s,
                   &row->upload_s, &row->wait_s,     &row->round_s, &row->energy_j};
    for (size_t i = 0; i < sizeof t / sizeof t[0] && st == HS_OK; i++)
      if (!parse_time(field(&f, R_START + i), t[i]))
        st = bad_field(&f, rounds_cols[R_START + i], "a finite number >= 0", field(&f, R_START + i),
                       err);
    if (st != HS_OK) break;
    const char *e = field(&f, R_ENERGY);
    if (!strcmp(e, "measured"))
      row->energy = HS_ENERGY_MEASURED;
    else if (!strcmp(e, "stated"))
      row->energy = HS_ENERGY_STATED;
    else if (!strcmp(e, "none"))
      row->energy = HS_ENERGY_NONE;
    else {
      st = bad_field(&f, "energy", "measured, stated or none", e, err);
      break;
    }
    n++;
  }
  if (st == HS_OK && n == 0)
    st = hs_error_set(err, HS_EMISSING, "%s: no rows (expected one per round and device)", f.path);
  if (st == HS_OK) st = round_complete(c, &f, cur, seen, err);
  if (st == HS_OK) c->rounds = cur + 1;
  hs_free(seen);
  csv_file_fini(&f);
  return st;
}

/* allocations.csv agrees with rounds.csv: the same (round, device) rows, the
 * same samples. */
static hs_status read_allocations(hs_cluster_run *c, hs_error *err) {
  static const char *const cols[] = {"round", "device", "samples"};
  csv_file f;
  hs_status st = csv_file_open(&f, c->dir, "allocations.csv", cols, 3, err);
  size_t rows = 0;
  int k;
  while (st == HS_OK && (k = csv_file_next(&f, 3, err)) != 0) {
    if (k < 0) {
      st = HS_EPARSE;
      break;
    }
    uint64_t round, samples;
    if (!parse_u64(field(&f, 0), &round) || round >= c->rounds) {
      char want[64];
      snprintf(want, sizeof want, "a round of rounds.csv (0 to %u)", c->rounds - 1);
      st = bad_field(&f, "round", want, field(&f, 0), err);
      break;
    }
    size_t b = board_index(c, field(&f, 1));
    if (b == SIZE_MAX) {
      const char *near = hs_nearest(field(&f, 1), (const char *const *)c->boards, c->nboards);
      st = hs_error_set(err, HS_EINVAL,
                        "%s: line %zu: device: \"%.60s\" is not a device of rounds.csv%s%s%s",
                        f.path, hs_csv_line(f.csv), field(&f, 1), near ? " (did you mean \"" : "",
                        near ? near : "", near ? "\"?)" : "");
      break;
    }
    if (!parse_u64(field(&f, 2), &samples)) {
      st = bad_field(&f, "samples", "a whole number >= 0", field(&f, 2), err);
      break;
    }
    const hs_cluster_row *row = hs_cluster_run_row(c, (uint32_t)round, b);
    if (samples != row->samples) {
      st = hs_error_set(err, HS_EINVAL,
                        "%s: line %zu: samples: %llu for round %llu, device \"%s\", but rounds.csv "
                        "line %zu says %llu",
                        f.path, hs_csv_line(f.csv), (unsigned long long)samples,
                        (unsigned long long)round, c->boards[b], row->line,
                        (unsigned long long)row->samples);
      break;
    }
    rows++;
  }
  if (st == HS_OK && rows != (size_t)c->rounds * c->nboards)
    st = hs_error_set(err, HS_EMISSING,
                      "%s: %zu rows, rounds.csv has %zu (one per round and device)", f.path, rows,
                      (size_t)c->rounds * c->nboards);
  csv_file_fini(&f);
  return st;
}

static hs_status read_server(hs_cluster_run *c, hs_error *err) {
  static const char *const cols[] = {"round", "round_s", "server_s"};
  csv_file f;
  hs_status st = csv_file_open(&f, c->dir, "server.csv", cols, 3, err);
  c->round_s = hs_calloc(c->rounds, sizeof *c->round_s);
  c->server_s = hs_calloc(c->rounds, sizeof *c->server_s);
  uint32_t next = 0;
  int k;
  while (st == HS_OK && (k = csv_file_next(&f, 3, err)) != 0) {
    if (k < 0) {
      st = HS_EPARSE;
      break;
    }
    uint64_t round;
    if (!parse_u64(field(&f, 0), &round) || round != next || round >= c->rounds) {
      char want[96];
      if (next < c->rounds)
        snprintf(want, sizeof want, "round %u (one row per round, in order)", next);
      else
        snprintf(want, sizeof want, "no more rows (rounds.csv has %u rounds)", c->rounds);
      st = bad_field(&f, "round", want, field(&f, 0), err);
      break;
    }
    if (!parse_time(field(&f, 1), &c->round_s[next])) {
      st = bad_field(&f, "round_s", "a finite number >= 0", field(&f, 1), err);
    } else if (!parse_time(field(&f, 2), &c->server_s[next])) {
      st = bad_field(&f, "server_s", "a finite number >= 0", field(&f, 2), err);
    }
    next++;
  }
  if (st == HS_OK && next < c->rounds)
    st = hs_error_set(err, HS_EMISSING, "%s: round %u: no row (rounds.csv has %u rounds)", f.path,
                      next, c->rounds);
  csv_file_fini(&f);
  return st;
}

static hs_status read_json(hs_cluster_run *c, hs_error *err) {
  char *path = hs_path_join(c->dir, "run.json");
  size_t len = 0;
  char *text = hs_read_file(path, &len, err);
  hs_status st = text ? HS_OK : (err ? err->status : HS_EIO);
  cJSON *root = NULL;
  if (st == HS_OK && (st = hs_text_check_nul(text, len, path, err)) == HS_OK) {
    root = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(root))
      st =
          hs_error_set(err, HS_EPARSE, "%s: not a JSON object (expected the run's run.json)", path);
  }
  if (st == HS_OK) {
    const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(root, "rounds");
    const cJSON *mk = cJSON_GetObjectItemCaseSensitive(root, "makespan_s");
    if (!rounds)
      st = hs_error_set(err, HS_EMISSING, "%s: rounds: missing (rounds.csv has %u rounds)", path,
                        c->rounds);
    else if (!cJSON_IsNumber(rounds))
      st = hs_error_set(err, HS_EINVAL, "%s: rounds: not a number (rounds.csv has %u rounds)", path,
                        c->rounds);
    else if (rounds->valuedouble != (double)c->rounds)
      st = hs_error_set(err, HS_EINVAL, "%s: rounds: %g, but rounds.csv has %u rounds", path,
                        rounds->valuedouble, c->rounds);
    else if (!cJSON_IsNumber(mk) || !isfinite(mk->valuedouble) || mk->valuedouble < 0)
      st = hs_error_set(err, mk ? HS_EINVAL : HS_EMISSING, "%s: makespan_s: %s", path,
                        mk ? "expected a finite number >= 0" : "missing");
    else
      c->makespan_s = mk->valuedouble;
  }
  cJSON_Delete(root);
  hs_free(text);
  hs_free(path);
  return st;
}

hs_cluster_run *hs_cluster_run_read(const char *dir, hs_error *err) {
  hs_cluster_run *c = hs_calloc(1, sizeof *c);
  c->dir = hs_strdup(dir);
  hs_status st = read_rounds(c, err);
  if (st == HS_OK) st = read_allocations(c, err);
  if (st == HS_OK) st = read_server(c, err);
  if (st == HS_OK) st = read_json(c, err);
  if (st == HS_OK) return c;
  hs_cluster_run_destroy(c);
  return NULL;
}
