# FindNCCL: NVIDIA's collective communication library (nccl.h and libnccl), for the distributed
# plan on GPUs. Searched in NCCL_ROOT (CMake or environment variable), NCCL_HOME, the CUDA
# toolkit, the system paths, and the pip wheel nvidia-nccl-cu* of the first python3 on PATH
# (whose library is libnccl.so.2, without the unversioned link).
#
# Defines NCCL_FOUND, NCCL_VERSION, NCCL_INCLUDE_DIR, NCCL_LIBRARY and the imported target
# NCCL::NCCL.

set(_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME})
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _nccl_hints ${CUDAToolkit_LIBRARY_ROOT})
endif()
find_program(_nccl_python NAMES python3)
if(_nccl_python)
  # The wheel puts nccl.h and libnccl.so.2 under the 'nvidia' namespace package (nvidia/nccl, or
  # nvidia/cu13 for CUDA 13 wheels).
  execute_process(
    COMMAND ${_nccl_python} -c "import nvidia; print(';'.join(nvidia.__path__))"
    OUTPUT_VARIABLE _nccl_nvidia OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
    RESULT_VARIABLE _nccl_nvidia_status)
  if(_nccl_nvidia_status EQUAL 0)
    foreach(_dir IN LISTS _nccl_nvidia)
      file(GLOB _nccl_wheel_headers "${_dir}/*/include/nccl.h")
      foreach(_header IN LISTS _nccl_wheel_headers)
        get_filename_component(_root "${_header}" DIRECTORY)
        get_filename_component(_root "${_root}" DIRECTORY)
        list(APPEND _nccl_hints "${_root}")
      endforeach()
    endforeach()
  endif()
endif()

find_path(NCCL_INCLUDE_DIR NAMES nccl.h HINTS ${_nccl_hints} PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_nccl_hints}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_lines
    REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(_part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${_part} +([0-9]+).*" "\\1" _nccl_${_part}
      "${_nccl_version_lines}")
  endforeach()
  set(NCCL_VERSION "${_nccl_MAJOR}.${_nccl_MINOR}.${_nccl_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::NCCL)
  add_library(NCCL::NCCL UNKNOWN IMPORTED)
  set_target_properties(NCCL::NCCL PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY _nccl_python)
