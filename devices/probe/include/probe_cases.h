/* [devices/probe/include -> hetsim::probe_cases; not installed]
 * probe_cases.h: the harness's test cases, shared by the plain-C self-test
 * (hetsim-probe-selftest, which runs under qemu for aarch64 and riscv64, where
 * Criterion is not packaged) and the native Criterion suites
 * (tests/unit/test_probe_*.c), so both exercise exactly the same checks.
 * Each case builds its own fake sysfs tree or small data files, in the real
 * formats, under a fresh temporary folder. The cases are devices/probe/cases/
 * (one file per module), listed once in cases/list.h: both runners iterate
 * that table (probe_case_at), neither names a case by hand. */
#ifndef PROBE_CASES_H
#define PROBE_CASES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct probe_case {
  const char *module;    /* gzip, idx, csv, text, train, sensor, sampler, stats, json, profile, sysinfo */
  const char *name;
  /* true on success; on failure `why` says what was expected and seen. */
  bool (*run)(const char *tmpdir, char *why, size_t cap);
} probe_case;

const probe_case *probe_case_at(size_t i);   /* NULL past the end */
/* Run one case in a fresh temp folder (removed afterwards). */
bool probe_case_run(const probe_case *c, char *why, size_t cap);
/* Run every case of a module (NULL = all); prints failures to stderr; returns
 * the number failed and adds to *passed. */
int probe_cases_run_module(const char *module, int *passed);

/* Helpers the Criterion suites use too. */
/* Create root/rel with content (parents created). false on error. */
bool probe_put(const char *root, const char *rel, const char *content);
bool probe_put_bin(const char *root, const char *rel, const void *data, size_t len);
/* A valid profile JSON text for tests (heap). */
char *probe_case_profile_text(const char *tmpdir, const char *task, const char *board);

#endif
