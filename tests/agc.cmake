# tests/agc.cmake: the AGC planner (policies/src/agc_*.c) and `hetsim agc-plan`.
if(HS_PROBE_ONLY)
  return()
endif()
hs_add_test(NAME agc SOURCES unit/test_agc.c LIBS hetsim::policies TIMEOUT 120)
hs_add_test(NAME agc_code SOURCES unit/test_agc_code.c LIBS hetsim::policies TIMEOUT 120)
hs_add_test(NAME agc_quant SOURCES unit/test_agc_quant.c LIBS hetsim::policies TIMEOUT 60)
# `hetsim agc-plan` cases: tests/cli/cases/agc-plan-*.case
add_test(NAME cli_agc_plan
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work-agc "agc-plan-*")
set_tests_properties(cli_agc_plan PROPERTIES TIMEOUT 120)
