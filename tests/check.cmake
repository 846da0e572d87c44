# tests/check.cmake: `hetsim check`, the simulator held against a real cluster
# run (sim/doc/check.md).
#   run_schedule  the run options it stands on: a fixed allocation schedule,
#                 the expectation of the compute times, the device-round observer
#   check         the records' reader and the comparison: known answers
#   cli_check     every bad input: one line naming the file, row/field, reason
#   check_smoke   a real 2-board run (--no-isolation), then the check on it:
#                 complete files, exit 3 at a tolerance of 1e-9, 0 at a loose one
hs_add_test(NAME run_schedule SOURCES unit/test_run_schedule.c LIBS hetsim::sim TIMEOUT 60)
hs_add_test(NAME check SOURCES unit/test_check.c LIBS hetsim::traces TIMEOUT 60)
add_test(NAME cli_check
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "check-*")
set_tests_properties(cli_check PROPERTIES TIMEOUT 120)
add_test(NAME check_smoke
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/check_smoke.sh $<TARGET_FILE:hetsim-probe>
          $<TARGET_FILE:hetsim> ${CMAKE_CURRENT_SOURCE_DIR}/cluster/smoke-2boards.json
          ${CMAKE_CURRENT_BINARY_DIR}/check-smoke)
set_tests_properties(check_smoke PROPERTIES TIMEOUT 120)
