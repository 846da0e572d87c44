/* state.c: hs_controller_save / hs_controller_restore, the controller's state
 * as JSON text, so a trainer that restarts keeps its estimates.
 *
 * The format (version 1) is documented in hs_policy.h. What is saved is what a
 * policy's state hook describes (pol_policy.h: named fields with a type, a
 * count and an allowed range) plus the controller's own round count,
 * reallocated flag and allocation; the policy's keys are saved too, so that a
 * state is restored only into a controller with the same configuration.
 *
 * Restore never touches c until everything is checked: it parses the text
 * into a small tree, checks the header against c, builds a fresh controller
 * with c's configuration, groups and budget, writes the saved values into it
 * (ranges checked per value, then the policy's state_check), and only then
 * swaps the two controllers' contents. A failed restore leaves c exactly as it
 * was; a successful one is as if c had run those rounds. Cost: O(text) to
 * parse, O(n) per field.
 *
 * The parser reads JSON objects, arrays, numbers, strings without escapes
 * other than \" and \\, true, false and null, nested at most 8 deep: the
 * subset the writer produces (and a person editing it by hand keeps).
 * Rejected: cJSON (the controller library is libc + libm only); a binary
 * format (a person must be able to read and diff a trainer's state). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "pol_policy.h"

#define STATE_FORMAT "hetsim-controller-state"
#define STATE_VERSION 1
#define STATE_DEPTH_MAX 8

/* --- writing ------------------------------------------------------------------ */

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (k < 0) k = 0; /* cannot happen with these formats */
    if ((size_t)k < b->cap - b->len) {
      b->len += (size_t)k;
      return;
    }
    b->cap = 2 * b->cap + (size_t)k + 64;
    b->p = hs_realloc(b->p, b->cap);
  }
}

static void sb_real(sbuf *b, double v) {
  if (isfinite(v))
    sb_printf(b, "%.17g", v);
  else
    sb_printf(b, "null"); /* refused on restore: the state was not finite */
}

static void sb_value(sbuf *b, pol_state_type t, const void *base, size_t i) {
  switch (t) {
  case POL_S_REAL:
    sb_real(b, ((const double *)base)[i]);
    break;
  case POL_S_U64:
    sb_printf(b, "%llu", (unsigned long long)((const uint64_t *)base)[i]);
    break;
  case POL_S_U32:
    sb_printf(b, "%lu", (unsigned long)((const uint32_t *)base)[i]);
    break;
  case POL_S_FLAG:
    sb_printf(b, "%d", ((const unsigned char *)base)[i] ? 1 : 0);
    break;
  }
}

static void key_cb(const char *key, const char *value_text, void *ud) {
  sbuf *b = ud;
  sb_printf(b, "%s\"%s\": %s", b->p[b->len - 1] == '{' ? "" : ", ", key, value_text);
}

/* The group id of every participant (0 for all without groups), heap. */
static uint32_t *group_ids(const hs_controller *c) {
  uint32_t *g = hs_calloc(c->n, sizeof *g);
  if (!c->gid) return g;
  for (size_t k = 0; k < c->ngroups; k++)
    for (size_t j = c->gstart[k]; j < c->gstart[k + 1]; j++) g[c->order[j]] = c->gid[k];
  return g;
}

char *hs_controller_save(const hs_controller *c, hs_error *err) {
  if (!c->type->state) {
    hs_error_set(err, HS_EUNSUP, "policy \"%s\": its state cannot be saved", c->type->name);
    return NULL;
  }
  pol_state_field f[POL_STATE_MAX];
  size_t nf = c->type->state(c, f);
  sbuf b = {.cap = 256};
  b.p = hs_malloc(b.cap);
  sb_printf(&b, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"kind\": \"%s\",\n", STATE_FORMAT,
            STATE_VERSION, c->cfg.kind);
  sb_printf(&b, "  \"participants\": %zu,\n  \"budget\": %llu,\n  \"groups\": ", c->n,
            (unsigned long long)c->budget);
  if (c->gid) {
    uint32_t *g = group_ids(c);
    sb_printf(&b, "[");
    for (size_t i = 0; i < c->n; i++) sb_printf(&b, "%s%lu", i ? ", " : "", (unsigned long)g[i]);
    sb_printf(&b, "]");
    hs_free(g);
  } else {
    sb_printf(&b, "null");
  }
  sb_printf(&b, ",\n  \"config\": {");
  hs_policy_config_foreach(&c->cfg, key_cb, &b);
  sb_printf(&b, "},\n  \"rounds\": %llu,\n  \"reallocated\": %s,\n  \"allocation\": [",
            (unsigned long long)c->rounds, c->reallocated ? "true" : "false");
  for (size_t i = 0; i < c->n; i++)
    sb_printf(&b, "%s%llu", i ? ", " : "", (unsigned long long)c->alloc[i]);
  sb_printf(&b, "],\n  \"state\": {");
  for (size_t k = 0; k < nf; k++) {
    const void *base = f[k].grow ? *(void *const *)f[k].ptr : f[k].ptr;
    sb_printf(&b, "%s\n    \"%s\": ", k ? "," : "", f[k].name);
    bool scalar = f[k].count == 1 && !f[k].grow;
    if (!scalar) sb_printf(&b, "[");
    for (size_t i = 0; i < f[k].count; i++) {
      if (i) sb_printf(&b, ", ");
      sb_value(&b, f[k].type, base, i);
    }
    if (!scalar) sb_printf(&b, "]");
  }
  sb_printf(&b, "%s}\n}\n", nf ? "\n  " : "");
  return b.p;
}

/* --- parsing ------------------------------------------------------------------ */

typedef enum jtype { J_NUM, J_STR, J_TRUE, J_FALSE, J_NULL, J_ARR, J_OBJ } jtype;

typedef struct jnode {
  jtype t;
  const char *s; /* J_NUM: the number's text; J_STR: its content (no quotes) */
  size_t len;
  const char *key; /* in an object: the member's name (not NUL-terminated) */
  size_t keylen;
  size_t count; /* J_ARR / J_OBJ: children */
  struct jnode *kid, *next;
} jnode;

typedef struct jparser {
  const char *text, *p;
  hs_error *err;
  bool failed;
} jparser;

static void jfree(jnode *n) {
  while (n) {
    jnode *next = n->next;
    jfree(n->kid);
    hs_free(n);
    n = next;
  }
}

static void jfail(jparser *jp, const char *what) {
  if (jp->failed) return;
  jp->failed = true;
  hs_error_set(jp->err, HS_EPARSE, "state: byte %zu: %s", (size_t)(jp->p - jp->text) + 1, what);
}

static void skip_ws(jparser *jp) {
  while (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r') jp->p++;
}

/* A string's content; *len its length; NULL on error. */
static const char *jstring(jparser *jp, size_t *len) {
  if (*jp->p != '"') {
    jfail(jp, "expected a string");
    return NULL;
  }
  const char *s = ++jp->p;
  while (*jp->p && *jp->p != '"') {
    if (*jp->p == '\\') {
      jfail(jp, "escapes are not part of the state format");
      return NULL;
    }
    if ((unsigned char)*jp->p < 0x20) {
      jfail(jp, "control character in a string");
      return NULL;
    }
    jp->p++;
  }
  if (*jp->p != '"') {
    jfail(jp, "unterminated string");
    return NULL;
  }
  *len = (size_t)(jp->p - s);
  jp->p++;
  return s;
}

static jnode *jvalue(jparser *jp, int depth) {
  skip_ws(jp);
  if (depth > STATE_DEPTH_MAX) {
    jfail(jp, "nested too deep");
    return NULL;
  }
  jnode *n = hs_calloc(1, sizeof *n);
  char ch = *jp->p;
  if (ch == '{' || ch == '[') {
    bool obj = ch == '{';
    n->t = obj ? J_OBJ : J_ARR;
    jp->p++;
    skip_ws(jp);
    jnode **tail = &n->kid;
    if (*jp->p == (obj ? '}' : ']')) {
      jp->p++;
      return n;
    }
    for (;;) {
      const char *key = NULL;
      size_t keylen = 0;
      if (obj) {
        skip_ws(jp);
        if (!(key = jstring(jp, &keylen))) break;
        skip_ws(jp);
        if (*jp->p != ':') {
          jfail(jp, "expected ':'");
          break;
        }
        jp->p++;
      }
      jnode *kid = jvalue(jp, depth + 1);
      if (!kid) break;
      kid->key = key;
      kid->keylen = keylen;
      *tail = kid;
      tail = &kid->next;
      n->count++;
      skip_ws(jp);
      if (*jp->p == ',') {
        jp->p++;
        continue;
      }
      if (*jp->p == (obj ? '}' : ']')) {
        jp->p++;
        return n;
      }
      jfail(jp, obj ? "expected ',' or '}'" : "expected ',' or ']'");
      break;
    }
    jfree(n);
    return NULL;
  }
  if (ch == '"') {
    n->t = J_STR;
    if (!(n->s = jstring(jp, &n->len))) {
      jfree(n);
      return NULL;
    }
    return n;
  }
  static const struct {
    const char *word;
    jtype t;
  } words[] = {{"true", J_TRUE}, {"false", J_FALSE}, {"null", J_NULL}};
  for (size_t i = 0; i < 3; i++) {
    size_t wl = strlen(words[i].word);
    if (strncmp(jp->p, words[i].word, wl) == 0) {
      n->t = words[i].t;
      jp->p += wl;
      return n;
    }
  }
  if (ch == '-' || (ch >= '0' && ch <= '9')) {
    n->t = J_NUM;
    n->s = jp->p;
    while (strchr("+-.eE0123456789", *jp->p) && *jp->p) jp->p++;
    n->len = (size_t)(jp->p - n->s);
    return n;
  }
  jfail(jp, "expected a value");
  jfree(n);
  return NULL;
}

static jnode *jmember(const jnode *obj, const char *key) {
  size_t kl = strlen(key);
  for (jnode *k = obj->kid; k; k = k->next)
    if (k->keylen == kl && memcmp(k->key, key, kl) == 0) return k;
  return NULL;
}

/* --- reading values ------------------------------------------------------------ */

/* The member `key` of obj, of type t; HS_EMISSING / HS_ETYPE naming it. */
static hs_status need(const jnode *obj, const char *where, const char *key, jtype t,
                      const jnode **out, hs_error *err) {
  const jnode *m = jmember(obj, key);
  if (!m) return hs_error_set(err, HS_EMISSING, "state: %s%s: missing", where, key);
  bool ok = m->t == t || (t == J_TRUE && m->t == J_FALSE);
  if (!ok) {
    static const char *names[] = {"a number", "a string", "true or false", "true or false",
                                  "null", "an array", "an object"};
    return hs_error_set(err, HS_ETYPE, "state: %s%s: expected %s", where, key, names[t]);
  }
  *out = m;
  return HS_OK;
}

static hs_status num_u64(const jnode *n, const char *what, size_t i, uint64_t *v, hs_error *err) {
  char tmp[64];
  if (n->t != J_NUM || n->len == 0 || n->len >= sizeof tmp || n->s[0] == '-')
    return hs_error_set(err, HS_EINVAL, "state: %s[%zu]: not a non-negative integer", what, i);
  memcpy(tmp, n->s, n->len);
  tmp[n->len] = '\0';
  char *end;
  errno = 0;
  unsigned long long x = strtoull(tmp, &end, 10);
  if (*end || errno)
    return hs_error_set(err, HS_EINVAL, "state: %s[%zu]: \"%s\" is not a non-negative integer", what,
                        i, tmp);
  *v = x;
  return HS_OK;
}

static hs_status num_real(const jnode *n, const char *what, size_t i, double *v, hs_error *err) {
  char tmp[64];
  if (n->t != J_NUM || n->len == 0 || n->len >= sizeof tmp)
    return hs_error_set(err, HS_EINVAL, "state: %s[%zu]: not a finite number", what, i);
  memcpy(tmp, n->s, n->len);
  tmp[n->len] = '\0';
  char *end;
  double x = strtod(tmp, &end);
  if (*end || !isfinite(x))
    return hs_error_set(err, HS_EINVAL, "state: %s[%zu]: \"%s\" is not a finite number", what, i,
                        tmp);
  *v = x;
  return HS_OK;
}

/* Writes one saved field into f (the fresh controller's state). */
static hs_status read_field(const jnode *v, const pol_state_field *f, hs_error *err) {
  bool scalar = f->count == 1 && !f->grow;
  const jnode *item = v;
  size_t count = 1;
  if (!scalar) {
    if (v->t != J_ARR) return hs_error_set(err, HS_ETYPE, "state.%s: expected an array", f->name);
    count = v->count;
    item = v->kid;
    if (f->grow) {
      if (count > f->max_count)
        return hs_error_set(err, HS_ERANGE, "state.%s: %zu values, at most %llu", f->name, count,
                            (unsigned long long)f->max_count);
    } else if (count != f->count) {
      return hs_error_set(err, HS_EINVAL, "state.%s: %zu values, expected %zu", f->name, count,
                          f->count);
    }
  }
  static const size_t width[] = {sizeof(double), sizeof(uint64_t), sizeof(uint32_t), 1};
  void *dst = f->ptr;
  if (f->grow) {
    void **slot = f->ptr;
    *slot = hs_realloc(*slot, count ? count * width[f->type] : 1);
    *f->grow = count;
    dst = *slot;
  }
  for (size_t i = 0; i < count; i++, item = item->next) {
    double x = 0; /* set by num_real before any use; GCC -O2 cannot see it */
    uint64_t u = 0;
    hs_status st;
    if (f->type == POL_S_REAL) {
      st = num_real(item, f->name, i, &x, err);
    } else {
      st = num_u64(item, f->name, i, &u, err);
      x = (double)u;
    }
    if (st != HS_OK) return st;
    if (x < f->lo || x > f->hi)
      return hs_error_set(err, HS_ERANGE, "state.%s[%zu]: %.17g is outside [%g, %g]", f->name, i, x,
                          f->lo, f->hi);
    switch (f->type) {
    case POL_S_REAL:
      ((double *)dst)[i] = x;
      break;
    case POL_S_U64:
      ((uint64_t *)dst)[i] = u;
      break;
    case POL_S_U32:
      ((uint32_t *)dst)[i] = (uint32_t)u;
      break;
    case POL_S_FLAG:
      ((unsigned char *)dst)[i] = (unsigned char)u;
      break;
    }
  }
  return HS_OK;
}

typedef struct cfg_cmp {
  const jnode *saved;
  hs_error *err;
  hs_status st;
  size_t seen;
} cfg_cmp;

static void cmp_cb(const char *key, const char *value_text, void *ud) {
  cfg_cmp *k = ud;
  if (k->st != HS_OK) return;
  k->seen++;
  const jnode *m = jmember(k->saved, key);
  if (!m || m->t != J_NUM) {
    k->st = hs_error_set(k->err, HS_EINVAL, "state: config.%s: missing (this controller: %s)", key,
                         value_text);
    return;
  }
  if (m->len == strlen(value_text) && memcmp(m->s, value_text, m->len) == 0) return;
  char tmp[64];
  size_t l = m->len < sizeof tmp - 1 ? m->len : sizeof tmp - 1;
  memcpy(tmp, m->s, l);
  tmp[l] = '\0';
  if (strtod(tmp, NULL) != strtod(value_text, NULL))
    k->st = hs_error_set(k->err, HS_EINVAL,
                         "state: config.%s: saved %s, this controller %s (restore into a "
                         "controller with the saved configuration)",
                         key, tmp, value_text);
}

/* Everything but the policy's own fields: header, config, groups. */
static hs_status check_header(const hs_controller *c, const jnode *root, hs_error *err) {
  const jnode *m;
  hs_status st;
  if ((st = need(root, "", "format", J_STR, &m, err)) != HS_OK) return st;
  if (m->len != strlen(STATE_FORMAT) || memcmp(m->s, STATE_FORMAT, m->len) != 0)
    return hs_error_set(err, HS_EINVAL, "state: format: not \"%s\"", STATE_FORMAT);
  uint64_t u;
  if ((st = need(root, "", "version", J_NUM, &m, err)) != HS_OK) return st;
  if ((st = num_u64(m, "version", 0, &u, err)) != HS_OK) return st;
  if (u != STATE_VERSION)
    return hs_error_set(err, HS_EUNSUP, "state: version: %llu, this library reads %d",
                        (unsigned long long)u, STATE_VERSION);
  if ((st = need(root, "", "kind", J_STR, &m, err)) != HS_OK) return st;
  if (m->len != strlen(c->cfg.kind) || memcmp(m->s, c->cfg.kind, m->len) != 0)
    return hs_error_set(err, HS_EINVAL, "state: kind: saved \"%.*s\", this controller \"%s\"",
                        (int)(m->len < 64 ? m->len : 64), m->s, c->cfg.kind);
  if ((st = need(root, "", "participants", J_NUM, &m, err)) != HS_OK) return st;
  if ((st = num_u64(m, "participants", 0, &u, err)) != HS_OK) return st;
  if (u != c->n)
    return hs_error_set(err, HS_EINVAL, "state: participants: saved %llu, this controller %zu",
                        (unsigned long long)u, c->n);
  if ((st = need(root, "", "budget", J_NUM, &m, err)) != HS_OK) return st;
  if ((st = num_u64(m, "budget", 0, &u, err)) != HS_OK) return st;
  if (u != c->budget)
    return hs_error_set(err, HS_EINVAL, "state: budget: saved %llu, this controller %llu",
                        (unsigned long long)u, (unsigned long long)c->budget);
  m = jmember(root, "groups");
  if (!m) return hs_error_set(err, HS_EMISSING, "state: groups: missing");
  if ((m->t == J_NULL) != (c->gid == NULL))
    return hs_error_set(err, HS_EINVAL, "state: groups: saved %s, this controller %s",
                        m->t == J_NULL ? "none" : "some", c->gid ? "has groups" : "has none");
  if (c->gid) {
    if (m->t != J_ARR || m->count != c->n)
      return hs_error_set(err, HS_EINVAL, "state: groups: expected %zu group ids", c->n);
    uint32_t *g = group_ids(c);
    const jnode *k = m->kid;
    for (size_t i = 0; i < c->n && st == HS_OK; i++, k = k->next) {
      st = num_u64(k, "groups", i, &u, err);
      if (st == HS_OK && u != g[i])
        st = hs_error_set(err, HS_EINVAL, "state: groups[%zu]: saved %llu, this controller %lu", i,
                          (unsigned long long)u, (unsigned long)g[i]);
    }
    hs_free(g);
    if (st != HS_OK) return st;
  }
  if ((st = need(root, "", "config", J_OBJ, &m, err)) != HS_OK) return st;
  cfg_cmp k = {.saved = m, .err = err, .st = HS_OK};
  hs_policy_config_foreach(&c->cfg, cmp_cb, &k);
  if (k.st != HS_OK) return k.st;
  if (m->count != k.seen)
    return hs_error_set(err, HS_EINVAL, "state: config: %zu keys, this controller's kind has %zu",
                        m->count, k.seen);
  return HS_OK;
}

/* The saved rounds, flag, allocation and policy fields into the fresh t. */
static hs_status fill(hs_controller *t, const jnode *root, hs_error *err) {
  const jnode *m;
  hs_status st;
  if ((st = need(root, "", "rounds", J_NUM, &m, err)) != HS_OK) return st;
  if ((st = num_u64(m, "rounds", 0, &t->rounds, err)) != HS_OK) return st;
  if ((st = need(root, "", "reallocated", J_TRUE, &m, err)) != HS_OK) return st;
  t->reallocated = m->t == J_TRUE;
  if ((st = need(root, "", "allocation", J_ARR, &m, err)) != HS_OK) return st;
  if (m->count != t->n)
    return hs_error_set(err, HS_EINVAL, "state: allocation: %zu values, expected %zu", m->count,
                        t->n);
  const jnode *k = m->kid;
  for (size_t i = 0; i < t->n; i++, k = k->next)
    if ((st = num_u64(k, "allocation", i, &t->alloc[i], err)) != HS_OK) return st;
  for (size_t g = 0; g < t->ngroups; g++) {
    size_t cnt;
    const uint32_t *idx = pol_group(t, g, &cnt);
    uint64_t sum = 0;
    for (size_t j = 0; j < cnt; j++) {
      if (t->alloc[idx[j]] > t->gbudget[g])
        return hs_error_set(err, HS_ERANGE, "state: allocation[%lu]: more than the budget",
                            (unsigned long)idx[j]);
      sum += t->alloc[idx[j]];
    }
    if (sum != t->gbudget[g])
      return hs_error_set(err, HS_EINVAL, "state: allocation: group %zu sums to %llu, not %llu", g,
                          (unsigned long long)sum, (unsigned long long)t->gbudget[g]);
  }
  if ((st = need(root, "", "state", J_OBJ, &m, err)) != HS_OK) return st;
  pol_state_field f[POL_STATE_MAX];
  size_t nf = t->type->state(t, f);
  for (size_t j = 0; j < nf; j++) {
    const jnode *v = jmember(m, f[j].name);
    if (!v) return hs_error_set(err, HS_EMISSING, "state: state.%s: missing", f[j].name);
    if ((st = read_field(v, &f[j], err)) != HS_OK) return st;
  }
  if (m->count != nf)
    return hs_error_set(err, HS_EINVAL, "state: state: %zu fields, policy \"%s\" has %zu", m->count,
                        t->type->name, nf);
  if (t->type->state_check) return t->type->state_check(t, err);
  return HS_OK;
}

hs_status hs_controller_restore(hs_controller *c, const char *text, hs_error *err) {
  if (!c->type->state)
    return hs_error_set(err, HS_EUNSUP, "policy \"%s\": its state cannot be restored",
                        c->type->name);
  if (!text) return hs_error_set(err, HS_EINVAL, "state: no text");
  jparser jp = {.text = text, .p = text, .err = err};
  jnode *root = jvalue(&jp, 0);
  if (root) {
    skip_ws(&jp);
    if (*jp.p) jfail(&jp, "text after the state object");
  }
  if (jp.failed) {
    jfree(root);
    return HS_EPARSE;
  }
  hs_status st = HS_OK;
  hs_controller *t = NULL;
  if (root->t != J_OBJ) {
    st = hs_error_set(err, HS_ETYPE, "state: expected a JSON object");
    goto done;
  }
  if ((st = check_header(c, root, err)) != HS_OK) goto done;
  uint32_t *g = c->gid ? group_ids(c) : NULL;
  t = hs_controller_create(&c->cfg, c->n, g, c->budget, err);
  hs_free(g);
  if (!t) { /* c exists with this configuration, so this cannot fail */
    st = HS_ESTATE;
    goto done;
  }
  if ((st = fill(t, root, err)) != HS_OK) goto done;
  hs_controller swap = *c;
  *c = *t;
  *t = swap;
done:
  hs_controller_destroy(t);
  jfree(root);
  return st;
}
