# tests/hardening.cmake: issue 16's hardening tests.
#   tests/fuzz/        one harness per reader: libFuzzer smoke runs (HS_FUZZ=ON,
#                      clang) or seed-corpus replays (any other build)
#   tests/cli/bad_input_matrix.sh + tests/cli/bad-input.table: every command
#                      fed bad input; exit code, one stderr line, no leftovers
if(HS_PROBE_ONLY) # cross builds: the board harness's own tests only
  return()
endif()
add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/fuzz ${CMAKE_CURRENT_BINARY_DIR}/fuzz)

if(NOT HS_FUZZ)
  add_test(NAME bad_input_matrix
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/bad_input_matrix.sh
            --hetsim $<TARGET_FILE:hetsim>
            --probe $<TARGET_FILE:hetsim-probe>
            --bridge $<TARGET_FILE:hs-policy-bridge>
            --src ${PROJECT_SOURCE_DIR}
            --work ${CMAKE_CURRENT_BINARY_DIR}/bad-input
            --table ${CMAKE_CURRENT_SOURCE_DIR}/cli/bad-input.table)
  set_tests_properties(bad_input_matrix PROPERTIES TIMEOUT 600 LABELS cli)
endif()
