/* fuzz_telemetry.c: libFuzzer harness for the telemetry replay CSV reader
 * (hs_telemetry_csv_parse, traces/include/traces/hs_telemetry_csv.h).
 *
 * Input: the CSV text. Contract checked: NULL comes with a message (one line: strict mode); an
 * accepted table has >= 1 device and round, strictly increasing round numbers,
 * time_s and energy_j finite and >= 0, samples >= 0, and non-empty device
 * names without ',' or '"'. Seeds: tests/golden/replay/telemetry.csv and
 * seeds/telemetry/. */
#include <math.h>

#include "fuzz_common.h"
#include "traces/hs_telemetry_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  hs_error err = {HS_OK, ""};
  hs_telemetry_csv *t = hs_telemetry_csv_parse(text, size, "fuzz.csv", &err);
  if (!t) {
    FUZZ_CHECK_MSG(err);
  } else {
    FUZZ_CHECK_NO_NUL_ACCEPTED(data, size);
    FUZZ_CHECK(t->ndevices >= 1 && t->nrounds >= 1, "accepted %zu devices, %zu rounds",
               t->ndevices, t->nrounds);
    for (size_t d = 0; d < t->ndevices; d++)
      FUZZ_CHECK(t->devices[d][0] && !strpbrk(t->devices[d], ",\""), "device name \"%s\"",
                 t->devices[d]);
    for (size_t r = 0; r < t->nrounds; r++) {
      if (r) FUZZ_CHECK(t->rounds[r] > t->rounds[r - 1], "rounds not increasing at %zu", r);
      for (size_t d = 0; d < t->ndevices; d++) {
        size_t k = r * t->ndevices + d;
        FUZZ_CHECK(isfinite(t->time_s[k]) && t->time_s[k] >= 0, "time_s %g", t->time_s[k]);
        FUZZ_CHECK(isfinite(t->energy_j[k]) && t->energy_j[k] >= 0, "energy_j %g", t->energy_j[k]);
        FUZZ_CHECK(t->samples[k] >= 0, "samples %lld", (long long)t->samples[k]);
      }
    }
    hs_telemetry_csv_destroy(t);
  }
  free(text);
  return 0;
}
