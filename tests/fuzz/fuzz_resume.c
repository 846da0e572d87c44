/* fuzz_resume.c: libFuzzer harness for the sweep resume reader
 * (hs_sweep_file_open with resume, sim/study/include/sim/hs_sweep.h).
 *
 * The sweep is fixed: tests/data/sweep/tiny.json with --grid
 * policy.w_e=0,0.5,1 --grid policy.deadband=0,0.1 --seeds 1,2 (12 rows), the
 * sweep tests/data/sweep/fixture.csv was written by. Each input is written to
 * one temporary file (made once) which is then opened for resuming, the way
 * `hetsim sweep --resume` reads a results file left by a killed run. The only
 * public entry takes a path, hence the file (a write per run; rejected: an
 * internal in-memory parser, which would tie the harness to sweep_file.c).
 * Contract checked: a refusal comes with a message (one line: strict mode); an accepted file
 * can be closed without error. Seeds: tests/data/sweep/ and seeds/resume/. */
#include <fcntl.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "sim/hs_sweep.h"

static hs_sweep *sweep;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const char *grids[] = {"policy.w_e=0,0.5,1", "policy.deadband=0,0.1"};
  hs_sweep_spec spec = {.scenario = HS_SOURCE_DIR "/tests/data/sweep/tiny.json",
                        .grids = grids, .ngrids = 2, .seeds = "1,2"};
  hs_error err = {HS_OK, ""};
  sweep = hs_sweep_create(&spec, &err);
  FUZZ_CHECK(sweep != NULL, "set-up: %s", err.msg);
  snprintf(path, sizeof path, "/tmp/hs-fuzz-resume-%ld.csv", (long)getpid());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sweep) LLVMFuzzerInitialize(NULL, NULL);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  FUZZ_CHECK(fd >= 0, "cannot write %s", path);
  for (size_t off = 0; off < size;) {
    ssize_t w = write(fd, data + off, size - off);
    FUZZ_CHECK(w > 0, "cannot write %s", path);
    off += (size_t)w;
  }
  close(fd);
  bool done[64];
  FUZZ_CHECK(hs_sweep_nrows(sweep) <= 64, "sweep grew");
  hs_error err = {HS_OK, ""};
  hs_sweep_file *f = hs_sweep_file_open(sweep, path, true, done, &err);
  if (!f) {
    FUZZ_CHECK_MSG(err);
  } else {
    hs_error cerr = {HS_OK, ""};
    FUZZ_CHECK(hs_sweep_file_close(f, &cerr) == HS_OK, "close: %s", cerr.msg);
  }
  unlink(path);
  return 0;
}
