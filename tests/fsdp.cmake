# tests/fsdp.cmake: the sharded regimes (fsdp, hsdp, fl-fsdp, fl-hsdp) and
# their cost model against closed forms (specs/fsdp.md 6.5).
hs_add_test(NAME fsdp SOURCES unit/test_fsdp.c LIBS hetsim::sim hetsim::traces hetsim::cjson
            TIMEOUT 600)
target_link_libraries(test_fsdp PRIVATE hetsim::sim_inner)
# Learning in the loop on the sharded regimes (issue 12, convergence).
hs_add_test(NAME fsdp_learning SOURCES unit/test_fsdp_learning.c
  LIBS hetsim::sim hetsim::learn hetsim::policies hetsim::traces TIMEOUT 600)
target_link_libraries(test_fsdp_learning PRIVATE hetsim::sim_inner)
