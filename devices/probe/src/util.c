/* util.c: the harness's own status strings, aborting allocation, small-file
 * readers rooted at a configurable folder, clocks and atomic file writes.
 *
 * Why its own: the harness must build on a bare board with libc, libm and
 * pthreads, so it cannot link hetsim::base (which pulls in GSL). The status
 * values and the message style match hs_status.h on purpose.
 * Messages are truncated, never overflowed. Sysfs files are read whole with
 * one read(): they are a page at most and a second read could see a newer
 * value (rejected: stdio, which may split the read). */
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

const char *probe_status_str(probe_status st) {
  switch (st) {
#define PROBE_STATUS_CASE_(name, value, text) \
  case PROBE_##name:                          \
    return text;
    PROBE_STATUS_MAP(PROBE_STATUS_CASE_)
#undef PROBE_STATUS_CASE_
  }
  return "unknown status";
}

probe_status probe_err_set(probe_err *err, probe_status st, const char *fmt, ...) {
  if (!err) return st;
  err->status = st;
  err->msg[0] = '\0';
  if (fmt && fmt[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  } else {
    snprintf(err->msg, sizeof err->msg, "%s", probe_status_str(st));
  }
  return st;
}

void probe_err_prefix(probe_err *err, const char *fmt, ...) {
  if (!err) return;
  char prefix[PROBE_MSG_MAX], old[PROBE_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  /* Truncation is fine (a long message stays a long message); say so to gcc
   * by building it piecewise. */
  size_t n = strnlen(prefix, sizeof err->msg / 2);
  memcpy(err->msg, prefix, n);
  err->msg[n] = ':';
  err->msg[n + 1] = ' ';
  size_t m = strnlen(old, sizeof err->msg - n - 3);
  memcpy(err->msg + n + 2, old, m);
  err->msg[n + 2 + m] = '\0';
}

static void *probe_oom(size_t n) {
  fprintf(stderr, "hetsim-probe: out of memory (%zu bytes)\n", n);
  abort();
}

void *probe_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  return p ? p : probe_oom(n);
}

void *probe_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  return p ? p : probe_oom(count * size);
}

void *probe_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  return q ? q : probe_oom(n);
}

char *probe_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = probe_xmalloc(n);
  memcpy(d, s, n);
  return d;
}

char *probe_xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char *s = probe_xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

char *probe_path(const char *root, const char *path) {
  if (!root || !root[0] || (root[0] == '/' && root[1] == '\0')) return probe_xstrdup(path);
  size_t rl = strlen(root);
  while (rl > 1 && root[rl - 1] == '/') rl--;
  return probe_xasprintf("%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
}

static probe_status probe_errno_status(int e) {
  if (e == ENOENT || e == ENOTDIR || e == ENODEV || e == ENXIO) return PROBE_ENOENT;
  if (e == EACCES || e == EPERM) return PROBE_EPERM;
  return PROBE_EIO;
}

probe_status probe_read_file(const char *path, unsigned char **data, size_t *len, probe_err *err) {
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    return probe_err_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
  }
  size_t cap = 4096, n = 0;
  unsigned char *buf = probe_xmalloc(cap + 1);
  for (;;) {
    if (n == cap) {
      cap *= 2;
      buf = probe_xrealloc(buf, cap + 1);
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      free(buf);
      return probe_err_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return PROBE_OK;
}

probe_status probe_read_line(const char *path, char *buf, size_t cap, probe_err *err) {
  buf[0] = '\0';
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    return probe_err_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
  }
  ssize_t r;
  do r = read(fd, buf, cap - 1);
  while (r < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (r < 0) return probe_err_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
  buf[r] = '\0';
  char *nl = strchr(buf, '\n');
  if (nl) *nl = '\0';
  size_t n = strlen(buf);
  while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r')) buf[--n] = '\0';
  return PROBE_OK;
}

probe_status probe_read_i64(const char *path, int64_t *out, probe_err *err) {
  char buf[64];
  probe_status st = probe_read_line(path, buf, sizeof buf, err);
  if (st != PROBE_OK) return st;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (end == buf || *end != '\0' || errno == ERANGE)
    return probe_err_set(err, PROBE_EPARSE, "%s: not an integer: \"%.40s\"", path, buf);
  *out = (int64_t)v;
  return PROBE_OK;
}

bool probe_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

probe_status probe_write_atomic(const char *path, const char *text, size_t len, probe_err *err) {
  char *tmp = probe_xasprintf("%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    int e = errno;
    probe_err_set(err, probe_errno_status(e), "%s: cannot create: %s", path, strerror(e));
    free(tmp);
    return err ? err->status : PROBE_EIO;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      free(tmp);
      return probe_err_set(err, PROBE_EIO, "%s: write failed: %s", path, strerror(e));
    }
    off += (size_t)w;
  }
  int bad = fsync(fd) != 0;
  bad |= close(fd) != 0;
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return probe_err_set(err, PROBE_EIO, "%s: cannot finish writing: %s", path, strerror(e));
  }
  free(tmp);
  return PROBE_OK;
}

double probe_now_mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double probe_now_real(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
