# tests/regimes.cmake: whole runs (closed forms, invariants, determinism), the
# run/compare CLI cases and the golden outputs of the shipped scenarios.
hs_add_test(NAME run SOURCES unit/test_run.c LIBS hetsim::sim hetsim::traces TIMEOUT 300)
hs_add_test(NAME run_outputs SOURCES unit/test_run_outputs.c LIBS hetsim::sim hetsim::traces TIMEOUT 300)
hs_add_test(NAME meter SOURCES unit/test_meter.c LIBS hetsim::sim hetsim::traces TIMEOUT 300)
hs_add_test(NAME run_memory SOURCES unit/test_run_memory.c LIBS hetsim::sim TIMEOUT 60)
hs_add_test(NAME regime_fl SOURCES unit/test_regime_fl.c LIBS hetsim::sim hetsim::traces TIMEOUT 120)

add_test(NAME cli_run
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "run-*" "compare-*")
set_tests_properties(cli_run PROPERTIES TIMEOUT 300)

add_test(NAME golden
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/check.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/golden-work)
set_tests_properties(golden PROPERTIES TIMEOUT 600)

# A regime that exists only in tests (tests/regimes/), added the way every
# regime is: its file, and one line in the test binary's copy of the registry.
hs_add_test(NAME regime_testonly
  SOURCES unit/test_regime_testonly.c regimes/regime_testonly.c regimes/registry_testonly.c
  LIBS hetsim::sim hetsim::traces hetsim::cjson TIMEOUT 60)
target_link_libraries(test_regime_testonly PRIVATE hetsim::sim_inner)

# Learning in the loop (issue 10): the simulator's learner hooks against the
# learner library used directly (private header sim/run/iface/sim_learning.h).
hs_add_test(NAME sim_learning SOURCES unit/test_sim_learning.c
  LIBS hetsim::sim hetsim::learn hetsim::traces TIMEOUT 300)
target_link_libraries(test_sim_learning PRIVATE hetsim::sim_inner)

# Regime fl (issue 17): threshold K-of-N against closed forms from a pma run,
# and its bad input (cases fl-*).
add_test(NAME fl_threshold
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/regimes/fl_threshold.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/fl-work)
set_tests_properties(fl_threshold PROPERTIES TIMEOUT 120)
add_test(NAME cli_fl
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_cli_tests.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/cli-work "fl-*")
set_tests_properties(cli_fl PROPERTIES TIMEOUT 60)
add_test(NAME fl_tree
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/regimes/fl_tree.sh $<TARGET_FILE:hetsim>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/fl-tree-work)
set_tests_properties(fl_tree PROPERTIES TIMEOUT 120)

# Every registered regime x {learning, deadline, availability}: it works and
# has an effect, or the loader refuses it with one line (issue 22).
hs_add_test(NAME regime_can SOURCES unit/test_regime_can.c LIBS hetsim::sim TIMEOUT 120)
target_link_libraries(test_regime_can PRIVATE hetsim::sim_inner)
