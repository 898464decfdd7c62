# RDMA (src/transport/rdma): hoop links nothing RDMA and loads libibverbs.so.1 with dlopen at run
# time, but compiles against libibverbs' header for its types and constants. HOOP_WITH_VERBS=AUTO
# (the default) uses the header where it is found (Debian/Ubuntu: libibverbs-dev), ON fails
# without it, OFF builds the rdma transport as one that reaches no peer. A build made with the
# header runs unchanged on machines without libibverbs: the transport then says so at init.
set(HOOP_WITH_VERBS AUTO CACHE STRING "Build the RDMA data path against infiniband/verbs.h (ON, OFF, AUTO)")
set_property(CACHE HOOP_WITH_VERBS PROPERTY STRINGS AUTO ON OFF)

set(HOOP_HAVE_VERBS OFF)
if(NOT HOOP_WITH_VERBS STREQUAL "OFF")
  include(CheckIncludeFileCXX)
  check_include_file_cxx("infiniband/verbs.h" HOOP_VERBS_HEADER_FOUND)
  if(HOOP_VERBS_HEADER_FOUND)
    set(HOOP_HAVE_VERBS ON)
  elseif(HOOP_WITH_VERBS STREQUAL "ON")
    message(FATAL_ERROR "HOOP_WITH_VERBS=ON but infiniband/verbs.h was not found: install "
                        "libibverbs-dev (rdma-core), or use HOOP_WITH_VERBS=OFF")
  endif()
endif()
message(STATUS "hoop: RDMA verbs ${HOOP_HAVE_VERBS} (HOOP_WITH_VERBS=${HOOP_WITH_VERBS})")
