/* profile_find.c: where a profile name or path leads (hs_profile_find,
 * hs_profile_open, hs_profile_builtin_dir in hs_profile.h), apart from the
 * loader and validator in profile.c.
 *
 * A value with '/' or ending in ".json" is a path (relative to the scenario's
 * folder); otherwise a name, looked up as <name>.json in each folder of
 * $HETSIM_PROFILE_PATH, then in the shipped profiles (hs_share_path). The
 * first existing file wins. A name found nowhere is refused with the nearest
 * name (hs_nearest, the base's one rule), the folders searched and the
 * profiles they hold, sorted and each once, and how to add a folder: the
 * folders are listed only for that message (O(entries) then, a few stat
 * calls otherwise). Rejected: listing the folders on every lookup (a scenario
 * of many entries would read them once per entry for nothing). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "devices/hs_profile.h"
#include "profile_internal.h"

const char *hs_profile_builtin_dir(void) { return HS_PROFILE_DIR; }

static bool is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static char *join_path(const char *dir, size_t dirlen, const char *name, const char *ext) {
  size_t nl = strlen(name), el = strlen(ext);
  char *s = hs_malloc(dirlen + 1 + nl + el + 1);
  memcpy(s, dir, dirlen);
  size_t k = dirlen;
  if (k > 0 && s[k - 1] != '/') s[k++] = '/';
  memcpy(s + k, name, nl);
  memcpy(s + k + nl, ext, el + 1);
  return s;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the profiles in the folders searched ($HETSIM_PROFILE_PATH's,
 * then the shipped ones), sorted, each once: for the message of a name that
 * is none of them. */
static char **names_searched(const char *env, size_t *n) {
  char **all = NULL;
  *n = 0;
  for (const char *s = env; s;) {
    const char *e = strchr(s, ':');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    char *dir = hs_malloc(len + 1);
    memcpy(dir, s, len);
    dir[len] = '\0';
    size_t k = 0;
    char **some = hs_dir_names(dir, ".json", &k);
    hs_free(dir);
    all = hs_reallocarray(all, *n + k + 1, sizeof *all);
    for (size_t i = 0; i < k; i++) all[(*n)++] = some[i];
    hs_free(some);
    s = e ? e + 1 : NULL;
  }
  size_t k = 0;
  char **shipped = hs_dir_names(HS_PROFILE_DIR, ".json", &k);
  all = hs_reallocarray(all, *n + k + 1, sizeof *all);
  for (size_t i = 0; i < k; i++) all[(*n)++] = shipped[i];
  hs_free(shipped);
  qsort(all, *n, sizeof *all, cmp_str);
  size_t w = 0;
  for (size_t i = 0; i < *n; i++) {
    if (w && !strcmp(all[w - 1], all[i])) hs_free(all[i]);
    else all[w++] = all[i];
  }
  *n = w;
  return all;
}

/* "no profile NAME", the nearest name found, where it looked, what is there
 * and how to add a folder of one's own. */
static void not_found(const char *name, const char *env, const char *looked, hs_error *err) {
  size_t n = 0;
  char **names = names_searched(env, &n);
  const char *near = hs_nearest(name, (const char *const *)names, n);
  char list[240];
  size_t used = 0;
  list[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(names[i]);
    if (used + l + 7 >= sizeof list) {
      snprintf(list + used, sizeof list - used, ", ...");
      break;
    }
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
  }
  hs_error_set(err, HS_ENOENT,
               "no profile \"%s\"%s%s%s (searched %s%s; found there: %s; a folder of your own "
               "goes in $" HS_PROFILE_PATH_ENV ", colon-separated, searched first)",
               name, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "",
               env ? "$" HS_PROFILE_PATH_ENV " then " : "", looked, n ? list : "none");
  hs_dir_names_free(names, n);
}

char *hs_profile_find(const char *name, const char *base_dir, hs_error *err) {
  assert(name);
  if (strchr(name, '/') || ends_with(name, ".json")) {
    char *path = (name[0] != '/' && base_dir && base_dir[0])
                     ? join_path(base_dir, strlen(base_dir), name, "")
                     : hs_strdup(name);
    if (is_file(path)) return path;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
      hs_error_set(err, HS_EINVAL, "\"%s\" is a folder, not a file", path);
    else if (name[0] != '/' && base_dir && base_dir[0]) {
      /* The commonest slip: a path written from the shell's folder, where the
       * scenario's own folder is what it is relative to. The name alone finds
       * a shipped profile or one in $HETSIM_PROFILE_PATH. */
      const char *slash = strrchr(name, '/');
      char stem[HS_QUOTE_BUF];
      snprintf(stem, sizeof stem, "%.*s", (int)(strcspn(slash ? slash + 1 : name, ".")),
               slash ? slash + 1 : name);
      hs_error_set(err, HS_ENOENT,
                   "no profile file \"%s\" (a relative path is read from the scenario's folder %s; "
                   "a shipped profile, or one in $" HS_PROFILE_PATH_ENV ", is named without a path: "
                   "\"%s\")",
                   path, base_dir, stem);
    } else
      hs_error_set(err, HS_ENOENT, "no profile file \"%s\"", path);
    hs_free(path);
    return NULL;
  }
  if (!dev_name_ok(name)) {
    hs_error_set(err, HS_EINVAL,
                 "\"%s\" is neither a path nor a profile name ([a-z0-9._-]+, not starting with '.')",
                 hs_quote((char[HS_QUOTE_BUF]){0}, HS_QUOTE_BUF, name));
    return NULL;
  }
  /* Where we looked, for the message: built as we go, truncated if huge. */
  char looked[HS_ERROR_MSG_MAX / 2];
  size_t ll = 0;
  looked[0] = '\0';
  const char *env = getenv(HS_PROFILE_PATH_ENV);
  if (env) {
    const char *s = env;
    for (;;) {
      const char *e = strchr(s, ':');
      size_t len = e ? (size_t)(e - s) : strlen(s);
      if (len > 0) {
        char *path = join_path(s, len, name, ".json");
        if (is_file(path)) return path;
        if (ll < sizeof looked)
          ll += (size_t)snprintf(looked + ll, sizeof looked - ll, "%s%.*s", ll ? ", " : "", (int)len, s);
        hs_free(path);
      }
      if (!e) break;
      s = e + 1;
    }
  }
  char *path = join_path(HS_PROFILE_DIR, strlen(HS_PROFILE_DIR), name, ".json");
  if (is_file(path)) return path;
  hs_free(path);
  if (ll < sizeof looked)
    snprintf(looked + ll, sizeof looked - ll, "%s%s", ll ? ", " : "", HS_PROFILE_DIR);
  not_found(name, env, looked, err);
  return NULL;
}

hs_profile *hs_profile_open(const char *name, const char *base_dir, hs_error *err) {
  char *path = hs_profile_find(name, base_dir, err);
  if (!path) return NULL;
  hs_profile *p = hs_profile_load(path, err);
  hs_free(path);
  return p;
}

