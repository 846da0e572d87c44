/* [policies/include/base -> hetsim::status; installed: include/hetsim/base/, -lhetsim-policies]
 * hs_util.h: the small libc-only helpers every folder needs once: paths,
 * FNV-1a hashing, reading a whole file, refusing text with NUL bytes.
 *
 * Lives in policies/base (target hetsim::status) because it is libc only: the
 * board harness (devices/probe), cross-built with nothing else installed,
 * links it too. Everything returned on the heap is released with hs_free.
 * Errors follow hs_status.h: "<path>: <where>: <reason>". */
#ifndef HS_UTIL_H
#define HS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "base/hs_status.h"

/* --- paths ----------------------------------------------------------------- */

/* rel resolved against dir: a copy of rel when rel is absolute or dir is NULL,
 * "" or "."; otherwise dir + "/" + rel (no second '/' when dir ends in one).
 * Heap; never NULL. */
char *hs_path_join(const char *dir, const char *rel);

/* The folder part of path: "." when there is no '/', "/" for "/x", else the
 * text before the last '/' ("a/b/c.json" -> "a/b"). Heap; never NULL. */
char *hs_path_dir(const char *path);

/* --- FNV-1a, 64 bits --------------------------------------------------------- */

/* Offset basis: the state before any byte. */
#define HS_FNV1A64_INIT 0xcbf29ce484222325ULL

/* Folds n bytes into the state h and returns the new state, so a hash can be
 * built in pieces: hs_fnv1a64(hs_fnv1a64(HS_FNV1A64_INIT, a, na), b, nb) equals
 * the hash of a followed by b. Not cryptographic; stable across platforms. */
uint64_t hs_fnv1a64(uint64_t h, const void *data, size_t n);
/* The hash of a NUL-terminated string (its bytes, not the NUL). */
uint64_t hs_fnv1a64_str(const char *s);

/* --- whole files ------------------------------------------------------------ */

/* Read a whole file into a heap buffer with a NUL after the last byte (free
 * with hs_free). *len_out (may be NULL) receives the length, which is how a
 * reader finds NUL bytes inside the text (see hs_text_check_nul). Errors name
 * the path: "<path>: cannot open: <strerror>" (HS_ENOENT, HS_EPERM or HS_EIO),
 * "<path>: is a folder, not a file", "<path>: read failed". */
char *hs_read_file(const char *path, size_t *len_out, hs_error *err);

/* What hs_read_file_as found, for a reader that words its own messages. */
typedef enum hs_read_fault {
  HS_READ_OK = 0,
  HS_READ_CANNOT_OPEN, /* fopen failed: errnum says why */
  HS_READ_FOLDER,      /* the path names a folder */
  HS_READ_TOO_LARGE,   /* more than max_bytes bytes (reading stopped there) */
  HS_READ_FAILED       /* a read error part way */
} hs_read_fault;

typedef struct hs_read_result {
  size_t len;          /* bytes read, before the NUL the buffer ends with */
  hs_read_fault fault;
  int errnum;          /* errno of a failed open, else 0 */
} hs_read_result;

/* The reader behind hs_read_file, with a size limit and no message: the
 * whole file into a heap buffer with a NUL after the last byte, or NULL with
 * r->fault set. max_bytes > 0 refuses a file of more than max_bytes bytes
 * after reading at most max_bytes + 1 of them (so a huge or endless file
 * costs no more); 0: no limit. hs_read_open_status maps a failed open to the
 * status hs_read_file uses (HS_ENOENT, HS_EPERM or HS_EIO). */
char *hs_read_file_as(const char *path, size_t max_bytes, hs_read_result *r);
hs_status hs_read_open_status(int errnum);

/* HS_OK when text[0..len) has no NUL byte; otherwise HS_EPARSE with
 * "<origin>: line N: contains a NUL byte" (N counts '\n' before the first NUL,
 * from 1). Text readers call it on what hs_read_file returned, so a file that
 * a crash left zero-filled is refused rather than silently cut short. O(len). */
hs_status hs_text_check_nul(const char *text, size_t len, const char *origin, hs_error *err);

/* --- shipped data ------------------------------------------------------------ */

/* Where the shipped scenarios, profiles and plot scripts are: "<bin>/../share/
 * hetsim/<rel>", <bin> being the folder of the running program
 * (/proc/self/exe), made canonical with realpath when it exists. An install
 * puts the programs in <prefix>/bin and the data in <prefix>/share/hetsim; the
 * build tree mirrors that (build/share/hetsim/<x> are links to the source
 * folders, made at configure time), so no path of the build machine is
 * compiled into any program. Static string interned per rel (thread-safe,
 * never freed); never NULL (without /proc, "../share/hetsim/<rel>" relative to
 * the working folder). */
const char *hs_share_path(const char *rel);
/* The files of folder dir whose names end in suffix (".json"), that suffix
 * cut off, sorted by strcmp; hidden names (".x") skipped. For messages that
 * list what is there and suggest the nearest name (hs_nearest). NULL with *n
 * = 0 when dir cannot be read or holds none. Free with hs_dir_names_free.
 * O(entries log entries). */
char **hs_dir_names(const char *dir, const char *suffix, size_t *n);
void hs_dir_names_free(char **names, size_t n);

/* --- nearest names, for "did you mean" in messages ----------------------- */
/* Edit distance between a and b (insert, delete, substitute, and swap two
 * neighbours: 1 each; the optimal string alignment distance), counted in
 * bytes, ASCII case ignored ("wE" is one step from "w_e"); names
 * longer than 63 bytes are compared on their first 63. */
size_t hs_edit_distance(const char *a, const char *b);
/* The candidate closest to name when it is close enough to be a typo: an
 * edit distance of at most max(1, strlen(name) / 3), or name a prefix of it
 * (at least 2 bytes: "pol" for "policy", the shortest completion first); the
 * first in order among equals;
 * NULL when none is close or name is one of them. cands[i] may be NULL
 * (skipped). Static strings only: the result is one of cands. */
const char *hs_nearest(const char *name, const char *const *cands, size_t n);

/* A count written as decimal digits only (no sign, space or exponent): 1 and
 * *v set; 0 when s is empty or not digits only; -1 when the digits exceed
 * 2^64 - 1 (*v untouched). The one rule for count fields of the readers. */
int hs_parse_count(const char *s, uint64_t *v);

#endif
