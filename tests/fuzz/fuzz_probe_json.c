/* fuzz_probe_json.c: libFuzzer harness for the board harness's strict JSON
 * reader (probe_json_parse, devices/probe/include/probe.h; folder-internal
 * API, the only entry).
 *
 * Input: JSON text. Contract checked: an error comes with a message (one line: strict mode);
 * an accepted document writes back (probe_json_write) to text that parses
 * again and writes back to the same bytes (write is a fixed point).
 * Seeds: devices/profiles/ and scenarios/ (every shipped JSON file). */
#include "fuzz_common.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  hs_error err = {HS_OK, ""};
  probe_json *j = probe_json_parse(text, size, &err);
  if (!j) {
    FUZZ_CHECK_MSG(err);
  } else {
    FUZZ_CHECK_NO_NUL_ACCEPTED(data, size);
    char *w1 = probe_json_write(j);
    hs_error err2 = {HS_OK, ""};
    probe_json *j2 = probe_json_parse(w1, strlen(w1), &err2);
    FUZZ_CHECK(j2 != NULL, "own output refused: %s", err2.msg);
    char *w2 = probe_json_write(j2);
    FUZZ_CHECK(strcmp(w1, w2) == 0, "write is not a fixed point");
    free(w1);
    free(w2);
    probe_json_destroy(j2);
    probe_json_destroy(j);
  }
  free(text);
  return 0;
}
