/* fig_gantt.c: gantt.{png,svg} of a run folder, drawn by run_gantt.gp:
 * compute, communication and waiting per device over rounds A-B (--rounds,
 * default 0-2, cut to the run's last round), from trace.json (hetsim run
 * --trace) with the round bounds from rounds.csv. Only spans inside the
 * window are kept (clipped to it), one gnuplot block per kind. The devices:
 * --devices a,b,... in that order (any track, unknown names refused before
 * anything is drawn), else the first MAX_GANTT_DEV tracks (the title says
 * when more were left out). Without trace.json the figure is skipped with a
 * note, or refused when --rounds or --devices asked for it.
 * O(events x 3): one pass over the trace per kind, because gnuplot wants
 * one block per kind. Rejected: bucketing the events by kind in one pass (a
 * second list as long as the trace, for a loop that is not the cost: parsing
 * trace.json is). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "plot_core.h"

#define MAX_GANTT_DEV 64

typedef struct gantt_state {
  bool no_trace;
  long r0, r1;      /* rounds drawn */
  double t0, t1;    /* their time window */
  plot_table rt;    /* rounds.csv */
  long cs;          /* its start_s column */
  char *text;       /* trace.json */
  cJSON *root;
  const cJSON *ev;  /* traceEvents */
  char *tp;         /* trace.json path, for the note */
  char **names;     /* track names by tid (NULL: unnamed) */
  size_t ntracks;
  long *row_of;     /* row_of[tid]: its line in the figure, -1: not drawn */
  size_t nrows;     /* lines drawn */
  char **labels;    /* nrows labels (borrowed from names) */
} gantt_state;

static char **track_names(const cJSON *ev, size_t *ndev);

/* Which tracks to draw, and where: --devices, else the first MAX_GANTT_DEV. */
static int select_devices(plot_ctx *c, gantt_state *st) {
  st->names = track_names(st->ev, &st->ntracks);
  st->row_of = hs_malloc((st->ntracks ? st->ntracks : 1) * sizeof *st->row_of);
  st->labels = hs_calloc(st->ntracks + 1, sizeof *st->labels);
  for (size_t k = 0; k < st->ntracks; k++) st->row_of[k] = -1;
  const char *list = c->a->devices;
  if (!list) {
    for (size_t k = 0; k < st->ntracks && k < MAX_GANTT_DEV; k++) {
      st->row_of[k] = (long)k;
      st->labels[st->nrows++] = st->names[k] ? st->names[k] : (char *)"?";
    }
    return 0;
  }
  char *copy = hs_strdup(list);
  int rc = 0;
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && !rc;
       tok = strtok_r(NULL, ",", &save)) {
    size_t k = 0;
    while (k < st->ntracks && !(st->names[k] && !strcmp(st->names[k], tok))) k++;
    if (k == st->ntracks)
      rc = plot_bad(c, "--devices: no device \"%s\" in %s", tok, st->tp);
    else if (st->row_of[k] >= 0)
      rc = plot_bad(c, "--devices: \"%s\" named twice", tok);
    else {
      st->row_of[k] = (long)st->nrows;
      st->labels[st->nrows++] = st->names[k];
    }
  }
  if (!rc && st->nrows == 0) rc = plot_bad(c, "--devices: expected device names a,b,...");
  hs_free(copy);
  return rc;
}

static int check(plot_ctx *c, void *state) {
  gantt_state *st = state;
  const hs_plot_args *a = c->a;
  st->tp = hs_path_join(a->source, "trace.json");
  char *rp = hs_path_join(a->source, "rounds.csv");
  int rc = 0;
  if (access(st->tp, R_OK) != 0) {
    st->no_trace = true;
    if (a->rounds || a->devices)
      rc = plot_bad(c, "%s: %s: no trace to draw (run hetsim run with --trace)",
                    a->rounds ? "--rounds" : "--devices", st->tp);
    goto done;
  }
  long r0 = 0, r1 = 2;
  if (a->rounds) {
    char *e;
    r0 = strtol(a->rounds, &e, 10);
    r1 = *e == '-' ? strtol(e + 1, &e, 10) : r0;
    if (*e || r0 < 0 || r1 < r0) {
      rc = plot_bad(c, "--rounds %s: expected A-B or A (round numbers from 0, A <= B)",
                    a->rounds);
      goto done;
    }
  }
  if ((rc = plot_table_read(c, rp, &st->rt))) goto done;
  long cr = plot_col(st->rt.col, st->rt.ncol, "round");
  long cs = plot_col(st->rt.col, st->rt.ncol, "start_s");
  long ce = plot_col(st->rt.col, st->rt.ncol, "end_s");
  if (cr < 0 || cs < 0 || ce < 0) {
    rc = plot_bad(c, "%s: line 1: expected the columns round, start_s, end_s", rp);
    goto done;
  }
  long last = (long)st->rt.nrow - 1;
  if (r0 > last) {
    rc = plot_bad(c, "--rounds: the run has rounds 0-%ld only (%s)", last,
                  a->rounds ? a->rounds : "0-2");
    goto done;
  }
  if (r1 > last) r1 = last;
  st->r0 = r0;
  st->r1 = r1;
  st->cs = cs;
  st->t0 = strtod(st->rt.row[r0][cs], NULL);
  st->t1 = strtod(st->rt.row[r1][ce], NULL);
  hs_error err = {0};
  size_t tlen = 0;
  st->text = hs_read_file(st->tp, &tlen, &err);
  if (st->text && hs_text_check_nul(st->text, tlen, st->tp, &err) != HS_OK) { /* cJSON stops there */
    rc = plot_bad(c, "%s", err.msg);
    goto done;
  }
  st->root = st->text ? cJSON_Parse(st->text) : NULL;
  st->ev = st->root ? cJSON_GetObjectItemCaseSensitive(st->root, "traceEvents") : NULL;
  if (!cJSON_IsArray(st->ev))
    rc = plot_bad(c, "%s: not a Chrome trace (expected an object with traceEvents)", st->tp);
  else
    rc = select_devices(c, st);
done:
  hs_free(rp);
  return rc;
}

/* Track names by tid (the "M" events), every track. */
static char **track_names(const cJSON *ev, size_t *ndev) {
  char **names = NULL;
  const cJSON *e;
  *ndev = 0;
  cJSON_ArrayForEach(e, ev) {
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    if (!cJSON_IsString(ph) || !cJSON_IsNumber(tid) || tid->valuedouble < 0) continue;
    if (tid->valuedouble >= 1e7) continue; /* no run has ten million devices */
    size_t id = (size_t)tid->valuedouble;
    if (id >= *ndev) {
      names = hs_reallocarray(names, id + 1, sizeof *names);
      for (size_t k = *ndev; k <= id; k++) names[k] = NULL;
      *ndev = id + 1;
    }
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *nm = args ? cJSON_GetObjectItemCaseSensitive(args, "name") : NULL;
    if (!strcmp(ph->valuestring, "M") && cJSON_IsString(nm) && !names[id])
      names[id] = hs_strdup(nm->valuestring);
  }
  return names;
}

static int draw(plot_ctx *c, void *state, const plot_figure *fig) {
  const gantt_state *st = state;
  if (st->no_trace) {
    if (!c->a->quiet) printf("gantt skipped: no %s (run hetsim run with --trace)\n", st->tp);
    return 0;
  }
  double t0 = st->t0, t1 = st->t1;
  size_t ndev = st->nrows;
  FILE *d = plot_tmp_file(c, "data.dat"), *b = plot_tmp_file(c, "bounds.dat");
  static const char *const kinds[3] = {"compute", "comm", "wait"};
  const cJSON *e;
  for (int k = 0; d && k < 3; k++) {
    size_t nk = 0;
    cJSON_ArrayForEach(e, st->ev) {
      const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
      const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
      const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
      const cJSON *du = cJSON_GetObjectItemCaseSensitive(e, "dur");
      if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") || !cJSON_IsString(nm) ||
          strcmp(nm->valuestring, kinds[k]) || !cJSON_IsNumber(tid) || !cJSON_IsNumber(ts) ||
          !cJSON_IsNumber(du) || tid->valuedouble < 0 ||
          tid->valuedouble >= (double)st->ntracks || st->row_of[(size_t)tid->valuedouble] < 0)
        continue;
      double s = ts->valuedouble * 1e-6, f = s + du->valuedouble * 1e-6;
      if (f <= t0 || s >= t1) continue;
      if (s < t0) s = t0;
      if (f > t1) f = t1;
      fprintf(d, "%.9g %ld %.9g 0.38\n", (s + f) / 2, st->row_of[(size_t)tid->valuedouble],
              (f - s) / 2);
      nk++;
    }
    /* An empty block would make gnuplot stop: one invisible zero-width box. */
    if (!nk) fprintf(d, "%.9g 0 0 0\n", t0);
    fputs("\n\n", d);
  }
  for (long r = st->r0; b && r <= st->r1; r++)
    fprintf(b, "%s -0.6 0 %zu\n", st->rt.row[r][st->cs], ndev);
  if (b) fprintf(b, "%.9g -0.6 0 %zu\n", t1, ndev);
  int rc = 0;
  if (!plot_close_data(c, d, b, true)) {
    rc = 1;
  } else {
    plot_vars v;
    char tt[800];
    snprintf(tt, sizeof tt, "rounds %ld-%ld: %s%s", st->r0, st->r1, c->run_title,
             !c->a->devices && st->ntracks > MAX_GANTT_DEV ? " (first 64 devices)" : "");
    plot_vars_open(c, &v, tt);
    char *bp = plot_tmp_path(c, "bounds.dat");
    fputs("\nboundfile = ", v.f);
    plot_gp_str(v.f, bp);
    fprintf(v.f, "\nndev = %zu\n", ndev ? ndev : 1);
    plot_gp_tics(v.f, "ytics_cmd", "ytics", st->labels, ndev);
    rc = plot_render(c, &v, fig);
    hs_free(bp);
  }
  return rc;
}

static void fini(void *state) {
  gantt_state *st = state;
  cJSON_Delete(st->root);
  hs_free(st->text);
  plot_table_free(&st->rt);
  hs_free(st->tp);
  for (size_t k = 0; k < st->ntracks; k++) hs_free(st->names[k]);
  hs_free(st->names);
  hs_free(st->row_of);
  hs_free(st->labels);
}

const plot_figure plot_fig_gantt = {"gantt", "run_gantt.gp", HS_PLOT_RUN,
                                    sizeof(gantt_state), check, draw, fini};
