/* cli_suggest.c: nearest-name hints for the commands' options
 * (cli_suggest.h). The distance and the rule for "near enough" are the
 * base's (hs_nearest in base/hs_util.h), shared with the policy keys and
 * every other name a message may suggest, so that one word is judged the
 * same way wherever it is refused; this file only turns a getopt_long table
 * and an unknown "--pol=x" into that call.
 * Rejected: an edit distance of the CLI's own (a second rule for the same
 * question, which the first version of this file was). */
#include "cli_suggest.h"

#include <getopt.h>
#include <string.h>

#include "base/hs_util.h"

#define NAME_MAX_LEN 63
#define MAX_OPTIONS 64

const char *cli_nearest_option(const char *text, const struct option *longopts) {
  if (strncmp(text, "--", 2) || !text[2]) return NULL;
  char word[NAME_MAX_LEN + 1];
  size_t n = strcspn(text + 2, "=");
  if (n > NAME_MAX_LEN) n = NAME_MAX_LEN;
  memcpy(word, text + 2, n);
  word[n] = '\0';
  const char *names[MAX_OPTIONS];
  size_t k = 0;
  for (const struct option *o = longopts; o && o->name && k < MAX_OPTIONS; o++)
    names[k++] = o->name;
  return hs_nearest(word, names, k);
}
