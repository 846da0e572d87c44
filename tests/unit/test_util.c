/* test_util.c: the libc-only helpers of hetsim::status (hs_util.h): path
 * joins, FNV-1a 64 known answers, whole-file reads, the NUL-byte check. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"

static void expect_join(const char *dir, const char *rel, const char *want) {
  char *got = hs_path_join(dir, rel);
  cr_expect_str_eq(got, want, "join(%s, %s)", dir ? dir : "NULL", rel);
  hs_free(got);
}

static void expect_dir(const char *path, const char *want) {
  char *got = hs_path_dir(path);
  cr_expect_str_eq(got, want, "dir(%s)", path);
  hs_free(got);
}

Test(util, path_join) {
  expect_join("scenarios", "traces/pi.csv", "scenarios/traces/pi.csv");
  expect_join("scenarios/", "pi.csv", "scenarios/pi.csv");
  expect_join("/", "etc", "/etc");
  expect_join("a/b", "/abs/x", "/abs/x");
  expect_join(".", "x.csv", "x.csv");
  expect_join("", "x.csv", "x.csv");
  expect_join(NULL, "x.csv", "x.csv");
}

Test(util, path_dir) {
  expect_dir("a/b/c.json", "a/b");
  expect_dir("c.json", ".");
  expect_dir("/c.json", "/");
  expect_dir("/a/c.json", "/a");
  expect_dir("a/", "a");
}

Test(util, fnv1a64_known_answers) {
  /* Reference values of the FNV-1a 64 specification. */
  cr_expect_eq(hs_fnv1a64_str(""), 0xcbf29ce484222325ULL);
  cr_expect_eq(hs_fnv1a64_str("a"), 0xaf63dc4c8601ec8cULL);
  cr_expect_eq(hs_fnv1a64_str("foobar"), 0x85944171f73967e8ULL);
  /* Incremental: pieces give the hash of the whole. */
  uint64_t h = hs_fnv1a64(HS_FNV1A64_INIT, "foo", 3);
  cr_expect_eq(hs_fnv1a64(h, "bar", 3), 0x85944171f73967e8ULL);
}

Test(util, read_file_reports_length_past_nul) {
  char path[] = "/tmp/hs-util-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  cr_assert_eq(write(fd, "ab\0cd\n", 6), 6);
  close(fd);
  hs_error err = {0};
  size_t len = 0;
  char *t = hs_read_file(path, &len, &err);
  cr_assert_not_null(t, "%s", err.msg);
  cr_expect_eq(len, 6);
  cr_expect_eq(t[6], '\0');
  cr_expect_eq(memcmp(t, "ab\0cd\n", 6), 0);
  cr_expect_eq(hs_text_check_nul(t, len, "x.json", &err), HS_EPARSE);
  cr_expect_str_eq(err.msg, "x.json: line 1: contains a NUL byte");
  hs_free(t);
  unlink(path);
  cr_expect_null(hs_read_file("/nonexistent/hs/f", NULL, &err));
  cr_expect_eq(err.status, HS_ENOENT);
  cr_expect_str_eq(err.msg, "/nonexistent/hs/f: cannot open: No such file or directory");
  cr_expect_null(hs_read_file("/tmp", NULL, &err));
  cr_expect_str_eq(err.msg, "/tmp: is a folder, not a file");
}

Test(util, nul_check_names_the_line) {
  hs_error err = {0};
  cr_expect_eq(hs_text_check_nul("{}\n", 3, "s.json", &err), HS_OK);
  cr_expect_eq(hs_text_check_nul("", 0, "s.json", &err), HS_OK);
  static const char text[] = "{\n\"a\": 1\n}\n\0garbage";
  cr_expect_eq(hs_text_check_nul(text, sizeof text - 1, "s.json", &err), HS_EPARSE);
  cr_expect_str_eq(err.msg, "s.json: line 4: contains a NUL byte");
  cr_expect_eq(hs_text_check_nul("\0", 1, "s.json", &err), HS_EPARSE);
  cr_expect_str_eq(err.msg, "s.json: line 1: contains a NUL byte");
}
