# tests/cluster.cmake: the board harness's real cluster runtime (devices/probe:
# serve, board, box; probe_cluster.h) and the import fits.
#   cluster_wire    framing, versions, truncated/oversized messages, stalls
#   cluster_box     the box's plan, cgroups (v1, v2, none) on a fake sysfs root, tc lines
#   cluster_import  overhead_s and the shared noise factor: known answers
#   cluster_run     the commands on bad input: one line, exit 2 or 1, no hang
#   cluster_smoke   2 boards, 2 rounds, real trainers and sockets; through the box
#                   when root, cgroups and tc are there; replay gives its allocations
#   cluster_keys    the runtime's regime keys are the simulator's (hetsim reference)
#   cluster_smoke_ddp, cluster_smoke_fedasync: the same for ddp (2 rounds of 3
#                   steps, replicas' hashes) and fedasync (2 windows), --no-isolation
foreach(m wire box import)
  hs_add_test(NAME cluster_${m} SOURCES unit/test_cluster_${m}.c LIBS hetsim::probe_cluster TIMEOUT 60)
endforeach()
add_dependencies(test_cluster_box hetsim-probe)
target_compile_definitions(test_cluster_box PRIVATE PROBE_BIN="$<TARGET_FILE:hetsim-probe>")
hs_add_test(NAME cluster_run SOURCES unit/test_cluster_run.c LIBS hetsim::probe_cluster TIMEOUT 120)
add_dependencies(test_cluster_run hetsim-probe)
target_compile_definitions(test_cluster_run PRIVATE PROBE_BIN="$<TARGET_FILE:hetsim-probe>")
if(TARGET hetsim)
  add_test(NAME cluster_smoke
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/smoke.sh $<TARGET_FILE:hetsim-probe> $<TARGET_FILE:hetsim>
            ${CMAKE_CURRENT_SOURCE_DIR}/cluster/smoke-2boards.json ${CMAKE_CURRENT_BINARY_DIR}/cluster-smoke)
  set_tests_properties(cluster_smoke PROPERTIES TIMEOUT 120)
  add_test(NAME cluster_keys
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/keys.sh $<TARGET_FILE:hetsim-probe> $<TARGET_FILE:hetsim>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cluster-keys)
  set_tests_properties(cluster_keys PROPERTIES TIMEOUT 60)
  foreach(regime ddp fedasync)
    add_test(NAME cluster_smoke_${regime}
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cluster/smoke_regimes.sh $<TARGET_FILE:hetsim-probe> $<TARGET_FILE:hetsim>
              ${regime} ${CMAKE_CURRENT_SOURCE_DIR}/cluster/smoke-2boards-${regime}.json
              ${CMAKE_CURRENT_BINARY_DIR}/cluster-smoke-${regime})
    set_tests_properties(cluster_smoke_${regime} PROPERTIES TIMEOUT 120)
  endforeach()
endif()
