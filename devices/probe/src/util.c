/* util.c: small-file readers rooted at a configurable folder, clocks and
 * atomic file writes for the harness. (Status codes and allocation come from
 * hetsim::status, which is libc only like the rest of the harness.) Sysfs files are read whole with
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

char *probe_xasprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  char *s = hs_malloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

char *probe_path(const char *root, const char *path) {
  if (!root || !root[0] || (root[0] == '/' && root[1] == '\0')) return hs_strdup(path);
  size_t rl = strlen(root);
  while (rl > 1 && root[rl - 1] == '/') rl--;
  return probe_xasprintf("%.*s%s%s", (int)rl, root, path[0] == '/' ? "" : "/", path);
}

static hs_status probe_errno_status(int e) {
  if (e == ENOENT || e == ENOTDIR || e == ENODEV || e == ENXIO) return HS_ENOENT;
  if (e == EACCES || e == EPERM) return HS_EPERM;
  return HS_EIO;
}

hs_status probe_read_file(const char *path, unsigned char **data, size_t *len, hs_error *err) {
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    return hs_error_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
  }
  size_t cap = 4096, n = 0;
  unsigned char *buf = hs_malloc(cap + 1);
  for (;;) {
    if (n == cap) {
      cap *= 2;
      buf = hs_realloc(buf, cap + 1);
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      free(buf);
      return hs_error_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return HS_OK;
}

hs_status probe_read_line(const char *path, char *buf, size_t cap, hs_error *err) {
  buf[0] = '\0';
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    return hs_error_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
  }
  ssize_t r;
  do r = read(fd, buf, cap - 1);
  while (r < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (r < 0) return hs_error_set(err, probe_errno_status(e), "%s: %s", path, strerror(e));
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

bool probe_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

hs_status probe_write_atomic(const char *path, const char *text, size_t len, hs_error *err) {
  char *tmp = probe_xasprintf("%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    int e = errno;
    hs_error_set(err, probe_errno_status(e), "%s: cannot create: %s", path, strerror(e));
    free(tmp);
    return err ? err->status : HS_EIO;
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
      return hs_error_set(err, HS_EIO, "%s: write failed: %s", path, strerror(e));
    }
    off += (size_t)w;
  }
  int bad = fsync(fd) != 0;
  bad |= close(fd) != 0;
  if (bad || rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    free(tmp);
    return hs_error_set(err, HS_EIO, "%s: cannot finish writing: %s", path, strerror(e));
  }
  free(tmp);
  return HS_OK;
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
