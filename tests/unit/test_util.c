/* test_util.c: the libc-only helpers of hetsim::status (hs_util.h): path
 * joins, FNV-1a 64 known answers, whole-file reads, the NUL-byte check. */
#include <criterion/criterion.h>
#include <errno.h>
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

/* A temporary file of n bytes ('x'), its path in path[]. */
static void file_of(char *path, size_t n) {
  strcpy(path, "/tmp/hs-util-XXXXXX");
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  char buf[4096];
  memset(buf, 'x', sizeof buf);
  for (size_t done = 0; done < n;) {
    size_t k = n - done < sizeof buf ? n - done : sizeof buf;
    cr_assert_eq(write(fd, buf, k), (ssize_t)k);
    done += k;
  }
  close(fd);
}

/* The limit: a file of max_bytes bytes is read, one byte more is refused,
 * across the reader's buffer doublings (4096, 8192, ...); 0 is no limit. */
Test(util, read_file_limit) {
  static const size_t sizes[] = {0, 1, 4094, 4095, 4096, 4097, 10000, 65536};
  char path[32];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    file_of(path, n);
    hs_read_result r;
    char *t = hs_read_file_as(path, n ? n : 1, &r);
    cr_expect_not_null(t, "a file of %zu bytes under a limit of its size", n);
    cr_expect_eq(r.fault, HS_READ_OK);
    cr_expect_eq(r.len, n);
    if (t) cr_expect_eq(t[n], '\0');
    hs_free(t);
    if (n > 0) {
      t = hs_read_file_as(path, n - 1 ? n - 1 : 0, &r);
      if (n - 1 == 0) { /* limit 0: no limit */
        cr_expect_not_null(t);
      } else {
        cr_expect_null(t, "%zu bytes over a limit of %zu", n, n - 1);
        cr_expect_eq(r.fault, HS_READ_TOO_LARGE);
      }
      hs_free(t);
    }
    t = hs_read_file_as(path, 0, &r);
    cr_expect_eq(r.len, n, "no limit");
    hs_free(t);
    unlink(path);
  }
}

Test(util, read_file_faults) {
  hs_read_result r;
  cr_expect_null(hs_read_file_as("/nonexistent/hs/f", 10, &r));
  cr_expect_eq(r.fault, HS_READ_CANNOT_OPEN);
  cr_expect_eq(hs_read_open_status(r.errnum), HS_ENOENT);
  cr_expect_null(hs_read_file_as("/tmp", 10, &r));
  cr_expect_eq(r.fault, HS_READ_FOLDER);
  cr_expect_eq(hs_read_open_status(EACCES), HS_EPERM);
  cr_expect_eq(hs_read_open_status(EIO), HS_EIO);
}

/* --- nearest names (hs_edit_distance, hs_nearest) --------------------------- */

Test(util, edit_distance_known_answers) {
  cr_expect_eq(hs_edit_distance("", ""), 0);
  cr_expect_eq(hs_edit_distance("abc", ""), 3);
  cr_expect_eq(hs_edit_distance("kitten", "sitting"), 3);
  cr_expect_eq(hs_edit_distance("w_e", "we"), 1);
  cr_expect_eq(hs_edit_distance("flaw", "lawn"), 2);
  cr_expect_eq(hs_edit_distance("rpi-4", "rpi4"), 1);
  cr_expect_eq(hs_edit_distance("rnu", "run"), 1, "two neighbours swapped: one step");
  cr_expect_eq(hs_edit_distance("ab", "ba"), 1);
  cr_expect_eq(hs_edit_distance("ca", "abc"), 3, "optimal string alignment: no edit of a swapped pair");
}

Test(util, nearest_name_is_a_typo_or_a_prefix) {
  const char *c[] = {"--policy", "--policies", "--out", NULL, "--seed"};
  cr_expect_str_eq(hs_nearest("--pol", c, 5), "--policy", "a prefix: the shortest completion");
  cr_expect_str_eq(hs_nearest("--ot", c, 5), "--out");
  cr_expect_str_eq(hs_nearest("--sed", c, 5), "--seed");
  cr_expect_null(hs_nearest("--out", c, 5), "an exact name needs no suggestion");
  cr_expect_null(hs_nearest("--frobnicate", c, 5), "nothing close");
  cr_expect_null(hs_nearest("", c, 5));
  const char *p[] = {"rpi4", "rpi5", "jetson-orin-nano-cpu"};
  cr_expect_str_eq(hs_nearest("rpi-4", p, 3), "rpi4");
  cr_expect_str_eq(hs_nearest("jetson-orin-nano", p, 3), "jetson-orin-nano-cpu");
}

/* hs_parse_count: the readers' one rule for count fields. */
Test(util, parse_count_digits_only_up_to_2_64_minus_1) {
  uint64_t v = 7;
  cr_expect_eq(hs_parse_count("0", &v), 1);
  cr_expect_eq(v, 0);
  cr_expect_eq(hs_parse_count("18446744073709551615", &v), 1);
  cr_expect_eq(v, UINT64_MAX);
  v = 7;
  cr_expect_eq(hs_parse_count("18446744073709551616", &v), -1);
  cr_expect_eq(hs_parse_count("99999999999999999999999", &v), -1);
  cr_expect_eq(v, 7, "untouched on overflow");
  const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.0", NULL};
  for (int i = 0; bad[i]; i++) cr_expect_eq(hs_parse_count(bad[i], &v), 0, "\"%s\"", bad[i]);
  cr_expect_eq(hs_parse_count(NULL, &v), 0);
  cr_expect_eq(v, 7);
}
