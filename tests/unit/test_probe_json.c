/* test_probe_json.c: the strict JSON reader/writer (json.c).
 * The cases live in devices/probe/cases/json.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_json::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_json, "json")

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe.h"

static char *many_keys(size_t n, const char *tail) {
  size_t cap = 16 * n + 64, len = 0;
  char *s = malloc(cap);
  cr_assert_not_null(s);
  s[len++] = '{';
  for (size_t i = 0; i < n; i++) len += (size_t)snprintf(s + len, cap - len, "%s\"k%zu\":0", i ? "," : "", i);
  len += (size_t)snprintf(s + len, cap - len, "%s}", tail);
  return s;
}

/* A corrupt or hostile --out file with 10^5 keys in one object kept the
 * harness busy for 18 s (10^6: half an hour) before it could say anything:
 * every key was compared with all earlier ones. */
Test(probe_json, many_keys_parse_in_n_log_n) {
  char *s = many_keys(100000, "");
  hs_error e = {HS_OK, ""};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  probe_json *j = probe_json_parse(s, strlen(s), &e);
  clock_gettime(CLOCK_MONOTONIC, &b);
  cr_assert_not_null(j, "%s", e.msg);
  cr_expect_eq(j->n, 100000);
  double secs = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
  cr_expect(secs < 3.0, "100000 keys took %.1f s", secs);
  probe_json_destroy(j);
  free(s);
}

Test(probe_json, duplicate_among_many_keys_names_its_offset) {
  /* the first repeated key in file order is the one reported, at its offset */
  char *s = many_keys(200, ",\"k150\":1,\"k20\":2");
  const char *dup = strstr(s, "\"k150\":1");
  cr_assert_not_null(dup);
  hs_error e = {HS_OK, ""};
  probe_json *j = probe_json_parse(s, strlen(s), &e);
  cr_expect_null(j);
  char want[64];
  snprintf(want, sizeof want, "offset %zu: duplicate key", (size_t)(dup - s));
  cr_expect(strstr(e.msg, want), "\"%s\" lacks \"%s\"", e.msg, want);
  probe_json_destroy(j);
  free(s);
}
