/* cmd_replay.c: `hetsim replay TELEMETRY.csv --policy NAME [--set KEY=VALUE ...]`
 *
 * Feeds recorded telemetry (round,device,time_s,energy_j,samples and, when
 * the file has it, comm_s: hs_controller_set_comm) to the real controller,
 * round by round, and prints the allocation it chooses for the next
 * round after each one (round,device,samples). The budget is the sum of samples
 * in the first round. The whole output is built in memory first and written only
 * when every round went through, so bad input never leaves half an output; with
 * -o it is written through hs_outfile (temporary name + rename). Output depends
 * only on the file and the options: byte-identical on every run.
 *
 * --expect GOLDEN.csv: the decisions are checked against a golden output of the
 * same format, row by row in order (round, device, samples; extra columns in
 * the golden are ignored). Exit 0 when every decision matches, 3 at the first
 * that differs (one line: the golden's line, round, device, both sample
 * counts and the telemetry row the controller had just seen), 2 when the
 * golden is malformed. O(rounds x devices). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "cli_suggest.h"
#include "commands.h"
#include "base/hs_alloc.h"
#include "traces/hs_csv.h"
#include "base/hs_util.h"
#include "traces/hs_outfile.h"
#include "policies/hs_policy.h"
#include "base/hs_status.h"
#include "traces/hs_telemetry_csv.h"

static void usage(FILE *out) {
  fputs("usage: hetsim replay TELEMETRY.csv --policy NAME [--set KEY=VALUE ...] [-o OUT.csv]\n"
        "                     [--expect GOLDEN.csv]\n"
        "\n"
        "Replays recorded telemetry through the controller. The input has one row per\n"
        "device per round:\n"
        "  round,device,time_s,energy_j,samples[,comm_s]\n"
        "comm_s (optional) is the device's download plus upload time of the round in\n"
        "seconds; the controller gets it before each update (round-time uses it).\n"
        "The output has, for every input round, the allocation the controller chooses\n"
        "for the next round after seeing it:\n"
        "  round,device,samples\n"
        "The budget (samples per round) is the sum of samples in the first round.\n"
        "--set takes the policy's keys (w_e, ema, deadband, min_samples, oort_k, ...;\n"
        "a \"policy.\" prefix is accepted); `hetsim replay --policies` lists the\n"
        "policies and their keys with defaults.\n"
        "\n"
        "--expect GOLDEN.csv checks the decisions against an earlier output (pin a\n"
        "controller's behaviour in CI): exit 0 when all match, 3 at the first round\n"
        "and device that differ (both values and the telemetry row that led to it),\n"
        "2 when GOLDEN.csv is malformed. Nothing goes to stdout but one \"matches\"\n"
        "line (-o still writes the output).\n"
        "exit status: 0 done; 1 cannot read or write (-o, stdout); 2 bad input (one line)\n"
        "\n"
        "example:\n"
        "  hetsim replay tests/golden/replay/telemetry.csv --policy low-energy \\\n"
        "      --set deadband=0.02 -o next.csv\n"
        "  hetsim replay tests/golden/replay/telemetry.csv --policy low-energy \\\n"
        "      --expect tests/golden/replay/low-energy.csv\n",
        out);
}

static void print_key(const char *key, const char *value, void *ud) {
  (void)ud;
  printf("    %s=%s\n", key, value);
}

static void list_policies(void) {
  for (size_t i = 0; i < hs_policy_count(); i++) {
    hs_policy_config cfg;
    hs_error err = {0};
    printf("%s: %s\n", hs_policy_name(i), hs_policy_summary(i));
    if (hs_policy_config_init(&cfg, hs_policy_name(i), &err) == HS_OK)
      hs_policy_config_foreach(&cfg, print_key, NULL);
  }
}

/* A device name as a CSV field: quoted (RFC 4180, '"' doubled) when it holds
 * ',' or '"', as the input may have had it (names with line breaks are
 * refused by the reader). */
static void put_name(FILE *out, const char *name) {
  if (!strpbrk(name, ",\"")) {
    fputs(name, out);
    return;
  }
  fputc('"', out);
  for (const char *p = name; *p; p++) {
    if (*p == '"') fputc('"', out);
    fputc(*p, out);
  }
  fputc('"', out);
}

/* One line on stderr (line breaks from --set values or paths become spaces). */
static int fail(const char *msg) { return cli_bad_input("replay", msg); }

/* "participant 3: time_s: ..." -> "round R: device \"name\": time_s: ..." */
static void name_device(hs_error *err, const hs_telemetry_csv *t, size_t r, const char *path) {
  char rest[HS_ERROR_MSG_MAX];
  unsigned long idx = 0;
  int used = 0;
  if (sscanf(err->msg, "participant %lu: %n", &idx, &used) == 1 && used > 0 &&
      idx < t->ndevices) {
    snprintf(rest, sizeof rest, "%s", err->msg + used);
    hs_error_set(err, err->status, "%s: round %llu: device \"%s\": %s", path,
                 (unsigned long long)t->rounds[r], t->devices[idx], rest);
  } else {
    hs_error_prefix(err, "%s: round %llu", path, (unsigned long long)t->rounds[r]);
  }
}

/* A golden field as a count: digits only, at most 2^64 - 1. */
static bool parse_count(const char *s, uint64_t *v) { return hs_parse_count(s, v) == 1; }

/* The line of the telemetry row (round, device) in path, or 0 when it cannot
 * be found again (the file changed since it was loaded). Only on a
 * difference: one more pass over a file that was just read. */
static size_t telemetry_line(const char *path, uint64_t round, const char *device) {
  hs_error err = {0};
  size_t len = 0, line = 0;
  char *text = hs_read_file(path, &len, &err);
  hs_csv *r = text ? hs_csv_create(text, len, path, HS_CSV_SKIP_BLANK, &err) : NULL;
  static const char *const names[] = {"round", "device"};
  size_t col[2];
  if (r && hs_csv_next(r, &err) > 0 && hs_csv_header(r, names, 2, col, &err) == HS_OK) {
    while (!line && hs_csv_next(r, &err) > 0) {
      uint64_t k;
      if (hs_csv_nfields(r) > col[0] && hs_csv_nfields(r) > col[1] &&
          parse_count(hs_csv_field(r, col[0]), &k) && k == round &&
          !strcmp(hs_csv_field(r, col[1]), device))
        line = hs_csv_line(r);
    }
  }
  hs_csv_destroy(r);
  hs_free(text);
  return line;
}

/* Check the decisions alloc[r * ndevices + d] against GOLDEN. Returns 0
 * (match), 3 (difference) or 2 (malformed golden), after its one line. */
static int expect_golden(const char *golden, const char *in, const hs_telemetry_csv *t,
                         const uint64_t *alloc) {
  char msg[HS_ERROR_MSG_MAX + 512];
  hs_error err = {0};
  size_t len = 0;
  char *text = hs_read_file(golden, &len, &err);
  if (!text) return cli_fail("replay", &err);
  int rc = 0;
  size_t col[3];
  static const char *const names[] = {"round", "device", "samples"};
  hs_csv *g = hs_csv_create(text, len, golden, HS_CSV_SKIP_BLANK, &err);
  int k = g ? hs_csv_next(g, &err) : -1;
  if (k == 0) hs_error_set(&err, HS_EPARSE, "%s: empty (expected the header round,device,samples)", golden);
  if (k <= 0 || hs_csv_header(g, names, 3, col, &err) != HS_OK) {
    rc = fail(err.msg);
    goto done;
  }
  size_t n = t->nrounds * t->ndevices, i = 0;
  for (; (k = hs_csv_next(g, &err)) > 0; i++) {
    size_t line = hs_csv_line(g);
    if (hs_csv_nfields(g) <= col[0] || hs_csv_nfields(g) <= col[1] || hs_csv_nfields(g) <= col[2]) {
      snprintf(msg, sizeof msg, "%s: line %zu: %zu fields, expected round,device,samples", golden,
               line, hs_csv_nfields(g));
      rc = fail(msg);
      goto done;
    }
    uint64_t round, samples;
    const char *fr = hs_csv_field(g, col[0]), *fd = hs_csv_field(g, col[1]),
               *fs = hs_csv_field(g, col[2]);
    if (!parse_count(fr, &round) || !parse_count(fs, &samples)) {
      bool bad_round = !parse_count(fr, &round);
      snprintf(msg, sizeof msg, "%s: line %zu: %s: expected a whole number >= 0 (got \"%.60s\")",
               golden, line, bad_round ? "round" : "samples", bad_round ? fr : fs);
      rc = fail(msg);
      goto done;
    }
    if (i >= n) {
      fprintf(stderr,
              "hetsim replay: %s: line %zu: round %llu, device \"%.80s\": expected a decision, "
              "but the replay of %s ends after round %llu (%zu rows)\n",
              golden, line, (unsigned long long)round, fd, in,
              (unsigned long long)t->rounds[t->nrounds - 1], n);
      rc = 3;
      goto done;
    }
    size_t r = i / t->ndevices, d = i % t->ndevices;
    size_t tk = r * t->ndevices + d;
    if (round != t->rounds[r] || strcmp(fd, t->devices[d]) || samples != alloc[tk]) {
      const char *what = round != t->rounds[r] ? "round" : strcmp(fd, t->devices[d]) ? "device" : "samples";
      char want[128], got[128];
      if (what[0] == 'r') {
        snprintf(want, sizeof want, "%llu", (unsigned long long)round);
        snprintf(got, sizeof got, "%llu", (unsigned long long)t->rounds[r]);
      } else if (what[0] == 'd') {
        snprintf(want, sizeof want, "\"%.100s\"", fd);
        snprintf(got, sizeof got, "\"%.100s\"", t->devices[d]);
      } else {
        snprintf(want, sizeof want, "%llu", (unsigned long long)samples);
        snprintf(got, sizeof got, "%llu", (unsigned long long)alloc[tk]);
      }
      char where[64] = "";
      size_t tl = telemetry_line(in, t->rounds[r], t->devices[d]);
      if (tl) snprintf(where, sizeof where, ", line %zu", tl);
      fprintf(stderr,
              "hetsim replay: %s: line %zu: round %llu, device \"%.100s\": %s: expected %s, got %s "
              "(decided after the telemetry row round %llu, device \"%.100s\": time_s=%.10g, "
              "energy_j=%.10g, samples=%lld; %s%s)\n",
              golden, line, (unsigned long long)t->rounds[r], t->devices[d], what, want, got,
              (unsigned long long)t->rounds[r], t->devices[d], t->time_s[tk], t->energy_j[tk],
              (long long)t->samples[tk], in, where);
      rc = 3;
      goto done;
    }
  }
  if (k < 0) {
    rc = fail(err.msg);
    goto done;
  }
  if (i < n) {
    size_t r = i / t->ndevices, d = i % t->ndevices;
    fprintf(stderr,
            "hetsim replay: %s: ends after %zu rows: round %llu, device \"%.100s\": expected "
            "(none), got %llu (the replay has %zu rows)\n",
            golden, i, (unsigned long long)t->rounds[r], t->devices[d],
            (unsigned long long)alloc[r * t->ndevices + d], n);
    rc = 3;
    goto done;
  }
  printf("replay: %zu rounds x %zu devices match %s\n", t->nrounds, t->ndevices, golden);
done:
  hs_csv_destroy(g);
  hs_free(text);
  return rc;
}

int hs_cmd_replay(int argc, char **argv) {
  const char *in = NULL, *policy = NULL, *out = NULL, *expect = NULL;
  uint64_t *decided = NULL;
  char **sets = hs_calloc((size_t)argc + 1, sizeof *sets);
  size_t nset = 0;
  int rc = HS_EXIT_BADINPUT;
  hs_telemetry_csv *t = NULL;
  hs_controller *c = NULL;
  hs_telemetry *rec = NULL;
  char *buf = NULL;
  size_t buflen = 0;
  FILE *mem = NULL;
  hs_error err = {0};
  char msg[HS_ERROR_MSG_MAX + 64];

  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                           {"policies", no_argument, NULL, 'L'},
                                           {"policy", required_argument, NULL, 'p'},
                                           {"set", required_argument, NULL, 's'},
                                           {"expect", required_argument, NULL, 'e'},
                                           {NULL, 0, NULL, 0}};
  cli_parser p;
  cli_parser_init(&p, argc, argv, "ho:", longopts);
  for (int opt; (opt = cli_next(&p)) != CLI_END;) {
    if (opt == 'h') {
      usage(stdout);
      rc = 0;
      goto done;
    } else if (opt == 'L') {
      list_policies();
      rc = 0;
      goto done;
    } else if (opt == 'p' || opt == 's' || opt == 'o' || opt == 'e') {
      if (!p.arg) {
        snprintf(msg, sizeof msg, "%s: missing value (see hetsim replay --help)", p.text);
        rc = fail(msg);
        goto done;
      }
      if (opt == 'p')
        policy = p.arg;
      else if (opt == 'o')
        out = p.arg;
      else if (opt == 'e')
        expect = p.arg;
      else
        sets[nset++] = p.arg;
    } else if (opt != CLI_OPERAND) {
      const char *near = cli_nearest_option(p.text, longopts);
      if (near)
        snprintf(msg, sizeof msg, "%s: unknown option (did you mean \"--%s\"? see hetsim replay --help)",
                 p.text, near);
      else
        snprintf(msg, sizeof msg, "%s: unknown option (see hetsim replay --help)", p.text);
      rc = fail(msg);
      goto done;
    } else if (!in) {
      in = p.arg;
    } else {
      snprintf(msg, sizeof msg, "%s: only one telemetry file is read (see hetsim replay --help)",
               p.arg);
      rc = fail(msg);
      goto done;
    }
  }
  if (!in || !policy) {
    rc = fail(!in ? "missing TELEMETRY.csv (see hetsim replay --help)"
                  : "--policy: required (see hetsim replay --help)");
    goto done;
  }

  hs_policy_config cfg;
  if (hs_policy_config_init(&cfg, policy, &err) != HS_OK) {
    snprintf(msg, sizeof msg, "--policy: %s", err.msg);
    rc = fail(msg);
    goto done;
  }
  for (size_t k = 0; k < nset; k++) {
    char *kv = sets[k];
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
      snprintf(msg, sizeof msg, "--set %s: expected KEY=VALUE", kv);
      rc = fail(msg);
      goto done;
    }
    *eq = '\0';
    const char *key = strncmp(kv, "policy.", 7) ? kv : kv + 7;
    hs_status st = hs_policy_config_set(&cfg, key, eq + 1, &err);
    *eq = '=';
    if (st != HS_OK) {
      snprintf(msg, sizeof msg, "--set %s: %s", kv, err.msg);
      rc = fail(msg);
      goto done;
    }
  }

  t = hs_telemetry_csv_load(in, &err);
  if (!t) {
    rc = cli_fail("replay", &err);
    goto done;
  }
  /* summed with a bound: counts up to 2^63-1 each would wrap a uint64_t */
  uint64_t budget = 0;
  for (size_t d = 0; d < t->ndevices; d++) {
    budget += (uint64_t)t->samples[d];
    if (budget > HS_POLICY_BUDGET_MAX) {
      snprintf(msg, sizeof msg,
               "%s: round %llu: budget: the first round's samples sum to more than 2^53 = %llu "
               "(the most a controller splits)",
               in, (unsigned long long)t->rounds[0], (unsigned long long)HS_POLICY_BUDGET_MAX);
      rc = fail(msg);
      goto done;
    }
  }
  c = hs_controller_create(&cfg, t->ndevices, NULL, budget, &err);
  if (!c) {
    snprintf(msg, sizeof msg, "%s: round %llu: %s (the budget is the sum of the first round's samples)",
             in, (unsigned long long)t->rounds[0], err.msg);
    rc = fail(msg);
    goto done;
  }
  rec = hs_calloc(t->ndevices, sizeof *rec);
  decided = hs_calloc(t->nrounds * t->ndevices, sizeof *decided);
  mem = open_memstream(&buf, &buflen);
  if (!mem) {
    fputs("hetsim replay: cannot open an output buffer\n", stderr);
    rc = 1;
    goto done;
  }
  fputs("round,device,samples\n", mem);
  for (size_t r = 0; r < t->nrounds; r++) {
    for (size_t d = 0; d < t->ndevices; d++) {
      size_t k = r * t->ndevices + d;
      rec[d] = (hs_telemetry){t->time_s[k], t->energy_j[k], t->samples[k]};
    }
    /* the file's comm_s column (optional), as the simulator feeds it */
    hs_status st = t->comm_s ? hs_controller_set_comm(c, t->comm_s + r * t->ndevices,
                                                      t->ndevices, &err)
                             : HS_OK;
    if (st != HS_OK || hs_controller_update(c, rec, t->ndevices, &err) != HS_OK) {
      name_device(&err, t, r, in);
      rc = fail(err.msg);
      goto done;
    }
    const uint64_t *a = hs_controller_allocation(c);
    memcpy(decided + r * t->ndevices, a, t->ndevices * sizeof *a);
    for (size_t d = 0; d < t->ndevices; d++) {
      fprintf(mem, "%llu,", (unsigned long long)t->rounds[r]);
      put_name(mem, t->devices[d]);
      fprintf(mem, ",%llu\n", (unsigned long long)a[d]);
    }
  }
  rc = cli_close_buffer("replay", &mem);
  if (rc != 0) goto done;
  if (out) {
    if (hs_write_file_atomic(out, buf, buflen, &err) != HS_OK) {
      rc = cli_fail("replay", &err); /* 1: cannot write, as for run --out */
      goto done;
    }
  }
  if (expect) {
    rc = expect_golden(expect, in, t, decided);
    goto done;
  }
  rc = out ? 0 : cli_write_stdout("replay", buf, buflen);
done:
  if (mem) fclose(mem);
  free(buf);
  hs_free(rec);
  hs_free(decided);
  hs_controller_destroy(c);
  hs_telemetry_csv_destroy(t);
  hs_free(sets);
  return rc;
}
