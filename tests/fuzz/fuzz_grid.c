/* fuzz_grid.c: libFuzzer harness for the sweep --grid spec reader
 * (hs_sweep_axis_parse, sim/study/include/sim/hs_sweep.h).
 *
 * Input: the spec text (as after --grid). Contract checked: an error comes with
 * a message (one line: strict mode) starting "--grid "; an accepted axis has a non-empty key,
 * 1..1,000,000 values, each non-empty, without '"', '|', '#' or control
 * characters, and no two alike. Seeds: seeds/grid/. The harness's own
 * duplicate check is O(n^2), so it runs only for n <= 4096; ranges of more
 * than 100,000 values are skipped (the reader is O(n log n) since issue 16
 * defect 5, but 10^6 values per execution would slow the smoke run to a few
 * executions a second). */
#include <math.h>

#include "fuzz_common.h"
#include "sim/hs_sweep.h"

/* Values a "key=start:stop:step" range would expand to (0 when the spec is not
 * such a range). Only to keep the smoke run fast. */
static double range_values(const char *spec) {
  const char *eq = strchr(spec, '=');
  if (!eq) return 0;
  char *end;
  double a = strtod(eq + 1, &end);
  if (*end != ':') return 0;
  double b = strtod(end + 1, &end);
  if (*end != ':') return 0;
  double c = strtod(end + 1, &end);
  if (c == 0 || isnan(a) || isnan(b) || isnan(c)) return 0;
  return fabs((b - a) / c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  if (range_values(text) > 100000) {
    free(text);
    return 0;
  }
  hs_error err = {HS_OK, ""};
  hs_sweep_axis ax;
  memset(&ax, 0, sizeof ax);
  if (hs_sweep_axis_parse(text, &ax, &err) != HS_OK) {
    FUZZ_CHECK_MSG(err);
    FUZZ_CHECK(strncmp(err.msg, "--grid ", 7) == 0, "message \"%s\"", err.msg);
  } else {
    FUZZ_CHECK(ax.key && ax.key[0], "empty key accepted");
    FUZZ_CHECK(ax.nvalues >= 1 && ax.nvalues <= 1000000, "%zu values", ax.nvalues);
    for (size_t i = 0; i < ax.nvalues; i++) {
      const char *v = ax.values[i];
      FUZZ_CHECK(v && v[0], "empty value %zu accepted", i);
      for (const char *c = v; *c; c++)
        FUZZ_CHECK(*c != '"' && *c != '|' && *c != '#' && (unsigned char)*c >= 0x20 && *c != 0x7f,
                   "value \"%s\" has a forbidden character", v);
      if (ax.nvalues <= 4096)
        for (size_t j = 0; j < i; j++)
          FUZZ_CHECK(strcmp(ax.values[j], v) != 0, "value \"%s\" twice", v);
    }
    hs_sweep_axis_fini(&ax);
  }
  free(text);
  return 0;
}
