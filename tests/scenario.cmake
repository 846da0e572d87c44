# tests/scenario.cmake: the scenario loader (unit tests) and the CLI case runner.
hs_add_test(NAME scenario SOURCES unit/test_scenario.c LIBS hetsim::sim hetsim::cjson TIMEOUT 60)

# CLI cases: tests/cli/cases/<pattern>.case files run against the built hetsim.
# Other commands register their own test with their own pattern, e.g.
#   add_test(NAME cli_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh
#            $<TARGET_FILE:hetsim> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work 'run-*')
add_test(NAME cli_validate
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "validate-*")
set_tests_properties(cli_validate PROPERTIES TIMEOUT 120)
