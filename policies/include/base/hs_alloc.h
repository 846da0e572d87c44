/* [policies/include/base -> hetsim::status; installed: include/hetsim/base/, -lhetsim-policies]
 * hs_alloc.h: the one allocation wrapper. Out-of-memory is not an input error
 * hetsim can recover from: these abort with a message, so call sites stay clean.
 * Memory from these is released with hs_free (or free). */
#ifndef HS_ALLOC_H
#define HS_ALLOC_H

#include <stddef.h>

void *hs_malloc(size_t size);
void *hs_calloc(size_t count, size_t size);
void *hs_realloc(void *ptr, size_t size);
/* Overflow-checked count*size reallocation. */
void *hs_reallocarray(void *ptr, size_t count, size_t size);
char *hs_strdup(const char *s);
void hs_free(void *ptr);

#endif
