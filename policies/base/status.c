/* status.c: strings for hs_status from the single HS_STATUS_MAP table, and the
 * error record helpers. Messages are truncated, never overflowed. */
#include "hs_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *hs_status_str(hs_status st) {
  switch (st) {
#define HS_STATUS_CASE_(name, value, text) \
  case HS_##name:                          \
    return text;
    HS_STATUS_MAP(HS_STATUS_CASE_)
#undef HS_STATUS_CASE_
  }
  return "unknown status";
}

hs_status hs_error_set(hs_error *err, hs_status st, const char *fmt, ...) {
  if (!err) return st;
  err->status = st;
  err->msg[0] = '\0';
  if (fmt && fmt[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  } else {
    snprintf(err->msg, sizeof err->msg, "%s", hs_status_str(st));
  }
  return st;
}

void hs_error_prefix(hs_error *err, const char *fmt, ...) {
  if (!err) return;
  char prefix[HS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  char old[HS_ERROR_MSG_MAX];
  memcpy(old, err->msg, sizeof old);
  size_t n = strlen(prefix);
  if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
  memcpy(err->msg, prefix, n);
  err->msg[n] = ':';
  err->msg[n + 1] = ' ';
  size_t room = sizeof err->msg - n - 2;
  size_t m = strnlen(old, room - 1);
  memcpy(err->msg + n + 2, old, m);
  err->msg[n + 2 + m] = '\0';
}

void hs_error_clear(hs_error *err) {
  if (!err) return;
  err->status = HS_OK;
  err->msg[0] = '\0';
}
