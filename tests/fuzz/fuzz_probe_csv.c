/* fuzz_probe_csv.c: libFuzzer harness for the board harness's ERA5 CSV reader
 * (lrn_csv_parse, devices/probe/include/probe.h; folder-internal API, the
 * entry lrn_csv_load uses after reading the file).
 *
 * Input: the CSV text (NUL after it, as probe_read_file leaves it). Contract
 * checked: an error comes with a message; an accepted table has no NUL
 * byte (strict mode), has
 * rows*cols finite values, named columns none of them "time", each found by
 * lrn_table_col. Seeds: seeds/probe_csv/. */
#include <math.h>

#include "fuzz_common.h"
#include "probe.h"
#include "learn/hs_learn_parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  hs_error err = {HS_OK, ""};
  lrn_table t;
  memset(&t, 0, sizeof t);
  if (lrn_csv_parse(text, size, &t, &err) != HS_OK) {
    FUZZ_CHECK_MSG(err);
  } else {
    FUZZ_CHECK_NO_NUL_ACCEPTED(data, size);
    for (size_t c = 0; c < t.cols; c++) {
      /* a NUL inside the header cuts a name short ("time\\0x" reads "time"):
       * defect 1, checked above in strict mode */
      if (!memchr(data, 0, size))
        FUZZ_CHECK(t.names[c] && strcmp(t.names[c], "time") != 0, "column %zu name", c);
      FUZZ_CHECK(lrn_table_col(&t, t.names[c]) >= 0, "column %s not found", t.names[c]);
    }
    for (size_t i = 0; i < t.rows * t.cols; i++)
      FUZZ_CHECK(isfinite(t.v[i]), "value %zu is %g", i, t.v[i]);
    lrn_table_fini(&t);
  }
  free(text);
  return 0;
}
