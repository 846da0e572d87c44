/* util.c: small-file readers rooted at a configurable folder and the
 * real-time clock for the harness; the whole-file reader, the atomic writer
 * and the monotonic clock are the learner library's (devices/learn), kept
 * here under the harness's names. Status codes and allocation come from
 * hetsim::status, which is libc only like the rest of the harness. Sysfs
 * files are read whole with one read(): they are a page at most and a second
 * read could see a newer value (rejected: stdio, which may split the read). */
#include "probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *probe_path(const char *root, const char *path) {
  if (!root || !root[0] || (root[0] == '/' && root[1] == '\0')) return hs_strdup(path);
  size_t rl = strlen(root);
  while (rl > 1 && root[rl - 1] == '/') rl--;
  return probe_xasprintf("%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
}



hs_status probe_read_line(const char *path, char *buf, size_t cap, hs_error *err) {
  buf[0] = '\0';
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    return hs_error_set(err, lrn_errno_status(e), "%s: %s", path, strerror(e));
  }
  ssize_t r;
  do r = read(fd, buf, cap - 1);
  while (r < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (r < 0) return hs_error_set(err, lrn_errno_status(e), "%s: %s", path, strerror(e));
  buf[r] = '\0';
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  size_t n = strlen(buf);
  while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r')) buf[--n] = '\0';
  return HS_OK;
}

hs_status probe_read_i64(const char *path, int64_t *out, hs_error *err) {
  char buf[64];
  hs_status st = probe_read_line(path, buf, sizeof buf, err);
  if (st != HS_OK) return st;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (end == buf || *end != '\0' || errno == ERANGE)
    return hs_error_set(err, HS_EPARSE, "%s: not an integer: \"%.40s\"", path, buf);
  *out = (int64_t)v;
  return HS_OK;
}

double probe_now_mono(void) { return lrn_now_mono(); }

double probe_now_real(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The file helpers moved to the learner library (devices/learn/src/util.c);
 * the harness keeps its names for them. */
hs_status probe_read_file(const char *path, unsigned char **data, size_t *len, hs_error *err) {
  return lrn_read_file(path, data, len, err);
}
bool probe_exists(const char *path) { return lrn_exists(path); }
hs_status probe_write_atomic(const char *path, const char *text, size_t len, hs_error *err) {
  return lrn_write_atomic(path, text, len, err);
}

hs_status probe_gunzip(const unsigned char *in, size_t inlen, size_t max_out,
                       unsigned char **out, size_t *outlen, hs_error *err) {
  return lrn_gunzip(in, inlen, max_out, out, outlen, err);
}
hs_status probe_synth_era5(const char *path, size_t rows, uint64_t seed, hs_error *err) {
  return lrn_synth_era5(path, rows, seed, err);
}
hs_status probe_synth_imdb(const char *dir, size_t docs, uint64_t seed, hs_error *err) {
  return lrn_synth_imdb(dir, docs, seed, err);
}

int probe_vsay(int rc, const char *who, const char *fmt, va_list ap) {
  char msg[HS_ERROR_MSG_MAX + 512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  for (char *c = msg; *c; c++)
    if (*c == '\n') *c = ' '; /* one line, always */
  fprintf(stderr, "hetsim-probe%s%s: %s\n", who && *who ? " " : "", who ? who : "", msg);
  return rc;
}
