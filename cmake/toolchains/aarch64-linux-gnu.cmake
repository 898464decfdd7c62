# Cross build for 64-bit ARM Linux (Raspberry Pi 4 and 5, Graviton, Ampere) with Debian's cross
# compiler (g++-aarch64-linux-gnu) and the target's libraries from Debian's arm64 packages
# installed beside the host's through multiarch (libhwloc-dev:arm64, libgtest-dev:arm64): they
# live in /usr/lib/aarch64-linux-gnu, which the cross compiler and CMake search by themselves
# once CMAKE_LIBRARY_ARCHITECTURE is known. tools/aarch64-check.sh installs all of it; the
# `aarch64` preset (CMakePresets.json) uses this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(HOOP_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${HOOP_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${HOOP_CROSS_TRIPLE}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${HOOP_CROSS_TRIPLE})

# Programs found at configure time (mpirun, python) run on the build machine; libraries and
# headers must be the target's. Multiarch keeps both under /, so the root stays /, and the
# library search is narrowed by CMAKE_LIBRARY_ARCHITECTURE instead of a separate sysroot.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

# pkg-config (hwloc) must read the arm64 .pc files, never the host's. Set on every configure,
# since CMake reads this file each time.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${HOOP_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# Test binaries run through QEMU's user-mode emulator, which CTest and gtest_discover_tests put
# in front of every command. With arm64 libc6 and libstdc++6 installed through multiarch, the
# emulated loader finds the target's libraries where a real Pi would. A test that starts other
# processes (the multi-process tests exec their rank binaries) also needs the kernel to hand
# aarch64 ELF files to QEMU (binfmt_misc); tools/aarch64-check.sh registers it.
find_program(HOOP_QEMU_AARCH64 qemu-aarch64 qemu-aarch64-static)
if(HOOP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${HOOP_QEMU_AARCH64})
endif()
