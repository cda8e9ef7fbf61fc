# Fails unless every quoted #include in the tool's sources (apps/) names a public header
# (shiftop/..., under include/shiftop) or a header that sits next to the including file: the tool
# is built on the installed API alone (docs/architecture.md, "Layers"). Its link line names no
# internal include directory either (apps/shiftop/CMakeLists.txt), so a violation also fails the
# build; this test names the file and line. Run: cmake -DAPPS=<apps dir> -DINCLUDE=<include dir>
# -P public_includes.cmake
file(GLOB_RECURSE sources "${APPS}/*.cpp" "${APPS}/*.hpp" "${APPS}/*.h" "${APPS}/*.cu")
set(violations "")
foreach(source IN LISTS sources)
  get_filename_component(directory "${source}" DIRECTORY)
  file(STRINGS "${source}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" header "${line}")
    if(header MATCHES "^shiftop/" AND EXISTS "${INCLUDE}/${header}")
      continue()
    endif()
    if(NOT header MATCHES "^shiftop/" AND NOT header MATCHES "/" AND EXISTS "${directory}/${header}")
      continue()
    endif()
    file(RELATIVE_PATH where "${APPS}/.." "${source}")
    list(APPEND violations "${where}: #include \"${header}\" is not a public header (include/shiftop/...) nor one of the tool's own")
  endforeach()
endforeach()
list(LENGTH sources count)
if(count EQUAL 0)
  message(FATAL_ERROR "no sources found under '${APPS}'")
endif()
if(violations)
  list(JOIN violations "\n" text)
  message(FATAL_ERROR "${text}")
endif()
message(STATUS "${count} files under ${APPS} include only public headers and their own")
