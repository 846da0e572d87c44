/* cmd_agc_plan.c: `hetsim agc-plan`: the AGC planner (policies/, hs_agc.h) on
 * the command line. Straggler probabilities, quantiser constant, residual bit
 * budget and allocator in; the plan out as one JSON object on stdout: bits,
 * shares, both code layouts, the decode weights of both lanes and the
 * predicted residual error. The JSON is built in memory and written at once,
 * so bad input never leaves half an object. Numbers are printed with 12
 * significant digits; output depends only on the arguments.
 * Rejected: cJSON for the output (it prints doubles with %1.15g or %1.17g, and
 * a layout is better read as [partition, coefficient] pairs on one line). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "policies/hs_agc.h"
#include "base/hs_alloc.h"
#include "base/hs_status.h"

#define CMD "agc-plan"

static void usage(FILE *out) {
  fputs("usage: hetsim agc-plan --p P1,P2,... --d D --z-res Z [--allocator dp|lag|greedy|equal]\n"
        "                       [--offset 1|2] [--partitions N] [--lambda L]\n"
        "\n"
        "Plans approximate gradient coding with quantisation for k workers that each\n"
        "miss the round's deadline with probability p_i (one per worker, in [0,1)).\n"
        "It shares Z residual bits among the workers (sum of bits = Z), then builds the\n"
        "code: data shares Y_i (sum n), a layout of the n partitions over the workers\n"
        "(column sums 1, row sums Y), decode weights, and the predicted residual error\n"
        "E||ghat - g||^2 = n^2 / sum_i c_i^-1 in units of ||g_bar||^2 (one partition's\n"
        "squared gradient norm), where c_i = (p_i + omega_i)/(1 - p_i) and\n"
        "omega_i = D/(2^(z_i - 1) - 1)^2 is the quantiser's variance at z_i bits.\n"
        "\n"
        "  --p LIST          straggler probabilities, comma-separated (k = their count)\n"
        "  --d D             quantiser constant D > 0 (theory: model dimension / 4)\n"
        "  --z-res Z         residual bits to share, a whole number (>= 1 with offset 1)\n"
        "  --allocator NAME  dp (exact, O(k Z^2)), lag (top-k Lagrangian, default),\n"
        "                    greedy or equal\n"
        "  --offset 1|2      bits on the wire z_i = b_i + offset. 1 (default) is the\n"
        "                    paper-consistent model; 2 reproduces the public code, which\n"
        "                    sends b_i + 2 while its allocator models b_i + 1\n"
        "  --partitions N    data partitions n >= k - 1 (default k)\n"
        "  --lambda L        lane-2 regulariser (default 1: the MMSE shrink)\n"
        "\n"
        "Output keys: bits (b_i, sum Z), wire_bits (z_i), shares (Y_i), layout.shared\n"
        "and layout.stair (per worker, [partition, coefficient] pairs), weights (lane 1,\n"
        "unbiased: 1/(1-p_i)), weights_lane2 (kappa/(1-p_i), for an adaptive optimiser's\n"
        "second moment), kappa, objective (sum_i f_i(b_i), what the allocator\n"
        "maximises), sum_c_inv, predicted_error. A worker with no bits under offset 1\n"
        "is off: share 0, no partitions, weights 0. The master decodes\n"
        "ghat = sum over arrived workers of weight_i * Q(sum_j alpha_ij g_j).\n"
        "\n"
        "example:\n"
        "  hetsim agc-plan --p 0.1,0.2,0.3,0.4 --d 1.20125 --z-res 16 --allocator dp\n",
        out);
}

static int fail(const char *msg) { return cli_bad_input(CMD, msg); }

static bool parse_double(const char *s, double *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || errno == ERANGE || !isfinite(v)) return false;
  *out = v;
  return true;
}

static bool parse_int(const char *s, long long *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno == ERANGE) return false;
  *out = v;
  return true;
}

/* "0.1,0.2,0.3" -> p[]; NULL after printing one line on stderr. */
static double *parse_list(const char *s, size_t *k, int *rc) {
  char msg[256];
  size_t n = 1;
  for (const char *c = s; *c; c++) n += *c == ',';
  double *p = hs_malloc(n * sizeof *p);
  const char *at = s;
  for (size_t i = 0; i < n; i++) {
    const char *comma = strchr(at, ',');
    size_t len = comma ? (size_t)(comma - at) : strlen(at);
    char item[64];
    if (len == 0 || len >= sizeof item) {
      snprintf(msg, sizeof msg, "--p: item %zu is %s (expected numbers like 0.1,0.25,0.4)", i,
               len ? "too long" : "empty");
      *rc = fail(msg);
      hs_free(p);
      return NULL;
    }
    memcpy(item, at, len);
    item[len] = '\0';
    if (!parse_double(item, &p[i])) {
      snprintf(msg, sizeof msg, "--p: item %zu \"%s\" is not a number", i, item);
      *rc = fail(msg);
      hs_free(p);
      return NULL;
    }
    at += len + 1;
  }
  *k = n;
  return p;
}

static void put_num(FILE *f, double v) {
  if (v == 0.0) v = 0.0; /* no "-0" */
  fprintf(f, "%.12g", v);
}

static void put_vec(FILE *f, const char *key, const double *v, size_t k) {
  fprintf(f, "  \"%s\": [", key);
  for (size_t i = 0; i < k; i++) {
    if (i) fputs(", ", f);
    put_num(f, v[i]);
  }
  fputs("],\n", f);
}

static void put_ivec(FILE *f, const char *key, const int64_t *v, size_t k) {
  fprintf(f, "  \"%s\": [", key);
  for (size_t i = 0; i < k; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
  fputs("],\n", f);
}

static void put_layout(FILE *f, const char *key, const hs_agc_layout *L, size_t k, bool last) {
  fprintf(f, "    \"%s\": [\n", key);
  for (size_t i = 0; i < k; i++) {
    fputs("      [", f);
    for (size_t e = L->row[i]; e < L->row[i + 1]; e++) {
      fprintf(f, "%s[%zu, ", e > L->row[i] ? ", " : "", L->col[e]);
      put_num(f, L->coef[e]);
      fputc(']', f);
    }
    fprintf(f, "]%s\n", i + 1 < k ? "," : "");
  }
  fprintf(f, "    ]%s\n", last ? "" : ",");
}

static void put_plan(FILE *f, const hs_agc_plan *P) {
  fprintf(f, "{\n  \"allocator\": \"%s\",\n  \"workers\": %zu,\n  \"partitions\": %zu,\n",
          hs_agc_allocator_name(P->allocator), P->k, P->n);
  fputs("  \"d\": ", f);
  put_num(f, P->d);
  fprintf(f, ",\n  \"z_res\": %lld,\n  \"offset\": %d,\n  \"lambda\": ", (long long)P->z_res, P->offset);
  put_num(f, P->lambda);
  fputs(",\n", f);
  put_ivec(f, "bits", P->bits, P->k);
  put_ivec(f, "wire_bits", P->wire_bits, P->k);
  put_vec(f, "shares", P->shares, P->k);
  fputs("  \"layout\": {\n", f);
  put_layout(f, "shared", &P->shared, P->k, false);
  put_layout(f, "stair", &P->stair, P->k, true);
  fputs("  },\n", f);
  put_vec(f, "weights", P->weights, P->k);
  put_vec(f, "weights_lane2", P->weights_lane2, P->k);
  const char *keys[4] = {"kappa", "objective", "sum_c_inv", "predicted_error"};
  const double vals[4] = {P->kappa, P->objective, P->sum_c_inv, P->predicted_error};
  for (int i = 0; i < 4; i++) {
    fprintf(f, "  \"%s\": ", keys[i]);
    put_num(f, vals[i]);
    fputs(i < 3 ? ",\n" : "\n}\n", f);
  }
}

int hs_cmd_agc_plan(int argc, char **argv) {
  static const struct option longopts[] = {
      {"p", required_argument, NULL, 'p'},         {"d", required_argument, NULL, 'd'},
      {"z-res", required_argument, NULL, 'z'},     {"allocator", required_argument, NULL, 'a'},
      {"offset", required_argument, NULL, 'o'},    {"partitions", required_argument, NULL, 'n'},
      {"lambda", required_argument, NULL, 'l'},    {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *p_arg = NULL, *d_arg = NULL, *z_arg = NULL, *alloc_arg = "lag";
  const char *off_arg = "1", *n_arg = NULL, *lam_arg = "1";
  char msg[HS_ERROR_MSG_MAX + 64];
  opterr = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
      case 'p': p_arg = optarg; break;
      case 'd': d_arg = optarg; break;
      case 'z': z_arg = optarg; break;
      case 'a': alloc_arg = optarg; break;
      case 'o': off_arg = optarg; break;
      case 'n': n_arg = optarg; break;
      case 'l': lam_arg = optarg; break;
      case 'h': usage(stdout); return 0;
      case ':':
        snprintf(msg, sizeof msg, "%.100s: missing value (see hetsim agc-plan --help)", argv[optind - 1]);
        return fail(msg);
      default:
        snprintf(msg, sizeof msg, "%.100s: unknown option (see hetsim agc-plan --help)", argv[optind - 1]);
        return fail(msg);
    }
  }
  if (optind < argc) {
    snprintf(msg, sizeof msg, "\"%.100s\": unexpected argument (see hetsim agc-plan --help)", argv[optind]);
    return fail(msg);
  }
  if (!p_arg || !d_arg || !z_arg) {
    snprintf(msg, sizeof msg, "%s: required (see hetsim agc-plan --help)",
             !p_arg ? "--p" : !d_arg ? "--d" : "--z-res");
    return fail(msg);
  }
  hs_agc_params pr;
  hs_agc_params_init(&pr);
  long long z, off, n = 0;
  if (!parse_double(d_arg, &pr.d)) {
    snprintf(msg, sizeof msg, "--d: \"%.60s\" is not a number", d_arg);
    return fail(msg);
  }
  if (!parse_int(z_arg, &z)) {
    snprintf(msg, sizeof msg, "--z-res: \"%.60s\" is not a whole number", z_arg);
    return fail(msg);
  }
  if (!parse_int(off_arg, &off) || (off != 1 && off != 2)) {
    snprintf(msg, sizeof msg, "--offset: \"%.60s\" must be 1 (paper-consistent) or 2 (as the public code)",
             off_arg);
    return fail(msg);
  }
  if (n_arg && (!parse_int(n_arg, &n) || n < 1)) {
    snprintf(msg, sizeof msg, "--partitions: \"%.60s\" is not a whole number >= 1", n_arg);
    return fail(msg);
  }
  if (!parse_double(lam_arg, &pr.lambda)) {
    snprintf(msg, sizeof msg, "--lambda: \"%.60s\" is not a number", lam_arg);
    return fail(msg);
  }
  hs_error err = {0};
  if (hs_agc_allocator_lookup(alloc_arg, &pr.allocator, &err) != HS_OK) return fail(err.msg);
  int rc = HS_EXIT_BADINPUT;
  size_t k;
  double *p = parse_list(p_arg, &k, &rc);
  if (!p) return rc;
  pr.p = p;
  pr.k = k;
  pr.z_res = z;
  pr.offset = (int)off;
  pr.partitions = (size_t)n;
  hs_agc_plan *P = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = NULL;
  P = hs_agc_plan_create(&pr, &err);
  if (!P) {
    rc = fail(err.msg);
    goto done;
  }
  mem = open_memstream(&buf, &len);
  if (!mem) {
    fputs("hetsim agc-plan: cannot open an output buffer\n", stderr);
    rc = 1;
    goto done;
  }
  put_plan(mem, P);
  rc = cli_close_buffer("agc-plan", &mem);
  if (rc == 0) rc = cli_write_stdout("agc-plan", buf, len);
done:
  if (mem) fclose(mem);
  free(buf);
  hs_agc_plan_destroy(P);
  hs_free(p);
  return rc;
}
