# tests/policies.cmake: the controller (policies/), the replay reader and
# `hetsim replay` golden files, and the stdin/stdout bridge.
hs_add_test(NAME policy SOURCES unit/test_policy.c LIBS hetsim::policies TIMEOUT 60)
