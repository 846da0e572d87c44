/* fuzz_common.h: what every reader harness in tests/fuzz/ shares.
 *
 * Each fuzz_<reader>.c defines LLVMFuzzerTestOneInput (and, when it needs one-off
 * set-up, LLVMFuzzerInitialize). Built two ways (tests/fuzz/CMakeLists.txt):
 *   - with clang -fsanitize=fuzzer (-DHS_FUZZ=ON): a libFuzzer binary;
 *   - with any compiler and standalone.c: a replay driver that feeds files (the
 *     seed corpora, crash reproducers) through the same entry point, so the
 *     normal and sanitizer test builds run every harness on its seeds.
 * A harness never prints on success and aborts (FUZZ_CHECK) when a reader
 * breaks its own contract: accepted input that violates the documented
 * invariants, or a refusal without a message. */
#ifndef HS_FUZZ_COMMON_H
#define HS_FUZZ_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A NUL-terminated heap copy of the input (readers take C strings or a
 * (text, len) pair that their file loaders always NUL-terminate). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) abort();
  if (size) memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

#define FUZZ_CHECK(cond, ...)                                              \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "fuzz: %s:%d: contract broken: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
      abort();                                                             \
    }                                                                      \
  } while (0)

/* A refusal must say why: a non-empty message. In strict mode (the default
 * since issue 16's fixes: hs_error_set escapes control bytes, every reader
 * refuses NUL bytes) it must also be one line (no '\n' or '\r': the CLI
 * prints it as its one stderr line). HS_FUZZ_STRICT=0 in the environment
 * turns the strict checks off (to hunt crashes only). */
static inline int fuzz_strict(void) {
  static int strict = -1;
  if (strict < 0) {
    const char *e = getenv("HS_FUZZ_STRICT");
    strict = !(e && e[0] == '0');
  }
  return strict;
}
#define FUZZ_CHECK_MSG(err)                                                           \
  FUZZ_CHECK((err).msg[0] != '\0' &&                                                  \
                 (!fuzz_strict() || strpbrk((err).msg, "\r\n") == NULL),             \
             "refusal without a one-line message (status %d): \"%s\"", (int)(err).status, \
             (err).msg)

/* Readers that take (text, len) must refuse a NUL byte inside it (issue 16
 * defect 1: zero-filled blocks after a crash). Checked on acceptance in strict
 * mode. */
#define FUZZ_CHECK_NO_NUL_ACCEPTED(data, size)                                  \
  FUZZ_CHECK(!fuzz_strict() || memchr((data), 0, (size)) == NULL,              \
             "accepted input with a NUL byte at offset %zu",                    \
             (size_t)((const uint8_t *)memchr((data), 0, (size)) - (const uint8_t *)(data)))
#endif
