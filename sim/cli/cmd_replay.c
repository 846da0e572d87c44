/* cmd_replay.c: `hetsim replay TELEMETRY.csv --policy NAME [--set KEY=VALUE ...]`
 *
 * Feeds recorded telemetry (round,device,time_s,energy_j,samples) to the real
 * controller, round by round, and prints the allocation it chooses for the next
 * round after each one (round,device,samples). The budget is the sum of samples
 * in the first round. The whole output is built in memory first and written only
 * when every round went through, so bad input never leaves half an output; with
 * -o it is written through hs_outfile (temporary name + rename). Output depends
 * only on the file and the options: byte-identical on every run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "hs_alloc.h"
#include "hs_outfile.h"
#include "hs_policy.h"
#include "hs_status.h"
#include "hs_telemetry_csv.h"

static void usage(FILE *out) {
  fputs("usage: hetsim replay TELEMETRY.csv --policy NAME [--set KEY=VALUE ...] [-o OUT.csv]\n"
        "\n"
        "Replays recorded telemetry through the controller. The input has one row per\n"
        "device per round:\n"
        "  round,device,time_s,energy_j,samples\n"
        "The output has, for every input round, the allocation the controller chooses\n"
        "for the next round after seeing it:\n"
        "  round,device,samples\n"
        "The budget (samples per round) is the sum of samples in the first round.\n"
        "--set takes the policy's keys (w_e, ema, deadband, min_samples, oort_k, ...;\n"
        "a \"policy.\" prefix is accepted); `hetsim replay --policies` lists the\n"
        "policies and their keys with defaults.\n"
        "\n"
        "exit status: 0 done; 1 cannot read or write (-o, stdout); 2 bad input (one line)\n"
        "\n"
        "example:\n"
        "  hetsim replay tests/golden/replay/telemetry.csv --policy low-energy \\\n"
        "      --set deadband=0.02 -o next.csv\n",
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

int hs_cmd_replay(int argc, char **argv) {
  const char *in = NULL, *policy = NULL, *out = NULL;
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
    } else if (opt == 'p' || opt == 's' || opt == 'o') {
      if (!p.arg) {
        snprintf(msg, sizeof msg, "%s: missing value (see hetsim replay --help)", p.text);
        rc = fail(msg);
        goto done;
      }
      if (opt == 'p')
        policy = p.arg;
      else if (opt == 'o')
        out = p.arg;
      else
        sets[nset++] = p.arg;
    } else if (opt != CLI_OPERAND) {
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
    if (hs_controller_update(c, rec, t->ndevices, &err) != HS_OK) {
      name_device(&err, t, r, in);
      rc = fail(err.msg);
      goto done;
    }
    const uint64_t *a = hs_controller_allocation(c);
    for (size_t d = 0; d < t->ndevices; d++) {
      fprintf(mem, "%llu,", (unsigned long long)t->rounds[r]);
      put_name(mem, t->devices[d]);
      fprintf(mem, ",%llu\n", (unsigned long long)a[d]);
    }
  }
  if (fclose(mem) != 0) {
    mem = NULL;
    fputs("hetsim replay: cannot finish the output buffer\n", stderr);
    rc = 1;
    goto done;
  }
  mem = NULL;
  if (out) {
    if (hs_write_file_atomic(out, buf, buflen, &err) != HS_OK) {
      rc = cli_fail("replay", &err); /* 1: cannot write, as for run --out */
      goto done;
    }
  } else if (fwrite(buf, 1, buflen, stdout) != buflen || fflush(stdout) != 0) {
    fputs("hetsim replay: stdout: write failed\n", stderr);
    rc = 1;
    goto done;
  }
  rc = 0;
done:
  if (mem) fclose(mem);
  free(buf);
  hs_free(rec);
  hs_controller_destroy(c);
  hs_telemetry_csv_destroy(t);
  hs_free(sets);
  return rc;
}
