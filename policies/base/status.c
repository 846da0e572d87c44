/* status.c: strings for hs_status from the single HS_STATUS_MAP table, the
 * error record helpers, and hs_quote. Messages are truncated, never
 * overflowed, and one line (control bytes escaped): the CLI prints each as its
 * one stderr line. O(message length) per call. */
#include "base/hs_status.h"

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

/* Length of the valid UTF-8 sequence at p (2-4), or 0. */
static size_t utf8_len(const unsigned char *p) {
  size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
  if (p[0] >= 0xf5) n = 0;
  for (size_t i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  return n;
}

/* Escape into out (cap >= 1) from text, at most maxin input bytes (0: all);
 * high bytes are checked as UTF-8 only when utf8 is set. */
static void escape(char *out, size_t cap, const char *text, size_t maxin, int utf8) {
  size_t o = 0;
  const unsigned char *p = (const unsigned char *)text;
  size_t i = 0;
  for (; p[i] && (!maxin || i < maxin); i++) {
    char e[8];
    size_t n = 0, adv = 1;
    unsigned c = p[i];
    if (c == '\n') n = (size_t)snprintf(e, sizeof e, "\\n");
    else if (c == '\r') n = (size_t)snprintf(e, sizeof e, "\\r");
    else if (c == '\t') n = (size_t)snprintf(e, sizeof e, "\\t");
    else if (c < 0x20 || c == 0x7f) n = (size_t)snprintf(e, sizeof e, "\\x%02x", c);
    else if (c >= 0x80 && utf8 && (adv = utf8_len(p + i)) == 0) {
      n = (size_t)snprintf(e, sizeof e, "\\x%02x", c);
      adv = 1;
    } else {
      if (c < 0x80) adv = 1;
      n = adv;
      memcpy(e, p + i, adv);
    }
    if (o + n + 1 > cap) break;
    memcpy(out + o, e, n);
    o += n;
    i += adv - 1;
  }
  if (maxin && p[i] && o + 4 <= cap) {
    memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
}

const char *hs_quote(char *buf, size_t cap, const char *text) {
  if (!buf || !cap) return "";
  escape(buf, cap, text ? text : "", HS_QUOTE_MAX, 1);
  return buf;
}

/* The message on one line: control bytes escaped in place (cut to fit). */
static void one_line(hs_error *err) {
  const char *m = err->msg;
  while (*m && (unsigned char)*m >= 0x20 && *m != 0x7f) m++;
  if (!*m) return;
  char tmp[HS_ERROR_MSG_MAX];
  escape(tmp, sizeof tmp, err->msg, 0, 0);
  memcpy(err->msg, tmp, sizeof tmp);
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
  one_line(err);
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
  one_line(err);
}

void hs_error_clear(hs_error *err) {
  if (!err) return;
  err->status = HS_OK;
  err->msg[0] = '\0';
}
