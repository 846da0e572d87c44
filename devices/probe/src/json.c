/* json.c: a small strict JSON reader and writer, enough to write a profile
 * and to merge into an existing one without cJSON (not packaged for every
 * board's distribution).
 *
 * Data structure: a tree of nodes; objects keep keys in file order in
 * parallel arrays (profiles are small: linear key lookup is fine, rejected: a
 * hash map). Numbers keep their original text, so a merge rewrites untouched
 * values byte for byte. Strictness: RFC 8259 only - no comments, no trailing
 * commas, no duplicate keys, no NaN, nesting at most 64 deep; errors give the
 * byte offset. Complexity O(n) to parse, O(n) to write. */
#include "probe.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s;
  size_t n, i;
  hs_error *err;
  bool bad;
} jp;

static probe_json *jp_fail(jp *p, const char *why) {
  if (!p->bad) hs_error_set(p->err, HS_EPARSE, "offset %zu: %s", p->i, why);
  p->bad = true;
  return NULL;
}

static void jp_ws(jp *p) {
  while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
    p->i++;
}

probe_json *probe_json_new(probe_jtype t) {
  probe_json *j = hs_calloc(1, sizeof *j);
  j->type = t;
  return j;
}

void probe_json_destroy(probe_json *j) {
  if (!j) return;
  for (size_t k = 0; k < j->n; k++) {
    probe_json_destroy(j->kids[k]);
    if (j->keys) free(j->keys[k]);
  }
  free(j->kids);
  free(j->keys);
  free(j->str);
  free(j);
}

static void jp_add(probe_json *j, char *key, probe_json *v) {
  if (j->n == j->cap) {
    j->cap = j->cap ? j->cap * 2 : 4;
    j->kids = hs_realloc(j->kids, j->cap * sizeof *j->kids);
    if (j->type == PJ_OBJ) j->keys = hs_realloc(j->keys, j->cap * sizeof *j->keys);
  }
  if (j->type == PJ_OBJ) j->keys[j->n] = key;
  j->kids[j->n++] = v;
}

static int jp_hex(const char *s) {
  int v = 0;
  for (int k = 0; k < 4; k++) {
    char c = s[k];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= c - '0';
    else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
    else return -1;
  }
  return v;
}

static char *jp_string(jp *p) {
  assert(p->s[p->i] == '"');
  p->i++;
  size_t cap = 32, n = 0;
  char *out = hs_malloc(cap);
  for (;;) {
    if (p->i >= p->n) {
      free(out);
      jp_fail(p, "unterminated string");
      return NULL;
    }
    unsigned char c = (unsigned char)p->s[p->i];
    if (n + 5 > cap) {
      cap *= 2;
      out = hs_realloc(out, cap);
    }
    if (c == '"') {
      p->i++;
      break;
    }
    if (c < 0x20) {
      free(out);
      jp_fail(p, "control character in string");
      return NULL;
    }
    if (c != '\\') {
      out[n++] = (char)c;
      p->i++;
      continue;
    }
    if (p->i + 1 >= p->n) {
      free(out);
      jp_fail(p, "unterminated escape");
      return NULL;
    }
    char e = p->s[p->i + 1];
    p->i += 2;
    const char *map = strchr("\"\\/bfnrt", e);
    if (e && map) {
      static const char rep[] = "\"\\/\b\f\n\r\t";
      out[n++] = rep[map - "\"\\/bfnrt"];
      continue;
    }
    if (e != 'u' || p->i + 4 > p->n || jp_hex(p->s + p->i) < 0) {
      p->i -= 2;
      free(out);
      jp_fail(p, "bad escape in string");
      return NULL;
    }
    unsigned cp = (unsigned)jp_hex(p->s + p->i);
    p->i += 4;
    if (cp >= 0xd800 && cp < 0xdc00) {
      int lo = p->i + 6 <= p->n && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u' ? jp_hex(p->s + p->i + 2) : -1;
      if (lo < 0xdc00 || lo > 0xdfff) {
        free(out);
        jp_fail(p, "unpaired surrogate in string");
        return NULL;
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)lo - 0xdc00);
      p->i += 6;
    } else if (cp >= 0xdc00 && cp < 0xe000) {
      free(out);
      jp_fail(p, "unpaired surrogate in string");
      return NULL;
    }
    if (cp < 0x80) out[n++] = (char)cp;
    else if (cp < 0x800) {
      out[n++] = (char)(0xc0 | cp >> 6);
      out[n++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out[n++] = (char)(0xe0 | cp >> 12);
      out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      out[n++] = (char)(0x80 | (cp & 0x3f));
    } else {
      out[n++] = (char)(0xf0 | cp >> 18);
      out[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
      out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      out[n++] = (char)(0x80 | (cp & 0x3f));
    }
  }
  out[n] = '\0';
  return out;
}

static probe_json *jp_value(jp *p, int depth);

static probe_json *jp_number(jp *p) {
  size_t st = p->i, i = p->i;
  const char *s = p->s;
  if (i < p->n && s[i] == '-') i++;
  if (i < p->n && s[i] == '0') i++;
  else if (i < p->n && s[i] >= '1' && s[i] <= '9')
    while (i < p->n && s[i] >= '0' && s[i] <= '9') i++;
  else return jp_fail(p, "bad number");
  if (i < p->n && s[i] == '.') {
    i++;
    if (i >= p->n || s[i] < '0' || s[i] > '9') return jp_fail(p, "bad number: digits must follow '.'");
    while (i < p->n && s[i] >= '0' && s[i] <= '9') i++;
  }
  if (i < p->n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < p->n && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= p->n || s[i] < '0' || s[i] > '9') return jp_fail(p, "bad number: exponent has no digits");
    while (i < p->n && s[i] >= '0' && s[i] <= '9') i++;
  }
  probe_json *j = probe_json_new(PJ_NUM);
  j->str = hs_malloc(i - st + 1);
  memcpy(j->str, s + st, i - st);
  j->str[i - st] = '\0';
  j->num = strtod(j->str, NULL);
  if (!isfinite(j->num)) {
    probe_json_destroy(j);
    return jp_fail(p, "number out of range");
  }
  p->i = i;
  return j;
}

/* Duplicate keys: each key is compared with the earlier ones while an object
 * is small (profiles hold a dozen keys per object); past JP_SCAN_MAX keys the
 * check waits for the closing brace and sorts (key, offset) pairs once, so a
 * hostile file of 10^5 keys costs milliseconds instead of the 18 s of a
 * quadratic scan. Either way the reported duplicate is the first repeat in
 * file order, at its offset. */
#define JP_SCAN_MAX 32

typedef struct {
  const char *key;
  size_t at;
} jp_keyat;

static int jp_keyat_cmp(const void *a, const void *b) {
  const jp_keyat *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* Offset of the first repeated key of obj (key offsets in `at`), or SIZE_MAX:
 * after sorting by (key, offset), the second entry of each run of equal keys
 * is that key's first repeat; the earliest of those wins. */
static size_t jp_first_repeat(const probe_json *obj, const size_t *at) {
  jp_keyat *v = hs_malloc(obj->n * sizeof *v);
  for (size_t k = 0; k < obj->n; k++) v[k] = (jp_keyat){obj->keys[k], at[k]};
  qsort(v, obj->n, sizeof *v, jp_keyat_cmp);
  size_t first = SIZE_MAX;
  for (size_t k = 1; k < obj->n; k++) {
    bool second = strcmp(v[k].key, v[k - 1].key) == 0 && (k == 1 || strcmp(v[k - 1].key, v[k - 2].key) != 0);
    if (second && v[k].at < first) first = v[k].at;
  }
  free(v);
  return first;
}

static probe_json *jp_value(jp *p, int depth) {
  jp_ws(p);
  if (p->i >= p->n) return jp_fail(p, "unexpected end of input");
  if (depth > 64) return jp_fail(p, "nested more than 64 deep");
  char c = p->s[p->i];
  if (c == '{' || c == '[') {
    bool obj = c == '{';
    probe_json *j = probe_json_new(obj ? PJ_OBJ : PJ_ARR);
    p->i++;
    jp_ws(p);
    if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
      p->i++;
      return j;
    }
    size_t *offs = NULL, noffs = 0, ocap = 0; /* every key's offset (objects) */
    for (;;) {
      char *key = NULL;
      jp_ws(p);
      if (obj) {
        if (p->i >= p->n || p->s[p->i] != '"') {
          jp_fail(p, "expected a string key");
          goto bad;
        }
        size_t at = p->i;
        key = jp_string(p);
        if (!key) goto bad;
        if (j->n < JP_SCAN_MAX && probe_json_get(j, key)) {
          free(key);
          p->i = at;
          jp_fail(p, "duplicate key");
          goto bad;
        }
        if (noffs == ocap) {
          ocap = ocap ? 2 * ocap : 16;
          offs = hs_realloc(offs, ocap * sizeof *offs);
        }
        offs[noffs++] = at;
        jp_ws(p);
        if (p->i >= p->n || p->s[p->i] != ':') {
          free(key);
          jp_fail(p, "expected ':'");
          goto bad;
        }
        p->i++;
      }
      probe_json *v = jp_value(p, depth + 1);
      if (!v) {
        free(key);
        goto bad;
      }
      jp_add(j, key, v);
      jp_ws(p);
      if (p->i < p->n && p->s[p->i] == ',') {
        p->i++;
        jp_ws(p);
        if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
          jp_fail(p, "trailing comma");
          goto bad;
        }
        continue;
      }
      if (p->i < p->n && p->s[p->i] == (obj ? '}' : ']')) {
        size_t end = p->i + 1;
        size_t rep = obj && j->n > JP_SCAN_MAX ? jp_first_repeat(j, offs) : SIZE_MAX;
        if (rep != SIZE_MAX) {
          p->i = rep;
          jp_fail(p, "duplicate key");
          goto bad;
        }
        p->i = end;
        free(offs);
        return j;
      }
      jp_fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
      goto bad;
    }
  bad:
    free(offs);
    probe_json_destroy(j);
    return NULL;
  }
  if (c == '"') {
    char *s = jp_string(p);
    if (!s) return NULL;
    probe_json *j = probe_json_new(PJ_STR);
    j->str = s;
    return j;
  }
  if (c == '-' || (c >= '0' && c <= '9')) return jp_number(p);
  static const struct {
    const char *w;
    probe_jtype t;
    bool b;
  } lit[] = {{"true", PJ_BOOL, true}, {"false", PJ_BOOL, false}, {"null", PJ_NULL, false}};
  for (int k = 0; k < 3; k++) {
    size_t l = strlen(lit[k].w);
    if (p->n - p->i >= l && memcmp(p->s + p->i, lit[k].w, l) == 0) {
      p->i += l;
      probe_json *j = probe_json_new(lit[k].t);
      j->b = lit[k].b;
      return j;
    }
  }
  return jp_fail(p, "unexpected character");
}

probe_json *probe_json_parse(const char *text, size_t len, hs_error *err) {
  jp p = {text, len, 0, err, false};
  probe_json *j = jp_value(&p, 0);
  if (!j) return NULL;
  jp_ws(&p);
  if (p.i != p.n) {
    probe_json_destroy(j);
    jp_fail(&p, "text after the JSON value");
    return NULL;
  }
  return j;
}

probe_json *probe_json_get(const probe_json *obj, const char *key) {
  if (!obj || obj->type != PJ_OBJ) return NULL;
  for (size_t k = 0; k < obj->n; k++)
    if (strcmp(obj->keys[k], key) == 0) return obj->kids[k];
  return NULL;
}

probe_json *probe_json_num(double v) {
  assert(isfinite(v));
  probe_json *j = probe_json_new(PJ_NUM);
  j->num = v;
  /* Counts (samples seen, batch sizes) exactly; measured figures to 6
   * significant digits, well below their run-to-run noise. */
  if (v == floor(v) && fabs(v) < 1e15) j->str = probe_xasprintf("%.0f", v);
  else j->str = probe_xasprintf("%.6g", v);
  return j;
}

probe_json *probe_json_str(const char *s) {
  probe_json *j = probe_json_new(PJ_STR);
  j->str = hs_strdup(s);
  return j;
}

probe_json *probe_json_bool(bool b) {
  probe_json *j = probe_json_new(PJ_BOOL);
  j->b = b;
  return j;
}

void probe_json_set(probe_json *obj, const char *key, probe_json *v) {
  assert(obj->type == PJ_OBJ);
  for (size_t k = 0; k < obj->n; k++)
    if (strcmp(obj->keys[k], key) == 0) {
      probe_json_destroy(obj->kids[k]);
      obj->kids[k] = v;
      return;
    }
  jp_add(obj, hs_strdup(key), v);
}

void probe_json_push(probe_json *arr, probe_json *v) {
  assert(arr->type == PJ_ARR);
  jp_add(arr, NULL, v);
}

typedef struct {
  char *b;
  size_t n, cap;
} jbuf;

static void jb_put(jbuf *b, const char *s, size_t l) {
  if (b->n + l + 1 > b->cap) {
    while (b->n + l + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 1024;
    b->b = hs_realloc(b->b, b->cap);
  }
  memcpy(b->b + b->n, s, l);
  b->n += l;
  b->b[b->n] = '\0';
}

static void jb_str(jbuf *b, const char *s) {
  jb_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    if (*p == '"' || *p == '\\') {
      esc[0] = '\\';
      esc[1] = (char)*p;
      jb_put(b, esc, 2);
    } else if (*p < 0x20) {
      snprintf(esc, sizeof esc, "\\u%04x", *p);
      jb_put(b, esc, 6);
    } else {
      jb_put(b, (const char *)p, 1);
    }
  }
  jb_put(b, "\"", 1);
}

static bool jw_flat(const probe_json *j) { /* scalars only, or arrays of scalars */
  if (j->type == PJ_OBJ) return false;
  for (size_t k = 0; k < j->n; k++)
    if (j->kids[k]->type == PJ_OBJ || j->kids[k]->type == PJ_ARR) return false;
  return true;
}

static void jw(jbuf *b, const probe_json *j, int ind) {
  static const char spaces[] = "                                                                ";
  switch (j->type) {
  case PJ_NULL: jb_put(b, "null", 4); break;
  case PJ_BOOL: jb_put(b, j->b ? "true" : "false", j->b ? 4 : 5); break;
  case PJ_NUM: jb_put(b, j->str, strlen(j->str)); break;
  case PJ_STR: jb_str(b, j->str); break;
  case PJ_ARR:
  case PJ_OBJ: {
    bool obj = j->type == PJ_OBJ;
    if (j->n == 0) {
      jb_put(b, obj ? "{}" : "[]", 2);
      break;
    }
    bool flat = !obj && jw_flat(j);
    /* arrays of flat arrays (a loss curve) go one inner array per line */
    jb_put(b, obj ? "{" : "[", 1);
    for (size_t k = 0; k < j->n; k++) {
      if (k) jb_put(b, ",", 1);
      if (flat) {
        if (k) jb_put(b, " ", 1);
      } else {
        jb_put(b, "\n", 1);
        int in = ind + 2 < 64 ? ind + 2 : 64;
        jb_put(b, spaces, (size_t)in);
      }
      if (obj) {
        jb_str(b, j->keys[k]);
        jb_put(b, ": ", 2);
      }
      jw(b, j->kids[k], ind + 2);
    }
    if (!flat) {
      jb_put(b, "\n", 1);
      jb_put(b, spaces, (size_t)(ind < 64 ? ind : 64));
    }
    jb_put(b, obj ? "}" : "]", 1);
    break;
  }
  }
}

char *probe_json_write(const probe_json *j) {
  jbuf b = {NULL, 0, 0};
  jw(&b, j, 0);
  jb_put(&b, "\n", 1);
  return b.b;
}
