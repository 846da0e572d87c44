/* test_sweep_input.c: the sweep's inputs at scale and in bad shape: a
 * 10^5-value --grid list (issue 16, defect 5: it was quadratic), the first
 * repeated value named as a pairwise scan names it, and a results file with
 * NUL bytes refused on --resume (issue 16, defect 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/hs_alloc.h"
#include "sim/hs_sweep.h"

#define TINY HS_SOURCE_DIR "/tests/data/sweep/tiny.json"
#define BIG 100000

/* "x=0,1,...,n-1" with value `dup_at` replaced by `dup_of`'s text when >= 0. */
static char *big_list(size_t n, long dup_at, long dup_of) {
  char *s = hs_malloc(16 + n * 8), *w = s;
  w += sprintf(w, "x=");
  for (size_t i = 0; i < n; i++)
    w += sprintf(w, "%s%ld", i ? "," : "", (long)i == dup_at ? dup_of : (long)i);
  return s;
}

Test(sweep_grid_scale, list_of_1e5_values) {
  char *spec = big_list(BIG, -1, -1);
  hs_sweep_axis a;
  hs_error err = {0};
  cr_assert_eq(hs_sweep_axis_parse(spec, &a, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(a.nvalues, BIG);
  cr_expect_str_eq(a.key, "x");
  cr_expect_str_eq(a.values[0], "0");
  cr_expect_str_eq(a.values[BIG - 1], "99999");
  cr_expect_str_eq(a.values[4321], "4321");
  hs_sweep_axis_fini(&a);
  hs_free(spec);
}

Test(sweep_grid_scale, repeat_in_1e5_values_is_named) {
  /* value 99998 written as "17": the repeat is found however far apart */
  char *spec = big_list(BIG, 99998, 17);
  hs_sweep_axis a;
  hs_error err = {0};
  cr_assert_eq(hs_sweep_axis_parse(spec, &a, &err), HS_EINVAL);
  cr_expect(strstr(err.msg, ": value \"17\" appears twice"), "%s", err.msg);
  cr_expect_eq(a.nvalues, 0, "nothing kept on error");
  hs_free(spec);
}

Test(sweep_grid_scale, first_repeat_in_list_order) {
  /* "b" repeats at position 2, before "a" repeats at 3: the message names b,
   * as the pairwise check did (sorting must not change which one is named) */
  const char *cases[][2] = {{"k=b,a,b,a", "\"b\""}, {"k=a,c,c,a", "\"c\""},
                            {"k=z,y,x,y,z", "\"y\""}, {"k=1,1", "\"1\""}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    hs_sweep_axis a;
    hs_error err = {0};
    cr_assert_eq(hs_sweep_axis_parse(cases[i][0], &a, &err), HS_EINVAL, "%s", cases[i][0]);
    char want[64];
    snprintf(want, sizeof want, "value %s appears twice", cases[i][1]);
    cr_expect(strstr(err.msg, want), "%s: %s", cases[i][0], err.msg);
  }
  hs_sweep_axis a;
  hs_error err = {0};
  cr_expect_eq(hs_sweep_axis_parse("k=a,b,ab,ba", &a, &err), HS_OK, "%s", err.msg);
  cr_expect_eq(a.nvalues, 4);
  hs_sweep_axis_fini(&a);
}

/* A results file whose tail a crash left zero-filled used to be read up to
 * the zeros, which were cut off as a "torn line": rows could vanish silently.
 * Now --resume refuses it and names the line. */
Test(sweep_file_input, nul_bytes_refused_on_resume) {
  const char *grids[] = {"policy.w_e=0,0.5"};
  hs_sweep_spec spec = {TINY, NULL, 0, NULL, grids, 1, "1"};
  hs_error err = {0};
  hs_sweep *sw = hs_sweep_create(&spec, &err);
  cr_assert(sw, "%s", err.msg);
  char path[256];
  snprintf(path, sizeof path, "%s/test_sweep_input_%ld.csv", HS_BINARY_DIR, (long)getpid());
  FILE *fp = fopen(path, "wb");
  cr_assert(fp);
  fputs(hs_sweep_header(sw), fp);
  fputs(hs_sweep_columns(sw), fp);
  fputs("0,0,1,10,20,5,5,10,0.1,0.2\n", fp);
  fwrite("\0\0\0\0\0\0\0\0", 1, 8, fp);
  fclose(fp);
  bool done[2] = {false, false};
  cr_expect_null(hs_sweep_file_open(sw, path, true, done, &err));
  cr_expect_eq(err.status, HS_EPARSE);
  char want[300];
  snprintf(want, sizeof want, "%s: line 4: contains a NUL byte", path);
  cr_expect_str_eq(err.msg, want);
  /* The same file without the zeros resumes, with row 0 done. */
  cr_assert_eq(truncate(path, (off_t)(strlen(hs_sweep_header(sw)) + strlen(hs_sweep_columns(sw)) +
                                      strlen("0,0,1,10,20,5,5,10,0.1,0.2\n"))),
               0);
  hs_sweep_file *f = hs_sweep_file_open(sw, path, true, done, &err);
  cr_assert(f, "%s", err.msg);
  cr_expect(done[0] && !done[1]);
  hs_sweep_file_close(f, NULL);
  unlink(path);
  hs_sweep_destroy(sw);
}
