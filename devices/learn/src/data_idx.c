/* data_idx.c: IDX files (the MNIST / Fashion-MNIST container), plain or gzip.
 *
 * Layout: 2 zero bytes, a type byte (0x08 = unsigned byte, the only type the
 * image and label files use), a dimension count, then that many big-endian
 * uint32 sizes, then the data. Invariants after a successful parse: 1..4
 * dimensions, none zero, count * item_size bytes owned in data, and the file
 * holds exactly what the header promises (or at least max_items items when
 * the caller asked for fewer). Every check names the byte offset.
 * Complexity: O(bytes). Rejected: mmap (gzip files must be inflated anyway). */
#include "learn/hs_learn_parts.h"

#include <stdlib.h>
#include <string.h>

static uint32_t idx_be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

hs_status lrn_idx_parse(const unsigned char *buf, size_t len, size_t max_items,
                             lrn_idx *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  if (len < 4) return hs_error_set(err, HS_EPARSE, "offset %zu: file ends inside the 4-byte IDX magic", len);
  if (buf[0] != 0 || buf[1] != 0)
    return hs_error_set(err, HS_EPARSE, "offset 0: bad IDX magic %02x %02x (expected 00 00)", buf[0], buf[1]);
  if (buf[2] != 0x08)
    return hs_error_set(err, HS_EUNSUP, "offset 2: IDX data type 0x%02x is not 0x08 (unsigned byte)", buf[2]);
  int nd = buf[3];
  if (nd < 1 || nd > 4)
    return hs_error_set(err, HS_EPARSE, "offset 3: %d dimensions (expected 1 to 4)", nd);
  size_t hdr = 4 + 4 * (size_t)nd;
  if (len < hdr)
    return hs_error_set(err, HS_EPARSE, "offset %zu: file ends inside the IDX dimension sizes", len);
  size_t item = 1;
  for (int d = 0; d < nd; d++) {
    out->dims[d] = idx_be32(buf + 4 + 4 * d);
    if (out->dims[d] == 0)
      return hs_error_set(err, HS_EPARSE, "offset %d: dimension %d is 0", 4 + 4 * d, d);
    if (d > 0) {
      if (item > ((size_t)1 << 32) / out->dims[d])
        return hs_error_set(err, HS_ERANGE, "offset %d: item size too large", 4 + 4 * d);
      item *= out->dims[d];
    }
  }
  size_t count = out->dims[0];
  if (max_items && max_items < count) count = max_items;
  size_t have = len - hdr;
  if (have / item < count)
    return hs_error_set(err, HS_EPARSE,
                         "offset %zu: data ends after %zu of %zu items (header promises %u items of %zu bytes)",
                         len, have / item, count, out->dims[0], item);
  if (count == out->dims[0] && have != count * item)
    return hs_error_set(err, HS_EPARSE, "offset %zu: %zu bytes after the %u items the header promises",
                         hdr + count * item, have - count * item, out->dims[0]);
  out->ndims = nd;
  out->count = count;
  out->item_size = item;
  out->data = hs_malloc(count * item);
  memcpy(out->data, buf + hdr, count * item);
  return HS_OK;
}

static bool verify_whole; /* see lrn_idx_verify_whole */

void lrn_idx_verify_whole(bool on) { verify_whole = on; }

hs_status lrn_idx_load(const char *path, size_t max_items, lrn_idx *out, hs_error *err) {
  memset(out, 0, sizeof *out);
  unsigned char *raw = NULL;
  size_t len = 0;
  hs_status st = lrn_read_file(path, &raw, &len, err);
  if (st != HS_OK) return st;
  unsigned char *plain = raw;
  size_t plen = len;
  if (len >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) {
    size_t want = 0;
    if (max_items) {
      /* Inflate only the header, then only the items asked for. */
      unsigned char *hdr = NULL;
      size_t hl = 0;
      st = lrn_gunzip_head(raw, len, 4, &hdr, &hl, err);
      if (st == HS_OK && hl == 4 && hdr[3] >= 1 && hdr[3] <= 4) {
        unsigned char *h2 = NULL;
        size_t hl2 = 0;
        size_t hsize = 4 + 4 * (size_t)hdr[3];
        st = lrn_gunzip_head(raw, len, hsize, &h2, &hl2, err);
        if (st == HS_OK && hl2 == hsize) {
          size_t item = 1;
          for (int d = 1; d < hdr[3]; d++) item *= idx_be32(h2 + 4 + 4 * d);
          uint32_t n0 = idx_be32(h2 + 4);
          if (max_items < n0 && item > 0 && item <= ((size_t)1 << 32)) want = hsize + max_items * item;
        }
        free(h2);
      }
      free(hdr);
      if (st != HS_OK) {
        free(raw);
        hs_error_prefix(err, "%s", path);
        return st;
      }
    }
    st = (want && !verify_whole ? lrn_gunzip_head : lrn_gunzip)(raw, len, want, &plain, &plen, err);
    free(raw);
    if (st != HS_OK) {
      hs_error_prefix(err, "%s (gzip)", path);
      return st;
    }
  }
  st = lrn_idx_parse(plain, plen, max_items, out, err);
  free(plain);
  if (st != HS_OK) hs_error_prefix(err, "%s", path);
  return st;
}

void lrn_idx_fini(lrn_idx *x) {
  free(x->data);
  memset(x, 0, sizeof *x);
}
