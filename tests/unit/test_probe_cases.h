/* test_probe_cases.h: the Criterion side of the harness's cases
 * (devices/probe/cases/list.h). PROBE_MODULE_CASES(suite, "module") makes one
 * parameterized test, suite::cases, with one instance per line of that module
 * in the list, so a new case line runs here with no edit; and suite::listed,
 * which fails when the module has no line at all (a renamed module would
 * otherwise run nothing and pass). The same cases run in the plain-C
 * self-test under qemu for aarch64 and riscv64. */
#ifndef TEST_PROBE_CASES_H
#define TEST_PROBE_CASES_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "probe_cases.h"

/* An index into the case table: plain data, as Criterion copies parameters
 * into the worker processes. */
typedef struct probe_case_param {
  size_t index;
} probe_case_param;

static size_t probe_module_count(const char *module) {
  size_t n = 0;
  for (size_t i = 0; probe_case_at(i); i++) n += strcmp(probe_case_at(i)->module, module) == 0;
  return n;
}

static void probe_free_params(struct criterion_test_params *crp) { cr_free(crp->params); }

static struct criterion_test_params probe_module_params(const char *module) {
  size_t n = probe_module_count(module), j = 0;
  probe_case_param *p = cr_malloc((n ? n : 1) * sizeof *p);
  for (size_t i = 0; probe_case_at(i); i++)
    if (strcmp(probe_case_at(i)->module, module) == 0) p[j++].index = i;
  return cr_make_param_array(probe_case_param, p, n, probe_free_params);
}

static void probe_run_param(const probe_case_param *p) {
  const probe_case *c = probe_case_at(p->index);
  cr_assert_not_null(c, "no case at %zu", p->index);
  char why[1024];
  cr_assert(probe_case_run(c, why, sizeof why), "%s.%s: %s", c->module, c->name, why);
}

#define PROBE_MODULE_CASES(suite, module)                                               \
  ParameterizedTestParameters(suite, cases) { return probe_module_params(module); }     \
  ParameterizedTest(probe_case_param *p, suite, cases) { probe_run_param(p); }          \
  Test(suite, listed) {                                                                 \
    cr_assert_gt(probe_module_count(module), 0, "no case of module %s in list.h", module); \
  }

#endif
