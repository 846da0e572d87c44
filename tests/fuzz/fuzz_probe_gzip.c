/* fuzz_probe_gzip.c: libFuzzer harness for the board harness's gzip reader
 * (probe_gunzip, devices/probe/include/probe.h; folder-internal API, the only
 * entry).
 *
 * Input: one gzip member. Decoded twice: whole (max_out 0) and capped at 64
 * bytes. Contract checked: an error comes with a message (one line: strict
 * mode); an accepted member is at least 18 bytes (10-byte header, empty block,
 * 8-byte trailer); the capped decode, when it succeeds, is a prefix of the
 * whole output. Seeds: seeds/gzip/ (for long runs, add a folder holding
 * /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz, 5 KB, and
 * -max_len=8192: the 26 MB archives as seeds slow it to a few runs a second). */
#include "fuzz_common.h"
#include "probe.h"
#include "learn/hs_learn_parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hs_error err = {HS_OK, ""};
  unsigned char *out = NULL;
  size_t outlen = 0;
  hs_status st = probe_gunzip(data, size, 0, &out, &outlen, &err);
  if (st != HS_OK) {
    FUZZ_CHECK_MSG(err);
    out = NULL;
  } else {
    FUZZ_CHECK(size >= 18, "accepted a %zu-byte member", size);
  }
  hs_error err2 = {HS_OK, ""};
  unsigned char *pre = NULL;
  size_t prelen = 0;
  if (probe_gunzip(data, size, 64, &pre, &prelen, &err2) == HS_OK) {
    if (out) {
      size_t n = prelen < outlen ? prelen : outlen;
      FUZZ_CHECK(memcmp(pre, out, n) == 0, "capped output is not a prefix of the whole");
    }
    free(pre);
  } else {
    FUZZ_CHECK_MSG(err2);
  }
  free(out);
  return 0;
}
