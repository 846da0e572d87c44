/* test_probe_gzip.c: the gzip/DEFLATE reader (inflate.c).
 * The cases live in devices/probe/cases/gzip.c, listed in cases/list.h and
 * shared with the plain-C self-test that runs under qemu for aarch64 and
 * riscv64; here probe_gzip::cases runs each line of the module in the list. */
#include "test_probe_cases.h"

PROBE_MODULE_CASES(probe_gzip, "gzip")

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"

/* A download cut short: 300 bytes of a stored-block gzip, whose last four
 * bytes (read as ISIZE, the uncompressed size) happen to say 2^31 - 1. The
 * reader preallocated that much before decoding, so on a board with 1 GiB an
 * out-of-memory abort came instead of "compressed data ends early". Here a
 * child with a 1 GiB address space plays the board (not under AddressSanitizer,
 * which reserves far more address space than that for itself). */
Test(probe_gzip, truncated_file_with_a_huge_isize_is_an_error_not_an_abort) {
#if defined(__SANITIZE_ADDRESS__)
  cr_skip_test("needs an address-space limit, which AddressSanitizer cannot run under");
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  cr_skip_test("needs an address-space limit, which AddressSanitizer cannot run under");
#endif
#endif
  unsigned char gz[300];
  static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
  memcpy(gz, hdr, 10);
  gz[10] = 1; /* final stored block of 1000 bytes, of which the file holds 282 */
  gz[11] = 1000 & 0xff;
  gz[12] = 1000 >> 8;
  gz[13] = (unsigned char)(~1000 & 0xff);
  gz[14] = (unsigned char)((~1000 >> 8) & 0xff);
  memset(gz + 15, 'a', sizeof gz - 15);
  gz[296] = 0xff, gz[297] = 0xff, gz[298] = 0xff, gz[299] = 0x7f;
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    struct rlimit lim = {(rlim_t)1 << 30, (rlim_t)1 << 30};
    setrlimit(RLIMIT_AS, &lim);
    unsigned char *out = NULL;
    size_t n = 0;
    hs_error e = {HS_OK, ""};
    hs_status st = probe_gunzip(gz, sizeof gz, 0, &out, &n, &e);
    _exit(st == HS_EPARSE && strstr(e.msg, "ends early") ? 0 : 3);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %s %d",
            WIFSIGNALED(status) ? "killed by signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
#endif
}
