/* cluster_cli.c: the command lines of `hetsim-probe serve` and `hetsim-probe
 * board`, and the one option parser the cluster commands share (box.c uses
 * it too): a table of options (string, number in a range, flag, repeatable
 * list), one line on stderr for anything wrong, exit 2. Host names are
 * refused unless they are dotted loopback addresses (127.0.0.0/8). */
#include "probe_cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int probe_opts_parse(const char *cmd, int argc, char **argv, int first, const probe_opt *opts, size_t nopts,
                     const char **pos, size_t npos, size_t *npos_got, const char *usage) {
  *npos_got = 0;
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      return -1;
    }
    if (a[0] != '-' || !a[1]) {
      if (*npos_got >= npos) {
        fprintf(stderr, "hetsim-probe %s: \"%s\": unexpected argument (see hetsim-probe %s --help)\n", cmd, a, cmd);
        return HS_EXIT_BADINPUT;
      }
      pos[(*npos_got)++] = a;
      continue;
    }
    const probe_opt *o = NULL;
    for (size_t k = 0; k < nopts && !o; k++)
      if (!strcmp(a, opts[k].name)) o = &opts[k];
    if (!o) {
      fprintf(stderr, "hetsim-probe %s: %s: unknown option (see hetsim-probe %s --help)\n", cmd, a, cmd);
      return HS_EXIT_BADINPUT;
    }
    if (o->kind == PROBE_OPT_FLAG) {
      *(bool *)o->dst = true;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "hetsim-probe %s: %s: missing value\n", cmd, a);
      return HS_EXIT_BADINPUT;
    }
    const char *v = argv[++i];
    if (o->kind == PROBE_OPT_STR) {
      *(const char **)o->dst = v;
    } else if (o->kind == PROBE_OPT_LIST) {
      probe_opt_list *l = o->dst;
      l->v = hs_reallocarray(l->v, l->n + 1, sizeof *l->v);
      l->v[l->n++] = v;
    } else {
      char *end = NULL;
      double x = strtod(v, &end);
      if (end == v || *end || !isfinite(x) || x < o->lo || x > o->hi || (o->integer && x != floor(x))) {
        fprintf(stderr, "hetsim-probe %s: %s: \"%s\" is not %s in [%g, %g]\n", cmd, a, v,
                o->integer ? "a whole number" : "a number", o->lo, o->hi);
        return HS_EXIT_BADINPUT;
      }
      *(double *)o->dst = x;
    }
  }
  return 0;
}

static const char SERVE_USAGE[] =
    "usage: hetsim-probe serve SCENARIO.json --out DIR [options]\n"
    "\n"
    "The server of a real run of the scenario (regime pma, ddp or fedasync): listens on\n"
    "127.0.0.1, one port per board (board i of the scenario's expanded devices on --port + i),\n"
    "waits for every board (hetsim-probe board --name NAME --port P), then runs the scenario's\n"
    "rounds (ddp: their steps; fedasync: its reporting windows) with the real controller and\n"
    "writes DIR/rounds.csv (ddp: steps.csv; fedasync: updates.csv), telemetry.csv (what\n"
    "`hetsim replay` reads), allocations.csv, server.csv and run.json (devices/probe/README.md).\n"
    "\n"
    "options:\n"
    "  --out DIR               the records' folder (made if missing)\n"
    "  --host ADDR             loopback address to listen on (127.0.0.1; 127.0.0.0/8 only)\n"
    "  --port N                first board's port (47000; 0: any free ports, printed)\n"
    "  --rounds N  --samples N override the scenario's rounds and samples_per_round\n"
    "  --max-samples N         training images each trainer loads (the learner's default 20000)\n"
    "  --data DIR              the task's data (default: the learner's, e.g. Fashion-MNIST\n"
    "                          from /usr/share/datasets/fashion-mnist)\n"
    "  --profiles DIRS         ':'-separated folders to find the scenario's profiles in (busy_w\n"
    "                          for stated energy); then $HETSIM_PROFILE_PATH, the scenario's folder\n"
    "  --connect-timeout-s S (60) --io-timeout-s S (30) --round-timeout-s S (600)\n"
    "  --quiet\n"
    "exit status: 0 done; 1 a system failure (a board that never connects, drops, stalls, dies;\n"
    "             a file that cannot be written); 2 bad input (one line on stderr)\n";

int probe_cmd_serve(int argc, char **argv) {
  probe_serve_cfg c;
  probe_serve_cfg_init(&c);
  const char *host = "127.0.0.1";
  double port = c.port;
  bool quiet = false;
  probe_opt opts[] = {
      {"--out", PROBE_OPT_STR, &c.out, 0, 0, false},
      {"--host", PROBE_OPT_STR, &host, 0, 0, false},
      {"--port", PROBE_OPT_NUM, &port, 0, 65535, true},
      {"--rounds", PROBE_OPT_NUM, &c.rounds, 1, 1e9, true},
      {"--samples", PROBE_OPT_NUM, &c.samples, 1, 9007199254740992.0, true},
      {"--max-samples", PROBE_OPT_NUM, &c.max_samples, 10, 1e9, true},
      {"--data", PROBE_OPT_STR, &c.data, 0, 0, false},
      {"--profiles", PROBE_OPT_STR, &c.profiles, 0, 0, false},
      {"--connect-timeout-s", PROBE_OPT_NUM, &c.connect_timeout_s, 0.1, 86400, false},
      {"--io-timeout-s", PROBE_OPT_NUM, &c.io_timeout_s, 0.1, 86400, false},
      {"--round-timeout-s", PROBE_OPT_NUM, &c.round_timeout_s, 0.1, 86400, false},
      {"--quiet", PROBE_OPT_FLAG, &quiet, 0, 0, false},
  };
  const char *pos[1];
  size_t np = 0;
  int rc = probe_opts_parse("serve", argc, argv, 2, opts, sizeof opts / sizeof *opts, pos, 1, &np, SERVE_USAGE);
  if (rc) return rc < 0 ? 0 : rc;
  if (np != 1) {
    fprintf(stderr, "hetsim-probe serve: missing the scenario file (usage: hetsim-probe serve SCENARIO.json --out DIR)\n");
    return HS_EXIT_BADINPUT;
  }
  if (!c.out) {
    fprintf(stderr, "hetsim-probe serve: --out: missing (the records' folder)\n");
    return HS_EXIT_BADINPUT;
  }
  hs_error err = {HS_OK, ""};
  if (probe_loopback_addr(host, &c.addr, &err) != HS_OK) {
    fprintf(stderr, "hetsim-probe serve: --host: %s\n", err.msg);
    return HS_EXIT_BADINPUT;
  }
  c.scenario = pos[0];
  c.port = (unsigned)port;
  c.quiet = quiet;
  return probe_serve(&c);
}

static const char BOARD_USAGE[] =
    "usage: hetsim-probe board --name NAME --port P [options]\n"
    "\n"
    "One board of a real run: connects to the server's port for NAME (hetsim-probe serve prints\n"
    "them), trains its allocation of every round with hetsim's own trainer and sends the model\n"
    "back, with the round's energy from its power sensor (or stated from the profile, said so).\n"
    "\n"
    "options:\n"
    "  --name NAME             the scenario's device name (expanded: \"rpi4-0\" for count > 1)\n"
    "  --host ADDR  --port P   the server's port for this board (127.0.0.0/8 only)\n"
    "  --data DIR              the task's data (default: the learner's)\n"
    "  --sensor SPEC           auto | rapl[:ZONE] | hwmon:NAME[:CH] | pi5-pmic | meter:FILE.csv | none\n"
    "                          (auto: the first that works, else energy is stated from the profile)\n"
    "  --root DIR              sysfs root for the sensor (/)\n"
    "  --threads N (1)         trainer threads\n"
    "  --connect-timeout-s S (60) --io-timeout-s S (30) --round-timeout-s S (600)\n"
    "exit status: 0 the run ended (BYE); 1 a system failure (no server, dropped, timed out);\n"
    "             2 bad input (one line on stderr)\n";

int probe_cmd_board(int argc, char **argv) {
  probe_board_cfg c = {.connect_timeout_s = 60, .io_timeout_s = 30, .round_timeout_s = 600, .threads = 1};
  const char *host = "127.0.0.1";
  double port = -1, threads = 1;
  probe_opt opts[] = {
      {"--name", PROBE_OPT_STR, &c.name, 0, 0, false},
      {"--host", PROBE_OPT_STR, &host, 0, 0, false},
      {"--port", PROBE_OPT_NUM, &port, 1, 65535, true},
      {"--data", PROBE_OPT_STR, &c.data, 0, 0, false},
      {"--sensor", PROBE_OPT_STR, &c.sensor, 0, 0, false},
      {"--root", PROBE_OPT_STR, &c.root, 0, 0, false},
      {"--threads", PROBE_OPT_NUM, &threads, 1, 64, true},
      {"--connect-timeout-s", PROBE_OPT_NUM, &c.connect_timeout_s, 0.1, 86400, false},
      {"--io-timeout-s", PROBE_OPT_NUM, &c.io_timeout_s, 0.1, 86400, false},
      {"--round-timeout-s", PROBE_OPT_NUM, &c.round_timeout_s, 0.1, 86400, false},
  };
  size_t np = 0;
  int rc = probe_opts_parse("board", argc, argv, 2, opts, sizeof opts / sizeof *opts, NULL, 0, &np, BOARD_USAGE);
  if (rc) return rc < 0 ? 0 : rc;
  if (!c.name || !c.name[0] || port < 0) {
    fprintf(stderr, "hetsim-probe board: %s: missing (usage: hetsim-probe board --name NAME --port P)\n",
            !c.name || !c.name[0] ? "--name" : "--port");
    return HS_EXIT_BADINPUT;
  }
  hs_error err = {HS_OK, ""};
  if (probe_loopback_addr(host, &c.addr, &err) != HS_OK) {
    fprintf(stderr, "hetsim-probe board: --host: %s\n", err.msg);
    return HS_EXIT_BADINPUT;
  }
  c.port = (unsigned)port;
  c.threads = (unsigned)threads;
  return probe_board(&c);
}
