/* serve.c: `hetsim-probe serve`, the server of a real run, and what its
 * regimes share (serve_regime.h). It reads the scenario hetsim simulates,
 * finds the regime's descriptor in the table below (one line per regime: pma
 * in serve_pma.c, ddp in serve_ddp.c, fedasync in serve_fedasync.c), checks
 * the regime's keys against the simulator's (a key the simulator does not
 * know: one line with the nearest; one it knows and the runtime cannot
 * honour: the regime's options() says so), makes the controller (hs_policy.h)
 * and the learner, listens on one loopback port per board (board i on port +
 * i, so a tc filter can tell the boards' traffic apart by port), admits every
 * board (HELLO with its name, WELCOME with its place in the run, READY), and
 * hands the run to the regime. Then BYE (or ERROR with the reason) to every
 * board.
 *
 * The board's and the server's instants are on one CLOCK_MONOTONIC (loopback
 * only: one machine), so the columns of a record add up exactly.
 * Outputs (DIR, each written to a temporary name and renamed, only when the
 * whole run went through): the regime's records; telemetry.csv through the
 * one writer here (probe_srv_tel_row), run.json's common fields through
 * probe_srv_run_json.
 * Exit: 0 done; 2 bad input (scenario, options, a board that is not in the
 * scenario, a wrong protocol version); 1 a system failure (cannot listen or
 * write, a board that never connects, drops, stalls past a timeout or dies).
 * Rejected: one poll() loop over all boards (no simpler: the per-board send
 * and receive are sequential, and a thread per board per exchange costs tens
 * of microseconds, measured in server_s). */
#include "serve_regime.h"

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

/* The regimes the runtime runs: one line each. */
static const probe_srv_regime *const REGIMES[] = {&probe_srv_pma, &probe_srv_ddp, &probe_srv_fedasync, NULL};

void probe_serve_cfg_init(probe_serve_cfg *c) {
  memset(c, 0, sizeof *c);
  c->addr = 0x0100007fu; /* 127.0.0.1 on a little-endian host; set by the CLI otherwise */
  c->port = 47000;
  c->connect_timeout_s = 60;
  c->io_timeout_s = 30;
  c->round_timeout_s = 600;
}

int probe_srv_say(int rc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rc = probe_vsay(rc, "serve", fmt, ap);
  va_end(ap);
  return rc;
}

hs_status probe_srv_read_stamps(const char *text, probe_srv_board *b) {
  hs_status st = probe_kv_num(text, "dl_end", &b->b_dl_end, &b->err);
  if (st == HS_OK) st = probe_kv_num(text, "train0", &b->b_train0, &b->err);
  if (st == HS_OK) st = probe_kv_num(text, "train1", &b->b_train1, &b->err);
  if (st == HS_OK) st = probe_kv_num(text, "ul0", &b->b_ul0, &b->err);
  if (st == HS_OK) st = probe_kv_num(text, "energy_j", &b->energy_j, &b->err);
  if (st == HS_OK) st = probe_kv_num(text, "loss", &b->loss, &b->err);
  return st;
}

int probe_srv_end_rc(probe_wire_end e) { return e == PROBE_WIRE_PROTOCOL ? HS_EXIT_BADINPUT : 1; }

void *probe_srv_exchange(void *arg) {
  probe_srv_board *b = arg;
  char text[128];
  snprintf(text, sizeof text, "round=%u\nsamples=%llu\ndraw=%llu\n", b->round, (unsigned long long)b->samples,
           (unsigned long long)b->draw);
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
    if (st == HS_OK) st = probe_srv_read_stamps(m.text, b);
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
static int accept_boards(const probe_serve_cfg *cfg, const probe_cscn *s, probe_srv_board *b, const int *lfd,
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
          rc = probe_wire_stopped() ? probe_srv_say(1, "stopped (signal) while waiting for the boards to connect")
                                    : probe_srv_say(1, "%s: board \"%s\" (port %u) did not connect within %g s", s->path,
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
        rc = probe_srv_say(probe_srv_end_rc(e), "port %u (board \"%s\"): %s", b[i].port, b[i].name, err.msg);
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
        rc = probe_srv_say(HS_EXIT_BADINPUT, "%s", why);
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
        rc = probe_srv_say(1, "board \"%s\": %s", b[i].name, err.msg);
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
      rc = probe_srv_say(probe_srv_end_rc(e), "board \"%s\": before the first round: %s", b[i].name, err.msg);
      break;
    }
    char why[512] = "";
    if (m.type == PROBE_MSG_ERROR) {
      probe_kv_get(m.text, "reason", why, sizeof why);
      rc = probe_srv_say(HS_EXIT_BADINPUT, "board \"%s\": %s", b[i].name, why);
    } else if (m.type != PROBE_MSG_READY) {
      rc = probe_srv_say(HS_EXIT_BADINPUT, "board \"%s\": expected READY, got %s", b[i].name, probe_msg_name(m.type));
    } else {
      probe_kv_get(m.text, "energy", b[i].energy_src, sizeof b[i].energy_src);
    }
    probe_msg_fini(&m);
  }
  return rc;
}

void probe_srv_release(probe_srv_board *b, size_t n, const char *reason) {
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

void probe_srv_add(char **s, size_t *len, const char *fmt, ...) {
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

void probe_srv_tel_init(probe_srv_tel *t) {
  t->csv = NULL;
  t->len = 0;
  probe_srv_add(&t->csv, &t->len, "round,device,time_s,energy_j,samples,comm_s\n");
}

void probe_srv_tel_fini(probe_srv_tel *t) {
  free(t->csv);
  t->csv = NULL;
  t->len = 0;
}

void probe_srv_tel_row(probe_srv_tel *t, size_t round, const char *device, double time_s, double energy_j,
                       uint64_t samples, double comm_s, hs_telemetry *fed, double *comm_fed) {
  char tb[64], eb[64], cb[64];
  snprintf(tb, sizeof tb, "%.9g", samples ? (time_s > 0 ? time_s : 1e-9) : 0.0);
  snprintf(eb, sizeof eb, "%.9g", samples ? energy_j : 0.0);
  snprintf(cb, sizeof cb, "%.9g", samples && comm_s > 0 ? comm_s : 0.0);
  probe_srv_add(&t->csv, &t->len, "%zu,%s,%s,%s,%llu,%s\n", round, device, tb, eb, (unsigned long long)samples, cb);
  fed->time_s = strtod(tb, NULL);
  fed->energy_j = strtod(eb, NULL);
  fed->samples = (int64_t)samples;
  *comm_fed = strtod(cb, NULL);
}

int probe_srv_write(const char *dir, const char *file, const char *text) {
  char *p = probe_xasprintf("%s/%s", dir, file);
  hs_error err = {HS_OK, ""};
  hs_status st = probe_write_atomic(p, text, strlen(text), &err);
  free(p);
  if (st != HS_OK) return probe_srv_say(1, "%s", err.msg);
  return 0;
}

const char *probe_srv_energy_kind(const probe_srv_board *b, uint64_t samples) {
  return samples == 0 ? "none" : !strncmp(b->energy_src, "measured", 8) ? "measured"
                             : !strncmp(b->energy_src, "stated", 6)   ? "stated"
                                                                        : "none";
}

char *probe_srv_run_json(const probe_srv_run *r, double makespan_s, double server_s_per_round,
                         double overhead_fraction, double final_loss, double final_acc, const char *extra) {
  const probe_cscn *s = r->s;
  bool any_measured = false;
  char *j = NULL;
  size_t jl = 0;
  probe_srv_add(&j, &jl, "{\n  \"format\": \"hetsim-probe-run/1\",\n  \"scenario\": \"%s\",\n  \"regime\": \"%s\",\n"
                         "  \"policy\": \"%s\",\n  \"task\": \"%s\",\n  \"rounds\": %zu,\n  \"boards\": %zu,\n"
                         "  \"samples_per_round\": %.0f,\n  \"model_bytes\": %.0f,\n  \"makespan_s\": %.6f,\n"
                         "  \"server_s_per_round\": %.6f,\n  \"overhead_fraction\": %.6f,\n"
                         "  \"final_held_out_loss\": %.6g,\n  \"final_held_out_accuracy\": %.6g,\n",
                s->path, s->regime, s->policy_kind, s->task, r->rounds, r->n, r->budget, s->model_bytes, makespan_s,
                server_s_per_round, overhead_fraction, final_loss, final_acc);
  probe_srv_add(&j, &jl, "%s", extra);
  probe_srv_add(&j, &jl, "  \"learner\": \"%s\",\n  \"clock\": \"CLOCK_MONOTONIC of this machine (loopback run)\",\n"
                         "  \"energy\": [\n", hs_learn_describe(r->l));
  for (size_t i = 0; i < r->n; i++) {
    const probe_srv_board *b = &r->b[i];
    if (!strncmp(b->energy_src, "measured", 8)) any_measured = true;
    char src[200];
    size_t k = 0;
    for (const char *c = b->energy_src; *c && k + 2 < sizeof src; c++) {
      if (*c == '"' || *c == '\\') src[k++] = '\\';
      src[k++] = *c;
    }
    src[k] = '\0';
    probe_srv_add(&j, &jl, "    {\"device\": \"%s\", \"source\": \"%s\"}%s\n", b->name, src, i + 1 < r->n ? "," : "");
  }
  probe_srv_add(&j, &jl, "  ],\n  \"energy_measured\": %s\n}\n", any_measured ? "true" : "false");
  return j;
}

static const char *regime_val(const probe_cscn *s, const char *key, bool *is_num) {
  for (size_t k = 0; k < s->nregime_keys; k++)
    if (!strcmp(s->regime_keys[k], key)) {
      if (is_num) *is_num = s->regime_is_num[k];
      return s->regime_vals[k];
    }
  return NULL;
}

int probe_srv_opt_num(const probe_cscn *s, const char *key, double lo, double hi, bool integer, double *out,
                      bool *found) {
  bool num = false;
  const char *v = regime_val(s, key, &num);
  if (found) *found = v != NULL;
  if (!v) return 0;
  char *end = NULL;
  double x = num ? strtod(v, &end) : NAN;
  if (!num || !isfinite(x) || x < lo || x > hi || (integer && x != floor(x)))
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.%s: %s is not %s in [%g, %g]", s->path, key, v,
                         integer ? "a whole number" : "a number", lo, hi);
  *out = x;
  return 0;
}

int probe_srv_opt_choice(const probe_cscn *s, const char *key, const char *const *choices, const char **out) {
  bool num = false;
  const char *v = regime_val(s, key, &num);
  if (!v) return 0;
  for (size_t k = 0; !num && choices[k]; k++)
    if (!strcmp(v, choices[k])) {
      *out = choices[k];
      return 0;
    }
  return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.%s: \"%s\" is not one of the simulator's values (nearest: \"%s\")",
                       s->path, key, v, probe_nearest_name(v, choices));
}

/* The regime's descriptor, its keys checked against the simulator's. */
static int find_regime(const probe_cscn *s, const probe_srv_regime **out) {
  const char *names[8];
  size_t k = 0;
  for (; REGIMES[k] && k + 1 < sizeof names / sizeof names[0]; k++) {
    names[k] = REGIMES[k]->name;
    if (!strcmp(REGIMES[k]->name, s->regime)) *out = REGIMES[k];
  }
  names[k] = NULL;
  if (!*out)
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.kind: \"%s\": the runtime runs pma, ddp and fedasync "
                                           "(nearest: \"%s\")", s->path, s->regime, probe_nearest_name(s->regime, names));
  for (size_t i = 0; i < s->nregime_keys; i++) {
    bool known = false;
    for (size_t j = 0; (*out)->keys[j]; j++) known |= !strcmp((*out)->keys[j], s->regime_keys[i]);
    if (!known)
      return probe_srv_say(HS_EXIT_BADINPUT, "%s: regime.%s: not a key of regime \"%s\"%s%s%s", s->path,
                           s->regime_keys[i], s->regime, (*out)->keys[0] ? " (nearest: \"" : " (it has none)",
                           (*out)->keys[0] ? probe_nearest_name(s->regime_keys[i], (*out)->keys) : "",
                           (*out)->keys[0] ? "\")" : "");
  }
  return 0;
}

static int make_controller(const probe_serve_cfg *cfg, const probe_cscn *s, const probe_srv_regime *rg,
                           const void *opts, hs_controller **c) {
  hs_policy_config pc;
  hs_error err = {HS_OK, ""};
  if (hs_policy_config_init(&pc, s->policy_kind, &err) != HS_OK)
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: policy.kind: %s", s->path, err.msg);
  if (hs_policy_caps(s->policy_kind) & rg->caps_refused)
    return probe_srv_say(HS_EXIT_BADINPUT, "%s: policy.kind: \"%s\" %s", s->path, s->policy_kind, rg->caps_why);
  for (size_t k = 0; k < s->npolicy_keys; k++)
    if (hs_policy_config_set(&pc, s->policy_keys[k], s->policy_vals[k], &err) != HS_OK)
      return probe_srv_say(HS_EXIT_BADINPUT, "%s: policy.%s", s->path, err.msg);
  if (rg->policy_cfg) rg->policy_cfg(opts, &pc);
  double budget = cfg->samples > 0 ? cfg->samples : s->samples_per_round;
  *c = hs_controller_create(&pc, s->ndev, NULL, (uint64_t)budget, &err);
  if (!*c) return probe_srv_say(HS_EXIT_BADINPUT, "%s: policy: %s", s->path, err.msg);
  return 0;
}

int probe_serve(const probe_serve_cfg *cfg) {
  union {
    uint16_t u;
    unsigned char b[2];
  } endian = {1};
  if (!endian.b[0]) return probe_srv_say(1, "this host is big-endian; the wire carries little-endian float32 models");
  hs_error err = {HS_OK, ""};
  probe_cscn s;
  if (probe_cscn_load(cfg->scenario, cfg->profiles, &s, &err) != HS_OK)
    return probe_srv_say(err.status == HS_ENOENT || err.status == HS_EIO ? 1 : HS_EXIT_BADINPUT, "%s", err.msg);
  int rc = 0;
  const probe_srv_regime *rg = NULL;
  void *opts = NULL;
  hs_learner *l = NULL;
  hs_controller *ctl = NULL;
  probe_srv_board *b = NULL;
  int *own = NULL;
  float *global = NULL;
  size_t n = s.ndev, rounds = (size_t)(cfg->rounds > 0 ? cfg->rounds : s.rounds);
  if (cfg->samples > 0) s.samples_per_round = cfg->samples; /* as --set samples_per_round: ddp's default steps too */
  if ((rc = find_regime(&s, &rg))) goto done;
  opts = hs_calloc(1, rg->opts_size ? rg->opts_size : 1);
  if ((rc = rg->options(&s, opts))) goto done;
  if (cfg->nlisten && cfg->nlisten != n) {
    rc = probe_srv_say(1, "internal: %zu listening sockets for %zu boards", cfg->nlisten, n);
    goto done;
  }
  if ((rc = make_controller(cfg, &s, rg, opts, &ctl))) goto done;
  if (mkdir(cfg->out, 0755) != 0 && errno != EEXIST) {
    rc = probe_srv_say(1, "%s: cannot make the output folder: %s", cfg->out, strerror(errno));
    goto done;
  }
  hs_learn_cfg lc = {.task = s.task, .data = cfg->data, .max_samples = cfg->max_samples > 0 ? (size_t)cfg->max_samples : 0,
                     .seed = (uint64_t)s.seed, .batch = (size_t)s.batch_size, .opt = {.kind = HS_LEARN_SGD}, .threads = 1};
  if (hs_learn_create(&lc, &l, &err) != HS_OK) {
    rc = probe_srv_say(err.status == HS_ENOENT || err.status == HS_EIO ? 1 : HS_EXIT_BADINPUT, "%s: task: %s", s.path,
                       err.msg);
    goto done;
  }
  size_t np = hs_learn_nparams(l), mb = (size_t)s.model_bytes;
  if (mb < np * sizeof(float)) {
    rc = probe_srv_say(HS_EXIT_BADINPUT, "%s: model_bytes: %zu is smaller than the %s model's %zu bytes (%zu float32)",
                       s.path, mb, s.task, np * sizeof(float), np);
    goto done;
  }
  b = hs_calloc(n, sizeof *b);
  own = hs_calloc(n, sizeof *own);
  for (size_t i = 0; i < n; i++) {
    b[i] = (probe_srv_board){.i = i, .name = s.dev[i].name, .fd = -1, .model_bytes = mb,
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
      rc = probe_srv_say(1, "board \"%s\": %s", s.dev[i].name, err.msg);
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
  probe_srv_run run = {.cfg = cfg, .s = &s, .rg = rg, .opts = opts, .l = l, .ctl = ctl, .b = b, .n = n, .np = np,
                       .mb = mb, .rounds = rounds, .budget = cfg->samples > 0 ? cfg->samples : s.samples_per_round,
                       .global = global};
  rc = rg->run(&run);
  if (rc == 0) probe_srv_release(b, n, NULL);
fail:
  probe_srv_release(b, n, rc ? "the server stopped" : NULL);
  if (own && !cfg->nlisten)
    for (size_t i = 0; i < n; i++) close(own[i]);
done:
  free(own);
  free(b);
  free(global);
  free(opts);
  hs_controller_destroy(ctl);
  hs_learn_destroy(l);
  probe_cscn_fini(&s);
  return rc;
}
