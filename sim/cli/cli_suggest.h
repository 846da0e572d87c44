/* cli_suggest.h: "did you mean" for an unknown long option, from the
 * command's getopt_long table (the rule is the base's hs_nearest). */
#ifndef HS_CLI_SUGGEST_H
#define HS_CLI_SUGGEST_H

struct option;

/* For the text of an unknown long option ("--pol" or "--pol=x"): the nearest
 * long option's name (without "--"), or NULL when none is near enough. */
const char *cli_nearest_option(const char *text, const struct option *longopts);

#endif
