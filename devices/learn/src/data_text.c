/* data_text.c: the imdb trainer's corpus in the aclImdb layout
 * (<dir>/pos/<id>_<rating>.txt and <dir>/neg/...), one UTF-8 review per file.
 *
 * Data structure: each review becomes an array of hashed unigram ids (FNV-1a
 * modulo LRN_IMDB_BUCKETS, the "hashing trick"), so no vocabulary has to be
 * built or stored. Invariants: every loaded review has >= 1 token; files are
 * taken in name order and pos/neg alternate so a prefix (max_docs) is balanced.
 * Complexity: O(total bytes). Rejected: a real vocabulary with a hash map
 * (more code, more memory on a 1 GB board, no gain for timing). */
#include "learn/hs_learn_parts.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

size_t lrn_tokenize(const char *text, uint32_t *ids, size_t cap) {
  size_t n = 0;
  const unsigned char *p = (const unsigned char *)text;
  while (*p && n < cap) {
    if (p[0] == '<' && strncmp((const char *)p, "<br />", 6) == 0) {
      p += 6;
      continue;
    }
    unsigned c = *p;
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '\'' || c >= 0x80;
    if (!word) {
      p++;
      continue;
    }
    uint32_t h = 2166136261u;
    while (*p) {
      c = *p;
      if (c >= 'A' && c <= 'Z') c += 32;
      else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '\'' || c >= 0x80)) break;
      h = (h ^ c) * 16777619u;
      p++;
    }
    ids[n++] = h % LRN_IMDB_BUCKETS;
  }
  return n;
}

/* Offset of the first invalid UTF-8 sequence, or len when valid. */
static size_t text_utf8_bad(const unsigned char *s, size_t len) {
  size_t i = 0;
  while (i < len) {
    unsigned c = s[i];
    size_t k = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 9;
    if (c == 0 || k == 9 || i + k >= len + (k == 0)) return i;
    for (size_t j = 1; j <= k; j++)
      if ((s[i + j] & 0xc0) != 0x80) return i;
    i += k + 1;
  }
  return len;
}

static int text_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.txt names in dir (heap). ENOENT when the folder is missing. */
static hs_status text_list(const char *dir, char ***names, size_t *n, hs_error *err) {
  *names = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return hs_error_set(err, HS_ENOENT, "%s: folder not found", dir);
  size_t cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".txt") != 0) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 256;
      *names = hs_realloc(*names, cap * sizeof **names);
    }
    (*names)[(*n)++] = hs_strdup(e->d_name);
  }
  closedir(d);
  if (*n) qsort(*names, *n, sizeof **names, text_cmp);
  return HS_OK;
}

void lrn_docs_fini(lrn_docs *d) {
  for (size_t i = 0; i < d->n; i++) free(d->tok[i]);
  free(d->tok);
  free(d->len);
  free(d->label);
  memset(d, 0, sizeof *d);
}

hs_status lrn_docs_load(const char *dir, size_t max_docs, lrn_docs *d, hs_error *err) {
  memset(d, 0, sizeof *d);
  char **names[2] = {NULL, NULL};
  size_t count[2] = {0, 0};
  char *sub[2] = {lrn_xasprintf("%s/pos", dir), lrn_xasprintf("%s/neg", dir)};
  hs_status st = HS_OK;
  for (int k = 0; k < 2 && st == HS_OK; k++) {
    st = text_list(sub[k], &names[k], &count[k], err);
    if (st == HS_OK && count[k] == 0)
      st = hs_error_set(err, HS_ENOENT, "%s: no *.txt reviews", sub[k]);
  }
  size_t total = count[0] + count[1];
  if (max_docs && max_docs < total) total = max_docs;
  size_t taken[2] = {0, 0};
  if (st == HS_OK) {
    d->tok = hs_calloc(total, sizeof *d->tok);
    d->len = hs_calloc(total, sizeof *d->len);
    d->label = hs_calloc(total, sizeof *d->label);
  }
  uint32_t *buf = hs_malloc(65536 * sizeof *buf);
  while (st == HS_OK && d->n < total) {
    int k = (int)(d->n % 2); /* alternate pos, neg; fall back to the other when one runs out */
    if (taken[k] == count[k]) k = 1 - k;
    char *path = lrn_xasprintf("%s/%s", sub[k], names[k][taken[k]++]);
    unsigned char *text = NULL;
    size_t len = 0;
    st = lrn_read_file(path, &text, &len, err);
    if (st == HS_OK) {
      size_t bad = text_utf8_bad(text, len);
      const unsigned char *nul = memchr(text, '\0', len);
      if (nul && (size_t)(nul - text) < bad) { /* the tokenizer would stop there unseen */
        st = hs_error_set(err, HS_EPARSE, "%s: offset %zu: contains a NUL byte", path, (size_t)(nul - text));
      } else if (bad < len) {
        st = hs_error_set(err, HS_EPARSE, "%s: offset %zu: not UTF-8 text (byte 0x%02x)", path, bad, text[bad]);
      } else {
        size_t n = lrn_tokenize((const char *)text, buf, 65536);
        if (n == 0) {
          st = hs_error_set(err, HS_EPARSE, "%s: offset 0: review has no words", path);
        } else {
          d->tok[d->n] = hs_malloc(n * sizeof *buf);
          memcpy(d->tok[d->n], buf, n * sizeof *buf);
          d->len[d->n] = (uint32_t)n;
          d->label[d->n] = (uint8_t)(k == 0);
          d->n++;
        }
      }
    }
    free(text);
    free(path);
  }
  free(buf);
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < count[k]; i++) free(names[k][i]);
    free(names[k]);
    free(sub[k]);
  }
  if (st != HS_OK) lrn_docs_fini(d);
  return st;
}
