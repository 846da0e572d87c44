/* test_cluster_run.c: hetsim-probe serve and board on bad input and broken
 * peers, end to end on 127.0.0.1: a board that never connects, one that is
 * not in the scenario, a wrong protocol version, a board that dies or stalls
 * mid-round, a non-loopback address, a regime the runtime does not run. Each
 * must end with one line and exit 2 (bad input) or 1 (system failure), and
 * never hang: every wait below is bounded. The fake boards here speak the
 * protocol through wire.c. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe_cluster.h"

static char *dir;

static void setup(void) {
  dir = probe_xasprintf("%s/hsrun-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(dir));
}
static void teardown(void) {
  char *c = probe_xasprintf("rm -rf '%s'", dir);
  cr_expect_eq(system(c), 0);
  free(c);
  free(dir);
}

/* A one-board scenario with the regime block {block}, in file s-<tag>.json. */
static char *scenario_block(const char *tag, const char *block) {
  char *p = probe_xasprintf("%s/s-%s.json", dir, tag);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fprintf(f, "{\"task\": \"mnist\", \"rounds\": 2, \"samples_per_round\": 64, \"model_bytes\": 407080,"
             " \"regime\": {%s}, \"policy\": {\"kind\": \"equal\"},"
             " \"devices\": [{\"name\": \"solo\", \"profile\": \"rpi4\"}],"
             " \"network\": {\"links\": {\"w\": {\"bandwidth_mbps\": 100}}}}", block);
  fclose(f);
  return p;
}

static char *scenario(const char *regime) {
  char *b = probe_xasprintf("\"kind\": \"%s\"", regime);
  char *p = scenario_block(regime, b);
  free(b);
  return p;
}

/* A free port (bound and released: good enough for a test on loopback). */
static unsigned free_port(void) {
  uint32_t a;
  hs_error e = {HS_OK, ""};
  probe_loopback_addr("127.0.0.1", &a, &e);
  unsigned p = 0;
  int fd = probe_listen(a, 0, &p, &e);
  cr_assert_geq(fd, 0);
  close(fd);
  return p;
}

static pid_t spawn(const char *const *args, const char *errfile) {
  char *argv[24];
  size_t n = 0;
  for (; args[n] && n < 23; n++) argv[n] = hs_strdup(args[n]);
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = freopen(errfile, "w", stderr);
    (void)f;
    if (!freopen("/dev/null", "w", stdout)) _exit(126);
    execv(PROBE_BIN, argv);
    _exit(127);
  }
  for (size_t k = 0; k < n; k++) free(argv[k]);
  return pid;
}

/* Exit status within limit_s, or -1 (killed) when it hangs. */
static int finish(pid_t pid, double limit_s) {
  double t0 = probe_now_mono();
  int st = 0;
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (probe_now_mono() - t0 > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      return -1;
    }
    nanosleep(&(struct timespec){0, 20000000}, NULL);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}

static char *read_err(const char *file) {
  unsigned char *d = NULL;
  size_t n = 0;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(probe_read_file(file, &d, &n, &e), HS_OK, "%s", e.msg);
  return (char *)d;
}

static void lines_one(const char *text) {
  const char *nl = strchr(text, '\n');
  cr_expect(nl && nl[1] == '\0', "one line on stderr, got: %s", text);
}

static pid_t serve(const char *scn, unsigned port, const char *extra_timeout, const char *errfile) {
  char *out = probe_xasprintf("%s/out", dir), ps[16];
  snprintf(ps, sizeof ps, "%u", port);
  const char *args[] = {PROBE_BIN, "serve", scn, "--out", out, "--port", ps, "--max-samples", "100",
                        "--connect-timeout-s", "3", "--io-timeout-s", "2", "--round-timeout-s", extra_timeout, "--quiet",
                        NULL};
  pid_t pid = spawn(args, errfile);
  free(out);
  return pid;
}

/* A fake board: connect, HELLO with a version, and (ok) WELCOME + READY. */
static int fake_board(unsigned port, unsigned version, const char *name) {
  uint32_t a;
  hs_error e = {HS_OK, ""};
  probe_loopback_addr("127.0.0.1", &a, &e);
  int fd = probe_connect(a, port, 5, &e);
  cr_assert_geq(fd, 0, "%s", e.msg);
  char text[128];
  snprintf(text, sizeof text, "name=%s\n", name);
  unsigned char h[PROBE_WIRE_HEADER];
  probe_wire_header(h, version, PROBE_MSG_HELLO, strlen(text), 0);
  cr_assert_eq(send(fd, h, sizeof h, MSG_NOSIGNAL), (ssize_t)sizeof h);
  cr_assert_eq(send(fd, text, strlen(text), MSG_NOSIGNAL), (ssize_t)strlen(text));
  return fd;
}

static void welcome_ready_first(int fd, probe_msg_type first) {
  probe_msg m;
  hs_error e = {HS_OK, ""};
  cr_assert_eq(probe_wire_recv(fd, 0, 10, 2, &m, &e), PROBE_WIRE_OK, "%s", e.msg);
  cr_assert_eq(m.type, PROBE_MSG_WELCOME, "%s", m.text);
  probe_msg_fini(&m);
  cr_assert_eq(probe_wire_send(fd, PROBE_MSG_READY, "nparams=101770\nenergy=none:test\n", NULL, 0, 2, &e),
               PROBE_WIRE_OK);
  cr_assert_eq(probe_wire_recv(fd, 407080, 20, 2, &m, &e), PROBE_WIRE_OK, "%s", e.msg);
  cr_assert_eq(m.type, first, "%s", probe_msg_name(m.type));
  probe_msg_fini(&m);
}

static void welcome_ready(int fd) { welcome_ready_first(fd, PROBE_MSG_ROUND); }

TestSuite(cluster_run, .init = setup, .fini = teardown);

Test(cluster_run, board_never_connects) {
  char *scn = scenario("pma"), *err = probe_xasprintf("%s/err", dir);
  pid_t s = serve(scn, free_port(), "5", err);
  cr_expect_eq(finish(s, 30), 1);
  char *t = read_err(err);
  cr_expect(strstr(t, "board \"solo\"") && strstr(t, "did not connect within 3 s"), "%s", t);
  lines_one(t);
  free(t);
  free(scn);
  free(err);
}

Test(cluster_run, wrong_protocol_version) {
  char *scn = scenario("pma"), *err = probe_xasprintf("%s/err", dir);
  unsigned port = free_port();
  pid_t s = serve(scn, port, "5", err);
  int fd = fake_board(port, PROBE_WIRE_VERSION + 1, "solo");
  probe_msg m;
  hs_error e = {HS_OK, ""};
  cr_expect_eq(probe_wire_recv(fd, 0, 10, 2, &m, &e), PROBE_WIRE_OK, "%s", e.msg);
  cr_expect_eq(m.type, PROBE_MSG_ERROR, "the server says why before it closes");
  probe_msg_fini(&m);
  close(fd);
  cr_expect_eq(finish(s, 30), 2);
  char *t = read_err(err);
  cr_expect(strstr(t, "protocol version 3"), "%s", t);
  lines_one(t);
  free(t);
  free(scn);
  free(err);
}

Test(cluster_run, board_not_in_the_scenario) {
  char *scn = scenario("pma"), *err = probe_xasprintf("%s/err", dir), *berr = probe_xasprintf("%s/berr", dir);
  unsigned port = free_port();
  pid_t s = serve(scn, port, "5", err);
  char ps[16];
  snprintf(ps, sizeof ps, "%u", port);
  const char *args[] = {PROBE_BIN, "board", "--name", "sola", "--port", ps, NULL};
  pid_t b = spawn(args, berr);
  cr_expect_eq(finish(s, 30), 2);
  cr_expect_eq(finish(b, 30), 2);
  char *t = read_err(err);
  cr_expect(strstr(t, "board \"sola\" is not in") && strstr(t, "nearest: \"solo\""), "%s", t);
  lines_one(t);
  free(t);
  t = read_err(berr);
  cr_expect(strstr(t, "refused this board"), "%s", t);
  lines_one(t);
  free(t);
  free(scn);
  free(err);
  free(berr);
}

Test(cluster_run, board_dies_mid_round) {
  char *scn = scenario("pma"), *err = probe_xasprintf("%s/err", dir);
  unsigned port = free_port();
  pid_t s = serve(scn, port, "20", err);
  int fd = fake_board(port, PROBE_WIRE_VERSION, "solo");
  welcome_ready(fd);
  close(fd); /* dies while training round 0 */
  cr_expect_eq(finish(s, 30), 1);
  char *t = read_err(err);
  cr_expect(strstr(t, "round 0: board \"solo\"") && strstr(t, "did the board die?"), "%s", t);
  lines_one(t);
  free(t);
  char *rec = probe_xasprintf("%s/out/rounds.csv", dir);
  cr_expect(!probe_exists(rec), "no half records");
  free(rec);
  free(scn);
  free(err);
}

Test(cluster_run, board_stalls_mid_round) {
  char *scn = scenario("pma"), *err = probe_xasprintf("%s/err", dir);
  unsigned port = free_port();
  double t0 = probe_now_mono();
  pid_t s = serve(scn, port, "1", err);
  int fd = fake_board(port, PROBE_WIRE_VERSION, "solo");
  welcome_ready(fd); /* ... and never answers */
  cr_expect_eq(finish(s, 30), 1);
  cr_expect_lt(probe_now_mono() - t0, 20, "the round timeout ends it");
  char *t = read_err(err);
  cr_expect(strstr(t, "round 0: board \"solo\"") && strstr(t, "timed out"), "%s", t);
  lines_one(t);
  free(t);
  close(fd);
  free(scn);
  free(err);
}

Test(cluster_run, bad_input_lines) {
  char *err = probe_xasprintf("%s/err", dir), *scn = scenario("fsdp");
  const char *a1[] = {PROBE_BIN, "board", "--name", "solo", "--host", "10.1.2.3", "--port", "4000", NULL};
  cr_expect_eq(finish(spawn(a1, err), 10), 2);
  char *t = read_err(err);
  cr_expect(strstr(t, "10.1.2.3 is not a loopback address"), "%s", t);
  lines_one(t);
  free(t);
  pid_t s = serve(scn, free_port(), "5", err);
  cr_expect_eq(finish(s, 10), 2);
  t = read_err(err);
  cr_expect(strstr(t, "regime.kind: \"fsdp\"") && strstr(t, "pma, ddp and fedasync"), "%s", t);
  lines_one(t);
  free(t);
  const char *a2[] = {PROBE_BIN, "serve", "/nonexistent/s.json", "--out", dir, NULL};
  cr_expect_eq(finish(spawn(a2, err), 10), 1);
  t = read_err(err);
  cr_expect(strstr(t, "/nonexistent/s.json"), "%s", t);
  lines_one(t);
  free(t);
  free(err);
  free(scn);
}

/* The regime's keys: the simulator's keys the runtime cannot honour, a key
 * the simulator does not know, a value outside the simulator's range. */
Test(cluster_run, refused_regime_keys) {
  static const struct {
    const char *tag, *block, *want;
  } cases[] = {
      {"ddp-ring", "\"kind\": \"ddp\"", "regime.collective: absent (the simulator then runs a ring)"},
      {"ddp-tree", "\"kind\": \"ddp\", \"collective\": \"tree\"", "regime.collective: \"tree\""},
      {"ddp-steps", "\"kind\": \"ddp\", \"collective\": \"star\", \"steps_per_round\": 0.5",
       "regime.steps_per_round: 0.5 is not a whole number"},
      {"ddp-silos", "\"kind\": \"ddp\", \"silos\": []", "regime.silos: not a key of regime \"ddp\""},
      {"pma-late", "\"kind\": \"pma\", \"late\": \"fold\"", "regime.late: not a key of regime \"pma\""},
      {"fa-typo", "\"kind\": \"fedasync\", \"stalenes\": \"hinge\"", "nearest: \"staleness\""},
      {"fa-b", "\"kind\": \"fedasync\", \"staleness_b\": 3", "regime.staleness_b: applies only to staleness \"hinge\""},
      {"fa-fn", "\"kind\": \"fedasync\", \"staleness\": \"hinged\"", "nearest: \"hinge\""},
      {"fa-alpha", "\"kind\": \"fedasync\", \"mixing_alpha\": 0", "regime.mixing_alpha: 0 is not in (0, 1]"},
  };
  char *err = probe_xasprintf("%s/err", dir);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char *scn = scenario_block(cases[k].tag, cases[k].block);
    pid_t s = serve(scn, free_port(), "5", err);
    cr_expect_eq(finish(s, 10), 2, "%s", cases[k].tag);
    char *t = read_err(err);
    cr_expect(strstr(t, cases[k].want) && strstr(t, scn), "%s: %s", cases[k].tag, t);
    lines_one(t);
    free(t);
    free(scn);
  }
  free(err);
}

/* The controller's capabilities each regime refuses, as the simulator. */
Test(cluster_run, refused_policies) {
  char *err = probe_xasprintf("%s/err", dir);
  char *p = probe_xasprintf("%s/s-ema.json", dir);
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f);
  fprintf(f, "{\"task\": \"mnist\", \"rounds\": 2, \"samples_per_round\": 64, \"model_bytes\": 407080,"
             " \"regime\": {\"kind\": \"fedasync\"}, \"policy\": {\"kind\": \"oort\"},"
             " \"devices\": [{\"name\": \"solo\", \"profile\": \"rpi4\"}],"
             " \"network\": {\"links\": {\"w\": {\"bandwidth_mbps\": 100}}}}");
  fclose(f);
  pid_t s = serve(p, free_port(), "5", err);
  cr_expect_eq(finish(s, 10), 2);
  char *t = read_err(err);
  cr_expect(strstr(t, "policy.kind: \"oort\"") && strstr(t, "fedasync"), "%s", t);
  lines_one(t);
  free(t);
  free(p);
  free(err);
}

Test(cluster_run, ddp_board_dies_mid_step) {
  char *scn = scenario_block("ddp-star", "\"kind\": \"ddp\", \"collective\": \"star\", \"steps_per_round\": 2");
  char *err = probe_xasprintf("%s/err", dir);
  unsigned port = free_port();
  pid_t s = serve(scn, port, "20", err);
  int fd = fake_board(port, PROBE_WIRE_VERSION, "solo");
  welcome_ready_first(fd, PROBE_MSG_STEP);
  close(fd); /* dies while computing the gradient of round 0, step 0 */
  cr_expect_eq(finish(s, 30), 1);
  char *t = read_err(err);
  cr_expect(strstr(t, "round 0 step 0: board \"solo\"") && strstr(t, "did the board die?"), "%s", t);
  lines_one(t);
  free(t);
  char *rec = probe_xasprintf("%s/out/steps.csv", dir);
  cr_expect(!probe_exists(rec), "no half records");
  free(rec);
  free(scn);
  free(err);
}

Test(cluster_run, ddp_board_answers_the_wrong_message) {
  char *scn = scenario_block("ddp-star", "\"kind\": \"ddp\", \"collective\": \"star\"");
  char *err = probe_xasprintf("%s/err", dir);
  unsigned port = free_port();
  pid_t s = serve(scn, port, "20", err);
  int fd = fake_board(port, PROBE_WIRE_VERSION, "solo");
  welcome_ready_first(fd, PROBE_MSG_STEP);
  hs_error e = {HS_OK, ""};
  cr_expect_eq(probe_wire_send(fd, PROBE_MSG_RESULT, "round=0\n", NULL, 0, 2, &e), PROBE_WIRE_OK);
  cr_expect_eq(finish(s, 30), 2);
  char *t = read_err(err);
  cr_expect(strstr(t, "round 0 step 0: board \"solo\"") && strstr(t, "expected a GRAD"), "%s", t);
  lines_one(t);
  free(t);
  close(fd);
  free(scn);
  free(err);
}

Test(cluster_run, fedasync_board_dies_mid_update) {
  char *scn = scenario("fedasync"), *err = probe_xasprintf("%s/err", dir);
  unsigned port = free_port();
  pid_t s = serve(scn, port, "20", err);
  int fd = fake_board(port, PROBE_WIRE_VERSION, "solo");
  welcome_ready(fd);
  close(fd);
  cr_expect_eq(finish(s, 30), 1);
  char *t = read_err(err);
  cr_expect(strstr(t, "window 0, update 0: board \"solo\"") && strstr(t, "did the board die?"), "%s", t);
  lines_one(t);
  free(t);
  char *rec = probe_xasprintf("%s/out/updates.csv", dir);
  cr_expect(!probe_exists(rec), "no half records");
  free(rec);
  free(scn);
  free(err);
}
