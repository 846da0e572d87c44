/* test_status.c: the status table and error messages. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>

#include "hs_alloc.h"
#include "hs_status.h"

Test(status, strings_come_from_the_table) {
  cr_assert_str_eq(hs_status_str(HS_OK), "ok");
  cr_assert_str_eq(hs_status_str(HS_EKEY), "unknown key");
  cr_assert_str_eq(hs_status_str((hs_status)-999), "unknown status");
  cr_assert_eq(HS_OK, 0);
  cr_assert_lt(HS_EINVAL, 0);
}

Test(status, error_set_and_prefix_name_the_place) {
  hs_error err;
  hs_error_clear(&err);
  cr_assert_eq(hs_error_set(&err, HS_ENOENT, "devices[%d].profile: no profile \"%s\"", 3, "rpi9"),
               HS_ENOENT);
  hs_error_prefix(&err, "%s", "scenario.json");
  cr_assert_str_eq(err.msg, "scenario.json: devices[3].profile: no profile \"rpi9\"");
  cr_assert_eq(err.status, HS_ENOENT);
  hs_error_set(&err, HS_EIO, NULL);
  cr_assert_str_eq(err.msg, "input/output error");
  cr_assert_eq(hs_error_set(NULL, HS_EINVAL, "ignored"), HS_EINVAL);
}

Test(status, long_messages_are_truncated_not_overflowed) {
  hs_error err;
  char big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  hs_error_set(&err, HS_EINVAL, "%s", big);
  cr_assert_eq(strlen(err.msg), HS_ERROR_MSG_MAX - 1);
  hs_error_prefix(&err, "%s", big);
  cr_assert_eq(strlen(err.msg), HS_ERROR_MSG_MAX - 1);
}

Test(status, alloc_wrappers) {
  char *s = hs_strdup("hetsim");
  cr_assert_str_eq(s, "hetsim");
  s = hs_realloc(s, 100);
  cr_assert_str_eq(s, "hetsim");
  hs_free(s);
  cr_assert_not_null(hs_malloc(0) ? (void *)1 : NULL);
}

Test(status, out_of_memory_aborts, .signal = SIGABRT) {
  hs_reallocarray(NULL, SIZE_MAX / 2, 4);
}
