/* outfile.c: write-to-temporary-then-rename output files and mkdir -p. The
 * temporary lives in the destination's folder so the rename never crosses file
 * systems. (Whole-file reads moved to policies/base/util.c, hs_util.h.) */
#include "traces/hs_outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hs_alloc.h"

struct hs_outfile {
  FILE *fp;
  char *path;
  char *tmp;
};

hs_outfile *hs_outfile_open(const char *path, hs_error *err) {
  size_t n = strlen(path);
  char *tmp = hs_malloc(n + 16);
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmp.XXXXXX", 12);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    hs_error_set(err, errno == EACCES ? HS_EPERM : HS_EIO, "%s: cannot create: %s", path,
                 strerror(errno));
    hs_free(tmp);
    return NULL;
  }
  fchmod(fd, 0644);
  FILE *fp = fdopen(fd, "w");
  if (!fp) {
    hs_error_set(err, HS_EIO, "%s: cannot open: %s", path, strerror(errno));
    close(fd);
    unlink(tmp);
    hs_free(tmp);
    return NULL;
  }
  hs_outfile *f = hs_malloc(sizeof *f);
  f->fp = fp;
  f->path = hs_strdup(path);
  f->tmp = tmp;
  return f;
}

FILE *hs_outfile_stream(hs_outfile *f) { return f->fp; }
const char *hs_outfile_path(const hs_outfile *f) { return f->path; }

static void outfile_free(hs_outfile *f) {
  hs_free(f->path);
  hs_free(f->tmp);
  hs_free(f);
}

hs_status hs_outfile_commit(hs_outfile *f, hs_error *err) {
  hs_status st = HS_OK;
  int failed = ferror(f->fp) != 0;
  if (fflush(f->fp) != 0) failed = 1;
  if (fclose(f->fp) != 0) failed = 1;
  if (failed) {
    st = hs_error_set(err, HS_EIO, "%s: write failed: %s", f->path, strerror(errno));
    unlink(f->tmp);
  } else if (rename(f->tmp, f->path) != 0) {
    st = hs_error_set(err, HS_EIO, "%s: cannot rename into place: %s", f->path, strerror(errno));
    unlink(f->tmp);
  }
  outfile_free(f);
  return st;
}

void hs_outfile_abort(hs_outfile *f) {
  if (!f) return;
  fclose(f->fp);
  unlink(f->tmp);
  outfile_free(f);
}

hs_status hs_write_file_atomic(const char *path, const char *data, size_t len, hs_error *err) {
  hs_outfile *f = hs_outfile_open(path, err);
  if (!f) return err ? err->status : HS_EIO;
  if (len && fwrite(data, 1, len, f->fp) != len) {
    hs_outfile_abort(f);
    return hs_error_set(err, HS_EIO, "%s: write failed", path);
  }
  return hs_outfile_commit(f, err);
}

hs_status hs_mkdir_p(const char *dir, hs_error *err) {
  char *p = hs_strdup(dir);
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
  for (char *s = p + 1;; s++) {
    char c = *s;
    if (c == '/' || c == '\0') {
      *s = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        hs_error_set(err, errno == EACCES ? HS_EPERM : HS_EIO, "%s: cannot create folder: %s",
                     p, strerror(errno));
        hs_free(p);
        return err ? err->status : HS_EIO;
      }
      struct stat sb;
      if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        hs_error_set(err, HS_EIO, "%s: exists and is not a folder", p);
        hs_free(p);
        return err ? err->status : HS_EIO;
      }
      *s = c;
      if (c == '\0') break;
    }
  }
  hs_free(p);
  return HS_OK;
}
