/* util.c: path joins, FNV-1a 64, whole-file reads and the NUL-byte check
 * (see hs_util.h). libc only, like the rest of hetsim::status.
 *
 * Whole-file reads go through stdio with a doubling buffer (O(bytes), at most
 * twice the file in memory while growing), not fstat's size: a pipe, a /proc
 * file or a file growing while read has no reliable size. A size limit stops
 * the reading one byte past it. One reader returns what went wrong
 * (hs_read_file_as) and hs_read_file words it; a caller with messages of its
 * own (device profiles) words the same faults itself. Rejected: mmap (no
 * NUL after the text, and a file truncated under us raises SIGBUS). */
#include "base/hs_util.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hs_alloc.h"

char *hs_path_join(const char *dir, const char *rel) {
  if (rel[0] == '/' || !dir || !dir[0] || !strcmp(dir, ".")) return hs_strdup(rel);
  size_t a = strlen(dir), b = strlen(rel);
  char *p = hs_malloc(a + b + 2);
  memcpy(p, dir, a);
  if (dir[a - 1] != '/') p[a++] = '/';
  memcpy(p + a, rel, b + 1);
  return p;
}

char *hs_path_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return hs_strdup(".");
  if (slash == path) return hs_strdup("/");
  size_t n = (size_t)(slash - path);
  char *d = hs_malloc(n + 1);
  memcpy(d, path, n);
  d[n] = '\0';
  return d;
}

uint64_t hs_fnv1a64(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

uint64_t hs_fnv1a64_str(const char *s) { return hs_fnv1a64(HS_FNV1A64_INIT, s, strlen(s)); }

hs_status hs_read_open_status(int errnum) {
  return errnum == ENOENT ? HS_ENOENT : errnum == EACCES ? HS_EPERM : HS_EIO;
}

char *hs_read_file_as(const char *path, size_t max_bytes, hs_read_result *r) {
  *r = (hs_read_result){0, HS_READ_OK, 0};
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    r->fault = HS_READ_CANNOT_OPEN;
    r->errnum = errno;
    return NULL;
  }
  struct stat sb;
  if (fstat(fileno(fp), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fclose(fp);
    r->fault = HS_READ_FOLDER;
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *buf = hs_malloc(cap);
  for (;;) {
    if (len + 1 >= cap) buf = hs_realloc(buf, cap *= 2);
    size_t want = cap - len - 1;
    if (max_bytes && want > max_bytes + 1 - len) want = max_bytes + 1 - len;
    size_t got = fread(buf + len, 1, want, fp);
    len += got;
    if (got == 0 || (max_bytes && len > max_bytes)) break;
  }
  if (max_bytes && len > max_bytes) r->fault = HS_READ_TOO_LARGE;
  else if (ferror(fp)) r->fault = HS_READ_FAILED;
  fclose(fp);
  if (r->fault) {
    hs_free(buf);
    return NULL;
  }
  buf[len] = '\0';
  r->len = len;
  return buf;
}

char *hs_read_file(const char *path, size_t *len_out, hs_error *err) {
  hs_read_result r;
  char *text = hs_read_file_as(path, 0, &r);
  if (r.fault == HS_READ_CANNOT_OPEN)
    hs_error_set(err, hs_read_open_status(r.errnum), "%s: cannot open: %s", path,
                 strerror(r.errnum));
  else if (r.fault == HS_READ_FOLDER)
    hs_error_set(err, HS_EINVAL, "%s: is a folder, not a file", path);
  else if (r.fault)
    hs_error_set(err, HS_EIO, "%s: read failed", path);
  if (text && len_out) *len_out = r.len;
  return text;
}

hs_status hs_text_check_nul(const char *text, size_t len, const char *origin, hs_error *err) {
  const char *nul = memchr(text, '\0', len);
  if (!nul) return HS_OK;
  size_t line = 1;
  for (const char *p = text; (p = memchr(p, '\n', (size_t)(nul - p))) != NULL; p++) line++;
  return hs_error_set(err, HS_EPARSE, "%s: line %zu: contains a NUL byte", origin, line);
}

/* --- nearest names ---------------------------------------------------------
 * Three rows of the dynamic programme on the stack (the row before the
 * previous one is what a swap of two neighbours looks back to): names are
 * short (keys, options, profiles), so O(|a| |b|) with |a|, |b| <= 63 is
 * nothing beside the message it serves. Rejected: a shared trie of every name
 * (each caller has a dozen candidates); plain Levenshtein (two swapped
 * letters, the commonest typo, cost 2: "rnu" was not near "run"). */
#define HS_EDIT_MAX 63

size_t hs_edit_distance(const char *a, const char *b) {
  size_t la = strnlen(a, HS_EDIT_MAX), lb = strnlen(b, HS_EDIT_MAX);
  size_t prev2[HS_EDIT_MAX + 1], prev[HS_EDIT_MAX + 1], cur[HS_EDIT_MAX + 1];
  for (size_t j = 0; j <= lb; j++) prev[j] = j;
#define LOW(s, k) tolower((unsigned char)(s)[k])
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (LOW(a, i - 1) != LOW(b, j - 1));
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
      if (i > 1 && j > 1 && LOW(a, i - 1) == LOW(b, j - 2) && LOW(a, i - 2) == LOW(b, j - 1) &&
          prev2[j - 2] + 1 < cur[j])
        cur[j] = prev2[j - 2] + 1; /* two neighbours swapped */
    }
#undef LOW
    memcpy(prev2, prev, (lb + 1) * sizeof *prev);
    memcpy(prev, cur, (lb + 1) * sizeof *prev);
  }
  return prev[lb];
}

const char *hs_nearest(const char *name, const char *const *cands, size_t n) {
  if (!name || !*name) return NULL;
  size_t len = strlen(name), limit = len / 3 > 1 ? len / 3 : 1;
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    if (!cands[i]) continue;
    if (!strcmp(cands[i], name)) return NULL;
    size_t d = hs_edit_distance(name, cands[i]);
    bool prefix = len >= 2 && !strncmp(cands[i], name, len); /* near, however long the rest */
    if ((d <= limit || prefix) && d < best_d) {
      best = cands[i];
      best_d = d;
    }
  }
  return best;
}

int hs_parse_count(const char *s, uint64_t *v) {
  if (!s || !*s) return 0;
  uint64_t x = 0;
  bool over = false;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return 0;
    uint64_t d = (uint64_t)(*s - '0');
    if (x > (UINT64_MAX - d) / 10) over = true;
    else x = 10 * x + d;
  }
  if (over) return -1;
  *v = x;
  return 1;
}
