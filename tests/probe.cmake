# tests/probe.cmake: the board harness hetsim-probe (devices/probe).
# One Criterion suite per module; the cases are shared with the plain-C
# self-test, which probe_qemu_<arch> cross-builds with the toolchain files and
# runs under qemu-user (skipped, with a message, only when the cross compiler
# or qemu is missing).
foreach(m gzip idx csv text train sensor sampler stats json profile sysinfo)
  hs_add_test(NAME probe_${m} SOURCES unit/test_probe_${m}.c LIBS hetsim::probe_cases TIMEOUT 60)
endforeach()

# The command line: exit statuses, one-line errors, no half-written files,
# a real (tiny) calibration on a fake sensor tree, merge of a second task.
hs_add_test(NAME probe_cli SOURCES unit/test_probe_cli.c LIBS hetsim::probe_core TIMEOUT 120)
add_dependencies(test_probe_cli hetsim-probe)
target_compile_definitions(test_probe_cli PRIVATE PROBE_BIN="$<TARGET_FILE:hetsim-probe>")

# Round trip through the simulator's loader (hetsim::devices, absent in
# HS_PROBE_ONLY builds, where GSL and cJSON are not available).
if(TARGET hetsim_devices)
  hs_add_test(NAME probe_loader SOURCES unit/test_probe_loader.c
              LIBS hetsim::probe_cases hetsim::devices TIMEOUT 120)
  add_dependencies(test_probe_loader hetsim-probe)
  target_compile_definitions(test_probe_loader PRIVATE PROBE_BIN="$<TARGET_FILE:hetsim-probe>")
endif()

foreach(arch aarch64 riscv64)
  add_test(NAME probe_qemu_${arch}
    COMMAND ${CMAKE_COMMAND} -DARCH=${arch} -DSRC=${PROJECT_SOURCE_DIR}
            -DBIN=${PROJECT_BINARY_DIR}/probe-cross-${arch}
            -P ${PROJECT_SOURCE_DIR}/devices/probe/cross-test.cmake)
  set_tests_properties(probe_qemu_${arch} PROPERTIES TIMEOUT 400
    SKIP_REGULAR_EXPRESSION "SKIP probe_qemu")
endforeach()

# The real cluster runtime (serve, board, box) and the import fits.
include(${CMAKE_CURRENT_LIST_DIR}/cluster.cmake)
