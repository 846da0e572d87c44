/* fuzz_scenario.c: libFuzzer harness for the scenario reader with --set
 * overrides (hs_scenario_parse + hs_override_parse, sim/scenario/include/sim/hs_scenario.h).
 *
 * Input: scenario JSON, optionally followed by a line "#set" and then one
 * "key=value" override per line (at most 16), exactly what `hetsim run
 * FILE --set k=v ...` hands the reader. Relative profile and speed-trace paths
 * resolve from scenarios/ (base_dir), profile names from the shipped profiles.
 * Contract checked: NULL comes with a message (one line: strict mode); an accepted scenario
 * has rounds >= 1, at least one device, every device's profile loaded and
 * total_devices >= ndevices. Seeds: scenarios/, tests/data/scenario/ and the
 * hand-written seeds/scenario/ (override examples). Complexity: one parse per
 * input. Rejected: fuzzing hs_scenario_load (disk I/O per run, same parser).
 * Inputs holding "real" are skipped: a learning block in real mode loads the
 * data set while parsing (20,000 MNIST images from a 26 MB archive: over 10 s
 * per execution under the fuzzer's instrumentation); the data readers have
 * their own harnesses (fuzz_probe_idx, fuzz_probe_gzip, fuzz_probe_csv). */
#include "fuzz_common.h"
#include "sim/hs_scenario.h"

#define MAX_OVR 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  if (strstr(text, "real")) {
    free(text);
    return 0;
  }
  hs_override ovr[MAX_OVR];
  size_t novr = 0;
  char *sep = strstr(text, "\n#set\n");
  if (sep) {
    *sep = '\0';
    char *line = sep + 6;
    while (line && *line && novr < MAX_OVR) {
      char *nl = strchr(line, '\n');
      if (nl) *nl = '\0';
      hs_error oerr = {HS_OK, ""};
      if (hs_override_parse(line, &ovr[novr], &oerr) == HS_OK)
        novr++;
      else
        FUZZ_CHECK_MSG(oerr);
      line = nl ? nl + 1 : NULL;
    }
  }
  hs_error err = {HS_OK, ""};
  hs_scenario *sc =
      hs_scenario_parse(text, "fuzz.json", HS_SOURCE_DIR "/scenarios", ovr, novr, &err);
  if (!sc) {
    FUZZ_CHECK_MSG(err);
  } else {
    FUZZ_CHECK(sc->rounds >= 1, "accepted rounds %u", (unsigned)sc->rounds);
    FUZZ_CHECK(sc->ndevices >= 1 && sc->total_devices >= sc->ndevices,
               "accepted %zu entries, %zu devices", sc->ndevices, sc->total_devices);
    for (size_t i = 0; i < sc->ndevices; i++)
      FUZZ_CHECK(sc->devices[i].profile && sc->devices[i].count >= 1,
                 "device %zu without profile or count", i);
    hs_scenario_destroy(sc);
  }
  free(text);
  return 0;
}
