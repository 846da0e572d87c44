/* registry.c: the table of cases (from list.h, one line per case), the
 * runner both test runners share (a fresh temporary folder per case, removed
 * afterwards, even when the case made it unreadable) and the file helpers the
 * cases write their fake trees with. */
#include "cases.h"

bool probe_put_bin(const char *root, const char *rel, const void *data, size_t len) {
  char *p = probe_xasprintf("%s/%s", root, rel);
  for (char *s = p + strlen(root) + 1; *s; s++)
    if (*s == '/') {
      *s = '\0';
      mkdir(p, 0755);
      *s = '/';
    }
  FILE *f = fopen(p, "wb");
  free(p);
  if (!f) return false;
  bool ok = fwrite(data, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

bool probe_put(const char *root, const char *rel, const char *content) {
  return probe_put_bin(root, rel, content, strlen(content));
}

char *probe_cs_path(const char *root, const char *rel) { return probe_xasprintf("%s/%s", root, rel); }

/* ---------------------------------------------------------------- registry */
static const probe_case CASES[] = {
#define PROBE_CASE(module, name) {#module, #name, probe_case_##module##_##name},
#include "list.h"
#undef PROBE_CASE
};

const probe_case *probe_case_at(size_t i) { return i < sizeof CASES / sizeof *CASES ? &CASES[i] : NULL; }

static void cs_rmrf(const char *p) {
  struct stat sb;
  if (lstat(p, &sb) != 0) return;
  if (S_ISDIR(sb.st_mode)) {
    chmod(p, 0755);
    /* small trees: recursion through opendir */
    DIR *d = opendir(p);
    if (d) {
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char *q = probe_xasprintf("%s/%s", p, e->d_name);
        cs_rmrf(q);
        free(q);
      }
      closedir(d);
    }
    rmdir(p);
  } else {
    unlink(p);
  }
}

bool probe_case_run(const probe_case *c, char *why, size_t cap) {
  const char *base = getenv("TMPDIR");
  char *tmpl = probe_xasprintf("%s/hsprobe-XXXXXX", base && base[0] ? base : "/tmp");
  if (!mkdtemp(tmpl)) {
    snprintf(why, cap, "cannot make a temp folder under %s: %s", base ? base : "/tmp", strerror(errno));
    free(tmpl);
    return false;
  }
  chmod(tmpl, 0755); /* the permission case runs a child as nobody */
  why[0] = '\0';
  bool ok = c->run(tmpl, why, cap);
  cs_rmrf(tmpl);
  free(tmpl);
  return ok;
}

int probe_cases_run_module(const char *module, int *passed) {
  int failed = 0;
  for (size_t i = 0; probe_case_at(i); i++) {
    const probe_case *c = probe_case_at(i);
    if (module && strcmp(c->module, module) != 0) continue;
    char why[1024];
    if (probe_case_run(c, why, sizeof why)) {
      (*passed)++;
      printf("ok   %s.%s\n", c->module, c->name);
    } else {
      failed++;
      printf("FAIL %s.%s: %s\n", c->module, c->name, why);
    }
  }
  return failed;
}
