/* inflate.c: a gzip (RFC 1952) reader over a DEFLATE (RFC 1951) decoder, so
 * the harness reads Debian's *-ubyte.gz IDX files with libc alone.
 *
 * Data structure: canonical Huffman tables as (count per length, symbols in
 * canonical order), decoded one bit at a time, as in zlib's reference "puff".
 * Invariants: the bit reader never reads past inlen (running out is an error
 * naming the offset); the output grows geometrically; distances never reach
 * before the output start. With max_out set, lrn_gunzip copies the prefix
 * aside when it is complete and decodes on in a sliding window (the last 32
 * KiB, DEFLATE's reach) to check CRC-32 and ISIZE of the whole member;
 * lrn_gunzip_head stops at max_out unchecked.
 * Complexity: O(output * code length) time. Rejected: table-driven fast
 * decoding (zlib's inffast) - five times the code for a one-off 30 MB read that
 * takes about a second; and linking zlib, which a bare board may not have. */
#include "learn/hs_learn_parts.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#define MAXBITS 15
#define MAXLCODES 286
#define MAXDCODES 30
#define FIXLCODES 288

typedef struct {
  const unsigned char *in;
  size_t inlen, pos;     /* next byte */
  uint32_t bitbuf;
  int bitcnt;
  unsigned char *out;
  size_t outlen, outcap, max_out;
  bool full;             /* max_out reached (lrn_gunzip_head: stop) */
  bool verify;           /* past max_out, decode on in a window */
  unsigned char *prefix; /* the first max_out bytes, once out (verify) */
  uint32_t crc;          /* CRC-32 of the bytes slid out of the window */
  uint64_t dropped;      /* how many */
  jmp_buf fail;          /* out of input: the one error found deep inside */
} inf_state;

typedef struct {
  short count[MAXBITS + 1];
  short symbol[FIXLCODES];
} huff;

static int inf_bits(inf_state *s, int need) {
  uint32_t val = s->bitbuf;
  while (s->bitcnt < need) {
    if (s->pos >= s->inlen) longjmp(s->fail, 1);
    val |= (uint32_t)s->in[s->pos++] << s->bitcnt;
    s->bitcnt += 8;
  }
  s->bitbuf = (uint32_t)(val >> need);
  s->bitcnt -= need;
  return (int)(val & ((1u << need) - 1u));
}

#define INF_WINDOW 32768u

static void inf_put(inf_state *s, unsigned char c) {
  if (s->outlen == s->outcap) {
    if (s->prefix && s->outcap >= 4 * INF_WINDOW) { /* keep the window only */
      size_t n = s->outlen - INF_WINDOW;
      s->crc = lrn_crc32(s->crc, s->out, n);
      s->dropped += n;
      memmove(s->out, s->out + n, INF_WINDOW);
      s->outlen = INF_WINDOW;
    } else {
      s->outcap = s->outcap ? s->outcap * 2 : 65536;
      s->out = hs_realloc(s->out, s->outcap);
    }
  }
  s->out[s->outlen++] = c;
  if (s->max_out && !s->prefix && s->outlen >= s->max_out) {
    if (!s->verify) {
      s->full = true;
    } else {
      s->prefix = hs_malloc(s->max_out);
      memcpy(s->prefix, s->out, s->max_out);
    }
  }
}

static int inf_decode(inf_state *s, const huff *h) {
  int code = 0, first = 0, index = 0;
  for (int len = 1; len <= MAXBITS; len++) {
    code |= inf_bits(s, 1);
    int count = h->count[len];
    if (code - count < first) return h->symbol[index + (code - first)];
    index += count;
    first += count;
    first <<= 1;
    code <<= 1;
  }
  return -10; /* ran out of codes */
}

/* Build the table; returns 0 for complete, >0 incomplete, <0 over-subscribed. */
static int inf_construct(huff *h, const short *length, int n) {
  short offs[MAXBITS + 1];
  memset(h->count, 0, sizeof h->count);
  for (int sym = 0; sym < n; sym++) h->count[length[sym]]++;
  if (h->count[0] == n) return 0;
  int left = 1;
  for (int len = 1; len <= MAXBITS; len++) {
    left <<= 1;
    left -= h->count[len];
    if (left < 0) return left;
  }
  offs[1] = 0;
  for (int len = 1; len < MAXBITS; len++) offs[len + 1] = (short)(offs[len] + h->count[len]);
  for (int sym = 0; sym < n; sym++)
    if (length[sym] != 0) h->symbol[offs[length[sym]]++] = (short)sym;
  return left;
}

static const short LBASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const short LEXT[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                               3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const short DBASE[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129,
                                193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                                4097, 6145, 8193, 12289, 16385, 24577};
static const short DEXT[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                               6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* Returns NULL on success, else a static reason. */
static const char *inf_codes(inf_state *s, const huff *lc, const huff *dc) {
  for (;;) {
    if (s->full) return NULL;
    int sym = inf_decode(s, lc);
    if (sym < 0) return "invalid literal/length code";
    if (sym < 256) {
      inf_put(s, (unsigned char)sym);
    } else if (sym == 256) {
      return NULL;
    } else {
      sym -= 257;
      if (sym >= 29) return "invalid length symbol";
      int len = LBASE[sym] + inf_bits(s, LEXT[sym]);
      int dsym = inf_decode(s, dc);
      if (dsym < 0 || dsym >= 30) return "invalid distance code";
      size_t dist = (size_t)DBASE[dsym] + (size_t)inf_bits(s, DEXT[dsym]);
      if (dist > s->outlen) return "distance too far back";
      while (len-- > 0 && !s->full) inf_put(s, s->out[s->outlen - dist]);
    }
  }
}

static const char *inf_stored(inf_state *s) {
  s->bitbuf = 0;
  s->bitcnt = 0;
  if (s->pos + 4 > s->inlen) longjmp(s->fail, 1);
  unsigned len = s->in[s->pos] | (unsigned)s->in[s->pos + 1] << 8;
  unsigned nlen = s->in[s->pos + 2] | (unsigned)s->in[s->pos + 3] << 8;
  if (len != (~nlen & 0xffffu)) return "stored block length does not match its complement";
  s->pos += 4;
  if (s->pos + len > s->inlen) longjmp(s->fail, 1);
  for (unsigned i = 0; i < len && !s->full; i++) inf_put(s, s->in[s->pos + i]);
  s->pos += len;
  return NULL;
}

static const char *inf_fixed(inf_state *s) {
  static huff lc, dc;
  static int built = 0; /* const after the first call; built before threads start */
  if (!built) {
    short lengths[FIXLCODES];
    int sym = 0;
    for (; sym < 144; sym++) lengths[sym] = 8;
    for (; sym < 256; sym++) lengths[sym] = 9;
    for (; sym < 280; sym++) lengths[sym] = 7;
    for (; sym < 288; sym++) lengths[sym] = 8;
    inf_construct(&lc, lengths, FIXLCODES);
    for (sym = 0; sym < MAXDCODES; sym++) lengths[sym] = 5;
    inf_construct(&dc, lengths, MAXDCODES);
    built = 1;
  }
  return inf_codes(s, &lc, &dc);
}

static const char *inf_dynamic(inf_state *s) {
  static const short order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  short lengths[MAXLCODES + MAXDCODES];
  huff lc, dc;
  int nlen = inf_bits(s, 5) + 257, ndist = inf_bits(s, 5) + 1, ncode = inf_bits(s, 4) + 4;
  if (nlen > MAXLCODES || ndist > MAXDCODES) return "bad code counts";
  int index = 0;
  for (; index < ncode; index++) lengths[order[index]] = (short)inf_bits(s, 3);
  for (; index < 19; index++) lengths[order[index]] = 0;
  if (inf_construct(&lc, lengths, 19) != 0) return "incomplete code-length code";
  index = 0;
  while (index < nlen + ndist) {
    int sym = inf_decode(s, &lc);
    if (sym < 0) return "invalid code-length code";
    if (sym < 16) {
      lengths[index++] = (short)sym;
    } else {
      short len = 0;
      if (sym == 16) {
        if (index == 0) return "repeat with no first length";
        len = lengths[index - 1];
        sym = 3 + inf_bits(s, 2);
      } else if (sym == 17) {
        sym = 3 + inf_bits(s, 3);
      } else {
        sym = 11 + inf_bits(s, 7);
      }
      if (index + sym > nlen + ndist) return "too many lengths";
      while (sym--) lengths[index++] = len;
    }
  }
  if (lengths[256] == 0) return "no end-of-block code";
  int err = inf_construct(&lc, lengths, nlen);
  if (err < 0 || (err > 0 && nlen - lc.count[0] != 1)) return "bad literal/length code lengths";
  err = inf_construct(&dc, lengths + nlen, ndist);
  if (err < 0 || (err > 0 && ndist - dc.count[0] != 1)) return "bad distance code lengths";
  return inf_codes(s, &lc, &dc);
}

uint32_t lrn_crc32(uint32_t crc, const unsigned char *p, size_t n) {
  static uint32_t table[256];
  static int built = 0;
  if (!built) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    built = 1;
  }
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

static hs_status gunzip(const unsigned char *in, size_t inlen, size_t max_out, bool verify,
                        unsigned char **out, size_t *outlen, hs_error *err) {
  *out = NULL;
  *outlen = 0;
  if (inlen < 18 || in[0] != 0x1f || in[1] != 0x8b)
    return hs_error_set(err, HS_EPARSE, "offset 0: not a gzip file (no 1f 8b magic)");
  if (in[2] != 8) return hs_error_set(err, HS_EPARSE, "offset 2: compression method %u is not deflate", in[2]);
  unsigned flg = in[3];
  if (flg & 0xe0) return hs_error_set(err, HS_EPARSE, "offset 3: reserved flag bits set");
  size_t pos = 10;
  if (flg & 4) { /* FEXTRA */
    if (pos + 2 > inlen) return hs_error_set(err, HS_EPARSE, "offset %zu: truncated header", pos);
    pos += 2 + (in[pos] | (size_t)in[pos + 1] << 8);
  }
  for (unsigned bit = 8; bit <= 16; bit <<= 1) { /* FNAME, FCOMMENT: NUL-terminated */
    if (!(flg & bit)) continue;
    while (pos < inlen && in[pos] != 0) pos++;
    pos++;
  }
  if (flg & 2) pos += 2; /* FHCRC */
  if (pos >= inlen) return hs_error_set(err, HS_EPARSE, "offset %zu: truncated header", inlen);

  /* On the heap: longjmp leaves non-volatile locals changed after setjmp
   * indeterminate, but not the object a pointer set before setjmp points to. */
  inf_state *s = hs_calloc(1, sizeof *s);
  s->in = in;
  s->inlen = inlen;
  s->pos = pos;
  s->max_out = max_out;
  s->verify = verify;
  /* Preallocate from ISIZE (the last 4 bytes) or max_out, but never more than
   * a few times the input: in a truncated or corrupt file those bytes are
   * arbitrary, and a 2 GiB guess aborted on a 1 GiB board before the decoder
   * could say the data ends early. Real data (IDX about 2:1) fits the bound;
   * anything larger grows geometrically. */
  size_t isize = in[inlen - 4] | (size_t)in[inlen - 3] << 8 | (size_t)in[inlen - 2] << 16 |
                 (size_t)in[inlen - 1] << 24;
  size_t want = max_out ? max_out : isize;
  size_t bound = inlen < ((size_t)1 << 27) ? 8 * inlen + 65536 : ((size_t)1 << 30);
  if (want > bound) want = bound;
  if (want > 0 && want < ((size_t)1 << 31)) {
    s->outcap = want;
    s->out = hs_malloc(want);
  }
  const char *why = NULL;
  volatile size_t block_at = pos;
  if (setjmp(s->fail)) {
    free(s->out);
    free(s->prefix);
    free(s);
    return hs_error_set(err, HS_EPARSE, "offset %zu: compressed data ends early (truncated file?)", inlen);
  }
  int last = 0;
  do {
    block_at = s->pos;
    last = inf_bits(s, 1);
    int type = inf_bits(s, 2);
    if (type == 0) why = inf_stored(s);
    else if (type == 1) why = inf_fixed(s);
    else if (type == 2) why = inf_dynamic(s);
    else why = "invalid block type 3";
  } while (!why && !last && !s->full);
  hs_status st = HS_OK;
  size_t at = s->pos;
  if (why) {
    st = hs_error_set(err, HS_EPARSE, "offset %zu: %s (in the block starting near offset %zu)",
                       at, why, (size_t)block_at);
  } else if (!s->full) {
    if (at + 8 > inlen) {
      st = hs_error_set(err, HS_EPARSE, "offset %zu: missing gzip trailer", at);
    } else {
      const unsigned char *t = in + at;
      uint32_t crc = t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
      uint32_t len = t[4] | (uint32_t)t[5] << 8 | (uint32_t)t[6] << 16 | (uint32_t)t[7] << 24;
      if (lrn_crc32(s->crc, s->out, s->outlen) != crc)
        st = hs_error_set(err, HS_EPARSE, "offset %zu: CRC-32 mismatch (corrupt data)", at);
      else if (len != (uint32_t)(s->dropped + s->outlen))
        st = hs_error_set(err, HS_EPARSE, "offset %zu: length mismatch in trailer", at + 4);
    }
  }
  if (st != HS_OK) {
    free(s->out);
    free(s->prefix);
    free(s);
    return st;
  }
  if (s->prefix) { /* the window goes, the prefix is the answer */
    free(s->out);
    s->out = s->prefix;
    s->outlen = s->max_out;
  }
  if (s->max_out && s->outlen > s->max_out) s->outlen = s->max_out;
  *out = s->out ? s->out : hs_malloc(1);
  *outlen = s->outlen;
  free(s);
  return HS_OK;
}

hs_status lrn_gunzip(const unsigned char *in, size_t inlen, size_t max_out,
                          unsigned char **out, size_t *outlen, hs_error *err) {
  return gunzip(in, inlen, max_out, true, out, outlen, err);
}

hs_status lrn_gunzip_head(const unsigned char *in, size_t inlen, size_t max_out,
                          unsigned char **out, size_t *outlen, hs_error *err) {
  return gunzip(in, inlen, max_out, false, out, outlen, err);
}
