# Runs a command and checks its exit status as well as its output. ctest's PASS_REGULAR_EXPRESSION
# alone ignores the exit status: a program that printed the expected line and then crashed, or
# exited 1, would pass. The expression is matched as ctest matches PASS_REGULAR_EXPRESSION (a
# CMake regular expression, against stdout and stderr together); the output is printed either way.
#   cmake -DSTATUS=N -DREGEX=RE -P expect_output.cmake -- COMMAND [ARG...]
cmake_minimum_required(VERSION 3.20)
if(NOT DEFINED STATUS OR NOT DEFINED REGEX)
  message(FATAL_ERROR "expect_output: expected -DSTATUS=N -DREGEX=RE -P expect_output.cmake -- COMMAND...")
endif()
set(command "")
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    string(REPLACE ";" "\\;" argument "${CMAKE_ARGV${i}}")  # a ";" in an argument stays in it
    list(APPEND command "${argument}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "expect_output: no command after --")
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE output
                ERROR_VARIABLE output)
execute_process(COMMAND ${CMAKE_COMMAND} -E echo_append "${output}")
set(problems "")
if(NOT status STREQUAL STATUS)
  string(APPEND problems "\nexpect_output: exit status ${status}; expected ${STATUS}")
endif()
if(NOT output MATCHES "${REGEX}")
  string(APPEND problems "\nexpect_output: the output does not match: ${REGEX}")
endif()
if(problems)
  message(FATAL_ERROR "${problems}")
endif()
message("expect_output: exit status ${status}, and the output matches")
