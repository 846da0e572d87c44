/* fuzz_seeds.c: libFuzzer harness for the sweep --seeds spec reader
 * (hs_sweep_seeds_parse, sim/study/include/sim/hs_sweep.h).
 *
 * Input: the spec text. Contract checked: an error comes with a one-line
 * message starting "--seeds "; accepted seeds number 1..1,000,000, each
 * <= 2^53, none repeated (checked with a sort: O(n log n)). Seeds: seeds/seeds/. */
#include "fuzz_common.h"
#include "base/hs_alloc.h"
#include "sim/hs_sweep.h"

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  hs_error err = {HS_OK, ""};
  uint64_t *seeds = NULL;
  size_t n = 0;
  if (hs_sweep_seeds_parse(text, &seeds, &n, &err) != HS_OK) {
    FUZZ_CHECK_MSG(err);
    FUZZ_CHECK(strncmp(err.msg, "--seeds ", 8) == 0, "message \"%s\"", err.msg);
  } else {
    FUZZ_CHECK(n >= 1 && n <= 1000000, "%zu seeds", n);
    qsort(seeds, n, sizeof *seeds, cmp_u64);
    for (size_t i = 0; i < n; i++) {
      FUZZ_CHECK(seeds[i] <= ((uint64_t)1 << 53), "seed %llu", (unsigned long long)seeds[i]);
      if (i) FUZZ_CHECK(seeds[i] != seeds[i - 1], "seed %llu twice", (unsigned long long)seeds[i]);
    }
    hs_free(seeds);
  }
  free(text);
  return 0;
}
