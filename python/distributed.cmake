# shiftop._distributed: the distributed plan for Python (python/src/distributed_bindings.cpp),
# built only with MPI. A module of its own so that shiftop._core never links MPI: `import shiftop`
# loads no MPI library, and shiftop.distributed imports this module only when it is used.
# _distributed_config.py records whether it was built, so that shiftop.distributed can tell a
# build without MPI (a clear refusal) from a module that fails to load (the loader's error).
# Included from python/CMakeLists.txt after shiftop_python and _package_dir are defined.
if(SHIFTOP_ENABLE_MPI)
  set(_with_mpi True)
else()
  set(_with_mpi False)
endif()
file(CONFIGURE OUTPUT ${_package_dir}/_distributed_config.py
  CONTENT "# Written by CMake (python/distributed.cmake): SHIFTOP_ENABLE_MPI of this build.\nBUILT_WITH_MPI = ${_with_mpi}\n")
install(FILES ${_package_dir}/_distributed_config.py DESTINATION shiftop COMPONENT python)

if(SHIFTOP_ENABLE_MPI)
  nanobind_add_module(shiftop_python_distributed NB_STATIC src/distributed_bindings.cpp)
  set_target_properties(shiftop_python_distributed PROPERTIES OUTPUT_NAME _distributed
    LIBRARY_OUTPUT_DIRECTORY ${_package_dir})
  target_link_libraries(shiftop_python_distributed PRIVATE shiftop_distributed shiftop_warnings)
  # As for shiftop._core: nanobind's and Python's headers are system headers (our warnings only).
  target_include_directories(shiftop_python_distributed SYSTEM PRIVATE
    ${nanobind_ROOT}/../include ${Python_INCLUDE_DIRS})
  if(SHIFTOP_ENABLE_CUDA)
    set_target_properties(shiftop_python_distributed PROPERTIES
      INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
  endif()
  # Building the package (target shiftop_python) builds both modules.
  add_dependencies(shiftop_python shiftop_python_distributed)
  install(TARGETS shiftop_python_distributed LIBRARY DESTINATION shiftop COMPONENT python)
endif()
