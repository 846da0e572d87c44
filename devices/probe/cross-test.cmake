# cross-test.cmake: a ctest entry (cmake -P) that cross-configures and builds
# hetsim-probe-selftest for ARCH with toolchains/ARCH-linux-gnu.cmake and runs
# it under qemu-ARCH-static -L /usr/ARCH-linux-gnu. Timings under emulation mean
# nothing; correctness does. Prints "SKIP ..." (ctest: skipped, via
# SKIP_REGULAR_EXPRESSION) only when the cross compiler or qemu is missing.
#   -DARCH=aarch64|riscv64 -DSRC=<source root> -DBIN=<build folder for the cross tree>
foreach(v ARCH SRC BIN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cross-test.cmake: -D${v}= is required")
  endif()
endforeach()
set(cc ${ARCH}-linux-gnu-gcc)
set(qemu qemu-${ARCH}-static)
find_program(CC_PATH ${cc})
find_program(QEMU_PATH ${qemu})
if(NOT CC_PATH OR NOT QEMU_PATH)
  message("SKIP probe_qemu_${ARCH}: needs ${cc} and ${qemu} (Debian packages gcc-${ARCH}-linux-gnu, qemu-user-static; see .ci/deps)")
  return() # the test's SKIP_REGULAR_EXPRESSION "SKIP probe_qemu" marks it skipped
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN}
    -DCMAKE_TOOLCHAIN_FILE=${SRC}/devices/probe/toolchains/${ARCH}-linux-gnu.cmake
    -DHS_PROBE_ONLY=ON -DHS_BUILD_TESTS=OFF -DHS_WERROR=ON -DHS_SANITIZE=OFF -DCMAKE_BUILD_TYPE=Release
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cross configure for ${ARCH} failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} --target hetsim-probe-selftest hetsim-probe -j 2
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cross build for ${ARCH} failed:\n${out}")
endif()
set(sysroot /usr/${ARCH}-linux-gnu)
execute_process(COMMAND ${QEMU_PATH} -L ${sysroot} ${BIN}/bin/hetsim-probe-selftest
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
string(REGEX MATCH "([0-9]+) passed, ([0-9]+) failed" line "${out}")
if(NOT line OR NOT rc EQUAL 0 OR NOT CMAKE_MATCH_2 EQUAL 0 OR CMAKE_MATCH_1 EQUAL 0)
  message(FATAL_ERROR "hetsim-probe-selftest under ${qemu}: exit ${rc}, '${line}'")
endif()
# The CLI binary runs too (help text), so the shipped program is exercised, not only the library.
execute_process(COMMAND ${QEMU_PATH} -L ${sysroot} ${BIN}/bin/hetsim-probe --help
  RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "calibrate")
  message(FATAL_ERROR "hetsim-probe --help under ${qemu}: exit ${rc}")
endif()
message("probe_qemu_${ARCH}: ${line}")
