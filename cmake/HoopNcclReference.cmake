# NCCL's own nccl.h and libnccl.so.2, where the machine has them (NCCL installed with CUDA): the
# reference hoop's libnccl.so.2 is tested against (tests/nccl) and the header and library the
# NCCL example is built with (examples/). Never linked into anything hoop ships. NCCL's nccl.h
# includes CUDA's cuda_runtime.h, so CUDA's headers must be found too. Override with
# -DHOOP_NCCL_REFERENCE_INCLUDE=DIR (and _CUDA_INCLUDE, _LIBRARY); unset, what is not found is
# reported by the tests that need it, as skipped.
# A cross build has no reference: the build machine's NCCL and CUDA are for its own architecture.
if(CMAKE_CROSSCOMPILING)
  set(HOOP_NCCL_REFERENCE_FOUND OFF)
  set(HOOP_NCCL_REFERENCE_LIBRARY "")
  message(STATUS "hoop: no NCCL reference when cross-compiling")
  return()
endif()
find_path(HOOP_NCCL_REFERENCE_INCLUDE nccl.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include /usr/local/cuda-13.0/include
                /usr/local/include /usr/include
          NO_CMAKE_PATH NO_CMAKE_SYSTEM_PATH
          DOC "Directory of NCCL's own nccl.h, to test hoop's library against")
find_path(HOOP_NCCL_REFERENCE_CUDA_INCLUDE cuda_runtime.h
          HINTS ${CUDAToolkit_INCLUDE_DIRS} ${HOOP_NCCL_REFERENCE_INCLUDE} /usr/local/cuda/include
                /usr/local/cuda-13.0/include
          DOC "Directory of CUDA's cuda_runtime.h, which NCCL's nccl.h includes")
find_file(HOOP_NCCL_REFERENCE_LIBRARY libnccl.so.2
          HINTS /usr/local/cuda/lib /usr/local/cuda/lib64 /usr/local/cuda-13.0/lib
                /usr/local/cuda-13.0/lib64 /usr/local/lib /usr/lib/x86_64-linux-gnu
          DOC "NCCL's own libnccl.so.2, whose exports hoop's are compared with")
set(HOOP_NCCL_REFERENCE_FOUND OFF)
if(HOOP_NCCL_REFERENCE_INCLUDE AND HOOP_NCCL_REFERENCE_CUDA_INCLUDE)
  set(HOOP_NCCL_REFERENCE_FOUND ON)
endif()
message(STATUS "hoop: NCCL reference header ${HOOP_NCCL_REFERENCE_INCLUDE}, library "
               "${HOOP_NCCL_REFERENCE_LIBRARY}")
