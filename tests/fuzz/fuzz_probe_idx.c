/* fuzz_probe_idx.c: libFuzzer harness for the board harness's IDX reader
 * (lrn_idx_parse, devices/probe/include/probe.h; folder-internal API, the
 * only entry short of a file: lrn_idx_load adds a gzip check and disk I/O).
 *
 * Input: an IDX buffer; the first byte (when any) also picks max_items (0, 1
 * or 7) so the truncating path runs too. Contract checked: an error comes with
 * a message (one line: strict mode); accepted data has 1..4 dims, count <= dims[0] and
 * count <= max_items when set, and item_size equal to the product of
 * dims[1..]; every byte of data is readable. Seeds: seeds/idx/ (for long runs,
 * add a decompressed Fashion-MNIST label file as a seed folder). */
#include "fuzz_common.h"
#include "probe.h"
#include "learn/hs_learn_parts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const size_t caps[] = {0, 1, 7};
  size_t max_items = size ? caps[data[0] % 3] : 0;
  hs_error err = {HS_OK, ""};
  lrn_idx x;
  memset(&x, 0, sizeof x);
  if (lrn_idx_parse(data, size, max_items, &x, &err) != HS_OK) {
    FUZZ_CHECK_MSG(err);
    return 0;
  }
  FUZZ_CHECK(x.ndims >= 1 && x.ndims <= 4, "ndims %d", x.ndims);
  FUZZ_CHECK(x.count <= x.dims[0], "count %zu > dims[0] %u", x.count, (unsigned)x.dims[0]);
  if (max_items) FUZZ_CHECK(x.count <= max_items, "count %zu > max %zu", x.count, max_items);
  size_t item = 1;
  for (int i = 1; i < x.ndims; i++) item *= x.dims[i];
  FUZZ_CHECK(item == x.item_size, "item_size %zu, dims say %zu", x.item_size, item);
  unsigned sum = 0;
  for (size_t i = 0; i < x.count * x.item_size; i++) sum += x.data[i];
  (void)sum;
  lrn_idx_fini(&x);
  return 0;
}
