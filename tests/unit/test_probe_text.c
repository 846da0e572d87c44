/* test_probe_text.c: the aclImdb review reader and tokenizer (data_text.c).
 * The cases live in devices/probe/cases/text.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_text::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_text, "text")
