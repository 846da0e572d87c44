/* serve.c: `hetsim-probe serve`, the server of a real PMA run. It reads the
 * scenario hetsim simulates, listens on one loopback port per board (board i
 * on port + i, so a tc filter can tell the boards' traffic apart by port),
 * hands each board its place in the run, and then, round after round: sends
 * every board the global model and its allocation, waits for every trained
 * model, averages them (FedAvg, weights = samples), feeds the real
 * controller (hs_policy.h) the measured training times and energies, and
 * records the round. The round in order, as sim/regimes/fl/regime_fl_round.c simulates it:
 *   open -> per board (one thread each): send ROUND (start_s after open,
 *   download_s) -> the board trains (setup_s, train_s, pack_s) -> RESULT
 *   arrives (upload_s) -> waits for the last arrival (wait_s) -> close ->
 *   server work (aggregation, controller, bookkeeping: server_s) -> next open.
 * The board's and the server's instants are on one CLOCK_MONOTONIC (loopback
 * only: one machine), so the columns of a row add up to round_s exactly.
 *
 * Outputs (DIR, each written to a temporary name and renamed, only when
 * every round went through: a failed run leaves no half records):
 *   rounds.csv     per round and board: the times above, samples, energy
 *   telemetry.csv  round,device,time_s,energy_j,samples: what the controller
 *                  was fed, printed so that `hetsim replay` reads exactly the
 *                  same doubles (the controller is fed the parsed text)
 *   allocations.csv round,device,samples: what each board trained
 *   server.csv     per round: round_s, server_s and its parts, reallocated
 *   run.json       the summary: makespan, overhead, where energy came from
 * Exit: 0 done; 2 bad input (scenario, options, a board that is not in the
 * scenario, a wrong protocol version); 1 a system failure (cannot listen or
 * write, a board that never connects, drops, stalls past a timeout or dies).
 * Rejected: one poll() loop over all boards (no simpler: the per-board send
 * and receive are sequential, and a thread per board per round costs tens of
 * microseconds, measured in server_s). */
#include "probe_cluster.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn/hs_learn.h"
#include "policies/hs_policy.h"

void probe_serve_cfg_init(probe_serve_cfg *c) {
  memset(c, 0, sizeof *c);
  c->addr = 0x0100007fu; /* 127.0.0.1 on a little-endian host; set by the CLI otherwise */
  c->port = 47000;
  c->connect_timeout_s = 60;
  c->io_timeout_s = 30;
  c->round_timeout_s = 600;
}

typedef struct srv_row { /* one board in one round */
  uint64_t samples;
  double start_s, download_s, setup_s, train_s, pack_s, upload_s, wait_s, energy_j, loss;
} srv_row;

typedef struct srv_board {
  size_t i;
  const char *name;
  int fd;
  unsigned port;
  char energy_src[160];
  /* this round */
  uint32_t round;
  uint64_t samples;
  const unsigned char *model_in;
  unsigned char *model_out;
  size_t model_bytes;
  double t_open, t_send0, t_recv_end, b_dl_end, b_train0, b_train1, b_ul0, energy_j, loss;
  double io_timeout_s, round_timeout_s;
  probe_wire_end end;
  hs_error err;
} srv_board;

static int say(int rc, const char *fmt, ...) PROBE_PRINTF(2, 3);
static int say(int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rc = probe_vsay(rc, "serve", fmt, ap);
  va_end(ap);
  return rc;
}

static int end_rc(probe_wire_end e) { return e == PROBE_WIRE_PROTOCOL ? HS_EXIT_BADINPUT : 1; }

/* One board's round: send the model and the allocation, wait for its result. */
static void *board_round(void *arg) {
  srv_board *b = arg;
  char text[96];
  snprintf(text, sizeof text, "round=%u\nsamples=%llu\n", b->round, (unsigned long long)b->samples);
  b->t_send0 = probe_now_mono();
  b->end = probe_wire_send(b->fd, PROBE_MSG_ROUND, text, b->model_in, b->model_bytes, b->io_timeout_s, &b->err);
  if (b->end != PROBE_WIRE_OK) return NULL;
  probe_msg m;
  b->end = probe_wire_recv(b->fd, b->model_bytes, b->round_timeout_s, b->io_timeout_s, &m, &b->err);
  b->t_recv_end = probe_now_mono();
  if (b->end != PROBE_WIRE_OK) return NULL;
  if (m.type == PROBE_MSG_ERROR) {
    char why[512] = "";
    probe_kv_get(m.text, "reason", why, sizeof why);
    hs_error_set(&b->err, HS_EIO, "the board failed: %s", why);
    b->end = PROBE_WIRE_CLOSED;
  } else if (m.type != PROBE_MSG_RESULT || m.bin_len != b->model_bytes) {
    hs_error_set(&b->err, HS_EPARSE, "expected a RESULT with %zu model bytes, got %s with %zu", b->model_bytes,
                 probe_msg_name(m.type), m.bin_len);
    b->end = PROBE_WIRE_PROTOCOL;
  } else {
    double r = -1, n = -1;
    hs_status st = probe_kv_num(m.text, "round", &r, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "samples", &n, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "dl_end", &b->b_dl_end, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "train0", &b->b_train0, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "train1", &b->b_train1, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "ul0", &b->b_ul0, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "energy_j", &b->energy_j, &b->err);
    if (st == HS_OK) st = probe_kv_num(m.text, "loss", &b->loss, &b->err);
    if (st == HS_OK && (r != b->round || n != (double)b->samples))
      st = hs_error_set(&b->err, HS_EINVAL, "RESULT for round %g with %g samples, expected round %u with %llu", r, n,
                        b->round, (unsigned long long)b->samples);
    if (st == HS_OK && !(b->t_send0 <= b->b_dl_end && b->b_dl_end <= b->b_train0 && b->b_train0 <= b->b_train1 &&
                         b->b_train1 <= b->b_ul0 && b->b_ul0 <= b->t_recv_end && b->energy_j >= 0))
      st = hs_error_set(&b->err, HS_EINVAL, "RESULT's instants are not in order on this machine's monotonic clock");
    if (st != HS_OK) {
      hs_error_prefix(&b->err, "RESULT");
      b->end = PROBE_WIRE_PROTOCOL;
    } else {
      memcpy(b->model_out, m.bin, b->model_bytes);
    }
  }
  probe_msg_fini(&m);
  return NULL;
}

/* Accept every board: HELLO (its name must be the port's), WELCOME, READY. */
static int accept_boards(const probe_serve_cfg *cfg, const probe_cscn *s, srv_board *b, const int *lfd,
                         const char *welcome_common, size_t nparams) {
  size_t n = s->ndev, joined = 0;
  double deadline = probe_now_mono() + cfg->connect_timeout_s;
  struct pollfd *pf = hs_calloc(n, sizeof *pf);
  int rc = 0;
  while (joined < n && rc == 0) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (b[i].fd < 0) pf[k++] = (struct pollfd){lfd[i], POLLIN, 0};
    double left = deadline - probe_now_mono();
    if (left <= 0 || probe_wire_stopped()) {
      for (size_t i = 0; i < n; i++)
        if (b[i].fd < 0) {
          rc = probe_wire_stopped() ? say(1, "stopped (signal) while waiting for the boards to connect")
                                    : say(1, "%s: board \"%s\" (port %u) did not connect within %g s", s->path,
                                          b[i].name, b[i].port, cfg->connect_timeout_s);
          break;
        }
      break;
    }
    int r = poll(pf, k, left > 0.1 ? 100 : (int)ceil(left * 1000));
    if (r <= 0) continue;
    for (size_t i = 0; i < n && rc == 0; i++) {
      if (b[i].fd >= 0) continue;
      int fd = accept(lfd[i], NULL, NULL);
      if (fd < 0) continue;
      probe_sock_prepare(fd);
      hs_error err = {HS_OK, ""};
      probe_msg m;
      probe_wire_end e = probe_wire_recv(fd, 0, cfg->io_timeout_s, cfg->io_timeout_s, &m, &err);
      if (e != PROBE_WIRE_OK) {
        if (e == PROBE_WIRE_PROTOCOL) {
          char t[600];
          snprintf(t, sizeof t, "reason=%s\n", err.msg);
          probe_wire_send(fd, PROBE_MSG_ERROR, t, NULL, 0, 1, &(hs_error){HS_OK, ""});
        }
        close(fd);
        rc = say(end_rc(e), "port %u (board \"%s\"): %s", b[i].port, b[i].name, err.msg);
        break;
      }
      char name[256] = "";
      probe_kv_get(m.text, "name", name, sizeof name);
      bool hello = m.type == PROBE_MSG_HELLO;
      probe_msg_fini(&m);
      size_t j = probe_cscn_find(s, name);
      char why[700] = "";
      if (!hello) snprintf(why, sizeof why, "expected HELLO first");
      else if (j == SIZE_MAX)
        snprintf(why, sizeof why, "board \"%.200s\" is not in %.200s (nearest: \"%.100s\")", name, s->path,
                 probe_cscn_nearest(s, name));
      else if (j != i)
        snprintf(why, sizeof why, "board \"%.200s\" connected to port %u, which is board \"%.200s\"'s (its own is %u)",
                 name, b[i].port, b[i].name, b[j].port);
      if (why[0]) {
        char t[800];
        snprintf(t, sizeof t, "reason=%s\n", why);
        probe_wire_send(fd, PROBE_MSG_ERROR, t, NULL, 0, 1, &err);
        close(fd);
        rc = say(HS_EXIT_BADINPUT, "%s", why);
        break;
      }
      char *w = NULL;
      size_t wl = 0;
      probe_kv_add(&w, &wl, "index", "%zu", i);
      probe_kv_add(&w, &wl, "nparams", "%zu", nparams);
      if (!isnan(s->dev[i].busy_w)) probe_kv_add(&w, &wl, "busy_w", "%.17g", s->dev[i].busy_w);
      probe_kv_add(&w, &wl, "profile", "%s", s->dev[i].profile_path ? s->dev[i].profile_path : s->dev[i].profile);
      char *all = probe_xasprintf("%s%s", welcome_common, w);
      free(w);
      e = probe_wire_send(fd, PROBE_MSG_WELCOME, all, NULL, 0, cfg->io_timeout_s, &err);
      free(all);
      if (e != PROBE_WIRE_OK) {
        close(fd);
        rc = say(1, "board \"%s\": %s", b[i].name, err.msg);
        break;
      }
      b[i].fd = fd;
      joined++;
    }
  }
  free(pf);
  /* READY: every board has loaded its data and opened its sensor. */
  for (size_t i = 0; i < n && rc == 0; i++) {
    hs_error err = {HS_OK, ""};
    probe_msg m;
    double left = deadline - probe_now_mono();
    probe_wire_end e = probe_wire_recv(b[i].fd, 0, left > 1 ? left : 1, cfg->io_timeout_s, &m, &err);
    if (e != PROBE_WIRE_OK) {
      rc = say(end_rc(e), "board \"%s\": before the first round: %s", b[i].name, err.msg);
      break;
    }
    char why[512] = "";
    if (m.type == PROBE_MSG_ERROR) {
      probe_kv_get(m.text, "reason", why, sizeof why);
      rc = say(HS_EXIT_BADINPUT, "board \"%s\": %s", b[i].name, why);
    } else if (m.type != PROBE_MSG_READY) {
      rc = say(HS_EXIT_BADINPUT, "board \"%s\": expected READY, got %s", b[i].name, probe_msg_name(m.type));
    } else {
      probe_kv_get(m.text, "energy", b[i].energy_src, sizeof b[i].energy_src);
    }
    probe_msg_fini(&m);
  }
  return rc;
}

/* Tell every connected board the run is over (BYE) or failed (ERROR). */
static void release(srv_board *b, size_t n, const char *reason) {
  char t[600];
  snprintf(t, sizeof t, "reason=%.500s\n", reason ? reason : "");
  for (size_t i = 0; i < n; i++) {
    if (b[i].fd < 0) continue;
    hs_error e = {HS_OK, ""};
    probe_wire_send(b[i].fd, reason ? PROBE_MSG_ERROR : PROBE_MSG_BYE, reason ? t : NULL, NULL, 0, 1, &e);
    close(b[i].fd);
    b[i].fd = -1;
  }
}

/* "%.9g" of x, and x replaced by the value of that text: the controller is
 * fed exactly what telemetry.csv says, so `hetsim replay` decides the same. */
static double as_written(double x, char *buf, size_t cap) {
  snprintf(buf, cap, "%.9g", x);
  return strtod(buf, NULL);
}

static void csv_add(char **s, size_t *len, const char *fmt, ...) PROBE_PRINTF(3, 4);
static void csv_add(char **s, size_t *len, const char *fmt, ...) {
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  size_t l = (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
  *s = hs_realloc(*s, *len + l + 1);
  memcpy(*s + *len, line, l + 1);
  *len += l;
}

typedef struct srv_round {
  double open, close, next_open, aggregate_s, controller_s;
  bool reallocated;
} srv_round;

static int write_out(const char *dir, const char *file, const char *text) {
  char *p = probe_xasprintf("%s/%s", dir, file);
  hs_error err = {HS_OK, ""};
  hs_status st = probe_write_atomic(p, text, strlen(text), &err);
  free(p);
  if (st != HS_OK) return say(1, "%s", err.msg);
  return 0;
}

static int write_records(const probe_serve_cfg *cfg, const probe_cscn *s, const srv_board *b, const srv_row *rows,
                         const srv_round *rr, const char *const *tel_time, const char *const *tel_energy,
                         size_t rounds, double final_loss, double final_acc, const char *learner_desc) {
  size_t n = s->ndev;
  char *rc = NULL, *tc = NULL, *ac = NULL, *sc = NULL;
  size_t rl = 0, tl = 0, al = 0, sl = 0;
  csv_add(&rc, &rl, "round,device,samples,start_s,download_s,setup_s,train_s,pack_s,upload_s,wait_s,round_s,"
                    "energy_j,energy,loss\n");
  csv_add(&tc, &tl, "round,device,time_s,energy_j,samples\n");
  csv_add(&ac, &al, "round,device,samples\n");
  csv_add(&sc, &sl, "round,round_s,server_s,aggregate_s,controller_s,overhead_s,reallocated\n");
  double makespan = rr[rounds - 1].next_open - rr[0].open, work = 0, over = 0, srv = 0;
  for (size_t r = 0; r < rounds; r++) {
    double crit = 0;
    for (size_t i = 0; i < n; i++) {
      const srv_row *w = &rows[r * n + i];
      const char *kind = w->samples == 0 ? "none" : !strncmp(b[i].energy_src, "measured", 8) ? "measured"
                                                     : !strncmp(b[i].energy_src, "stated", 6)   ? "stated"
                                                                                                  : "none";
      double round_s = rr[r].close - rr[r].open;
      csv_add(&rc, &rl, "%zu,%s,%llu,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6g,%s,%.6g\n", r, b[i].name,
              (unsigned long long)w->samples, w->start_s, w->download_s, w->setup_s, w->train_s, w->pack_s,
              w->upload_s, w->wait_s, round_s, w->energy_j, kind, w->loss);
      csv_add(&tc, &tl, "%zu,%s,%s,%s,%llu\n", r, b[i].name, tel_time[r * n + i], tel_energy[r * n + i],
              (unsigned long long)w->samples);
      csv_add(&ac, &al, "%zu,%s,%llu\n", r, b[i].name, (unsigned long long)w->samples);
      double c = w->download_s + w->train_s + w->upload_s;
      if (c > crit) crit = c;
    }
    double full = rr[r].next_open - rr[r].open, server_s = rr[r].next_open - rr[r].close;
    csv_add(&sc, &sl, "%zu,%.6f,%.6f,%.6f,%.6f,%.6f,%d\n", r, rr[r].close - rr[r].open, server_s,
            rr[r].aggregate_s, rr[r].controller_s, full - crit, rr[r].reallocated ? 1 : 0);
    work += full;
    over += full - crit;
    srv += server_s;
  }
  bool any_measured = false;
  char *j = NULL;
  size_t jl = 0;
  csv_add(&j, &jl, "{\n  \"format\": \"hetsim-probe-run/1\",\n  \"scenario\": \"%s\",\n  \"regime\": \"%s\",\n"
                   "  \"policy\": \"%s\",\n  \"task\": \"%s\",\n  \"rounds\": %zu,\n  \"boards\": %zu,\n"
                   "  \"samples_per_round\": %.0f,\n  \"model_bytes\": %.0f,\n  \"makespan_s\": %.6f,\n"
                   "  \"server_s_per_round\": %.6f,\n  \"overhead_fraction\": %.6f,\n"
                   "  \"final_held_out_loss\": %.6g,\n  \"final_held_out_accuracy\": %.6g,\n"
                   "  \"learner\": \"%s\",\n  \"clock\": \"CLOCK_MONOTONIC of this machine (loopback run)\",\n"
                   "  \"energy\": [\n",
          s->path, s->regime, s->policy_kind, s->task, rounds, n, cfg->samples > 0 ? cfg->samples : s->samples_per_round,
          s->model_bytes, makespan, srv / (double)rounds, work > 0 ? over / work : 0, final_loss, final_acc,
          learner_desc);
  for (size_t i = 0; i < n; i++) {
    if (!strncmp(b[i].energy_src, "measured", 8)) any_measured = true;
    char src[200];
    size_t k = 0;
    for (const char *c = b[i].energy_src; *c && k + 2 < sizeof src; c++) {
      if (*c == '"' || *c == '\\') src[k++] = '\\';
      src[k++] = *c;
    }
    src[k] = '\0';
    csv_add(&j, &jl, "    {\"device\": \"%s\", \"source\": \"%s\"}%s\n", b[i].name, src, i + 1 < n ? "," : "");
  }
  csv_add(&j, &jl, "  ],\n  \"energy_measured\": %s\n}\n", any_measured ? "true" : "false");
  int rc_ = 0;
  if (!rc_) rc_ = write_out(cfg->out, "rounds.csv", rc);
  if (!rc_) rc_ = write_out(cfg->out, "telemetry.csv", tc);
  if (!rc_) rc_ = write_out(cfg->out, "allocations.csv", ac);
  if (!rc_) rc_ = write_out(cfg->out, "server.csv", sc);
  if (!rc_) rc_ = write_out(cfg->out, "run.json", j);
  free(rc);
  free(tc);
  free(ac);
  free(sc);
  free(j);
  if (!rc_ && !cfg->quiet)
    printf("%s: %zu rounds x %zu boards: makespan %.3f s, server work %.3f ms per round, runtime overhead %.3f %% of "
           "a round; records in %s\n",
           s->name, rounds, n, makespan, 1e3 * srv / (double)rounds, work > 0 ? 100 * over / work : 0, cfg->out);
  return rc_;
}

static int make_controller(const probe_serve_cfg *cfg, const probe_cscn *s, hs_controller **c) {
  hs_policy_config pc;
  hs_error err = {HS_OK, ""};
  if (hs_policy_config_init(&pc, s->policy_kind, &err) != HS_OK)
    return say(HS_EXIT_BADINPUT, "%s: policy.kind: %s", s->path, err.msg);
  if (hs_policy_caps(s->policy_kind) & HS_POLICY_CAP_STEP_LEVEL)
    return say(HS_EXIT_BADINPUT, "%s: policy.kind: \"%s\" sizes DDP steps; a pma run takes a round-level policy",
               s->path, s->policy_kind);
  for (size_t k = 0; k < s->npolicy_keys; k++)
    if (hs_policy_config_set(&pc, s->policy_keys[k], s->policy_vals[k], &err) != HS_OK)
      return say(HS_EXIT_BADINPUT, "%s: policy.%s", s->path, err.msg);
  double budget = cfg->samples > 0 ? cfg->samples : s->samples_per_round;
  *c = hs_controller_create(&pc, s->ndev, NULL, (uint64_t)budget, &err);
  if (!*c) return say(HS_EXIT_BADINPUT, "%s: policy: %s", s->path, err.msg);
  return 0;
}

int probe_serve(const probe_serve_cfg *cfg) {
  union {
    uint16_t u;
    unsigned char b[2];
  } endian = {1};
  if (!endian.b[0]) return say(1, "this host is big-endian; the wire carries little-endian float32 models");
  hs_error err = {HS_OK, ""};
  probe_cscn s;
  if (probe_cscn_load(cfg->scenario, cfg->profiles, &s, &err) != HS_OK)
    return say(err.status == HS_ENOENT || err.status == HS_EIO ? 1 : HS_EXIT_BADINPUT, "%s", err.msg);
  int rc = 0;
  hs_learner *l = NULL;
  hs_controller *ctl = NULL;
  srv_board *b = NULL;
  int *own = NULL;
  srv_row *rows = NULL;
  srv_round *rr = NULL;
  char **tel_t = NULL, **tel_e = NULL;
  float *global = NULL, **models = NULL;
  unsigned char *wire_in = NULL;
  double *wts = NULL;
  size_t n = s.ndev, rounds = (size_t)(cfg->rounds > 0 ? cfg->rounds : s.rounds);
  if (strcmp(s.regime, "pma") != 0) {
    rc = say(HS_EXIT_BADINPUT, "%s: regime.kind: \"%s\": the runtime runs pma rounds (fedasync and ddp are not "
                               "implemented by hetsim-probe serve yet)", s.path, s.regime);
    goto done;
  }
  if (cfg->nlisten && cfg->nlisten != n) {
    rc = say(1, "internal: %zu listening sockets for %zu boards", cfg->nlisten, n);
    goto done;
  }
  if ((rc = make_controller(cfg, &s, &ctl))) goto done;
  if (mkdir(cfg->out, 0755) != 0 && errno != EEXIST) {
    rc = say(1, "%s: cannot make the output folder: %s", cfg->out, strerror(errno));
    goto done;
  }
  hs_learn_cfg lc = {.task = s.task, .data = cfg->data, .max_samples = cfg->max_samples > 0 ? (size_t)cfg->max_samples : 0,
                     .seed = (uint64_t)s.seed, .batch = (size_t)s.batch_size, .opt = {.kind = HS_LEARN_SGD}, .threads = 1};
  if (hs_learn_create(&lc, &l, &err) != HS_OK) {
    rc = say(err.status == HS_ENOENT || err.status == HS_EIO ? 1 : HS_EXIT_BADINPUT, "%s: task: %s", s.path, err.msg);
    goto done;
  }
  size_t np = hs_learn_nparams(l), mb = (size_t)s.model_bytes;
  if (mb < np * sizeof(float)) {
    rc = say(HS_EXIT_BADINPUT, "%s: model_bytes: %zu is smaller than the %s model's %zu bytes (%zu float32)", s.path,
             mb, s.task, np * sizeof(float), np);
    goto done;
  }
  b = hs_calloc(n, sizeof *b);
  own = hs_calloc(n, sizeof *own);
  for (size_t i = 0; i < n; i++) {
    b[i] = (srv_board){.i = i, .name = s.dev[i].name, .fd = -1, .model_bytes = mb,
                       .io_timeout_s = cfg->io_timeout_s, .round_timeout_s = cfg->round_timeout_s};
    own[i] = cfg->nlisten ? cfg->listen_fds[i] : probe_listen(cfg->addr, cfg->port ? cfg->port + (unsigned)i : 0,
                                                              &b[i].port, &err);
    if (cfg->nlisten) {
      struct sockaddr_in sa;
      socklen_t sl = sizeof sa;
      getsockname(own[i], (struct sockaddr *)&sa, &sl);
      b[i].port = ntohs(sa.sin_port);
    }
    if (own[i] < 0) {
      rc = say(1, "board \"%s\": %s", s.dev[i].name, err.msg);
      for (size_t k = 0; k < i; k++) close(own[k]);
      free(own);
      own = NULL;
      goto done;
    }
    if (!cfg->quiet) printf("board %s: port %u\n", s.dev[i].name, b[i].port);
  }
  fflush(stdout);
  char *common = NULL;
  size_t cl = 0;
  probe_kv_add(&common, &cl, "task", "%s", s.task);
  probe_kv_add(&common, &cl, "seed", "%.0f", s.seed);
  probe_kv_add(&common, &cl, "batch", "%.0f", s.batch_size);
  probe_kv_add(&common, &cl, "participants", "%zu", n);
  probe_kv_add(&common, &cl, "max_samples", "%.0f", cfg->max_samples);
  probe_kv_add(&common, &cl, "model_bytes", "%zu", mb);
  probe_kv_add(&common, &cl, "round_timeout_s", "%.17g", cfg->round_timeout_s);
  rc = accept_boards(cfg, &s, b, own, common, np);
  free(common);
  if (rc) goto fail;

  global = hs_calloc(np, sizeof *global);
  hs_learn_init_params(l, global);
  wire_in = hs_calloc(mb, 1);
  models = hs_calloc(n, sizeof *models);
  for (size_t i = 0; i < n; i++) {
    b[i].model_out = hs_calloc(mb, 1);
    models[i] = hs_calloc(np, sizeof(float));
  }
  wts = hs_calloc(n, sizeof *wts);
  rows = hs_calloc(rounds * n, sizeof *rows);
  rr = hs_calloc(rounds, sizeof *rr);
  tel_t = hs_calloc(rounds * n, sizeof *tel_t);
  tel_e = hs_calloc(rounds * n, sizeof *tel_e);
  hs_telemetry *tel = hs_calloc(n, sizeof *tel);
  pthread_t *th = hs_calloc(n, sizeof *th);
  bool *started = hs_calloc(n, sizeof *started);
  for (size_t r = 0; r < rounds && rc == 0; r++) {
    double open = probe_now_mono();
    if (r > 0) rr[r - 1].next_open = open;
    rr[r].open = open;
    memcpy(wire_in, global, np * sizeof(float));
    const uint64_t *alloc = hs_controller_allocation(ctl);
    for (size_t i = 0; i < n; i++) {
      b[i].round = (uint32_t)r;
      b[i].samples = alloc[i];
      b[i].model_in = wire_in;
      b[i].t_open = open;
      b[i].end = PROBE_WIRE_OK;
      started[i] = alloc[i] > 0 && pthread_create(&th[i], NULL, board_round, &b[i]) == 0;
      if (alloc[i] > 0 && !started[i]) {
        hs_error_set(&b[i].err, HS_ENOMEM, "cannot start a thread");
        b[i].end = PROBE_WIRE_SYSTEM;
      }
    }
    for (size_t i = 0; i < n; i++)
      if (started[i]) pthread_join(th[i], NULL);
    double close_t = probe_now_mono();
    rr[r].close = close_t;
    for (size_t i = 0; i < n && rc == 0; i++)
      if (b[i].end != PROBE_WIRE_OK) {
        char why[HS_ERROR_MSG_MAX + 200];
        snprintf(why, sizeof why, "round %zu: board \"%s\": %s%s", r, b[i].name, b[i].err.msg,
                 b[i].end == PROBE_WIRE_CLOSED ? " (did the board die?)" : "");
        b[i].fd = b[i].fd >= 0 ? (close(b[i].fd), -1) : -1;
        release(b, n, why);
        rc = say(end_rc(b[i].end), "%s", why);
      }
    if (rc) break;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      srv_row *w = &rows[r * n + i];
      char buf[64];
      w->samples = b[i].samples;
      if (b[i].samples > 0) {
        w->start_s = b[i].t_send0 - open;
        w->download_s = b[i].b_dl_end - b[i].t_send0;
        w->setup_s = b[i].b_train0 - b[i].b_dl_end;
        w->train_s = b[i].b_train1 - b[i].b_train0;
        w->pack_s = b[i].b_ul0 - b[i].b_train1;
        w->upload_s = b[i].t_recv_end - b[i].b_ul0;
        w->wait_s = close_t - b[i].t_recv_end;
        w->energy_j = b[i].energy_j;
        w->loss = b[i].loss;
        memcpy(models[k], b[i].model_out, np * sizeof(float));
        wts[k++] = (double)b[i].samples;
      }
      /* the controller's rule: samples > 0 needs time > 0 (a clock tick can read 0) */
      double t = w->samples ? (w->train_s > 0 ? w->train_s : 1e-9) : 0;
      tel[i].time_s = as_written(t, buf, sizeof buf);
      tel_t[r * n + i] = hs_strdup(buf);
      tel[i].energy_j = as_written(w->samples ? w->energy_j : 0, buf, sizeof buf);
      tel_e[r * n + i] = hs_strdup(buf);
      tel[i].samples = (int64_t)w->samples;
    }
    double a0 = probe_now_mono();
    if (k > 0) hs_learn_aggregate(l, (const float *const *)models, wts, k, global);
    double a1 = probe_now_mono();
    if (hs_controller_update(ctl, tel, n, &err) != HS_OK) {
      release(b, n, "the controller refused the round's telemetry");
      rc = say(1, "round %zu: controller: %s", r, err.msg);
      break;
    }
    rr[r].reallocated = hs_controller_reallocated(ctl);
    double a2 = probe_now_mono();
    rr[r].aggregate_s = a1 - a0;
    rr[r].controller_s = a2 - a1;
    if (!cfg->quiet) {
      printf("round %zu: %.3f s%s\n", r, close_t - open, rr[r].reallocated ? ", reallocated" : "");
      fflush(stdout);
    }
  }
  if (rc == 0) rr[rounds - 1].next_open = probe_now_mono();
  free(tel);
  free(th);
  free(started);
  if (rc) goto fail;
  release(b, n, NULL);
  double loss = NAN, acc = NAN;
  hs_learn_eval(l, global, 0, &loss, &acc);
  rc = write_records(cfg, &s, b, rows, rr, (const char *const *)tel_t, (const char *const *)tel_e, rounds, loss, acc,
                     hs_learn_describe(l));
fail:
  release(b, n, rc ? "the server stopped" : NULL);
  if (own && !cfg->nlisten)
    for (size_t i = 0; i < n; i++) close(own[i]);
done:
  if (b)
    for (size_t i = 0; i < n; i++) free(b[i].model_out);
  if (models)
    for (size_t i = 0; i < n; i++) free(models[i]);
  if (tel_t)
    for (size_t i = 0; i < rounds * n; i++) {
      free(tel_t[i]);
      free(tel_e[i]);
    }
  free(tel_t);
  free(tel_e);
  free(models);
  free(own);
  free(b);
  free(rows);
  free(rr);
  free(global);
  free(wire_in);
  free(wts);
  hs_controller_destroy(ctl);
  hs_learn_destroy(l);
  probe_cscn_fini(&s);
  return rc;
}
