/* scenario_find.c: hs_scenario_find, what a command's SCENARIO argument
 * names (hs_scenario.h): a file as given, else a shipped scenario by name.
 *
 * The rule is the Python package's (policies/python/hetsim/_cli.py,
 * scenario_path), so that `hetsim sweep testbed-mnist-pma` and
 * `hetsim.sweep("testbed-mnist-pma")` read the same file: the argument as a
 * path when it exists (relative to the working folder), then
 * <share>/scenarios/<arg>, then <share>/scenarios/<arg>.json, <share> being
 * hs_share_path's folder beside the program. A name that is none of these is
 * refused with the nearest shipped name (hs_nearest, the tree's one rule).
 * Cost: a few stat calls; the folder is listed only for the message.
 * Rejected: a search path of its own ($HETSIM_SCENARIO_PATH): a scenario is a
 * file the user names, and the profiles' search path already covers what a
 * scenario refers to; one more variable would be one more thing to explain. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hs_alloc.h"
#include "base/hs_util.h"
#include "sim/hs_scenario.h"

static bool exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

char *hs_scenario_find(const char *arg, hs_error *err) {
  if (exists(arg)) return hs_strdup(arg);
  const char *dir = hs_share_path("scenarios");
  char *cand = hs_path_join(dir, arg);
  if (exists(cand)) return cand;
  hs_free(cand);
  size_t l = strlen(arg);
  char *name = hs_malloc(l + 6);
  snprintf(name, l + 6, "%s.json", arg);
  cand = hs_path_join(dir, name);
  hs_free(name);
  if (exists(cand)) return cand;
  hs_free(cand);
  /* The nearest shipped name to what the argument's last part names. */
  const char *base = strrchr(arg, '/');
  base = base ? base + 1 : arg;
  char stem[128];
  snprintf(stem, sizeof stem, "%s", base);
  size_t sl = strlen(stem);
  if (sl > 5 && !strcmp(stem + sl - 5, ".json")) stem[sl - 5] = '\0';
  size_t n = 0;
  char **names = hs_dir_names(dir, ".json", &n);
  const char *near = hs_nearest(stem, (const char *const *)names, n);
  hs_error_set(err, HS_ENOENT,
               "%s: cannot open: No such file or directory, and no shipped scenario of that name "
               "(in %s)%s%s%s",
               arg, dir, near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
  hs_dir_names_free(names, n);
  return NULL;
}
