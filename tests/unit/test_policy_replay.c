/* test_policy_replay.c: the controller from outside the process.
 * - `hetsim replay`: every case of tests/golden/replay/cases.txt reproduces its
 *   golden file byte for byte, twice; bad input exits 2 with one line on
 *   stderr and nothing on stdout (and no -o file).
 * - hs-policy-bridge: driven line by line over two pipes, as a trainer would,
 *   it answers each telemetry line with the allocation the library computes
 *   in-process. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "traces/hs_outfile.h"
#include "policies/hs_policy.h"
#include "base/hs_util.h"
#include "test_tmpdir.h"

#define GOLDEN HS_SOURCE_DIR "/tests/golden/replay"

static char work[256];

static void setup(void) {
  snprintf(work, sizeof work, "/tmp/hs-replay-XXXXXX");
  cr_assert_not_null(test_mkdtemp_at(work));
}

static void teardown(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
  cr_expect_eq(system(cmd), 0);
}

/* Runs `hetsim replay ARGS`, stdout and stderr to files in work; exit status. */
static int replay(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "'%s' replay %s >'%s/out' 2>'%s/err'", HS_HETSIM_BIN, args, work,
           work);
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s: did not exit", cmd);
  return WEXITSTATUS(st);
}

static char *slurp(const char *name, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", work, name);
  hs_error err = {0};
  char *s = hs_read_file(path, len, &err);
  cr_assert_not_null(s, "%s", err.msg);
  return s;
}

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

Test(policy_replay, golden_files_byte_identical, .init = setup, .fini = teardown) {
  FILE *f = fopen(GOLDEN "/cases.txt", "r");
  cr_assert_not_null(f);
  char line[512];
  int cases = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, "\n")] = '\0';
    char *sp = strchr(line, ' ');
    cr_assert_not_null(sp);
    *sp = '\0';
    char args[2048], path[1024];
    snprintf(args, sizeof args, "'%s/telemetry.csv' %s", GOLDEN, sp + 1);
    snprintf(path, sizeof path, "%s/%s", GOLDEN, line);
    hs_error err = {0};
    size_t want_len = 0;
    char *want = hs_read_file(path, &want_len, &err);
    cr_assert_not_null(want, "%s", err.msg);
    for (int run = 0; run < 2; run++) {
      cr_assert_eq(replay(args), 0, "%s", line);
      size_t got_len = 0;
      char *got = slurp("out", &got_len);
      cr_expect(got_len == want_len && memcmp(got, want, want_len) == 0,
                "%s: output differs from the golden file (run %d)", line, run);
      hs_free(got);
    }
    hs_free(want);
    cases++;
  }
  fclose(f);
  cr_expect_geq(cases, 9);
}

Test(policy_replay, output_file_is_written_whole, .init = setup, .fini = teardown) {
  char args[1024];
  snprintf(args, sizeof args, "'%s/telemetry.csv' --policy balanced -o '%s/next.csv'", GOLDEN,
           work);
  cr_assert_eq(replay(args), 0);
  size_t len = 0;
  char *got = slurp("next.csv", &len);
  hs_error err = {0};
  size_t want_len = 0;
  char *want = hs_read_file(GOLDEN "/balanced.csv", &want_len, &err);
  cr_expect(len == want_len && memcmp(got, want, len) == 0);
  hs_free(got);
  hs_free(want);
}

Test(policy_replay, bad_input_exits_2_with_one_line, .init = setup, .fini = teardown) {
  /* a telemetry file whose third round has a device with samples but no time */
  char bad_csv[300];
  snprintf(bad_csv, sizeof bad_csv, "%s/bad.csv", work);
  FILE *f = fopen(bad_csv, "w");
  fputs("round,device,time_s,energy_j,samples\n0,a,1,1,10\n0,b,2,1,10\n"
        "1,a,1,1,10\n1,b,2,1,10\n2,a,1,1,10\n2,b,0,0,10\n",
        f);
  fclose(f);
  char torn[300];
  snprintf(torn, sizeof torn, "%s/torn.csv", work);
  f = fopen(torn, "w");
  fputs("round,device,time_s,energy_j,samples\n0,a,1,1,10\n0,b,x,1,10\n", f);
  fclose(f);
  struct {
    const char *file, *args, *want;
  } cases[] = {
      {"telemetry.csv", "--policy fastest", "no policy \"fastest\""},
      {"telemetry.csv", "--policy equal --set oort_k=3", "oort_k: does not apply"},
      {"telemetry.csv", "--policy balanced --set w_e=0.3", "use kind \"adaptive\""},
      {"telemetry.csv", "--policy adaptive --set ema=2", "ema: 2 is outside"},
      {"telemetry.csv", "--policy adaptive --set ema", "expected KEY=VALUE"},
      {"telemetry.csv", "--policy adaptive --set min_samples=500", "budget"},
      {"telemetry.csv", "", "--policy: required"},
      {"nothing.csv", "--policy equal", "nothing.csv: cannot open"},
      {"telemetry.csv", "--policy equal --frobnicate", "--frobnicate: unknown option"},
      /* a value with a line break in it must not break the one-line message */
      {"telemetry.csv", "--policy adaptive --set 'w_e=0.3\n2'", "w_e: \"0.3\\n2\" is not a finite"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char args[1024];
    snprintf(args, sizeof args, "'%s/%s' %s", GOLDEN, cases[i].file, cases[i].args);
    char full[1600];
    snprintf(full, sizeof full, "%s -o '%s/never.csv'", args, work);
    cr_expect_eq(replay(full), 2, "%s", args);
    size_t len;
    char *err = slurp("err", &len), *out = slurp("out", &len);
    cr_expect_eq(count_lines(err), 1, "%s: stderr \"%s\"", args, err);
    cr_expect(strstr(err, cases[i].want), "%s: stderr \"%s\" lacks \"%s\"", args, err, cases[i].want);
    cr_expect_eq(out[0], '\0');
    hs_free(err);
    hs_free(out);
    char never[300];
    snprintf(never, sizeof never, "%s/never.csv", work);
    struct stat stbuf;
    cr_expect_neq(stat(never, &stbuf), 0, "%s: an output file was written", args);
  }
  char args[700];
  snprintf(args, sizeof args, "'%s' --policy time-only", bad_csv);
  cr_expect_eq(replay(args), 2);
  size_t len;
  char *err = slurp("err", &len), *out = slurp("out", &len);
  cr_expect(strstr(err, "bad.csv: round 2: device \"b\": time_s: 0 for 10 samples"), "%s", err);
  cr_expect_eq(count_lines(err), 1);
  cr_expect_eq(out[0], '\0', "half an output on stdout: %s", out);
  hs_free(err);
  hs_free(out);
  snprintf(args, sizeof args, "'%s' --policy time-only", torn);
  cr_expect_eq(replay(args), 2);
  err = slurp("err", &len);
  cr_expect(strstr(err, "torn.csv: line 3: time_s: \"x\" is not a finite number"), "%s", err);
  hs_free(err);
}

Test(policy_replay, an_unusable_output_path_cannot_be_written, .init = setup, .fini = teardown) {
  /* as for `hetsim run --out` and `hetsim-probe --out`: exit 1 (cannot
   * write, issue 16's one rule), one line naming the path */
  char args[1024];
  snprintf(args, sizeof args, "'%s/telemetry.csv' --policy equal -o '%s/no/such/x.csv'", GOLDEN,
           work);
  cr_expect_eq(replay(args), 1);
  size_t len;
  char *err = slurp("err", &len), *out = slurp("out", &len);
  cr_expect(strstr(err, "hetsim replay: ") == err && strstr(err, "/no/such/x.csv: cannot create"),
            "%s", err);
  cr_expect_eq(count_lines(err), 1);
  cr_expect_eq(out[0], '\0');
  hs_free(err);
  hs_free(out);
}

Test(policy_replay, a_budget_beyond_2_53_is_refused, .init = setup, .fini = teardown) {
  /* 2^63-1 + 2^63-1 + 5 samples sum past 2^64: the budget used to wrap
   * around silently, to 3, and the replay "worked" with 1 sample each */
  char huge[300];
  snprintf(huge, sizeof huge, "%s/huge.csv", work);
  FILE *f = fopen(huge, "w");
  cr_assert_not_null(f);
  fputs("round,device,time_s,energy_j,samples\n0,a,1,1,9223372036854775807\n"
        "0,b,1,1,9223372036854775807\n0,c,1,1,5\n",
        f);
  fclose(f);
  char args[700];
  snprintf(args, sizeof args, "'%s' --policy equal -o '%s/never.csv'", huge, work);
  cr_expect_eq(replay(args), 2);
  size_t len;
  char *err = slurp("err", &len), *out = slurp("out", &len);
  cr_expect(strstr(err, "huge.csv: round 0: budget: the first round's samples sum to more than "
                        "2^53 = 9007199254740992"),
            "%s", err);
  cr_expect_eq(count_lines(err), 1);
  cr_expect_eq(out[0], '\0');
  hs_free(err);
  hs_free(out);
}

Test(policy_replay, help_teaches_with_an_example, .init = setup, .fini = teardown) {
  cr_assert_eq(replay("--help"), 0);
  size_t len;
  char *out = slurp("out", &len);
  cr_expect(strstr(out, "example:") && strstr(out, "round,device,time_s,energy_j,samples"));
  hs_free(out);
  cr_assert_eq(replay("--policies"), 0);
  out = slurp("out", &len);
  cr_expect(strstr(out, "low-energy: ") && strstr(out, "    w_e=0.25") && strstr(out, "oort_k=0"),
            "%s", out);
  hs_free(out);
}

/* --- the bridge over pipes ------------------------------------------------------ */

typedef struct child {
  pid_t pid;
  FILE *to;   /* its stdin */
  FILE *from; /* its stdout */
} child;

static child spawn_bridge(char *const argv[]) {
  int in[2], out[2];
  cr_assert_eq(pipe(in), 0);
  cr_assert_eq(pipe(out), 0);
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    execv(HS_BRIDGE_BIN, argv);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  return (child){pid, fdopen(in[1], "w"), fdopen(out[0], "r")};
}

static int reap(child *c) {
  if (c->to) fclose(c->to);
  fclose(c->from);
  int st;
  cr_assert_eq(waitpid(c->pid, &st, 0), c->pid);
  cr_assert(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static void read_alloc(child *c, uint64_t *got, size_t n) {
  char line[4096];
  cr_assert_not_null(fgets(line, sizeof line, c->from), "bridge closed its output");
  char *p = line;
  for (size_t i = 0; i < n; i++) {
    char *end;
    got[i] = strtoull(p, &end, 10);
    cr_assert_neq(end, p, "short line: %s", line);
    p = end;
  }
}

Test(policy_bridge, answers_each_round_like_the_library) {
  signal(SIGPIPE, SIG_IGN);
  char *argv[] = {"hs-policy-bridge", "--policy", "balanced", "--participants", "4", "--budget",
                  "400",  "--set", "deadband=0", NULL};
  child c = spawn_bridge(argv);
  hs_policy_config cfg;
  hs_error err = {0};
  hs_policy_config_init(&cfg, "balanced", &err);
  hs_policy_config_set(&cfg, "deadband", "0", &err);
  hs_controller *ref = hs_controller_create(&cfg, 4, NULL, 400, &err);
  uint64_t got[4];
  read_alloc(&c, got, 4);
  cr_expect(memcmp(got, hs_controller_allocation(ref), sizeof got) == 0);
  double tau[4] = {0.01, 0.03, 0.02, 0.05}, pw[4] = {10, 4, 6, 3};
  for (int round = 0; round < 5; round++) {
    const uint64_t *a = hs_controller_allocation(ref);
    hs_telemetry t[4];
    for (int i = 0; i < 4; i++) {
      double time_s = (double)a[i] * tau[i] * (1.0 + 0.01 * round * (i + 1));
      t[i] = (hs_telemetry){time_s, time_s * pw[i], (int64_t)a[i]};
      /* %.17g: the bridge must see the same doubles */
      fprintf(c.to, "%.17g %.17g %lld%s", t[i].time_s, t[i].energy_j, (long long)t[i].samples,
              i < 3 ? (round % 2 ? ", " : " ") : "\n");
    }
    fflush(c.to); /* one line out, then wait for the answer: a real pipe dialogue */
    cr_assert_eq(hs_controller_update(ref, t, 4, &err), HS_OK);
    read_alloc(&c, got, 4);
    cr_expect(memcmp(got, hs_controller_allocation(ref), sizeof got) == 0, "round %d", round);
  }
  fclose(c.to);
  c.to = NULL;
  cr_expect_eq(reap(&c), 0);
  hs_controller_destroy(ref);
}

/* A bad line is answered with one "error:" line and changes nothing: the next
 * good line gets the answer the library gives without the bad one; exit 2 at
 * the end of input. */
Test(policy_bridge, bad_line_is_one_error_line_and_keeps_the_state) {
  signal(SIGPIPE, SIG_IGN);
  char *argv[] = {"hs-policy-bridge", "--policy", "time-only", "--participants", "2",
                  "--budget", "20", "--set", "deadband=0", NULL};
  child c = spawn_bridge(argv);
  uint64_t got[2];
  read_alloc(&c, got, 2);
  cr_expect(got[0] == 10 && got[1] == 10);
  const char *bad_lines[] = {"1.0 1 10 nan 1 10\n", "1.0 1 10 2.0 1\n", "1.0 1 10 2.0 1 x\n",
                             "1.0 1 10 -2.0 1 10\n"};
  const char *why[] = {"line 1: participant 1: time_s: nan", "line 2: 5 numbers, expected 6",
                       "line 3: participant 1: samples: \"x\" is not an integer",
                       "line 4: participant 1: time_s: -2"};
  char line[512];
  for (size_t k = 0; k < 4; k++) {
    fputs(bad_lines[k], c.to);
    fflush(c.to);
    cr_assert_not_null(fgets(line, sizeof line, c.from), "no answer to a bad line");
    cr_expect(strncmp(line, "error: stdin: ", 14) == 0 && strstr(line, why[k]),
              "answer \"%s\" lacks \"%s\"", line, why[k]);
  }
  fputs("1.0 1 10 3.0 1 10\n", c.to); /* tau 0.1 and 0.3: 15 and 5 */
  fflush(c.to);
  read_alloc(&c, got, 2);
  cr_expect(got[0] == 15 && got[1] == 5, "got %llu %llu after the bad lines",
            (unsigned long long)got[0], (unsigned long long)got[1]);
  fclose(c.to);
  c.to = NULL;
  cr_expect_null(fgets(line, sizeof line, c.from));
  cr_expect_eq(reap(&c), 2);
}

/* --state: a bridge restarted on the same file answers as one that never
 * stopped; a state for another configuration is refused (exit 2). */
Test(policy_bridge, state_file_survives_a_restart, .init = setup, .fini = teardown) {
  signal(SIGPIPE, SIG_IGN);
  char state[300];
  snprintf(state, sizeof state, "%s/bridge-state.json", work);
  char *argv[] = {"hs-policy-bridge", "--policy", "balanced", "--participants", "3",
                  "--budget", "300", "--state", state, NULL};
  hs_policy_config cfg;
  hs_error err = {0};
  hs_policy_config_init(&cfg, "balanced", &err);
  hs_controller *ref = hs_controller_create(&cfg, 3, NULL, 300, &err);
  double tau[3] = {0.01, 0.03, 0.02}, pw[3] = {10, 4, 6};
  uint64_t got[3];
  for (int life = 0; life < 3; life++) {
    child c = spawn_bridge(argv);
    read_alloc(&c, got, 3); /* the first answer of a restarted bridge: the saved split */
    cr_expect(memcmp(got, hs_controller_allocation(ref), sizeof got) == 0, "life %d", life);
    for (int round = 0; round < 2; round++) {
      const uint64_t *a = hs_controller_allocation(ref);
      hs_telemetry t[3];
      for (int i = 0; i < 3; i++) {
        double time_s = (double)a[i] * tau[i] * (1.0 + 0.05 * (life + round) * i);
        t[i] = (hs_telemetry){time_s, time_s * pw[i], (int64_t)a[i]};
        fprintf(c.to, "%.17g %.17g %lld%s", t[i].time_s, t[i].energy_j, (long long)t[i].samples,
                i < 2 ? " " : "\n");
      }
      fflush(c.to);
      cr_assert_eq(hs_controller_update(ref, t, 3, &err), HS_OK);
      read_alloc(&c, got, 3);
      cr_expect(memcmp(got, hs_controller_allocation(ref), sizeof got) == 0, "life %d round %d",
                life, round);
    }
    cr_expect_eq(reap(&c), 0);
  }
  char *text = hs_controller_save(ref, &err);
  size_t len;
  char *saved = hs_read_file(state, &len, &err);
  cr_assert_not_null(saved, "%s", err.msg);
  cr_expect_str_eq(saved, text, "the state file is not the reference controller's state");
  hs_free(saved);
  hs_free(text);
  hs_controller_destroy(ref);

  char *other[] = {"hs-policy-bridge", "--policy", "balanced", "--participants", "4",
                   "--budget", "300", "--state", state, NULL};
  child c = spawn_bridge(other);
  char line[64];
  cr_expect_null(fgets(line, sizeof line, c.from));
  cr_expect_eq(reap(&c), 2);
}

/* --comm: a fourth number per participant reaches the controller
 * (round-time's two-participant known answer, then its EMA), and a bad one is
 * one error line that changes nothing. */
Test(policy_bridge, comm_reaches_round_time) {
  signal(SIGPIPE, SIG_IGN);
  char *argv[] = {"hs-policy-bridge", "--policy", "round-time", "--participants", "2",
                  "--budget", "200", "--comm", NULL};
  child c = spawn_bridge(argv);
  uint64_t got[2];
  read_alloc(&c, got, 2);
  fputs("100 1 100 0 200 1 100 50\n", c.to); /* a = 1, 2; c = 0, 50: T = 150 */
  fflush(c.to);
  read_alloc(&c, got, 2);
  cr_expect(got[0] == 150 && got[1] == 50, "%llu %llu", (unsigned long long)got[0],
            (unsigned long long)got[1]);
  char line[512];
  const char *bad_lines[] = {"100 1 150 0 100 1 50 x\n", "100 1 150 0 100 1 50\n",
                             "100 1 150 0 100 1 50 -1\n"};
  const char *why[] = {"participant 1: comm_s: \"x\" is not a number",
                       "7 numbers, expected 8 (time_s energy_j samples comm_s",
                       "participant 1: comm_s: -1 is not a finite number >= 0"};
  for (size_t k = 0; k < 3; k++) {
    fputs(bad_lines[k], c.to);
    fflush(c.to);
    cr_assert_not_null(fgets(line, sizeof line, c.from));
    cr_expect(strstr(line, why[k]), "answer \"%s\" lacks \"%s\"", line, why[k]);
  }
  /* a = 0.5*1 + 0.5*(100/150), 2; c = 0, 50: 1.2 T + (T - 50)/2 = 200,
   * T = 132.35..., n = 158.8, 41.2 */
  fputs("100 1 150 0 100 1 50 50\n", c.to);
  fflush(c.to);
  read_alloc(&c, got, 2);
  cr_expect(got[0] == 159 && got[1] == 41, "%llu %llu", (unsigned long long)got[0],
            (unsigned long long)got[1]);
  fclose(c.to);
  c.to = NULL;
  cr_expect_eq(reap(&c), 2);
}

Test(policy_bridge, subnormal_numbers_are_numbers) {
  /* strtod reports ERANGE for 1e-310 though it is a finite number; the bridge
   * answered "is not a number" and exited */
  signal(SIGPIPE, SIG_IGN);
  char *argv[] = {"hs-policy-bridge", "--policy", "time-only", "--participants", "2",
                  "--budget", "20", NULL};
  child c = spawn_bridge(argv);
  uint64_t got[2];
  read_alloc(&c, got, 2);
  fputs("1e-310 4.9e-324 10 1 0 10\n", c.to);
  fflush(c.to);
  read_alloc(&c, got, 2);
  cr_expect(got[0] == 19 && got[1] == 1, "%llu %llu", (unsigned long long)got[0],
            (unsigned long long)got[1]);
  fclose(c.to);
  c.to = NULL;
  cr_expect_eq(reap(&c), 0);
}

Test(policy_bridge, help_example_shows_what_the_bridge_prints) {
  /* the --help example claimed 172 85 43 for shares 171.4, 85.7, 42.9 */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --help", HS_BRIDGE_BIN);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char help[4096];
  size_t n = fread(help, 1, sizeof help - 1, p);
  help[n] = '\0';
  cr_expect_eq(pclose(p), 0);
  snprintf(cmd, sizeof cmd,
           "printf '1.0 5 100 2.0 6 100 4.0 9 100\\n' | '%s' --policy time-only "
           "--participants 3 --budget 300",
           HS_BRIDGE_BIN);
  p = popen(cmd, "r");
  cr_assert_not_null(p);
  char out[256];
  n = fread(out, 1, sizeof out - 1, p);
  out[n] = '\0';
  cr_expect_eq(pclose(p), 0);
  cr_expect_str_eq(out, "100 100 100\n171 86 43\n");
  cr_expect(strstr(help, "  100 100 100\n  171 86 43\n"), "%s", help);
}

Test(policy_bridge, bad_options_are_one_line_and_exit_2) {
  static const char *const cases[][2] = {
      {"--policy adaptive --participants 2 --budget 10 --set 'w_e=0.3\n2'", "w_e: \"0.3\\n2\""},
      {"--policy 'time\nonly' --participants 2 --budget 10", "no policy \"time\\nonly\""},
      {"--policy time-only --participants 2 --budget 9007199254740993", "more than 2^53"},
      {"--policy time-only --participants ' 2' --budget 10", "--participants"},
      /* a forgotten --budget was 0: ema-batch then answered 0 0 to every line */
      {"--policy ema-batch --participants 2", "--budget"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1 >/dev/null </dev/null", HS_BRIDGE_BIN, cases[k][0]);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char err[2048];
    size_t n = fread(err, 1, sizeof err - 1, p);
    err[n] = '\0';
    int st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "case %zu: status %d", k, st);
    cr_expect_eq(count_lines(err), 1, "case %zu: stderr \"%s\"", k, err);
    cr_expect(strstr(err, cases[k][1]), "case %zu: stderr \"%s\" lacks \"%s\"", k, err, cases[k][1]);
  }
}
