# Cross-compile hetsim-probe for 64-bit RISC-V (RV64GC) with Debian's cross compiler
# (packages gcc-riscv64-linux-gnu libc6-dev-riscv64-cross). Use with
#   cmake -S . -B build-probe-riscv64 -DHS_PROBE_ONLY=ON -DHS_BUILD_TESTS=OFF \
#         -DCMAKE_TOOLCHAIN_FILE=devices/probe/toolchains/riscv64-linux-gnu.cmake
# Run the result on a board, or here with qemu-riscv64-static -L /usr/riscv64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# What ctest uses to run target binaries (try_run, test commands).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64-static -L /usr/riscv64-linux-gnu)
