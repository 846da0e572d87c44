# tests/agc_regime.cmake: the agc regime (sim/regimes/agc/regime_agc*.c): closed forms,
# stragglers, codes, determinism, and its bad-input CLI cases.
if(HS_PROBE_ONLY)
  return()
endif()
hs_add_test(NAME regime_agc SOURCES unit/test_regime_agc.c
  LIBS hetsim::sim hetsim::traces hetsim::cjson TIMEOUT 300)
target_link_libraries(test_regime_agc PRIVATE hetsim::sim_inner)
# `hetsim validate/run/sweep` cases on the agc regime: tests/cli/cases/agc-regime-*.case
add_test(NAME cli_agc_regime
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work-agc-regime "agc-regime-*")
set_tests_properties(cli_agc_regime PROPERTIES TIMEOUT 300)
# The residual error of k = 4 codes: enumeration, closed form, simulated mean.
hs_add_test(NAME agc_residual SOURCES unit/test_agc_residual.c
  LIBS hetsim::sim hetsim::traces hetsim::cjson TIMEOUT 120)
target_link_libraries(test_agc_residual PRIVATE hetsim::sim_inner)
