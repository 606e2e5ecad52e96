# `cmake --install` the build tree into a scratch prefix, build tests/package/consumer against it
# with find_package(candle_graph), run both programs, and check what the probe links.
# Usage: cmake -DBUILD=<build dir> -DSOURCE=<repository> -DWORK=<scratch dir> -P this file
file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix} --component development)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix} --component runtime)
run(${CMAKE_COMMAND} -S ${SOURCE}/tests/package/consumer -B ${WORK}/consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/consumer -j2)

# The §4.11 example of docs/format/trace6.md: trusted, a 13 ms measured region (§8.3), 7 nodes
# (5 spans, 2 ops).
run(${WORK}/consumer/analyze ${SOURCE}/tests/fixtures/spec_example.jsonl)
if(NOT run_out STREQUAL "format trace6 trusted 1 total_ms 13.000 nodes 7\n")
  message(FATAL_ERROR "analyze printed: ${run_out}")
endif()

# The probe's trace is trusted by the installed CLI.
run(${WORK}/consumer/probe ${WORK}/probe.jsonl)
run(${prefix}/bin/candle-graph validate ${WORK}/probe.jsonl --require-trusted)

# The probe links the standard library only: none of the analysis stack's shared libraries.
find_program(READELF readelf REQUIRED)
run(${READELF} -d ${WORK}/consumer/probe)
foreach(lib simdjson sqlite3 crypto libz)
  if(run_out MATCHES "NEEDED[^\n]*${lib}")
    message(FATAL_ERROR "the probe links ${lib}:\n${run_out}")
  endif()
endforeach()
message(STATUS "find_package(candle_graph): consumer built and run against ${prefix}")
