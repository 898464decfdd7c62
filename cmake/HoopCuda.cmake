# CUDA support, optional: HOOP_WITH_CUDA=AUTO (on where nvcc is found), ON (fail without it) or
# OFF. The CUDA runtime is linked statically, and nothing calls into it until a device pointer or
# a CUDA entry point is used, so one build runs on machines with and without a GPU or a driver.
#
# Included from the top-level CMakeLists.txt before src/: enable_language must run at the top
# level. Sets HOOP_HAVE_CUDA (ON/OFF) for the rest of the build.

set(HOOP_WITH_CUDA AUTO CACHE STRING "Build the CUDA kernels and transport (ON, OFF, AUTO: when nvcc is found)")
set_property(CACHE HOOP_WITH_CUDA PROPERTY STRINGS AUTO ON OFF)
# By default SASS for 80 (A100) and 90 (H100/H200), plus PTX for 90 that a newer GPU's driver
# compiles at load time (slower to start and to run than its own SASS: add its number for that).
set(HOOP_CUDA_ARCHITECTURES "80-real;90-real;90-virtual" CACHE STRING "CUDA architectures for the kernels (CMAKE_CUDA_ARCHITECTURES syntax)")

set(HOOP_HAVE_CUDA OFF)
if(NOT HOOP_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${HOOP_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(TARGET CUDA::cudart_static)
      set(HOOP_HAVE_CUDA ON)
    endif()
  endif()
  if(NOT HOOP_HAVE_CUDA AND HOOP_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "HOOP_WITH_CUDA=ON but no CUDA compiler and runtime were found: put nvcc on "
                        "PATH or set CMAKE_CUDA_COMPILER (CUDA 13), or use HOOP_WITH_CUDA=OFF")
  endif()
endif()
message(STATUS "hoop: CUDA ${HOOP_HAVE_CUDA} (HOOP_WITH_CUDA=${HOOP_WITH_CUDA})")
if(HOOP_HAVE_CUDA)
  message(STATUS "hoop: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES}, nvcc "
                 "${CMAKE_CUDA_COMPILER_VERSION}")
endif()

# Called from src/CMakeLists.txt once the layers, hoop and hoop_internal exist. The kernels
# (src/device/cuda/*.cu) are their own object library: nvcc gets none of the host-only warning
# flags, and the objects join both the shared and the static library. The host .cc files of the
# CUDA folders test HOOP_HAVE_CUDA and may include <cuda_runtime.h>: the definition and the
# CUDA include path (as a system path, so -Werror does not reach into it) are set on those files
# alone, so turning CUDA on changes no other file's command line (ccache keeps its hits) and
# nothing else sees CUDA's headers. Consumers of hoop_internal get the runtime at link time only.
function(hoop_add_cuda_objects)
  file(GLOB cuda_host_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/device/cuda/*.cc
                                                ${PROJECT_SOURCE_DIR}/src/transport/cuda_ipc/*.cc)
  if(NOT HOOP_HAVE_CUDA)
    set_source_files_properties(${cuda_host_sources} PROPERTIES COMPILE_DEFINITIONS
                                                                HOOP_HAVE_CUDA=0)
    return()
  endif()
  set(cuda_includes)
  foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
    list(APPEND cuda_includes -isystem ${dir})
  endforeach()
  set_source_files_properties(${cuda_host_sources} PROPERTIES COMPILE_DEFINITIONS HOOP_HAVE_CUDA=1
                                                              COMPILE_OPTIONS "${cuda_includes}")
  file(GLOB kernel_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/device/cuda/*.cu)
  add_library(hoop_cuda_objects OBJECT ${kernel_sources})
  target_include_directories(hoop_cuda_objects PRIVATE ${PROJECT_SOURCE_DIR}/include
                                                       ${PROJECT_SOURCE_DIR}/src)
  # -fmad=false: a fused multiply-add would round differently from the CPU kernels (they are
  # built with -ffp-contract=off); the kernels also use the _rn intrinsics, this is the backstop.
  # Division and square root stay IEEE (nvcc's defaults, no --use_fast_math).
  target_compile_options(hoop_cuda_objects PRIVATE -fmad=false
                         --compiler-options=-Wall,-Wextra,-Wno-unused-parameter
                         $<$<BOOL:${HOOP_WERROR}>:--Werror=all-warnings>)
  # C++17 for the .cu files: CMake 3.25 does not know nvcc 13's C++20 flag, and the CUDA
  # standard would otherwise follow CMAKE_CXX_STANDARD (20) and fail to generate. The kernels and
  # the headers they include (base/types.h, base/error.h) need nothing newer.
  set_target_properties(hoop_cuda_objects PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                                     CUDA_VISIBILITY_PRESET hidden
                                                     CUDA_SEPARABLE_COMPILATION OFF)
  target_compile_definitions(hoop_cuda_objects PRIVATE HOOP_HAVE_CUDA=1)
  target_link_libraries(hoop_cuda_objects PRIVATE CUDA::cudart_static)

  target_sources(hoop PRIVATE $<TARGET_OBJECTS:hoop_cuda_objects>)
  # The runtime is a private copy inside libhoop.so: keep its symbols out of the export table so
  # they never interpose on another copy (PyTorch's libcudart) in the same process.
  target_link_libraries(hoop PRIVATE CUDA::cudart_static)
  target_link_options(hoop PRIVATE "LINKER:--exclude-libs,ALL")
  target_sources(hoop_internal PRIVATE $<TARGET_OBJECTS:hoop_cuda_objects>)
  target_link_libraries(hoop_internal PRIVATE CUDA::cudart_static)
  # The layer links (src/CMakeLists.txt): the kernels belong to the device layer, and the CUDA
  # host files above it (the cuda_ipc transport) call the runtime.
  set(kernels_below FALSE)
  foreach(layer IN LISTS HOOP_LAYERS)
    if(layer STREQUAL "device")
      set(kernels_below TRUE)
    endif()
    if(kernels_below)
      target_sources(hoop_layer_link_${layer} PRIVATE $<TARGET_OBJECTS:hoop_cuda_objects>)
    endif()
    target_link_libraries(hoop_layer_link_${layer} PRIVATE CUDA::cudart_static)
  endforeach()
endfunction()
