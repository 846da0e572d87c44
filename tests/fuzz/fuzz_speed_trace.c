/* fuzz_speed_trace.c: libFuzzer harness for the speed-trace reader
 * (hs_speed_trace_parse, traces/include/traces/hs_speed_trace.h).
 *
 * Input: the CSV text. Contract checked: NULL comes with a message (one line: strict mode); an
 * accepted trace has >= 1 row, a finite speed > 0 at several times, and
 * hs_speed_trace_finish inverts hs_speed_trace_work (the work up to the
 * finish time equals the work asked, to 1e-9 relative) on a few spans.
 * Seeds: tests/data/run/ and seeds/speed_trace/. */
#include <math.h>

#include "fuzz_common.h"
#include "traces/hs_speed_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  hs_error err = {HS_OK, ""};
  hs_speed_trace *t = hs_speed_trace_parse(text, "fuzz.csv", &err);
  if (!t) {
    FUZZ_CHECK_MSG(err);
  } else {
    FUZZ_CHECK(hs_speed_trace_rows(t) >= 1, "accepted an empty trace");
    static const double at[] = {0, 0.5, 1, 7, 30, 1e3, 1e6};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
      double s = hs_speed_trace_at(t, at[i]);
      FUZZ_CHECK(isfinite(s) && s > 0, "speed %g at %g", s, at[i]);
      double w = hs_speed_trace_work(t, at[i], at[i] + 10);
      FUZZ_CHECK(w >= 0, "negative work %g", w);
      if (isfinite(w) && w > 0 && w < 1e12) {
        /* finish inverts work: the work done up to the finish time is w */
        double f = hs_speed_trace_finish(t, at[i], w);
        FUZZ_CHECK(f >= at[i], "finish %.17g before start %g", f, at[i]);
        double back = hs_speed_trace_work(t, at[i], f);
        FUZZ_CHECK(fabs(back - w) <= 1e-9 * w + 1e-12, "work to finish %.17g is %.17g, want %.17g",
                   f, back, w);
      }
    }
    hs_speed_trace_destroy(t);
  }
  free(text);
  return 0;
}
