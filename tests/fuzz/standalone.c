/* standalone.c: a main() for the fuzz harnesses when they are not built with
 * libFuzzer (gcc, or the sanitizer build): every argument is a file, or a
 * folder whose files (recursively, sorted by name) are fed one by one through
 * LLVMFuzzerTestOneInput. So the seed corpora and saved crash reproducers run
 * in every test build, and a reproducer can be replayed under gdb or valgrind
 * without clang. Prints "N inputs" on success; a harness abort is the failure.
 * Rejected: a shell loop over files (one process per input: slow, and the
 * sanitizer start-up cost per input dominated). */
#include <dirent.h>
#include <sys/stat.h>

#include "fuzz_common.h"

/* The harness may define it; a weak default keeps the others linking. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return 0;
}

static size_t ninputs;

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz-replay: %s: cannot open\n", path);
    return 1;
  }
  size_t cap = 4096, len = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) abort();
  size_t got;
  while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
    len += got;
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      if (!buf) abort();
    }
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  ninputs++;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "fuzz-replay: %s: no such file or folder\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) return run_file(path);
  DIR *d = opendir(path);
  if (!d) return 1;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      names = realloc(names, cap * sizeof *names);
      if (!names) abort();
    }
    size_t l = strlen(path) + strlen(e->d_name) + 2;
    names[n] = malloc(l);
    if (!names[n]) abort();
    snprintf(names[n++], l, "%s/%s", path, e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_names);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    rc |= run_path(names[i]);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int rc = 0;
  for (int i = 1; i < argc; i++) rc |= run_path(argv[i]);
  printf("%zu inputs\n", ninputs);
  return rc;
}
