/* share.c: hs_share_path, where the shipped data is, found from the running
 * program rather than compiled in (hs_util.h).
 *
 * A small interned list: each distinct rel is resolved once (readlink of
 * /proc/self/exe, then realpath) under a mutex and kept for the life of the
 * process, so callers may return the string as a static one. Lookups are a
 * linear scan of the handful of names the program uses (O(k) string
 * compares). Rejected: a compiled-in source path (the installed binary would
 * carry the build machine's paths and break once the source tree moves), and
 * $PREFIX baked in at configure time (an install must stay relocatable). */
#define _XOPEN_SOURCE 700 /* realpath */
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
