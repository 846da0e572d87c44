/* box.c: `hetsim-probe box`, a testbed in a box: this Linux machine as the
 * N boards of a scenario. The box process pins itself (and so everything it
 * starts) to one CPU, makes a CPU cgroup per board with its quota under a
 * parent of its own (box_setup.c), enters a fresh network namespace
 * (unshare(CLONE_NEWNET): only lo, brought up with MTU 1500), shapes every
 * board's link as tc htb classes on lo keyed by the board's server port,
 * listens on 127.0.0.1 one port per board, starts every board process (each
 * joins its cgroup before it execs `hetsim-probe board`), and runs the
 * server (serve.c) in its own process. Afterwards, and after SIGINT, SIGTERM
 * or SIGHUP, it stops what it started - by pid, the boards only - waits for
 * them and removes every cgroup it made; the namespace (and with it the tc
 * setup) goes away with the box's last process, since nothing pins it.
 *
 * Refusals (one line, exit 2, nothing made): not root, no cgroup cpu
 * controller, no tc, unshare refused. --no-isolation runs the same server
 * and boards without cgroups, namespace or tc (any user; CI without root),
 * on free ports of 127.0.0.1. --root DIR with --dry-run rehearses the
 * cgroup setup on a fake sysfs tree (made, listed, removed) and prints the
 * tc lines; nothing runs.
 * Rejected: running the server as a child too (the box would then relay
 * signals to one more process; in-process it sees the stop request itself);
 * `ip netns add` (a named namespace outlives a crash and must be cleaned). */
#define _GNU_SOURCE
#include "probe_cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char BOX_USAGE[] =
    "usage: hetsim-probe box SCENARIO.json --out DIR [options]\n"
    "\n"
    "Turns this Linux machine into the scenario's boards and runs the real run (pma, ddp or\n"
    "fedasync) on them\n"
    "(hetsim-probe serve + one hetsim-probe board per device): every board in its own CPU\n"
    "cgroup with a quota, every board's link a tc htb class on the loopback of a fresh network\n"
    "namespace, all on 127.0.0.1 and one CPU. Needs root, a cgroup cpu controller (v1 or v2)\n"
    "and tc (iproute2); removes every cgroup it made, also after SIGINT/SIGTERM.\n"
    "\n"
    "quotas: a board's share of one core is proportional to 1/tau_s of its profile's task\n"
    "(the devices keep their speed ratios), scaled to sum to --cpu-total; links: the device's\n"
    "network.links bandwidth_mbps, the server's link shared (see devices/probe/README.md).\n"
    "\n"
    "options:\n"
    "  --out DIR               the records' folder (as serve)\n"
    "  --cpu-total F (0.75)    the quotas' sum, in cores (at most 1: the boards share one CPU)\n"
    "  --quota NAME=F          a board's quota in cores (repeatable; the rest share what is left)\n"
    "  --cpu N                 the CPU to pin to (default: the last one this process may use)\n"
    "  --port N (47000)        first board's port inside the namespace\n"
    "  --sensor SPEC (auto)    the boards' power sensor\n"
    "  --no-isolation          no cgroups, namespace or tc: plain processes on free ports\n"
    "  --check                 say whether the box can run here (exit 0) or why not (exit 2)\n"
    "  --dry-run [--root DIR]  print the plan and the tc lines; with --root, make and remove the\n"
    "                          cgroups under a fake sysfs tree DIR\n"
    "  --rounds N --samples N --max-samples N --data DIR --profiles DIRS --quiet\n"
    "  --connect-timeout-s S --io-timeout-s S --round-timeout-s S   (as serve)\n"
    "exit status: 0 done; 1 a system failure; 2 bad input or a refusal (one line on stderr)\n";

static volatile sig_atomic_t box_signal;
static void on_signal(int sig) {
  box_signal = sig;
  probe_wire_request_stop();
}

static int refuse(const char *fmt, ...) PROBE_PRINTF(1, 2);
static int refuse(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("hetsim-probe box: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return HS_EXIT_BADINPUT;
}

static const char *find_tc(void) {
  static const char *const where[] = {"/usr/sbin/tc", "/sbin/tc", "/usr/bin/tc", "/bin/tc"};
  for (size_t i = 0; i < sizeof where / sizeof *where; i++)
    if (access(where[i], X_OK) == 0) return where[i];
  return NULL;
}

/* Why the box cannot run here (static text), or NULL when it can. */
static const char *box_unavailable(char **cg_dir, probe_cg_kind *kind) {
  *cg_dir = NULL;
  if (geteuid() != 0)
    return "needs root (cgroups, a network namespace, tc); run it as root, or add --no-isolation for plain "
           "processes without quotas or shaped links";
  *kind = probe_cg_detect("/", cg_dir);
  if (*kind == PROBE_CG_NONE)
    return "no cgroup cpu controller (neither v1 /sys/fs/cgroup/cpu/cpu.cfs_quota_us nor v2 \"cpu\" in "
           "/sys/fs/cgroup/cgroup.controllers); add --no-isolation to run without quotas";
  if (!find_tc()) return "tc not found (Debian package iproute2); add --no-isolation to run without shaped links";
  return NULL;
}

/* lo up with MTU 1500 in the new namespace (htb's quantum and burst then behave as on a NIC). */
static int lo_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags |= IFF_UP;
    rc = ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  if (rc == 0) {
    ifr.ifr_mtu = 1500;
    rc = ioctl(s, SIOCSIFMTU, &ifr);
  }
  int e = errno;
  close(s);
  errno = e;
  return rc;
}

static int run_tc(const char *tc, char **args, bool quiet) {
  size_t n = 0;
  while (args[n]) n++;
  char **argv = hs_calloc(n + 2, sizeof *argv);
  char *tc_copy = hs_strdup(tc);
  argv[0] = tc_copy;
  for (size_t i = 0; i < n; i++) argv[i + 1] = args[i];
  pid_t pid = fork();
  if (pid == 0) {
    if (quiet) {
      int dn = open("/dev/null", O_WRONLY);
      if (dn >= 0) dup2(dn, 2);
    }
    execv(tc, argv);
    _exit(127);
  }
  free(argv);
  free(tc_copy);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void print_plan(const probe_box_plan *p, char ***tc, size_t ntc) {
  printf("box: %zu boards, quotas sum to %.3f of one core, server link %g Mbit/s\n", p->n, p->cpu_total, p->server_mbps);
  for (size_t i = 0; i < p->n; i++)
    printf("  %-16s quota %.4f core  link %g Mbit/s  port %u%s%s\n", p->b[i].name, p->b[i].quota, p->b[i].link_mbps,
           p->b[i].port, p->b[i].cg ? "  cgroup " : "", p->b[i].cg ? p->b[i].cg : "");
  for (size_t i = 0; i < ntc; i++) {
    fputs("  tc", stdout);
    for (char **a = tc[i]; *a; a++) printf(" %s", *a);
    fputc('\n', stdout);
  }
}

/* Wait for the started boards: up to grace_s, then SIGTERM, then SIGKILL,
 * each to the pids this box started. */
static void reap(pid_t *pid, size_t n, const char *const *names, double grace_s, bool report) {
  double deadline = probe_now_mono() + grace_s;
  int phase = 0;
  for (;;) {
    size_t alive = 0;
    for (size_t i = 0; i < n; i++) {
      if (pid[i] <= 0) continue;
      int status = 0;
      pid_t r = waitpid(pid[i], &status, WNOHANG);
      if (r == pid[i]) {
        if (report && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
          fprintf(stderr, "hetsim-probe box: board \"%s\" (pid %ld) %s %d\n", names[i], (long)pid[i],
                  WIFEXITED(status) ? "exited with status" : "was killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        pid[i] = 0;
      } else if (r < 0 && errno == ECHILD) {
        pid[i] = 0;
      } else {
        alive++;
      }
    }
    if (!alive) return;
    if (probe_now_mono() > deadline && phase < 2) {
      for (size_t i = 0; i < n; i++)
        if (pid[i] > 0) kill(pid[i], phase == 0 ? SIGTERM : SIGKILL);
      phase++;
      deadline = probe_now_mono() + 2;
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

typedef struct box_opts {
  probe_serve_cfg srv;
  const char *sensor, *root;
  double cpu_total, cpu, port;
  probe_opt_list quota;
  bool no_iso, check, dry, quiet;
} box_opts;

static int box_run(const box_opts *o, const probe_cscn *s, probe_box_plan *plan, const char *self) {
  bool iso = !o->no_iso;
  int rc = 0;
  size_t n = s->ndev;
  int *lfd = hs_calloc(n, sizeof *lfd);
  pid_t *pid = hs_calloc(n, sizeof *pid);
  const char **names = hs_calloc(n, sizeof *names);
  for (size_t i = 0; i < n; i++) {
    lfd[i] = -1;
    names[i] = s->dev[i].name;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  hs_error err = {HS_OK, ""};
  if (iso) {
    char tag[32];
    snprintf(tag, sizeof tag, "%ld", (long)getpid());
    if (probe_box_cgroups_create(plan, tag, &err) != HS_OK) {
      rc = refuse("%s", err.msg);
      goto out;
    }
    if (unshare(CLONE_NEWNET) != 0) {
      rc = refuse("unshare(CLONE_NEWNET) refused: %s", strerror(errno));
      goto out;
    }
    if (lo_up() != 0) {
      rc = refuse("cannot bring lo up in the new network namespace: %s", strerror(errno));
      goto out;
    }
    size_t ntc = 0;
    char ***tc = probe_box_tc_lines(plan, "lo", &ntc);
    const char *tcbin = find_tc();
    for (size_t k = 0; k < ntc && rc == 0; k++) {
      int st = run_tc(tcbin, tc[k], true);
      if (st != 0) {
        char line[600] = "";
        for (char **a = tc[k]; *a; a++) snprintf(line + strlen(line), sizeof line - strlen(line), " %s", *a);
        rc = refuse("tc%s: failed (status %d)", line, st);
      }
    }
    if (!o->quiet && rc == 0) print_plan(plan, tc, 0);
    probe_box_tc_free(tc, ntc);
    if (rc) goto out;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned bound = 0;
    lfd[i] = probe_listen(o->srv.addr, iso ? plan->b[i].port : 0, &bound, &err);
    if (lfd[i] < 0) {
      rc = refuse("board \"%s\": %s", names[i], err.msg);
      goto out;
    }
    plan->b[i].port = bound;
  }
  for (size_t i = 0; i < n && !box_signal; i++) {
    char port[16], cto[32], ito[32], rto[32];
    snprintf(port, sizeof port, "%u", plan->b[i].port);
    snprintf(cto, sizeof cto, "%.17g", o->srv.connect_timeout_s);
    snprintf(ito, sizeof ito, "%.17g", o->srv.io_timeout_s);
    snprintf(rto, sizeof rto, "%.17g", o->srv.round_timeout_s);
    const char *argv[24] = {self, "board", "--name", names[i], "--port", port, "--connect-timeout-s", cto,
                            "--io-timeout-s", ito, "--round-timeout-s", rto, "--sensor", o->sensor ? o->sensor : "auto"};
    size_t a = 14;
    if (o->srv.data) {
      argv[a++] = "--data";
      argv[a++] = o->srv.data;
    }
    argv[a] = NULL;
    char *args[24];
    for (size_t k = 0; k <= a; k++) args[k] = argv[k] ? hs_strdup(argv[k]) : NULL;
    char *join = iso ? probe_box_cg_join_file(plan, i) : NULL;
    pid[i] = fork();
    if (pid[i] == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      signal(SIGHUP, SIG_DFL);
      if (join) {
        FILE *f = fopen(join, "w");
        if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
          fprintf(stderr, "hetsim-probe box: board \"%s\": cannot join its cgroup %s: %s\n", names[i], join,
                  strerror(errno));
          _exit(1);
        }
      }
      execv(self, args);
      fprintf(stderr, "hetsim-probe box: cannot run %s: %s\n", self, strerror(errno));
      _exit(127);
    }
    free(join);
    for (size_t k = 0; k < a; k++) free(args[k]);
    if (pid[i] < 0) {
      pid[i] = 0;
      rc = refuse("cannot start board \"%s\": %s", names[i], strerror(errno));
      goto out;
    }
  }
  if (!box_signal) {
    probe_serve_cfg c = o->srv;
    c.listen_fds = lfd;
    c.nlisten = n;
    rc = probe_serve(&c);
  } else {
    rc = 1;
  }
out:
  for (size_t i = 0; i < n; i++)
    if (lfd[i] >= 0) close(lfd[i]);
  reap(pid, n, names, rc == 0 ? 10 : 0.5, rc == 0);
  probe_box_cgroups_remove(plan);
  if (box_signal) {
    fprintf(stderr, "hetsim-probe box: stopped by signal %d; boards stopped, cgroups removed\n", (int)box_signal);
    if (rc == 0) rc = 1;
  }
  free(lfd);
  free(pid);
  free(names);
  return rc;
}

int probe_cmd_box(int argc, char **argv) {
  box_opts o;
  memset(&o, 0, sizeof o);
  probe_serve_cfg_init(&o.srv);
  o.cpu_total = 0.75;
  o.cpu = -1;
  o.port = 47000;
  o.root = "/";
  probe_opt opts[] = {
      {"--out", PROBE_OPT_STR, &o.srv.out, 0, 0, false},
      {"--cpu-total", PROBE_OPT_NUM, &o.cpu_total, 0.01, 1, false},
      {"--quota", PROBE_OPT_LIST, &o.quota, 0, 0, false},
      {"--cpu", PROBE_OPT_NUM, &o.cpu, 0, 4095, true},
      {"--port", PROBE_OPT_NUM, &o.port, 1024, 65000, true},
      {"--sensor", PROBE_OPT_STR, &o.sensor, 0, 0, false},
      {"--root", PROBE_OPT_STR, &o.root, 0, 0, false},
      {"--no-isolation", PROBE_OPT_FLAG, &o.no_iso, 0, 0, false},
      {"--check", PROBE_OPT_FLAG, &o.check, 0, 0, false},
      {"--dry-run", PROBE_OPT_FLAG, &o.dry, 0, 0, false},
      {"--rounds", PROBE_OPT_NUM, &o.srv.rounds, 1, 1e9, true},
      {"--samples", PROBE_OPT_NUM, &o.srv.samples, 1, 9007199254740992.0, true},
      {"--max-samples", PROBE_OPT_NUM, &o.srv.max_samples, 10, 1e9, true},
      {"--data", PROBE_OPT_STR, &o.srv.data, 0, 0, false},
      {"--profiles", PROBE_OPT_STR, &o.srv.profiles, 0, 0, false},
      {"--connect-timeout-s", PROBE_OPT_NUM, &o.srv.connect_timeout_s, 0.1, 86400, false},
      {"--io-timeout-s", PROBE_OPT_NUM, &o.srv.io_timeout_s, 0.1, 86400, false},
      {"--round-timeout-s", PROBE_OPT_NUM, &o.srv.round_timeout_s, 0.1, 86400, false},
      {"--quiet", PROBE_OPT_FLAG, &o.quiet, 0, 0, false},
  };
  const char *pos[1];
  size_t npos = 0;
  int rc = probe_opts_parse("box", argc, argv, 2, opts, sizeof opts / sizeof *opts, pos, 1, &npos, BOX_USAGE);
  if (rc) {
    free(o.quota.v);
    return rc < 0 ? 0 : rc;
  }
  o.srv.quiet = o.quiet;
  char *cg_dir = NULL;
  probe_cg_kind kind = PROBE_CG_NONE;
  if (o.check) {
    const char *why = box_unavailable(&cg_dir, &kind);
    free(cg_dir);
    free(o.quota.v);
    if (why) return refuse("%s", why);
    printf("box: available (root, cgroup %s cpu controller, %s)\n", kind == PROBE_CG_V1 ? "v1" : "v2", find_tc());
    return 0;
  }
  if (npos != 1 || !o.srv.out) {
    free(o.quota.v);
    return refuse("%s: missing (usage: hetsim-probe box SCENARIO.json --out DIR)", npos != 1 ? "the scenario" : "--out");
  }
  if (strcmp(o.root, "/") != 0 && !o.dry) {
    free(o.quota.v);
    return refuse("--root: a fake sysfs tree is for --dry-run only (a real box needs /)");
  }
  o.srv.scenario = pos[0];
  hs_error err = {HS_OK, ""};
  probe_cscn s;
  if (probe_cscn_load(pos[0], o.srv.profiles, &s, &err) != HS_OK) {
    free(o.quota.v);
    fprintf(stderr, "hetsim-probe box: %s\n", err.msg);
    return err.status == HS_ENOENT || err.status == HS_EIO ? 1 : HS_EXIT_BADINPUT;
  }
  probe_box_plan plan;
  if (probe_box_plan_make(&s, o.cpu_total, o.quota.v, o.quota.n, (unsigned)o.port, &plan, &err) != HS_OK) {
    rc = refuse("%s", err.msg);
    goto done_scn;
  }
  if (o.dry) {
    plan.cg = probe_cg_detect(o.root, &plan.cg_root);
    if (strcmp(o.root, "/") != 0) {
      if (probe_box_cgroups_create(&plan, "dry-run", &err) != HS_OK) rc = refuse("%s", err.msg);
    }
    size_t ntc = 0;
    char ***tc = probe_box_tc_lines(&plan, "lo", &ntc);
    if (!rc) print_plan(&plan, tc, ntc);
    probe_box_tc_free(tc, ntc);
    probe_box_cgroups_remove(&plan);
    goto done_plan;
  }
  if (!o.no_iso) {
    const char *why = box_unavailable(&plan.cg_root, &plan.cg);
    if (why) {
      rc = refuse("%s", why);
      goto done_plan;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    int cpu = (int)o.cpu;
    if (cpu < 0 && sched_getaffinity(0, sizeof set, &set) == 0)
      for (int k = CPU_SETSIZE - 1; k >= 0 && cpu < 0; k--)
        if (CPU_ISSET(k, &set)) cpu = k;
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
      rc = refuse("--cpu %d: cannot pin to it: %s", cpu, strerror(errno));
      goto done_plan;
    }
  }
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl <= 0) {
    rc = refuse("cannot find this program (/proc/self/exe): %s", strerror(errno));
    goto done_plan;
  }
  self[sl] = '\0';
  rc = box_run(&o, &s, &plan, self);
done_plan:
  probe_box_plan_fini(&plan);
done_scn:
  probe_cscn_fini(&s);
  free(cg_dir);
  free(o.quota.v);
  return rc;
}
