/* cli_suggest.c: nearest-name hints (cli_suggest.h). The classic two-row
 * Levenshtein dynamic programme over bytes, with a cap so that a hopeless
 * candidate costs no more than a hopeful one. Names here are option names
 * and table keys (tens of candidates, a few dozen bytes each), so a linear
 * scan is all the search there is.
 * Rejected: prefix matching alone ("--pol" is a prefix of both --policy and
 * --policies, and catches no transposed letters); Damerau's transpositions
 * (a second cost rule for hints that plain edits already find). */
#include "cli_suggest.h"

#include <getopt.h>
#include <string.h>

#define NAME_MAX_LEN 63

size_t cli_edit_distance(const char *a, const char *b, size_t cap) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > NAME_MAX_LEN) la = NAME_MAX_LEN;
  if (lb > NAME_MAX_LEN) lb = NAME_MAX_LEN;
  if ((la > lb ? la - lb : lb - la) > cap) return cap + 1;
  size_t row[NAME_MAX_LEN + 1], prev[NAME_MAX_LEN + 1];
  for (size_t j = 0; j <= lb; j++) prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    row[0] = i;
    size_t best = row[0];
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      size_t del = prev[j] + 1, ins = row[j - 1] + 1;
      row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
      if (row[j] < best) best = row[j];
    }
    if (best > cap) return cap + 1; /* every later row is at least this */
    memcpy(prev, row, (lb + 1) * sizeof *row);
  }
  return prev[lb] > cap ? cap + 1 : prev[lb];
}

/* Near enough to be a typo of candidate c. */
static size_t allowed(const char *c) {
  size_t half = strlen(c) / 2;
  return half > 2 ? half : 2;
}

const char *cli_nearest(const char *word, const char *const *names, size_t n) {
  const char *best = NULL;
  size_t bd = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    size_t cap = allowed(names[i]);
    size_t d = cli_edit_distance(word, names[i], cap);
    if (d <= cap && d < bd && d > 0) {
      best = names[i];
      bd = d;
    }
  }
  return best;
}

const char *cli_nearest_option(const char *text, const struct option *longopts) {
  if (strncmp(text, "--", 2) || !text[2]) return NULL;
  char word[NAME_MAX_LEN + 1];
  size_t n = strcspn(text + 2, "=");
  if (n > NAME_MAX_LEN) n = NAME_MAX_LEN;
  memcpy(word, text + 2, n);
  word[n] = '\0';
  const char *names[64];
  size_t k = 0;
  for (const struct option *o = longopts; o && o->name && k < 64; o++) names[k++] = o->name;
  return cli_nearest(word, names, k);
}
