# ctest install.find_package: installs the build tree BUILD to PREFIX, checks that only the public
# headers were installed, then configures, builds and runs the consumer project of this folder
# against it (FLAGS: compile and link flags of the build, e.g. the sanitizers').
file(REMOVE_RECURSE ${PREFIX} ${PREFIX}-consumer)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX}
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
foreach(header shiftop/btt/plan.hpp shiftop/gpu/context.hpp shiftop/btt/distributed_plan.hpp)
  if(NOT EXISTS ${PREFIX}/include/${header})
    message(FATAL_ERROR "the public header ${header} was not installed")
  endif()
endforeach()
foreach(internal shiftop/backend shiftop/btt/cpu shiftop/btt/passes.hpp btt backend)
  if(EXISTS ${PREFIX}/include/${internal})
    message(FATAL_ERROR "the internal ${internal} was installed")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${PREFIX}-consumer -G Ninja
  -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=${FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${PREFIX}-consumer COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${PREFIX}-consumer/consumer COMMAND_ERROR_IS_FATAL ANY)
