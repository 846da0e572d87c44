/* [policies/include/base -> hetsim::status; installed: include/hetsim/base/, -lhetsim-policies]
 * hs_status.h: one status enum for all of hetsim, and an error record that
 * carries a message naming the place (file, JSON path or CSV line) and the reason.
 *
 * Convention for messages:  "<file>: <where>: <reason>", e.g.
 *   scenario.json: devices[3].profile: no profile "rpi9"
 *   telemetry.csv: line 12: time_s: not a finite number
 * The caller that knows the file prefixes it; inner layers fill <where>: <reason>.
 *
 * Lives in policies/base because policies/ must link alone on a board and every
 * other folder already depends on it. */
#ifndef HS_STATUS_H
#define HS_STATUS_H

#include <stddef.h>

/* X(name, value, text). The enum and hs_status_str come from this one table. */
#define HS_STATUS_MAP(X)                                            \
  X(OK,        0, "ok")                                             \
  X(EINVAL,   -1, "invalid value")                                  \
  X(ENOENT,   -2, "not found")                                      \
  X(EIO,      -3, "input/output error")                             \
  X(EPARSE,   -4, "malformed input")                                \
  X(ERANGE,   -5, "value out of range")                             \
  X(EKEY,     -6, "unknown key")                                    \
  X(ETYPE,    -7, "wrong type")                                     \
  X(EMISSING, -8, "missing required field")                         \
  X(EPERM,    -9, "permission denied")                              \
  X(EUNSUP,  -10, "not supported")                                  \
  X(ESTATE,  -11, "operation not valid in this state")                \
  X(ENOMEM,  -12, "not enough memory")

typedef enum hs_status {
#define HS_STATUS_ENUM_(name, value, text) HS_##name = value,
  HS_STATUS_MAP(HS_STATUS_ENUM_)
#undef HS_STATUS_ENUM_
} hs_status;

/* Static string for a status; "unknown status" for values outside the table. */
const char *hs_status_str(hs_status st);

/* Exit status every command uses for bad input. */
#define HS_EXIT_BADINPUT 2
/* Exit status for what cannot be read or written, or not enough memory
 * (HS_EIO, HS_EPERM, HS_ENOMEM). */
#define HS_EXIT_CANNOT 1

#define HS_ERROR_MSG_MAX 512

/* An error record that callers embed (open, init by zeroing). */
typedef struct hs_error {
  hs_status status;
  char msg[HS_ERROR_MSG_MAX];
} hs_error;

/* Record status and a printf-style message in *err (err may be NULL). The
 * message is always one line: control bytes that reach it are rendered as
 * hs_quote does (\n, \xNN), the last line of defence for a reader that quoted
 * input raw.
 * Returns st so callers can write: return hs_error_set(err, HS_EINVAL, "...").
 * When the message is empty the status string is used. */
hs_status hs_error_set(hs_error *err, hs_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prepend "prefix: " to an existing message (e.g. the file name once known). */
void hs_error_prefix(hs_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Input quoted in a message, made safe to print on one line: control bytes
 * become \n \r \t or \xNN, bytes that are not UTF-8 \xNN, and text past
 * HS_QUOTE_MAX input bytes is cut with "...". Writes into buf (cap bytes,
 * HS_QUOTE_BUF is always enough) and returns buf. Use it wherever a message
 * echoes what a user or a file supplied: "%s" of hs_quote(q, sizeof q, name). */
#define HS_QUOTE_MAX 60
#define HS_QUOTE_BUF (4 * HS_QUOTE_MAX + 8)
const char *hs_quote(char *buf, size_t cap, const char *text);

/* Reset to HS_OK with an empty message. */
void hs_error_clear(hs_error *err);

#endif
