# tests/agc.cmake: the AGC planner (policies/src/agc_*.c) and `hetsim agc-plan`.
if(HS_PROBE_ONLY)
  return()
endif()
hs_add_test(NAME agc SOURCES unit/test_agc.c LIBS hetsim::policies TIMEOUT 120)
hs_add_test(NAME agc_code SOURCES unit/test_agc_code.c LIBS hetsim::policies TIMEOUT 120)
hs_add_test(NAME agc_quant SOURCES unit/test_agc_quant.c LIBS hetsim::policies TIMEOUT 60)
