/* profile_internal.h: what profile.c and profile_find.c share, private to
 * hetsim::devices. */
#ifndef HS_PROFILE_INTERNAL_H
#define HS_PROFILE_INTERNAL_H

#include <stdbool.h>

#include "base/hs_util.h"

/* The shipped profiles, beside the program (hs_share_path). */
#ifndef HS_PROFILE_DIR
#define HS_PROFILE_DIR hs_share_path("profiles")
#endif

/* A profile name: [a-z0-9._-]+, not starting with '.', so it can never climb
 * out of a folder. */
bool dev_name_ok(const char *s);

#endif
