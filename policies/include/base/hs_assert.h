/* [policies/include/base -> hetsim::status; installed: include/hetsim/base/, -lhetsim-policies]
 * hs_assert.h: invariant checks that stay on in every build type.
 *
 * A broken invariant (an event scheduled in the past, time going backwards in
 * the ledger) is a bug in the caller, not bad input: it stops the program at
 * once with the place and the condition, whether or not NDEBUG is defined.
 * Use plain assert() only for checks too costly for release builds. */
#ifndef HS_ASSERT_H
#define HS_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

#define HS_ASSERT(cond, what)                                                          \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "hetsim: %s:%d: invariant broken: %s (%s)\n", __FILE__, __LINE__, \
              (what), #cond);                                                          \
      abort();                                                                         \
    }                                                                                  \
  } while (0)

#endif
