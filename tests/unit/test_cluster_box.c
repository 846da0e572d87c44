/* test_cluster_box.c: the testbed in a box without root (box_setup.c): the
 * plan's quotas and links from a scenario and its profiles (known answers),
 * the cgroups made and removed on fake sysfs trees (v1, v2, neither), the tc
 * lines, and the command's --dry-run --root rehearsal. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe_cluster.h"

static char *tmp(void) {
  char *t = probe_xasprintf("%s/hsbox-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  cr_assert_not_null(mkdtemp(t));
  return t;
}

static void put(const char *dir, const char *rel, const char *text) {
  char *p = probe_xasprintf("%s/%s", dir, rel);
  for (char *s = p + strlen(dir) + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      mkdir(p, 0755);
      *s = '/';
    }
  FILE *f = fopen(p, "w");
  cr_assert_not_null(f, "%s", p);
  fputs(text, f);
  fclose(f);
  free(p);
}

static char *slurp(const char *dir, const char *rel) {
  char *p = probe_xasprintf("%s/%s", dir, rel);
  unsigned char *d = NULL;
  size_t n = 0;
  hs_error e = {HS_OK, ""};
  hs_status st = probe_read_file(p, &d, &n, &e);
  free(p);
  return st == HS_OK ? (char *)d : NULL;
}

static void rmrf(const char *d) {
  char *c = probe_xasprintf("rm -rf '%s'", d);
  cr_expect_eq(system(c), 0);
  free(c);
}

/* Three boards whose profiles say tau 1, 2 and 4 ms: quotas 4:2:1. */
static void scenario(const char *dir) {
#define PROF(tau) "{\"tasks\": {\"mnist\": {\"tau_s\": " tau ", \"busy_w\": 5}}}"
  put(dir, "p/fast.json", PROF("0.001"));
  put(dir, "p/mid.json", PROF("0.002"));
  put(dir, "p/slow.json", PROF("0.004"));
  put(dir, "s.json",
      "{\"task\": \"mnist\", \"rounds\": 2, \"samples_per_round\": 700, \"model_bytes\": 407080,"
      " \"regime\": {\"kind\": \"pma\"}, \"policy\": {\"kind\": \"time-only\", \"deadband\": 0.1},"
      " \"devices\": [{\"name\": \"a\", \"profile\": \"p/fast.json\", \"link\": \"w\"},"
      "               {\"name\": \"b\", \"profile\": \"p/mid.json\", \"link\": \"g\", \"count\": 2},"
      "               {\"name\": \"z\", \"profile\": \"p/slow.json\", \"link\": \"w\", \"count\": 0}],"
      " \"network\": {\"server\": \"s\", \"links\": {\"w\": {\"bandwidth_mbps\": 20}, \"g\": {\"bandwidth_mbps\": 200},"
      "  \"s\": {\"bandwidth_mbps\": 100}}}}");
}

Test(cluster_box, scenario_and_plan) {
  char *d = tmp();
  scenario(d);
  char *path = probe_xasprintf("%s/s.json", d);
  probe_cscn s;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_cscn_load(path, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(s.ndev, 3, "a, b-0, b-1 (z has count 0)");
  cr_expect_str_eq(s.dev[0].name, "a");
  cr_expect_str_eq(s.dev[1].name, "b-0");
  cr_expect_str_eq(s.dev[2].name, "b-1");
  cr_expect_float_eq(s.dev[0].tau_s, 0.001, 1e-15);
  cr_expect_float_eq(s.dev[1].busy_w, 5, 1e-15);
  cr_expect_eq(s.npolicy_keys, 1);
  cr_expect_str_eq(s.policy_keys[0], "deadband");
  cr_expect_float_eq(s.server_mbps, 100, 0);
  cr_expect_str_eq(probe_cscn_nearest(&s, "b-9"), "b-0");
  probe_box_plan p;
  cr_assert_eq(probe_box_plan_make(&s, 0.8, NULL, 0, 5000, &p, &err), HS_OK, "%s", err.msg);
  /* 1/tau: 1000, 500, 500 -> 0.8 x (1/2, 1/4, 1/4) */
  cr_expect_float_eq(p.b[0].quota, 0.4, 1e-12);
  cr_expect_float_eq(p.b[1].quota, 0.2, 1e-12);
  cr_expect_float_eq(p.b[2].quota, 0.2, 1e-12);
  cr_expect_float_eq(p.cpu_total, 0.8, 1e-12);
  cr_expect_eq(p.b[2].port, 5002);
  cr_expect_float_eq(p.b[1].link_mbps, 200, 0);
  probe_box_plan_fini(&p);
  /* an override: the others share what is left in the same ratio */
  const char *over[] = {"b-1=0.3"};
  cr_assert_eq(probe_box_plan_make(&s, 0.75, over, 1, 5000, &p, &err), HS_OK, "%s", err.msg);
  cr_expect_float_eq(p.b[2].quota, 0.3, 1e-12);
  cr_expect_float_eq(p.b[0].quota, 0.3, 1e-12);  /* 0.45 x 2/3 */
  cr_expect_float_eq(p.b[1].quota, 0.15, 1e-12); /* 0.45 x 1/3 */
  probe_box_plan_fini(&p);
  const char *bad[] = {"b-7=0.3"};
  cr_expect_eq(probe_box_plan_make(&s, 0.75, bad, 1, 5000, &p, &err), HS_ENOENT);
  cr_expect(strstr(err.msg, "no board \"b-7\"") && strstr(err.msg, "nearest"), "%s", err.msg);
  const char *much[] = {"a=0.5", "b-0=0.5"};
  cr_expect_eq(probe_box_plan_make(&s, 0.75, much, 2, 5000, &p, &err), HS_ERANGE, "%s", err.msg);
  cr_expect_eq(probe_box_plan_make(&s, 1.5, NULL, 0, 5000, &p, &err), HS_ERANGE);
  probe_cscn_fini(&s);
  /* bad scenarios name the place */
  put(d, "bad.json", "{\"task\": \"mnist\", \"rounds\": 2, \"samples_per_round\": 10, \"model_bytes\": 4,"
                     " \"regime\": {\"kind\": \"pma\"}, \"devices\": [{\"name\": \"a\", \"profile\": \"x\", "
                     "\"link\": \"nope\"}], \"network\": {\"links\": {\"w\": {\"bandwidth_mbps\": 1}}}}");
  free(path);
  path = probe_xasprintf("%s/bad.json", d);
  cr_expect_neq(probe_cscn_load(path, NULL, &s, &err), HS_OK);
  cr_expect(strstr(err.msg, "bad.json: devices[0]: link: no link \"nope\""), "%s", err.msg);
  free(path);
  rmrf(d);
  free(d);
}

static void plan3(probe_box_plan *p, const char *root) {
  char *d = tmp();
  scenario(d);
  char *path = probe_xasprintf("%s/s.json", d);
  probe_cscn s;
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_cscn_load(path, NULL, &s, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(probe_box_plan_make(&s, 0.8, NULL, 0, 5000, p, &err), HS_OK, "%s", err.msg);
  p->cg = probe_cg_detect(root, &p->cg_root);
  probe_cscn_fini(&s);
  free(path);
  rmrf(d);
  free(d);
}

Test(cluster_box, cgroup_v1_fake_root) {
  char *r = tmp();
  put(r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  put(r, "sys/fs/cgroup/unified/cgroup.controllers", "\n");
  probe_box_plan p;
  plan3(&p, r);
  cr_assert_eq(p.cg, PROBE_CG_V1);
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_box_cgroups_create(&p, "t1", &err), HS_OK, "%s", err.msg);
  char *v = slurp(r, "sys/fs/cgroup/cpu/hetsim-box-t1/cpu.shares");
  cr_expect_str_eq(v, "65536");
  free(v);
  v = slurp(r, "sys/fs/cgroup/cpu/hetsim-box-t1/board0-a/cpu.cfs_quota_us");
  cr_expect_str_eq(v, "40000");
  free(v);
  v = slurp(r, "sys/fs/cgroup/cpu/hetsim-box-t1/board2-b-1/cpu.cfs_period_us");
  cr_expect_str_eq(v, "100000");
  free(v);
  v = slurp(r, "sys/fs/cgroup/cpu/hetsim-box-t1/board2-b-1/cpu.cfs_quota_us");
  cr_expect_str_eq(v, "20000");
  free(v);
  char *j = probe_box_cg_join_file(&p, 1);
  cr_expect(strstr(j, "hetsim-box-t1/board1-b-0/tasks") != NULL, "%s", j);
  free(j);
  probe_box_cgroups_remove(&p);
  char *parent = probe_xasprintf("%s/sys/fs/cgroup/cpu/hetsim-box-t1", r);
  cr_expect(!probe_exists(parent), "every cgroup removed");
  probe_box_cgroups_remove(&p); /* idempotent */
  free(parent);
  probe_box_plan_fini(&p);
  rmrf(r);
  free(r);
}

Test(cluster_box, cgroup_v2_fake_root) {
  char *r = tmp();
  put(r, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  probe_box_plan p;
  plan3(&p, r);
  cr_assert_eq(p.cg, PROBE_CG_V2);
  hs_error err = {HS_OK, ""};
  cr_assert_eq(probe_box_cgroups_create(&p, "t2", &err), HS_OK, "%s", err.msg);
  char *v = slurp(r, "sys/fs/cgroup/hetsim-box-t2/board0-a/cpu.max");
  cr_expect_str_eq(v, "40000 100000");
  free(v);
  v = slurp(r, "sys/fs/cgroup/hetsim-box-t2/cgroup.subtree_control");
  cr_expect_str_eq(v, "+cpu");
  free(v);
  v = slurp(r, "sys/fs/cgroup/hetsim-box-t2/cpu.weight");
  cr_expect_str_eq(v, "10000");
  free(v);
  char *j = probe_box_cg_join_file(&p, 0);
  cr_expect(strstr(j, "board0-a/cgroup.procs") != NULL, "%s", j);
  free(j);
  probe_box_cgroups_remove(&p);
  char *parent = probe_xasprintf("%s/sys/fs/cgroup/hetsim-box-t2", r);
  cr_expect(!probe_exists(parent));
  free(parent);
  probe_box_plan_fini(&p);
  rmrf(r);
  free(r);
}

Test(cluster_box, no_cpu_controller) {
  char *r = tmp();
  put(r, "sys/fs/cgroup/cgroup.controllers", "io memory\n");
  char *dir = NULL;
  cr_expect_eq(probe_cg_detect(r, &dir), PROBE_CG_NONE);
  cr_expect_null(dir);
  probe_box_plan p;
  plan3(&p, r);
  hs_error err = {HS_OK, ""};
  cr_expect_eq(probe_box_cgroups_create(&p, "t3", &err), HS_EUNSUP);
  probe_box_plan_fini(&p);
  rmrf(r);
  free(r);
}

Test(cluster_box, tc_lines) {
  probe_box_plan p;
  plan3(&p, "/nonexistent");
  size_t n = 0;
  char ***L = probe_box_tc_lines(&p, "lo", &n);
  cr_assert_eq(n, 4 + 4 * 3);
  char line[16][400];
  for (size_t i = 0; i < n; i++) {
    line[i][0] = '\0';
    for (char **a = L[i]; *a; a++)
      snprintf(line[i] + strlen(line[i]), sizeof line[i] - strlen(line[i]), "%s%s", line[i][0] ? " " : "", *a);
  }
  cr_expect_str_eq(line[0], "qdisc replace dev lo root handle 1: htb default 3");
  cr_expect_str_eq(line[1], "class add dev lo parent 1: classid 1:1 htb rate 100000kbit ceil 100000kbit quantum 1514");
  /* board 0 (link 20 Mbit/s, fair share 100/3): rate = ceil = 20000 kbit */
  cr_expect_str_eq(line[4], "class add dev lo parent 1:1 classid 1:10 htb rate 20000kbit ceil 20000kbit quantum 1514");
  cr_expect_str_eq(line[6], "filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport 5000 0xffff flowid 1:10");
  cr_expect_str_eq(line[7], "filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport 5000 0xffff flowid 1:11");
  /* board 1 (200 Mbit/s): guaranteed the fair share 33333 kbit, borrows up to 200000 */
  cr_expect_str_eq(line[9], "class add dev lo parent 1:2 classid 1:13 htb rate 33333kbit ceil 200000kbit quantum 1514");
  probe_box_tc_free(L, n);
  probe_box_plan_fini(&p);
}

Test(cluster_box, dry_run_command_on_a_fake_root) {
  char *r = tmp();
  put(r, "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  char *d = tmp();
  scenario(d);
  char *cmd = probe_xasprintf("%s box %s/s.json --out %s/out --dry-run --root %s > %s/plan.txt", PROBE_BIN, d, d, r, d);
  int rc = system(cmd);
  cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "%s", cmd);
  char *plan = slurp(d, "plan.txt");
  cr_assert_not_null(plan);
  cr_expect(strstr(plan, "board0-a") && strstr(plan, "quota 0.3750") && strstr(plan, "flowid 1:15"), "%s", plan);
  free(plan);
  char *parent = probe_xasprintf("%s/sys/fs/cgroup/cpu/hetsim-box-dry-run", r);
  cr_expect(!probe_exists(parent), "the rehearsal removes what it made");
  free(parent);
  free(cmd);
  /* a fake root outside --dry-run is refused */
  cmd = probe_xasprintf("%s box %s/s.json --out %s/out --root %s 2>%s/err.txt", PROBE_BIN, d, d, r, d);
  rc = system(cmd);
  cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
  char *e = slurp(d, "err.txt");
  cr_expect(e && strstr(e, "--dry-run only"), "%s", e ? e : "");
  free(e);
  free(cmd);
  rmrf(r);
  rmrf(d);
  free(r);
  free(d);
}
