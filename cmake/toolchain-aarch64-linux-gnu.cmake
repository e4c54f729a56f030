# SPDX-License-Identifier: Apache-2.0
# Cross-compiles skforge for aarch64 Linux (Kunpeng 920 and other arm64 hosts) on a Debian x86_64
# machine: Debian's crossbuild-essential-arm64 plus the :arm64 development packages installed
# through multiarch (scripts/bootstrap.sh arm64; scripts/cross-build.sh arm64 uses this file).
# Multiarch needs no separate sysroot: the target's libraries and CMake packages are in
# /usr/lib/aarch64-linux-gnu, its headers in /usr/include and /usr/include/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# pkg-config (libdeflate, libzstd) reads the target's .pc files, never the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})

# libyaml-cpp-dev is not Multi-Arch: same, so libyaml-cpp-dev:arm64 would replace the amd64
# build's. Its headers are architecture-independent (identical in both .debs), so the cross
# build uses them with the arm64 runtime library libyaml-cpp0.7:arm64 (Multi-Arch: same) through
# the small package description in cmake/cross/, unless a real arm64 one is installed.
if(NOT EXISTS /usr/lib/aarch64-linux-gnu/cmake/yaml-cpp/yaml-cpp-config.cmake)
  set(yaml-cpp_DIR ${CMAKE_CURRENT_LIST_DIR}/cross/yaml-cpp)
endif()

# Tests (ctest, Catch2's test discovery) run the aarch64 binaries through qemu-user. No -L: the
# binaries' loader /lib/ld-linux-aarch64.so.1 and every library come from the multiarch :arm64
# packages (libc6:arm64 arrives with libc6-dev:arm64). `-L /usr/aarch64-linux-gnu` would load
# the cross package's ld.so (glibc 2.36-8cross1) with libc6:arm64's libc.so.6 (found through
# /etc/ld.so.cache), and a mismatched loader and libc hang in the first pthread_create.
find_program(SKFORGE_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(SKFORGE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${SKFORGE_QEMU_AARCH64})
endif()
