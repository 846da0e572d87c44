/* alloc.c: allocation that aborts on out-of-memory (Redis zmalloc style).
 * Zero-size requests return a unique pointer (malloc(1)) so callers never see
 * NULL from a successful call. */
#include "base/hs_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t size) {
  fprintf(stderr, "hetsim: out of memory allocating %zu bytes\n", size);
  fflush(stderr);
  abort();
}

void *hs_malloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) oom(size);
  return p;
}

void *hs_calloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) oom(count * size);
  return p;
}

void *hs_realloc(void *ptr, size_t size) {
  void *p = realloc(ptr, size ? size : 1);
  if (!p) oom(size);
  return p;
}

void *hs_reallocarray(void *ptr, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) oom(SIZE_MAX);
  return hs_realloc(ptr, count * size);
}

char *hs_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = hs_malloc(n);
  memcpy(p, s, n);
  return p;
}

void hs_free(void *ptr) { free(ptr); }
