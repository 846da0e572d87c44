/* share.c: hs_share_path, where the shipped data is, found from the running
 * program rather than compiled in (hs_util.h); hs_dir_names, the names of the
 * files shipped in one of its folders, for the messages that list them and
 * suggest the nearest one (scenario and profile names).
 *
 * A small interned list: each distinct rel is resolved once (readlink of
 * /proc/self/exe, then realpath) under a mutex and kept for the life of the
 * process, so callers may return the string as a static one. Lookups are a
 * linear scan of the handful of names the program uses (O(k) string
 * compares). Rejected: a compiled-in source path (the installed binary would
 * carry the build machine's paths and break once the source tree moves), and
 * $PREFIX baked in at configure time (an install must stay relocatable). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"

typedef struct share_entry {
  struct share_entry *next;
  char *rel;
  char *path;
} share_entry;

static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static share_entry *share_list;

/* "<folder of the running program>/../share/hetsim", or NULL without /proc. */
static char *share_root(void) {
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return NULL;
  exe[len] = '\0';
  char *bin = hs_path_dir(exe);
  char *root = hs_path_join(bin, "../share/hetsim");
  hs_free(bin);
  return root;
}

const char *hs_share_path(const char *rel) {
  pthread_mutex_lock(&share_lock);
  share_entry *e = share_list;
  while (e && strcmp(e->rel, rel) != 0) e = e->next;
  if (!e) {
    char *root = share_root();
    char *path = hs_path_join(root ? root : "../share/hetsim", rel);
    hs_free(root);
    char canon[PATH_MAX];
    if (realpath(path, canon)) {
      hs_free(path);
      path = hs_strdup(canon);
    }
    e = hs_calloc(1, sizeof *e);
    e->rel = hs_strdup(rel);
    e->path = path;
    e->next = share_list;
    share_list = e;
  }
  pthread_mutex_unlock(&share_lock);
  return e->path;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char **hs_dir_names(const char *dir, const char *suffix, size_t *n) {
  *n = 0;
  DIR *d = dir ? opendir(dir) : NULL;
  if (!d) return NULL;
  size_t cap = 0, sl = strlen(suffix);
  char **names = NULL;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.' || l <= sl || strcmp(e->d_name + l - sl, suffix)) continue;
    if (*n == cap) names = hs_reallocarray(names, cap = cap ? 2 * cap : 16, sizeof *names);
    names[*n] = hs_strdup(e->d_name);
    names[*n][l - sl] = '\0';
    (*n)++;
  }
  closedir(d);
  if (*n) qsort(names, *n, sizeof *names, cmp_name);
  return names;
}

void hs_dir_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++) hs_free(names[i]);
  hs_free(names);
}
