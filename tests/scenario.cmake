# tests/scenario.cmake: the scenario loader (unit tests) and the CLI case runner.
hs_add_test(NAME scenario SOURCES unit/test_scenario.c LIBS hetsim::sim hetsim::cjson Threads::Threads TIMEOUT 60)
hs_add_test(NAME scenario_exclude SOURCES unit/test_scenario_exclude.c
  LIBS hetsim::sim hetsim::cjson TIMEOUT 60)

# CLI cases: tests/cli/cases/<pattern>.case files run against the built hetsim.
# Other commands register their own test with their own pattern, e.g.
#   add_test(NAME cli_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh
#            $<TARGET_FILE:hetsim> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work 'run-*')
add_test(NAME cli_validate
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "validate-*")
set_tests_properties(cli_validate PROPERTIES TIMEOUT 120)

# Issue 17: "count": 0 excludes an entry; in every regime a run equals the run
# of the scenario with the entry deleted (tests/cli/exclude_equiv.sh).
add_test(NAME exclude_equiv
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/exclude_equiv.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/exclude-work)
set_tests_properties(exclude_equiv PROPERTIES TIMEOUT 300)
