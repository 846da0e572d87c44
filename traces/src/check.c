/* check.c: a prediction held against a real run's records (hs_check.h).
 *
 * Four levels of cells: (round, device) from the two inputs, then the
 * round's and the device's sums and the total in one pass over the cells,
 * then every error and worst device from those sums (an error is never
 * averaged: the error of a sum is the sum's ratio). O(rounds x devices).
 * Energy enters a sum only from the cells whose rows compare it (measured,
 * or stated when asked), so a level's energy figure is over those rows and
 * its label says what they were. The files: check.csv from the column table
 * below (the one way hetsim writes a CSV), check.json by hand in the order
 * the header promises; both through hs_outfile, so a failed write leaves the
 * old file or none. */
#include "traces/hs_check.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_fmt.h"
#include "traces/hs_columns.h"
#include "traces/hs_outfile.h"
#include "traces/hs_report.h"

const char *const hs_check_fig_names[HS_CHECK_NFIG] = {"makespan", "compute", "comm", "wait",
                                                       "energy"};

double hs_check_error(double pred, double meas) {
  if (!isfinite(pred) || !isfinite(meas)) return NAN;
  if (meas == 0) return pred == 0 ? 0.0 : NAN;
  return pred / meas - 1.0;
}

const char *hs_check_energy_label(hs_check_energy e) {
  switch (e) {
    case HS_CHECK_ENERGY_MEASURED:
      return "measured";
    case HS_CHECK_ENERGY_STATED:
      return "stated";
    case HS_CHECK_ENERGY_MIXED:
      return "measured+stated";
    default:
      return "";
  }
}

static void cell_clear(hs_check_cell *c) {
  memset(c, 0, sizeof *c);
  for (int f = 0; f < HS_CHECK_NFIG; f++) {
    c->fig[f] = (hs_check_fig){NAN, NAN, NAN, SIZE_MAX, NAN};
    if (f != HS_CHECK_MAKESPAN && f != HS_CHECK_ENERGY) c->fig[f].pred = c->fig[f].meas = 0;
  }
}

static hs_check_energy energy_join(hs_check_energy a, hs_check_energy b) {
  if (a == HS_CHECK_ENERGY_OFF) return b;
  if (b == HS_CHECK_ENERGY_OFF || a == b) return a;
  return HS_CHECK_ENERGY_MIXED;
}

/* Adds cell x into the sum s (every figure but the makespan). */
static void cell_add(hs_check_cell *s, const hs_check_cell *x) {
  s->samples += x->samples;
  s->other_meas_s += x->other_meas_s;
  for (int f = HS_CHECK_COMPUTE; f <= HS_CHECK_WAIT; f++) {
    s->fig[f].pred += x->fig[f].pred;
    s->fig[f].meas += x->fig[f].meas;
  }
  if (x->energy != HS_CHECK_ENERGY_OFF) {
    hs_check_fig *e = &s->fig[HS_CHECK_ENERGY];
    if (s->energy == HS_CHECK_ENERGY_OFF) e->pred = e->meas = 0;
    e->pred += x->fig[HS_CHECK_ENERGY].pred;
    e->meas += x->fig[HS_CHECK_ENERGY].meas;
    s->energy = energy_join(s->energy, x->energy);
  }
}

static void cell_errors(hs_check_cell *c) {
  for (int f = 0; f < HS_CHECK_NFIG; f++)
    c->fig[f].err = hs_check_error(c->fig[f].pred, c->fig[f].meas);
}

/* The worst board of each figure of sum s among cells at[0], at[stride], ... */
static void cell_worst(hs_check_cell *s, const hs_check_cell *at, size_t n, size_t stride) {
  for (int f = HS_CHECK_COMPUTE; f < HS_CHECK_NFIG; f++) {
    for (size_t b = 0; b < n; b++) {
      double e = at[b * stride].fig[f].err;
      if (isnan(e)) continue;
      if (s->fig[f].worst == SIZE_MAX || fabs(e) > fabs(s->fig[f].worst_err)) {
        s->fig[f].worst = b;
        s->fig[f].worst_err = e;
      }
    }
  }
}

hs_check *hs_check_create(const hs_cluster_run *run, const hs_check_input *in) {
  size_t nb = run->nboards;
  uint32_t nr = run->rounds;
  hs_check *c = hs_calloc(1, sizeof *c);
  c->run = run;
  c->stated_energy = in->stated_energy;
  size_t cells = (size_t)nr * nb;
  c->cell = hs_calloc(cells > 0 ? cells : 1, sizeof *c->cell);
  c->round = hs_calloc(nr ? nr : 1, sizeof *c->round);
  c->board = hs_calloc(nb ? nb : 1, sizeof *c->board);
  cell_clear(&c->total);
  for (size_t b = 0; b < nb; b++) cell_clear(&c->board[b]);
  for (uint32_t r = 0; r < nr; r++) {
    hs_check_cell *rc = &c->round[r];
    cell_clear(rc);
    rc->fig[HS_CHECK_MAKESPAN].pred = in->round_s[r];
    rc->fig[HS_CHECK_MAKESPAN].meas = run->round_s[r] + run->server_s[r];
    for (size_t b = 0; b < nb; b++) {
      size_t k = (size_t)r * nb + b;
      const hs_cluster_row *row = &run->rows[k];
      hs_check_cell *x = &c->cell[k];
      cell_clear(x);
      x->samples = row->samples;
      x->fig[HS_CHECK_COMPUTE].pred = in->compute_s[k];
      x->fig[HS_CHECK_COMPUTE].meas = row->train_s;
      x->fig[HS_CHECK_COMM].pred = in->comm_s[k];
      x->fig[HS_CHECK_COMM].meas = row->download_s + row->upload_s;
      x->fig[HS_CHECK_WAIT].pred = in->wait_s[k];
      x->fig[HS_CHECK_WAIT].meas = row->wait_s + run->server_s[r];
      x->other_meas_s = row->start_s + row->setup_s + row->pack_s;
      if (row->energy == HS_ENERGY_MEASURED ||
          (row->energy == HS_ENERGY_STATED && in->stated_energy)) {
        x->energy =
            row->energy == HS_ENERGY_MEASURED ? HS_CHECK_ENERGY_MEASURED : HS_CHECK_ENERGY_STATED;
        x->fig[HS_CHECK_ENERGY].pred = in->train_j[k];
        x->fig[HS_CHECK_ENERGY].meas = row->energy_j;
      }
      cell_errors(x);
      cell_add(rc, x);
      cell_add(&c->board[b], x);
    }
    cell_errors(rc);
    cell_worst(rc, &c->cell[(size_t)r * nb], nb, 1);
    cell_add(&c->total, rc);
  }
  for (size_t b = 0; b < nb; b++) cell_errors(&c->board[b]);
  c->total.fig[HS_CHECK_MAKESPAN].pred = in->makespan_s;
  c->total.fig[HS_CHECK_MAKESPAN].meas = run->makespan_s;
  cell_errors(&c->total);
  cell_worst(&c->total, c->board, nb, 1);
  return c;
}

void hs_check_destroy(hs_check *c) {
  if (!c) return;
  hs_free(c->cell);
  hs_free(c->round);
  hs_free(c->board);
  hs_free(c);
}

/* "+12.3 %" */
static void pct(char *buf, size_t cap, double e) {
  if (isnan(e))
    snprintf(buf, cap, "n/a");
  else
    snprintf(buf, cap, "%+.2f %%", 100.0 * e);
}

void hs_check_judge(const hs_check *c, double tolerance, double tolerance_round,
                    hs_check_verdict *v) {
  memset(v, 0, sizeof *v);
  v->tolerance = tolerance;
  v->tolerance_round = tolerance_round;
  v->judged = tolerance >= 0 || tolerance_round >= 0;
  v->pass = true;
  const hs_check_fig *t = &c->total.fig[HS_CHECK_MAKESPAN];
  char e[32];
  pct(e, sizeof e, t->err);
  if (tolerance >= 0 && !(fabs(t->err) <= tolerance)) {
    v->pass = false;
    snprintf(v->line, sizeof v->line,
             "check: FAIL: total makespan error %s (predicted %.6g s, measured %.6g s) exceeds "
             "--tolerance %g",
             e, t->pred, t->meas, tolerance);
    return;
  }
  for (uint32_t r = 0; tolerance_round >= 0 && r < c->run->rounds; r++) {
    const hs_check_fig *f = &c->round[r].fig[HS_CHECK_MAKESPAN];
    if (fabs(f->err) <= tolerance_round) continue;
    char re[32];
    pct(re, sizeof re, f->err);
    v->pass = false;
    snprintf(v->line, sizeof v->line,
             "check: FAIL: round %u makespan error %s (predicted %.6g s, measured %.6g s) exceeds "
             "--tolerance-round %g",
             r, re, f->pred, f->meas, tolerance_round);
    return;
  }
  if (!v->judged) {
    snprintf(v->line, sizeof v->line,
             "check: total makespan error %s (no --tolerance given: not judged)", e);
    return;
  }
  char held[160] = "";
  if (tolerance >= 0) snprintf(held, sizeof held, "within --tolerance %g", tolerance);
  if (tolerance_round >= 0)
    snprintf(held + strlen(held), sizeof held - strlen(held),
             "%severy round's within --tolerance-round %g", tolerance >= 0 ? ", " : "",
             tolerance_round);
  snprintf(v->line, sizeof v->line, "check: ok: total makespan error %s, %s", e, held);
}

/* --- check.csv ------------------------------------------------------------- */

typedef struct check_row {
  const char *round;  /* "0", "1", ... or "all" */
  const char *device; /* NULL: the round's (or the total's) own row */
  uint64_t samples;
  double v[HS_CHECK_NFIG][3]; /* predicted, measured, error */
  double other_meas_s;
  const char *energy;
  const char *worst[HS_CHECK_NFIG]; /* on round and total rows */
} check_row;

#define ROW(field, type) type, offsetof(check_row, field), NULL, 0
#define FIG(f, name, suffix, unit, what)                                            \
  {name "_pred" suffix,          unit, "predicted " what, HS_COL_F64_OR_EMPTY,      \
   offsetof(check_row, v[f][0]), NULL, 0},                                          \
      {name "_meas" suffix,          unit, "measured " what, HS_COL_F64_OR_EMPTY,   \
       offsetof(check_row, v[f][1]), NULL, 0},                                      \
  {                                                                                 \
    name "_err", "1", "predicted / measured - 1 of " name " (empty: not compared)", \
        HS_COL_F64_OR_EMPTY, offsetof(check_row, v[f][2]), NULL, 0                  \
  }
static const hs_column check_cols[] = {
    {"round", "-", "the round, or `all` for a device's (or the run's) total over rounds",
     ROW(round, HS_COL_STR)},
    {"device", "-", "the device's name; empty on a round's (or the run's) own row",
     ROW(device, HS_COL_STR)},
    {"samples", "1", "samples trained (the real run's allocation, which the simulation used)",
     ROW(samples, HS_COL_U64)},
    FIG(HS_CHECK_MAKESPAN, "makespan", "_s", "s",
        "round open to the next open (measured: round_s + server_s; total: run.json makespan_s); "
        "round and total rows only"),
    FIG(HS_CHECK_COMPUTE, "compute", "_s", "s", "training seconds (measured: train_s)"),
    FIG(HS_CHECK_COMM, "comm", "_s", "s",
        "model exchange seconds (measured: download_s + upload_s)"),
    FIG(HS_CHECK_WAIT, "wait", "_s", "s",
        "seconds idle after the upload until the next round opens (measured: wait_s + server_s)"),
    {"other_meas_s", "s",
     "measured start_s + setup_s + pack_s: runtime steps a simulated round does not have",
     ROW(other_meas_s, HS_COL_F64)},
    FIG(HS_CHECK_ENERGY, "energy", "_j", "J",
        "training energy, where compared (see the energy column)"),
    {"energy", "-",
     "what energy compares: measured, stated (only with --stated-energy), "
     "measured+stated, or empty (not compared)",
     ROW(energy, HS_COL_STR)},
    {"worst_compute", "-", "round and total rows: the device with the largest |compute_err|",
     ROW(worst[HS_CHECK_COMPUTE], HS_COL_STR)},
    {"worst_comm", "-", "the same for comm_err", ROW(worst[HS_CHECK_COMM], HS_COL_STR)},
    {"worst_wait", "-", "the same for wait_err", ROW(worst[HS_CHECK_WAIT], HS_COL_STR)},
    {"worst_energy", "-", "the same for energy_err", ROW(worst[HS_CHECK_ENERGY], HS_COL_STR)},
};
#undef FIG
#undef ROW
static const hs_csv_table check_csv = {
    "check.csv",
    "`hetsim check --csv FILE`: one row per round and device, per round, per device over all "
    "rounds, and the run's total (sim/doc/check.md).",
    HS_COLUMNS(check_cols)};

const hs_csv_table *hs_check_table(void) { return &check_csv; }

static void row_of(const hs_check *c, const hs_check_cell *x, const char *round, const char *device,
                   bool sums, check_row *row) {
  memset(row, 0, sizeof *row);
  row->round = round;
  row->device = device;
  row->samples = x->samples;
  for (int f = 0; f < HS_CHECK_NFIG; f++) {
    row->v[f][0] = x->fig[f].pred;
    row->v[f][1] = x->fig[f].meas;
    row->v[f][2] = x->fig[f].err;
    if (sums && x->fig[f].worst != SIZE_MAX) row->worst[f] = c->run->boards[x->fig[f].worst];
  }
  row->other_meas_s = x->other_meas_s;
  row->energy = hs_check_energy_label(x->energy);
}

hs_status hs_check_write_csv(const hs_check *c, const char *path, hs_error *err) {
  hs_outfile *of = hs_outfile_open(path, err);
  if (!of) return err ? err->status : HS_EIO;
  FILE *f = hs_outfile_stream(of);
  const hs_cluster_run *run = c->run;
  hs_csv_write_header(f, &check_csv);
  check_row row;
  char rb[16];
  for (uint32_t r = 0; r < run->rounds; r++) {
    snprintf(rb, sizeof rb, "%u", r);
    for (size_t b = 0; b < run->nboards; b++) {
      row_of(c, &c->cell[(size_t)r * run->nboards + b], rb, run->boards[b], false, &row);
      hs_csv_write_row(f, &check_csv, &row);
    }
    row_of(c, &c->round[r], rb, NULL, true, &row);
    hs_csv_write_row(f, &check_csv, &row);
  }
  for (size_t b = 0; b < run->nboards; b++) {
    row_of(c, &c->board[b], "all", run->boards[b], false, &row);
    hs_csv_write_row(f, &check_csv, &row);
  }
  row_of(c, &c->total, "all", NULL, true, &row);
  hs_csv_write_row(f, &check_csv, &row);
  return hs_outfile_commit(of, err);
}

/* --- check.json ------------------------------------------------------------ */

static void json_num(FILE *f, double v) {
  if (!isfinite(v)) {
    fputs("null", f);
    return;
  }
  char b[HS_FMT_DOUBLE_MAX];
  hs_fmt_double(b, v);
  fputs(b, f);
}

static void json_cell(FILE *f, const hs_check *c, const hs_check_cell *x, bool sums,
                      const char *indent) {
  fprintf(f, "\"samples\": %llu, \"other_meas_s\": ", (unsigned long long)x->samples);
  json_num(f, x->other_meas_s);
  fputs(", \"energy_compared\": ", f);
  hs_json_fputs(f, hs_check_energy_label(x->energy));
  for (int k = 0; k < HS_CHECK_NFIG; k++) {
    const hs_check_fig *g = &x->fig[k];
    fprintf(f, ",\n%s\"%s\": {\"predicted\": ", indent, hs_check_fig_names[k]);
    json_num(f, g->pred);
    fputs(", \"measured\": ", f);
    json_num(f, g->meas);
    fputs(", \"error\": ", f);
    json_num(f, g->err);
    if (sums && k != HS_CHECK_MAKESPAN) {
      fputs(", \"worst_device\": ", f);
      if (g->worst == SIZE_MAX)
        fputs("null", f);
      else
        hs_json_fputs(f, c->run->boards[g->worst]);
      fputs(", \"worst_error\": ", f);
      json_num(f, g->worst_err);
    }
    fputc('}', f);
  }
}

hs_status hs_check_write_json(const hs_check *c, const hs_check_meta *m, const hs_check_verdict *v,
                              const char *path, hs_error *err) {
  hs_outfile *of = hs_outfile_open(path, err);
  if (!of) return err ? err->status : HS_EIO;
  FILE *f = hs_outfile_stream(of);
  const hs_cluster_run *run = c->run;
  fputs("{\n  \"format\": \"hetsim-check/1\",\n  \"scenario\": ", f);
  hs_json_fputs(f, m->scenario);
  fputs(",\n  \"run_dir\": ", f);
  hs_json_fputs(f, m->run_dir);
  fprintf(f, ",\n  \"seed\": %llu,\n  \"compute_noise\": %s,\n  \"stated_energy\": %s,\n",
          (unsigned long long)m->seed, m->noise ? "true" : "false",
          c->stated_energy ? "true" : "false");
  fputs("  \"tolerance\": ", f);
  json_num(f, v->tolerance >= 0 ? v->tolerance : NAN);
  fputs(",\n  \"tolerance_round\": ", f);
  json_num(f, v->tolerance_round >= 0 ? v->tolerance_round : NAN);
  fprintf(f,
          ",\n  \"pass\": %s,\n  \"verdict\": ", v->judged ? (v->pass ? "true" : "false") : "null");
  hs_json_fputs(f, v->line);
  fprintf(f, ",\n  \"rounds\": %u,\n  \"devices\": %zu,\n  \"total\": {\n    ", run->rounds,
          run->nboards);
  json_cell(f, c, &c->total, true, "    ");
  fputs("\n  },\n  \"per_round\": [", f);
  for (uint32_t r = 0; r < run->rounds; r++) {
    fprintf(f, "%s\n    {\"round\": %u, ", r ? "," : "", r);
    json_cell(f, c, &c->round[r], true, "     ");
    fputs(",\n     \"devices\": [", f);
    for (size_t b = 0; b < run->nboards; b++) {
      fprintf(f, "%s\n       {\"device\": ", b ? "," : "");
      hs_json_fputs(f, run->boards[b]);
      fputs(", ", f);
      json_cell(f, c, &c->cell[(size_t)r * run->nboards + b], false, "        ");
      fputc('}', f);
    }
    fputs("]}", f);
  }
  fputs("\n  ],\n  \"per_device\": [", f);
  for (size_t b = 0; b < run->nboards; b++) {
    fprintf(f, "%s\n    {\"device\": ", b ? "," : "");
    hs_json_fputs(f, run->boards[b]);
    fputs(", ", f);
    json_cell(f, c, &c->board[b], false, "     ");
    fputc('}', f);
  }
  fputs("\n  ]\n}\n", f);
  return hs_outfile_commit(of, err);
}
