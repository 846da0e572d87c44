/* test_outfile.c: atomic output files and whole-file reads. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "traces/hs_outfile.h"
#include "test_tmpdir.h"

static char dir[256];

static void setup(void) {
  cr_assert_not_null(test_mkdtemp(dir, "hs-outfile"));
}

static int count_entries(const char *d) {
  DIR *dp = opendir(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(dp)))
    if (de->d_name[0] != '.') n++;
  closedir(dp);
  return n;
}

Test(outfile, commit_renames_into_place, .init = setup) {
  char path[512];
  snprintf(path, sizeof path, "%s/a/b/out.csv", dir);
  char sub[512];
  snprintf(sub, sizeof sub, "%s/a/b", dir);
  hs_error err = {0};
  cr_assert_eq(hs_mkdir_p(sub, &err), HS_OK, "%s", err.msg);
  cr_assert_eq(hs_mkdir_p(sub, &err), HS_OK, "existing folder is fine");
  hs_outfile *f = hs_outfile_open(path, &err);
  cr_assert_not_null(f, "%s", err.msg);
  fprintf(hs_outfile_stream(f), "round,x\n1,2\n");
  cr_assert_eq(access(path, F_OK), -1, "not visible before commit");
  cr_assert_eq(hs_outfile_commit(f, &err), HS_OK);
  size_t len;
  char *got = hs_read_file(path, &len, &err);
  cr_assert_str_eq(got, "round,x\n1,2\n");
  cr_assert_eq(len, 12);
  hs_free(got);
  cr_assert_eq(count_entries(sub), 1, "no temporary left behind");
}

Test(outfile, abort_leaves_nothing, .init = setup) {
  char path[512];
  snprintf(path, sizeof path, "%s/x.json", dir);
  hs_error err = {0};
  hs_outfile *f = hs_outfile_open(path, &err);
  fprintf(hs_outfile_stream(f), "{half");
  hs_outfile_abort(f);
  cr_assert_eq(count_entries(dir), 0);
}

Test(outfile, atomic_write_replaces_whole_file, .init = setup) {
  char path[512];
  snprintf(path, sizeof path, "%s/s.json", dir);
  hs_error err = {0};
  cr_assert_eq(hs_write_file_atomic(path, "old contents that are long", 26, &err), HS_OK);
  cr_assert_eq(hs_write_file_atomic(path, "new", 3, &err), HS_OK);
  char *got = hs_read_file(path, NULL, &err);
  cr_assert_str_eq(got, "new");
  hs_free(got);
}

Test(outfile, errors_name_the_path, .init = setup) {
  hs_error err = {0};
  cr_assert_null(hs_read_file("/nonexistent/hs/file.json", NULL, &err));
  cr_assert_eq(err.status, HS_ENOENT);
  cr_assert(strstr(err.msg, "/nonexistent/hs/file.json") != NULL);
  cr_assert_null(hs_read_file(dir, NULL, &err));
  cr_assert(strstr(err.msg, "is a folder") != NULL, "%s", err.msg);
  cr_assert_null(hs_outfile_open("/nonexistent/hs/out.csv", &err));
  cr_assert(strstr(err.msg, "/nonexistent/hs/out.csv") != NULL);
  char file[512];
  snprintf(file, sizeof file, "%s/plain", dir);
  hs_write_file_atomic(file, "x", 1, &err);
  char below[600];
  snprintf(below, sizeof below, "%s/sub", file);
  cr_assert_neq(hs_mkdir_p(below, &err), HS_OK);
}
