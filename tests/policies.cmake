# tests/policies.cmake: the controller (policies/), the replay reader and
# `hetsim replay` golden files, and the stdin/stdout bridge.
hs_add_test(NAME policy SOURCES unit/test_policy.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME policy_props SOURCES unit/test_policy_props.c LIBS hetsim::policies TIMEOUT 120)
# The O(n) kernels are folder-internal (policies/src/pol_select.h).
hs_add_test(NAME policy_select SOURCES unit/test_policy_select.c LIBS hetsim::policies TIMEOUT 120)
target_include_directories(test_policy_select PRIVATE ${PROJECT_SOURCE_DIR}/policies/src)
# The registry as an extension point: a controller library whose registry also
# holds the test-only policy (tests/policies/), registered by one line in
# tests/policies/registry.def exactly as a real policy is in
# policies/src/registry.def.
hs_policy_library(hetsim_policies_testonly
  REGISTRY_EXTRA ${CMAKE_CURRENT_SOURCE_DIR}/policies/registry.def
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/policies/policy_testonly.c)
hs_add_test(NAME policy_registry SOURCES unit/test_policy_registry.c LIBS hetsim_policies_testonly
  TIMEOUT 60)
target_include_directories(test_policy_registry PRIVATE ${PROJECT_SOURCE_DIR}/policies/src)
hs_add_test(NAME policy_oort SOURCES unit/test_policy_oort.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME policy_ddp SOURCES unit/test_policy_ddp.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME policy_state SOURCES unit/test_policy_state.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME policy_round_time SOURCES unit/test_policy_round_time.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME telemetry_csv SOURCES unit/test_telemetry_csv.c LIBS hetsim::traces TIMEOUT 60)
# Replay golden files and the bridge run the built programs.
hs_add_test(NAME policy_replay SOURCES unit/test_policy_replay.c LIBS hetsim::policies hetsim::traces TIMEOUT 120)
add_dependencies(test_policy_replay hetsim hs-policy-bridge)
target_compile_definitions(test_policy_replay PRIVATE
  HS_HETSIM_BIN="$<TARGET_FILE:hetsim>" HS_BRIDGE_BIN="$<TARGET_FILE:hs-policy-bridge>")
