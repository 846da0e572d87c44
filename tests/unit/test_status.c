/* test_status.c: the status table and error messages. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_status.h"

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

/* issue 16: a message that echoes input is one line, whatever the input held. */
Test(status, messages_are_one_line) {
  hs_error err;
  hs_error_set(&err, HS_EINVAL, "devices[2].profile: \"1,\n onfive2\r\x01\" is neither");
  cr_assert_str_eq(err.msg, "devices[2].profile: \"1,\\n onfive2\\r\\x01\" is neither");
  hs_error_prefix(&err, "a\tb.json");
  cr_assert_str_eq(err.msg, "a\\tb.json: devices[2].profile: \"1,\\n onfive2\\r\\x01\" is neither");
  /* an escape that no longer fits is cut whole, never split */
  char big[HS_ERROR_MSG_MAX + 8];
  memset(big, 'x', sizeof big);
  big[HS_ERROR_MSG_MAX - 2] = '\n';
  big[sizeof big - 1] = '\0';
  hs_error_set(&err, HS_EINVAL, "%s", big);
  cr_assert_eq(strlen(err.msg), HS_ERROR_MSG_MAX - 2);
  cr_assert_null(strchr(err.msg, '\n'));
}

Test(status, quote_escapes_and_cuts) {
  char q[HS_QUOTE_BUF];
  cr_assert_str_eq(hs_quote(q, sizeof q, "jetson\rorin"), "jetson\\rorin");
  cr_assert_str_eq(hs_quote(q, sizeof q, "\xff\xfeok\x7f"), "\\xff\\xfeok\\x7f");
  cr_assert_str_eq(hs_quote(q, sizeof q, "caf\xc3\xa9"), "caf\xc3\xa9"); /* UTF-8 stays */
  cr_assert_str_eq(hs_quote(q, sizeof q, "\xc3("), "\\xc3(");             /* a broken sequence */
  char longer[200];
  memset(longer, 'a', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  hs_quote(q, sizeof q, longer);
  cr_assert_eq(strlen(q), HS_QUOTE_MAX + 3);
  cr_assert_str_eq(q + HS_QUOTE_MAX, "...");
  memset(longer, '\n', sizeof longer - 1); /* worst case: every byte grows */
  hs_quote(q, sizeof q, longer);
  cr_assert_eq(strlen(q), 2 * HS_QUOTE_MAX + 3);
  cr_assert_str_eq(hs_quote(q, 4, "abcdef"), "abc");
}
