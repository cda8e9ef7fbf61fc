# Runs one shiftop command line and checks its exit status and output.
#   -DCOMMAND="shiftop;matvec;..." -DEXPECT_FAILURE=ON|OFF -DPATTERN=<regex> [-DSINGLE_LINE_ERROR=ON]
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
  TIMEOUT 120)
if(EXPECT_FAILURE)
  if(status EQUAL 0)
    message(FATAL_ERROR "expected a non-zero exit status, got 0\nstdout: ${out}\nstderr: ${err}")
  endif()
  if(NOT status MATCHES "^[0-9]+$")
    message(FATAL_ERROR "the command did not exit normally: ${status}\nstderr: ${err}")
  endif()
  # A user-input error is one line on stderr and nothing on stdout.
  string(STRIP "${err}" stripped)
  string(FIND "${stripped}" "\n" newline)
  if(NOT newline EQUAL -1 OR NOT out STREQUAL "")
    message(FATAL_ERROR "expected a one-line error on stderr only\nstdout: ${out}\nstderr: ${err}")
  endif()
elseif(NOT status EQUAL 0)
  message(FATAL_ERROR "exit status ${status}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT "${out}${err}" MATCHES "${PATTERN}")
  message(FATAL_ERROR "output does not match '${PATTERN}'\nstdout: ${out}\nstderr: ${err}")
endif()
