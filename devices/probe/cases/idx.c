/* idx.c: the IDX reader's cases (header checks, a gzipped IDX file);
 * probe_cs_idx builds IDX images and labels, also for the trainer cases. */
#include "cases.h"

/* ------------------------------------------------------------------- IDX */
/* An IDX file: images (3-D, n x r x c) or labels (1-D, n). */
unsigned char *probe_cs_idx(int nd, const uint32_t *dims, uint8_t fill_seed, size_t *len) {
  size_t items = 1;
  for (int d = 0; d < nd; d++) items *= dims[d];
  unsigned char *b = hs_malloc(4 + 4 * (size_t)nd + items);
  b[0] = 0;
  b[1] = 0;
  b[2] = 8;
  b[3] = (unsigned char)nd;
  for (int d = 0; d < nd; d++)
    for (int k = 0; k < 4; k++) b[4 + 4 * d + k] = (unsigned char)(dims[d] >> (24 - 8 * k));
  for (size_t i = 0; i < items; i++) b[4 + 4 * (size_t)nd + i] = (unsigned char)((i * 37 + fill_seed) % (nd == 1 ? 10 : 256));
  *len = 4 + 4 * (size_t)nd + items;
  return b;
}

PROBE_CASE_FN(idx, header_checks) {
  (void)tmp;
  uint32_t dims[3] = {5, 4, 3};
  size_t len = 0;
  unsigned char *b = probe_cs_idx(3, dims, 1, &len);
  lrn_idx x;
  hs_error e = {HS_OK, ""};
  CHECK(lrn_idx_parse(b, len, 0, &x, &e) == HS_OK && x.count == 5 && x.item_size == 12 && x.data[0] == 1,
        "valid IDX rejected: %s", e.msg);
  lrn_idx_fini(&x);
  b[1] = 7;
  CHECK(lrn_idx_parse(b, len, 0, &x, &e) == HS_EPARSE && strstr(e.msg, "offset 0"), "bad magic: \"%s\"", e.msg);
  b[1] = 0;
  b[2] = 0x0d;
  CHECK(lrn_idx_parse(b, len, 0, &x, &e) == HS_EUNSUP && strstr(e.msg, "offset 2"), "float type: \"%s\"", e.msg);
  b[2] = 8;
  b[3] = 9;
  CHECK(lrn_idx_parse(b, len, 0, &x, &e) == HS_EPARSE && strstr(e.msg, "offset 3"), "9 dims: \"%s\"", e.msg);
  b[3] = 3;
  CHECK(lrn_idx_parse(b, len - 1, 0, &x, &e) == HS_EPARSE && strstr(e.msg, "4 of 5 items"),
        "truncated data: \"%s\"", e.msg);
  CHECK(lrn_idx_parse(b, len - 1, 3, &x, &e) == HS_OK && x.count == 3, "max_items 3 on a short file: \"%s\"", e.msg);
  lrn_idx_fini(&x);
  unsigned char *big = hs_malloc(len + 2);
  memcpy(big, b, len);
  big[len] = big[len + 1] = 0;
  CHECK(lrn_idx_parse(big, len + 2, 0, &x, &e) == HS_EPARSE && strstr(e.msg, "2 bytes after"),
        "trailing bytes: \"%s\"", e.msg);
  free(big);
  b[7] = 0; /* dims[0] = 0 */
  b[4] = b[5] = b[6] = 0;
  CHECK(lrn_idx_parse(b, len, 0, &x, &e) == HS_EPARSE && strstr(e.msg, "offset 4"), "zero dim: \"%s\"", e.msg);
  free(b);
  return true;
}

PROBE_CASE_FN(idx, gzip_file) {
  uint32_t dims[3] = {6, 2, 2};
  size_t len = 0, gl = 0;
  unsigned char *b = probe_cs_idx(3, dims, 3, &len);
  unsigned char *g = probe_cs_gzip_stored(b, len, &gl);
  CHECK(probe_put_bin(tmp, "x-idx3-ubyte.gz", g, gl), "cannot write");
  char *p = probe_cs_path(tmp, "x-idx3-ubyte.gz");
  lrn_idx x;
  hs_error e = {HS_OK, ""};
  hs_status st = lrn_idx_load(p, 0, &x, &e);
  bool ok = st == HS_OK && x.count == 6 && memcmp(x.data, b + 16, 24) == 0;
  lrn_idx_fini(&x);
  st = lrn_idx_load(p, 2, &x, &e);
  ok = ok && st == HS_OK && x.count == 2;
  lrn_idx_fini(&x);
  g[20] ^= 0xff; /* corrupt one data byte: the CRC catches it */
  probe_put_bin(tmp, "x-idx3-ubyte.gz", g, gl);
  st = lrn_idx_load(p, 0, &x, &e);
  bool named = st == HS_EPARSE && strstr(e.msg, p) && strstr(e.msg, "CRC");
  char *missing = probe_cs_path(tmp, "nope-idx1-ubyte");
  hs_status st2 = lrn_idx_load(missing, 0, &x, &e);
  bool miss = st2 == HS_ENOENT && strstr(e.msg, missing);
  free(missing);
  free(p);
  free(b);
  free(g);
  CHECK(ok, "gzip IDX load failed: %s", e.msg);
  CHECK(named, "corrupt gzip IDX: \"%s\"", e.msg);
  CHECK(miss, "missing IDX: \"%s\"", e.msg);
  return true;
}
