/* run_expect.c: `hetsim run --expect DIR` (see run_expect.h).
 *
 * The files, in this order: summary.json (JSON, key by key; hetsim_version
 * skipped, so a golden outlives an upgrade that changes nothing else),
 * rounds.csv and devices.csv (CSV, cell by cell), and trace.json when the
 * golden has one. The first difference ends the comparison: the message names
 * one place, the earliest file first (summary figures move whenever a row
 * does, so the summary names the symptom and the CSV line the cause is a
 * second run away; rejected: reporting every difference, which floods a CI
 * log for one changed constant). When the two summaries' run_identity
 * differs, the message also names the cause: the first --set, resolved
 * scenario key or policy option that differs (summary.json records all
 * three), since the identity itself is a hash that names nothing.
 * O(bytes of the outputs). */
#include "run_expect.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_opts.h"
#include "base/hs_alloc.h"
#include "traces/hs_expect.h"
#include "base/hs_status.h"
#include "base/hs_util.h"

static const char *const required[] = {"summary.json", "rounds.csv", "devices.csv"};

int run_expect_ready(const char *golden) {
  char msg[HS_ERROR_MSG_MAX + 64];
  struct stat st;
  if (stat(golden, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(msg, sizeof msg, "--expect %s: not a folder (expected a golden run folder)", golden);
    return cli_bad_input("run", msg);
  }
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    char *p = hs_path_join(golden, required[i]);
    bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    hs_free(p);
    if (!ok) {
      snprintf(msg, sizeof msg, "--expect %s: no %s (expected a run folder: %s, %s, %s)", golden,
               required[i], required[0], required[1], required[2]);
      return cli_bad_input("run", msg);
    }
  }
  return 0;
}

/* "; the --set lists differ at sets[1]: expected ..., got ..." when the
 * summaries g and o are of different runs; "" when their identities agree. */
static void identity_cause(const char *g, const char *o, char *buf, size_t cap) {
  static const char *const identity[] = {"run_identity"};
  static const char *const causes[] = {"sets", "scenario_resolved", "policy_config"};
  hs_expect_diff c;
  buf[0] = '\0';
  if (hs_expect_json_cause(g, o, identity, 1, &c) != HS_EXPECT_DIFF ||
      hs_expect_json_cause(g, o, causes, 3, &c) != HS_EXPECT_DIFF)
    return;
  const char *at = c.where, *what = "the --set lists differ at ";
  if (!strncmp(at, "scenario_resolved.", 18)) {
    at += 18;
    what = "the resolved scenarios differ at key ";
  } else if (!strncmp(at, "policy_config.", 14)) {
    at += 14;
    what = "the policy configurations differ at ";
  }
  /* Cut, never overrun: a long value ends the line with what fits, "...". */
  int n = snprintf(buf, cap, "; %s%s: expected %s, got %s", what, at, c.want, c.got);
  if (n >= 0 && (size_t)n >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
}

/* One file: 0, 3, 2 or 1 (message printed). */
static int compare_file(const char *golden, const char *out, const char *name, double rtol) {
  char *gp = hs_path_join(golden, name), *op = hs_path_join(out, name);
  hs_error err = {0};
  size_t glen = 0, olen = 0;
  int rc = 0;
  char *g = hs_read_file(gp, &glen, &err), *o = NULL;
  if (!g) {
    rc = cli_fail("run", &err);
    goto done;
  }
  o = hs_read_file(op, &olen, &err);
  if (!o) {
    fprintf(stderr, "hetsim run: %s: expected beside the golden's %s, but this run wrote none "
                    "(%s)\n", op, name, strstr(name, "trace") ? "add --trace" : "cannot read it");
    rc = strstr(name, "trace") ? 3 : 1;
    goto done;
  }
  hs_expect_diff d;
  int k;
  bool json = strstr(name, ".json") != NULL;
  if (json) {
    static const char *const skip[] = {"hetsim_version"};
    if (memchr(g, '\0', glen)) {
      hs_error_set(&err, HS_EPARSE, "%s: contains a NUL byte", gp);
      k = HS_EXPECT_BAD;
    } else {
      k = hs_expect_json(g, gp, o, rtol, skip, 1, &d, &err);
    }
  } else {
    k = hs_expect_csv(g, glen, gp, o, olen, rtol, &d, &err);
  }
  if (k == HS_EXPECT_BAD) {
    rc = cli_bad_input("run", err.msg);
  } else if (k == HS_EXPECT_DIFF) {
    char msg[1900], cause[640];
    if (json) {
      identity_cause(g, o, cause, sizeof cause);
      snprintf(msg, sizeof msg, "%s: %s: expected %s, got %s%s%s", gp, d.where, d.want, d.got,
               rtol > 0 ? " (beyond --rtol)" : "", cause);
    }
    else if (d.line)
      snprintf(msg, sizeof msg, "%s: line %zu (%s), column %s: expected %s, got %s%s", gp, d.line,
               d.record ? "row" : "header", d.where, d.want, d.got,
               rtol > 0 && d.record ? " (beyond --rtol)" : "");
    else
      snprintf(msg, sizeof msg, "%s: after its last line (row %zu): expected %s, got %s", gp,
               d.record, d.want, d.got);
    cli_bad_input("run", msg); /* one line, newlines folded */
    rc = 3;
  }
done:
  hs_free(g);
  hs_free(o);
  hs_free(gp);
  hs_free(op);
  return rc;
}

int run_expect_compare(const char *golden, const char *out, double rtol, int quiet) {
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    int rc = compare_file(golden, out, required[i], rtol);
    if (rc) return rc;
  }
  char *gt = hs_path_join(golden, "trace.json");
  struct stat st;
  bool traced = stat(gt, &st) == 0;
  hs_free(gt);
  if (traced) {
    int rc = compare_file(golden, out, "trace.json", rtol);
    if (rc) return rc;
  }
  if (!quiet)
    printf("run: outputs match %s (summary.json, rounds.csv, devices.csv%s%s)\n", golden,
           traced ? ", trace.json" : "", rtol > 0 ? ", within --rtol" : "");
  return 0;
}
