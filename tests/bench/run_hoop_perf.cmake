# Runs one hoop-perf command line (everything after "--") and checks how it ended:
#   cmake -DEXPECT_EXIT=zero|nonzero|<status> [-DEXPECT_OUTPUT=<regex>] [-DEXPECT_WRONG_ROW=ON]
#         [-DEXPECT_ROW_SCHEDULE=<name>] -P run_hoop_perf.cmake -- <command> <args>...
# EXPECT_OUTPUT is matched against stdout and stderr together.
# EXPECT_WRONG_ROW: some table row must show #wrong above 0 (out-of-place or in-place).
# EXPECT_ROW_SCHEDULE: every table row must end in this schedule name (and there must be rows).
# FRESH_DIR: a directory emptied (or created) before the run, for the files the run writes, so a
# later check never reads what an earlier run left.
# CTest's PASS_REGULAR_EXPRESSION ignores the exit status, and these tests need both.
set(command "")
set(after_dashes FALSE)
math(EXPR last_arg "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last_arg})
  if(after_dashes)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "run_hoop_perf.cmake: no command after --")
endif()

if(FRESH_DIR)
  file(REMOVE_RECURSE "${FRESH_DIR}")
  file(MAKE_DIRECTORY "${FRESH_DIR}")
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE exit_status OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
string(REPLACE ";" " " shown "${command}")
message("$ ${shown}\n${out}${err}exit status: ${exit_status}")

if(EXPECT_EXIT STREQUAL "zero" AND NOT exit_status STREQUAL "0")
  message(FATAL_ERROR "expected exit status 0, got ${exit_status}")
endif()
if(EXPECT_EXIT STREQUAL "nonzero"
   AND (exit_status STREQUAL "0" OR NOT exit_status MATCHES "^[0-9]+$"))
  message(FATAL_ERROR "expected a non-zero exit status, got ${exit_status}")
endif()
if(EXPECT_EXIT MATCHES "^[0-9]+$" AND NOT exit_status STREQUAL EXPECT_EXIT)
  message(FATAL_ERROR "expected exit status ${EXPECT_EXIT}, got ${exit_status}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "output does not match: ${EXPECT_OUTPUT}")
endif()
# Rows are the lines after a table's column header that do not start with '#' (after hooprun's
# "[rank] " tag): nccl-tests' 13 fields, of which 9 and 13 are the two #wrong columns, then the
# schedule.
set(rows_seen 0)
set(found_wrong FALSE)
set(in_table FALSE)
string(REPLACE "\n" ";" lines "${out}")
foreach(line IN LISTS lines)
  if(line MATCHES "#wrong")
    set(in_table TRUE)
  endif()
  if(NOT in_table OR NOT line MATCHES "^(\\[[0-9]+\\] )?( +[0-9].*)$")
    continue()
  endif()
  separate_arguments(fields UNIX_COMMAND "${CMAKE_MATCH_2}")
  list(LENGTH fields field_count)
  if(NOT field_count EQUAL 14)
    message(FATAL_ERROR "a table row has ${field_count} fields, not 14: '${line}'")
  endif()
  math(EXPR rows_seen "${rows_seen} + 1")
  list(GET fields 8 out_of_place_wrong)
  list(GET fields 12 in_place_wrong)
  list(GET fields 13 schedule)
  if(out_of_place_wrong GREATER 0 OR in_place_wrong GREATER 0)
    set(found_wrong TRUE)
  endif()
  if(DEFINED EXPECT_ROW_SCHEDULE AND NOT schedule STREQUAL EXPECT_ROW_SCHEDULE)
    message(FATAL_ERROR "a row names schedule '${schedule}', not '${EXPECT_ROW_SCHEDULE}': "
                        "'${line}'")
  endif()
endforeach()
if(EXPECT_WRONG_ROW AND NOT found_wrong)
  message(FATAL_ERROR "expected a row with #wrong above 0")
endif()
if(DEFINED EXPECT_ROW_SCHEDULE AND rows_seen EQUAL 0)
  message(FATAL_ERROR "expected table rows naming ${EXPECT_ROW_SCHEDULE}, found none")
endif()
