# Tests owned by the devices work: profiles (devices/) and speed traces (traces/).
if(NOT HS_PROBE_ONLY)
  hs_add_test(NAME profile SOURCES unit/test_profile.c LIBS hetsim::devices TIMEOUT 60)
  hs_add_test(NAME speed_trace SOURCES unit/test_speed_trace.c LIBS hetsim::traces TIMEOUT 60)
endif()
