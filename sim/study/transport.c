/* transport.c: the in-process transport (hs_transport.h) and the two small
 * collectives built from bcast and gather. With one rank a broadcast has
 * nothing to send and a gather is the rank's own block, so the study code
 * runs its collectives unchanged in `hetsim`. */
#include "sim/hs_transport.h"

#include <limits.h>
#include <string.h>

#include "base/hs_alloc.h"
#include "base/hs_assert.h"

static int local_rank(void) { return 0; }
static int local_size(void) { return 1; }
static void local_bcast(void *buf, size_t bytes, int root) {
  (void)buf;
  (void)bytes;
  HS_ASSERT(root == 0, "one rank");
}
static void local_gather(const void *mine, size_t bytes, void *all, int root) {
  HS_ASSERT(root == 0, "one rank");
  if (bytes) memmove(all, mine, bytes);
}

static const hs_transport local = {.prog = "hetsim", .ranks = false, .rank = local_rank,
                                   .size = local_size, .bcast = local_bcast,
                                   .gather = local_gather};

const hs_transport *hs_transport_local(void) { return &local; }

int hs_transport_bcast_int(const hs_transport *t, int v, int root) {
  t->bcast(&v, sizeof v, root);
  return v;
}

int hs_transport_first_failure(const hs_transport *t, bool failed) {
  int size = t->size(), rank = t->rank();
  int mine = failed ? rank : INT_MAX, first = INT_MAX;
  int *all = rank == 0 ? hs_calloc((size_t)size, sizeof *all) : NULL;
  t->gather(&mine, sizeof mine, all, 0);
  for (int r = 0; rank == 0 && r < size; r++)
    if (all[r] < first) first = all[r];
  hs_free(all);
  first = hs_transport_bcast_int(t, first, 0);
  return first == INT_MAX ? -1 : first;
}
