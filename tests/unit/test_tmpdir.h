/* test_tmpdir.h: temporary folders for tests that write files, removed with
 * everything in them when the test process exits (Criterion runs each test in
 * a process of its own), so a test run leaves nothing behind in /tmp. */
#ifndef TEST_TMPDIR_H
#define TEST_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEST_TMPDIR_MAX 64
static char test_tmpdirs[TEST_TMPDIR_MAX][256];
static int test_ntmpdirs;

static void test_rm_tree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        test_rm_tree(sub);
      }
      closedir(d);
    }
    rmdir(path);
  } else {
    unlink(path);
  }
}

static void test_tmpdirs_cleanup(void) {
  for (int i = 0; i < test_ntmpdirs; i++) test_rm_tree(test_tmpdirs[i]);
  test_ntmpdirs = 0;
}

/* mkdtemp("/tmp/<prefix>-XXXXXX") into buf (at least 64 bytes); NULL on
 * failure. Removed at exit. */
static inline char *test_mkdtemp(char *buf, const char *prefix) {
  snprintf(buf, 64, "/tmp/%s-XXXXXX", prefix);
  if (!mkdtemp(buf)) return NULL;
  if (test_ntmpdirs == 0) atexit(test_tmpdirs_cleanup);
  if (test_ntmpdirs < TEST_TMPDIR_MAX) snprintf(test_tmpdirs[test_ntmpdirs++], 256, "%s", buf);
  return buf;
}

/* mkdtemp on the caller's template, removed at exit like the above. */
static inline char *test_mkdtemp_at(char *tmpl) {
  if (!mkdtemp(tmpl)) return NULL;
  if (test_ntmpdirs == 0) atexit(test_tmpdirs_cleanup);
  if (test_ntmpdirs < TEST_TMPDIR_MAX) snprintf(test_tmpdirs[test_ntmpdirs++], 256, "%s", tmpl);
  return tmpl;
}

#endif
