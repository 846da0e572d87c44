/* cli_suggest.h: the nearest name to a misspelt one, for "did you mean"
 * hints in messages (unknown options today; any command's names tomorrow). */
#ifndef HS_CLI_SUGGEST_H
#define HS_CLI_SUGGEST_H

#include <stddef.h>

struct option;

/* Levenshtein distance (insert, delete, substitute: 1 each) between a and b,
 * capped: any distance above cap comes back as cap + 1. O(|a| x |b|) time,
 * O(|b|) space; names longer than 63 bytes are compared on their first 63. */
size_t cli_edit_distance(const char *a, const char *b, size_t cap);

/* The name of names[0..n) nearest to word, or NULL when none is near enough
 * to be a likely typo: at most 2 edits, or up to half of the candidate's
 * length (so "pol" finds "policy", "xyz" finds nothing). Ties go to the
 * first in names[] order (a table's order, so the hint is deterministic). */
const char *cli_nearest(const char *word, const char *const *names, size_t n);

/* The same over a getopt_long table (ending with a zero entry), for the
 * text of an unknown long option ("--pol" or "--pol=x"): the nearest long
 * option's name (without "--"), or NULL. */
const char *cli_nearest_option(const char *text, const struct option *longopts);

#endif
