/* cases.h: what the case files of devices/probe/cases/ share (not for the
 * runners, which see probe_cases.h only): the definition of a case
 * (PROBE_CASE_FN, listed in list.h), the FAIL/CHECK/NEAR idiom that fills
 * `why` and returns false, the helpers more than one module's cases use, and
 * the fixtures embed.cmake compiles in from tests/data/probe-cases/.
 * Each case builds its inputs in the real formats (fake sysfs trees, IDX and
 * gzip files, ERA5 CSV, aclImdb folders, meter logs, profiles) in the fresh
 * temporary folder `tmp` and checks one behaviour; expected values are
 * worked out by hand in the comments. */
#ifndef PROBE_CASES_INTERNAL_H
#define PROBE_CASES_INTERNAL_H

#include "probe.h"
#include "probe_cases.h"
#include "learn/hs_learn.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The function of case (module, name); list.h names it, registry.c tables it. */
#define PROBE_CASE_FN(module, name) \
  bool probe_case_##module##_##name(const char *tmp, char *why, size_t cap)
/* Every case's prototype, from the one list. */
#define PROBE_CASE(module, name) PROBE_CASE_FN(module, name);
#include "list.h"
#undef PROBE_CASE

#define FAIL(...)                          \
  do {                                     \
    snprintf(why, cap, __VA_ARGS__);       \
    return false;                          \
  } while (0)
#define CHECK(cond, ...)                   \
  do {                                     \
    if (!(cond)) FAIL(__VA_ARGS__);        \
  } while (0)
#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

/* root/rel (heap). */
char *probe_cs_path(const char *root, const char *rel);
/* A gzip member of d[0..n) in one stored (uncompressed) block, as gzip -0
 * writes it (heap; gzip.c). */
unsigned char *probe_cs_gzip_stored(const unsigned char *d, size_t n, size_t *outlen);
/* An IDX file: images (nd 3: n x r x c) or labels (nd 1: n), bytes from
 * fill_seed (heap; idx.c). */
unsigned char *probe_cs_idx(int nd, const uint32_t *dims, uint8_t fill_seed, size_t *len);

/* Fixtures (generated from tests/data/probe-cases/ by embed.cmake). */
extern const unsigned char probe_fixture_lines_gz[];
extern const size_t probe_fixture_lines_gz_len;
extern const unsigned char probe_fixture_hello_fixed_gz[];
extern const size_t probe_fixture_hello_fixed_gz_len;

#endif
