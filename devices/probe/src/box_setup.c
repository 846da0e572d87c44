/* box_setup.c: the testbed in a box, the parts that can be checked without
 * root: the plan (each board's CPU quota, link and port from the scenario),
 * the cgroups (made and removed under a root folder, "/" for real, a fake
 * sysfs tree in the tests) and the tc command lines for the links.
 *
 * Quotas: a board's speed in the box is its share of one core, so quota_i is
 * proportional to 1/tau_i (the profile's tau_s for the task): the boards keep
 * the speed ratios of the devices they stand for, scaled so that the quotas
 * sum to cpu_total (default 0.75: below the one core they share, as the
 * testbed spec measured; more makes boards slow each other). Explicit
 * NAME=F overrides win; the others share what is left. Each quota is kept in
 * [0.01, 1] of a core (CFS cannot enforce less than about 1 ms in 100 ms).
 * cgroups: v1 cpu hierarchy (cpu.cfs_period_us, cpu.cfs_quota_us, the
 * parent's cpu.shares 65536 so the quota, not a neighbour, limits a board)
 * or v2 (cpu.max "QUOTA PERIOD", the parent's cpu.weight 10000 and "+cpu"
 * in its cgroup.subtree_control); whichever root has, v1 first (where both
 * are mounted the v2 tree has no cpu controller).
 * Links (tc htb on the namespace's lo, one qdisc for both directions since
 * loopback has one egress): parents 1:1 (server -> boards) and 1:2 (boards
 * -> server) at the server's rate; per board i a class 1:(10+2i) under 1:1
 * (download, matched by source port = its server port) and 1:(11+2i) under
 * 1:2 (upload, destination port), ceil = its link, rate = min(ceil, server
 * rate / boards) so that borrowing is fair (max-min, like hetsim's fluid
 * network); class 1:3 (default, 10 Gbit/s) carries anything unclassified.
 * Rejected: veth pairs per board (more setup, same per-port result), netem
 * (absent on these kernels: latency is not emulated, said in the README). */
#include "probe_cluster.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BOX_PERIOD_US 100000

probe_cg_kind probe_cg_detect(const char *root, char **dir) {
  static const char *const v1[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuacct,cpu"};
  *dir = NULL;
  for (size_t i = 0; i < sizeof v1 / sizeof *v1; i++) {
    char *d = probe_path(root, v1[i]);
    char *f = probe_xasprintf("%s/cpu.cfs_quota_us", d);
    bool ok = probe_exists(f);
    free(f);
    if (ok) {
      *dir = d;
      return PROBE_CG_V1;
    }
    free(d);
  }
  char *d = probe_path(root, "/sys/fs/cgroup");
  char *f = probe_xasprintf("%s/cgroup.controllers", d);
  char line[512] = "";
  hs_error e = {HS_OK, ""};
  bool v2 = probe_read_line(f, line, sizeof line, &e) == HS_OK;
  free(f);
  if (v2) {
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save))
      if (!strcmp(t, "cpu")) {
        *dir = d;
        return PROBE_CG_V2;
      }
  }
  free(d);
  return PROBE_CG_NONE;
}

void probe_box_plan_fini(probe_box_plan *p) {
  for (size_t i = 0; i < p->n; i++) {
    free(p->b[i].name);
    free(p->b[i].cg);
  }
  free(p->b);
  free(p->cg_root);
  free(p->cg_parent);
  memset(p, 0, sizeof *p);
}

hs_status probe_box_plan_make(const probe_cscn *s, double cpu_total, const char *const *quota_over, size_t nover,
                              unsigned port, probe_box_plan *p, hs_error *err) {
  memset(p, 0, sizeof *p);
  size_t n = s->ndev;
  if (!(cpu_total > 0 && cpu_total <= 1))
    return hs_error_set(err, HS_ERANGE, "--cpu-total: %g is not in (0, 1] of the one core the boards share", cpu_total);
  p->n = n;
  p->b = hs_calloc(n, sizeof *p->b);
  p->server_mbps = s->server_mbps;
  double *over = hs_malloc(n * sizeof *over);
  for (size_t i = 0; i < n; i++) over[i] = NAN;
  hs_status st = HS_OK;
  for (size_t k = 0; k < nover && st == HS_OK; k++) {
    const char *eq = strchr(quota_over[k], '=');
    char name[256];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - quota_over[k]) : 0, quota_over[k]);
    char *end = NULL;
    double q = eq ? strtod(eq + 1, &end) : NAN;
    size_t i = probe_cscn_find(s, name);
    if (!eq || end == eq + 1 || *end || !(q >= 0.01 && q <= 1))
      st = hs_error_set(err, HS_EINVAL, "--quota: \"%s\" is not NAME=F with F in [0.01, 1] of a core", quota_over[k]);
    else if (i == SIZE_MAX)
      st = hs_error_set(err, HS_ENOENT, "--quota: no board \"%s\" in %s (nearest: \"%s\")", name, s->path,
                        probe_cscn_nearest(s, name));
    else over[i] = q;
  }
  /* 1/tau per board; a device without a tau takes the median of the others */
  double *inv = hs_malloc(n * sizeof *inv), *known = hs_malloc(n * sizeof *known);
  size_t nk = 0;
  for (size_t i = 0; i < n; i++)
    if (s->dev[i].tau_s > 0) known[nk++] = 1 / s->dev[i].tau_s;
  double med = nk ? probe_median(known, nk) : 1;
  double fixed = 0, free_w = 0;
  for (size_t i = 0; i < n; i++) {
    inv[i] = s->dev[i].tau_s > 0 ? 1 / s->dev[i].tau_s : med;
    if (!isnan(over[i])) fixed += over[i];
    else free_w += inv[i];
  }
  if (st == HS_OK && fixed > cpu_total + 1e-12)
    st = hs_error_set(err, HS_ERANGE, "--quota: the overrides sum to %g of a core, above --cpu-total %g", fixed,
                      cpu_total);
  if (st == HS_OK && free_w > 0 && !(cpu_total - fixed >= 0.01))
    st = hs_error_set(err, HS_ERANGE, "--quota: the overrides leave %g of a core for the other boards", cpu_total - fixed);
  for (size_t i = 0; i < n && st == HS_OK; i++) {
    double q = !isnan(over[i]) ? over[i] : (cpu_total - fixed) * inv[i] / free_w;
    if (q < 0.01) q = 0.01;
    if (q > 1) q = 1;
    p->b[i].name = hs_strdup(s->dev[i].name);
    p->b[i].quota = q;
    p->b[i].link_mbps = s->dev[i].link_mbps;
    p->b[i].port = port + (unsigned)i;
    p->cpu_total += q;
  }
  free(over);
  free(inv);
  free(known);
  if (st != HS_OK) probe_box_plan_fini(p);
  return st;
}

static hs_status put_file(const char *dir, const char *file, const char *text, hs_error *err) {
  char *p = probe_xasprintf("%s/%s", dir, file);
  FILE *f = fopen(p, "w");
  bool ok = f && fputs(text, f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  hs_status st = ok ? HS_OK : hs_error_set(err, HS_EIO, "%s: cannot write \"%s\": %s", p, text, strerror(errno));
  free(p);
  return st;
}

/* The control files the box writes (removed from a fake tree; on cgroupfs
 * the unlink fails harmlessly and rmdir takes the folder with them). */
static const char *const CG_FILES[] = {"cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.max",
                                       "cpu.weight", "cgroup.subtree_control", "tasks", "cgroup.procs"};

static void cg_rmdir(const char *d) {
  for (size_t k = 0; k < sizeof CG_FILES / sizeof *CG_FILES; k++) {
    char *f = probe_xasprintf("%s/%s", d, CG_FILES[k]);
    struct stat sb;
    /* a fake tree holds regular files; cgroupfs's control files cannot be unlinked */
    if (lstat(f, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink == 1) unlink(f);
    free(f);
  }
  rmdir(d);
}

void probe_box_cgroups_remove(probe_box_plan *p) {
  for (size_t i = 0; i < p->n; i++)
    if (p->b[i].cg) {
      cg_rmdir(p->b[i].cg);
      free(p->b[i].cg);
      p->b[i].cg = NULL;
    }
  if (p->cg_parent) {
    cg_rmdir(p->cg_parent);
    free(p->cg_parent);
    p->cg_parent = NULL;
  }
}

/* A board's cgroup folder name: its name with anything outside [A-Za-z0-9._-] as '_'. */
static char *cg_name(size_t i, const char *name) {
  char *s = probe_xasprintf("board%zu-%s", i, name);
  for (char *c = s; *c; c++)
    if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *c)) *c = '_';
  return s;
}

hs_status probe_box_cgroups_create(probe_box_plan *p, const char *tag, hs_error *err) {
  if (p->cg == PROBE_CG_NONE || !p->cg_root) return hs_error_set(err, HS_EUNSUP, "no cgroup cpu controller");
  p->cg_parent = probe_xasprintf("%s/hetsim-box-%s", p->cg_root, tag);
  if (mkdir(p->cg_parent, 0755) != 0) {
    hs_status st = hs_error_set(err, errno == EACCES || errno == EPERM ? HS_EPERM : HS_EIO, "%s: cannot make the cgroup: %s",
                                p->cg_parent, strerror(errno));
    free(p->cg_parent);
    p->cg_parent = NULL;
    return st;
  }
  hs_status st = HS_OK;
  if (p->cg == PROBE_CG_V1) {
    st = put_file(p->cg_parent, "cpu.shares", "65536", err);
  } else {
    st = put_file(p->cg_root, "cgroup.subtree_control", "+cpu", err);
    if (st == HS_OK) st = put_file(p->cg_parent, "cpu.weight", "10000", err);
    if (st == HS_OK) st = put_file(p->cg_parent, "cgroup.subtree_control", "+cpu", err);
  }
  for (size_t i = 0; i < p->n && st == HS_OK; i++) {
    char *nm = cg_name(i, p->b[i].name);
    char *d = probe_xasprintf("%s/%s", p->cg_parent, nm);
    free(nm);
    if (mkdir(d, 0755) != 0) {
      st = hs_error_set(err, HS_EIO, "%s: cannot make the cgroup: %s", d, strerror(errno));
      free(d);
      break;
    }
    p->b[i].cg = d;
    long q = lround(p->b[i].quota * BOX_PERIOD_US);
    char buf[64];
    if (p->cg == PROBE_CG_V1) {
      snprintf(buf, sizeof buf, "%d", BOX_PERIOD_US);
      st = put_file(d, "cpu.cfs_period_us", buf, err);
      snprintf(buf, sizeof buf, "%ld", q);
      if (st == HS_OK) st = put_file(d, "cpu.cfs_quota_us", buf, err);
    } else {
      snprintf(buf, sizeof buf, "%ld %d", q, BOX_PERIOD_US);
      st = put_file(d, "cpu.max", buf, err);
    }
  }
  if (st != HS_OK) probe_box_cgroups_remove(p);
  return st;
}

char *probe_box_cg_join_file(const probe_box_plan *p, size_t i) {
  return probe_xasprintf("%s/%s", p->b[i].cg, p->cg == PROBE_CG_V1 ? "tasks" : "cgroup.procs");
}

/* --- tc -------------------------------------------------------------------------- */

static char **tc_line(const char *fmt, ...) PROBE_PRINTF(1, 2);
static char **tc_line(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  size_t n = 0, cap = 4;
  char **v = hs_malloc(cap * sizeof *v);
  char *save = NULL;
  for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    if (n + 2 > cap) v = hs_reallocarray(v, cap *= 2, sizeof *v);
    v[n++] = hs_strdup(t);
  }
  v[n] = NULL;
  return v;
}

/* Rates in kbit/s, whole numbers (tc's own unit). */
static long kbit(double mbps) { return lround(mbps * 1000 < 8 ? 8 : mbps * 1000); }

char ***probe_box_tc_lines(const probe_box_plan *p, const char *dev, size_t *nlines) {
  size_t cap = 8 + 4 * p->n, n = 0;
  char ***L = hs_calloc(cap, sizeof *L);
  long srv = kbit(p->server_mbps);
  L[n++] = tc_line("qdisc replace dev %s root handle 1: htb default 3", dev);
  L[n++] = tc_line("class add dev %s parent 1: classid 1:1 htb rate %ldkbit ceil %ldkbit quantum 1514", dev, srv, srv);
  L[n++] = tc_line("class add dev %s parent 1: classid 1:2 htb rate %ldkbit ceil %ldkbit quantum 1514", dev, srv, srv);
  L[n++] = tc_line("class add dev %s parent 1: classid 1:3 htb rate 10gbit ceil 10gbit quantum 60000", dev);
  for (size_t i = 0; i < p->n; i++) {
    long ceil_ = kbit(p->b[i].link_mbps), fair = kbit(p->server_mbps / (double)p->n);
    long rate = ceil_ < fair ? ceil_ : fair;
    unsigned down = 10 + 2 * (unsigned)i, up = down + 1;
    L[n++] = tc_line("class add dev %s parent 1:1 classid 1:%u htb rate %ldkbit ceil %ldkbit quantum 1514", dev, down,
                     rate, ceil_);
    L[n++] = tc_line("class add dev %s parent 1:2 classid 1:%u htb rate %ldkbit ceil %ldkbit quantum 1514", dev, up,
                     rate, ceil_);
    L[n++] = tc_line("filter add dev %s parent 1: protocol ip prio 1 u32 match ip sport %u 0xffff flowid 1:%u", dev,
                     p->b[i].port, down);
    L[n++] = tc_line("filter add dev %s parent 1: protocol ip prio 1 u32 match ip dport %u 0xffff flowid 1:%u", dev,
                     p->b[i].port, up);
  }
  *nlines = n;
  return L;
}

void probe_box_tc_free(char ***lines, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (char **a = lines[i]; a && *a; a++) free(*a);
    free(lines[i]);
  }
  free(lines);
}
