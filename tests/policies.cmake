# tests/policies.cmake: the controller (policies/), the replay reader and
# `hetsim replay` golden files, and the stdin/stdout bridge.
hs_add_test(NAME policy SOURCES unit/test_policy.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME policy_props SOURCES unit/test_policy_props.c LIBS hetsim::policies TIMEOUT 120)
# The O(n) kernels are folder-internal (policies/src/pol_internal.h).
hs_add_test(NAME policy_select SOURCES unit/test_policy_select.c LIBS hetsim::policies TIMEOUT 120)
target_include_directories(test_policy_select PRIVATE ${PROJECT_SOURCE_DIR}/policies/src)
hs_add_test(NAME policy_oort SOURCES unit/test_policy_oort.c LIBS hetsim::policies TIMEOUT 60)
hs_add_test(NAME policy_ddp SOURCES unit/test_policy_ddp.c LIBS hetsim::policies TIMEOUT 60)
