/* test_run_helpers.h: what the whole-run test files share: a temporary
 * output folder (removed at exit, test_tmpdir.h) and a file of it read whole.
 * static inline, so a file that uses part of it compiles without
 * unused-function warnings. */
#ifndef TEST_RUN_HELPERS_H
#define TEST_RUN_HELPERS_H

#include <criterion/criterion.h>
#include <stdio.h>

#include "base/hs_alloc.h"
#include "base/hs_status.h"
#include "base/hs_util.h"
#include "test_tmpdir.h"

static inline char *tmpdir(void) {
  char buf[64];
  cr_assert_not_null(test_mkdtemp(buf, "hs-run"));
  return hs_strdup(buf);
}

static inline char *slurp(const char *dir, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  hs_error err = {0};
  char *t = hs_read_file(path, NULL, &err);
  cr_assert_not_null(t, "%s", err.msg);
  return t;
}

#endif
