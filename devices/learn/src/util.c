/* util.c: the file helpers the data readers and the synthetic writers need
 * (moved here from the board harness, which now calls these): whole-file
 * read, existence check, formatted heap strings, atomic write (temporary
 * name in the same folder, fsync, rename: never a half-written file), and
 * the monotonic clock the harness and the benchmark time with.
 * Rejected: stdio for reads (a sysfs file read in two pieces can mix two
 * values; the harness reads sysfs through lrn_read_file too). */
#include "learn/hs_learn_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

char *lrn_xasprintf(const char *fmt, ...) {
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

hs_status lrn_errno_status(int e) {
  if (e == ENOENT || e == ENOTDIR || e == ENODEV || e == ENXIO) return HS_ENOENT;
  if (e == EACCES || e == EPERM) return HS_EPERM;
  return HS_EIO;
}

hs_status lrn_read_file(const char *path, unsigned char **data, size_t *len, hs_error *err) {
  *data = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    return hs_error_set(err, lrn_errno_status(e), "%s: %s", path, strerror(e));
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
      return hs_error_set(err, lrn_errno_status(e), "%s: %s", path, strerror(e));
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

bool lrn_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

hs_status lrn_write_atomic(const char *path, const char *text, size_t len, hs_error *err) {
  char *tmp = lrn_xasprintf("%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    int e = errno;
    hs_error_set(err, lrn_errno_status(e), "%s: cannot create: %s", path, strerror(e));
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

double lrn_now_mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
