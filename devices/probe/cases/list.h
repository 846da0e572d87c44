/* list.h: THE list of the harness's test cases, one line each:
 * PROBE_CASE(module, name) names the function PROBE_CASE_FN(module, name)
 * defined in cases/<module>.c. registry.c reads it into the table behind
 * probe_cases.h, which the plain-C self-test (hetsim-probe-selftest, under
 * qemu for the boards) and the Criterion suites (tests/unit/test_probe_<module>.c,
 * one parameterized test over a module's lines) both iterate; adding a case
 * is its function and one line here. Order: the order the runners go in.
 * No include guard: included once per use, with PROBE_CASE defined. */
PROBE_CASE(gzip, dynamic_huffman)
PROBE_CASE(gzip, fixed_and_stored)
PROBE_CASE(gzip, truncated)
PROBE_CASE(idx, header_checks)
PROBE_CASE(idx, gzip_file)
PROBE_CASE(csv, parse)
PROBE_CASE(text, tokenize_and_load)
PROBE_CASE(train, pool)
PROBE_CASE(train, mnist)
PROBE_CASE(train, era5)
PROBE_CASE(train, imdb)
PROBE_CASE(train, learner)
PROBE_CASE(sensor, rapl_wrap)
PROBE_CASE(sensor, rapl_missing_and_denied)
PROBE_CASE(sensor, hwmon_by_name)
PROBE_CASE(sensor, hwmon_index_changed)
PROBE_CASE(sensor, pmic)
PROBE_CASE(sensor, meter_window)
PROBE_CASE(sensor, meter_log_being_written)
PROBE_CASE(sensor, spec)
PROBE_CASE(sampler, power)
PROBE_CASE(sampler, counter)
PROBE_CASE(sampler, rpi_throttle)
PROBE_CASE(stats, stats)
PROBE_CASE(json, json)
PROBE_CASE(profile, render_merge)
PROBE_CASE(profile, check_rejects)
PROBE_CASE(profile, write_atomic)
PROBE_CASE(sysinfo, sysinfo)
