# The install test (ctest TesselInstallConsumer, registered by
# cmake/TesselInstall.cmake): `cmake --install` into a scratch prefix, then
# configure, build and run test/install/consumer against that prefix only.
#   cmake -DTESSEL_BINARY_DIR=... -DTESSEL_SOURCE_DIR=... -DWORK_DIR=...
#         -DGENERATOR=... -DMAKE_PROGRAM=... -DCXX_COMPILER=...
#         [-DWITH_MLIR=ON] -P RunConsumer.cmake
# WITH_MLIR (a build with the MLIR layers and the tools) also builds the
# consumer's indexing-map program against the MLIR component and runs the
# installed `tessel`.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${what} failed (${rc}):\n${out}")
  endif()
  set(runOutput "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run("cmake --install" ${CMAKE_COMMAND} --install ${TESSEL_BINARY_DIR}
    --prefix ${prefix})

# The package must point into the prefix, never back at the trees it came from.
file(GLOB packageFiles ${prefix}/lib*/cmake/tessel/*.cmake)
if(NOT packageFiles)
  message(FATAL_ERROR "install test: no tessel package under ${prefix}")
endif()
foreach(file ${packageFiles})
  file(READ ${file} text)
  foreach(tree ${TESSEL_SOURCE_DIR} ${TESSEL_BINARY_DIR})
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "install test: ${file} refers to ${tree}")
    endif()
  endforeach()
endforeach()

# The core alone: the consumer finds no LLVM and links TesselLayout and what
# it needs (TesselSupport), nothing else.
run("configuring the consumer" ${CMAKE_COMMAND}
    -S ${TESSEL_SOURCE_DIR}/test/install/consumer -B ${WORK_DIR}/build
    -G ${GENERATOR} -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix})
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run("running the consumer" ${WORK_DIR}/build/layout-offset)
set(expected "f32[3,5]{1,0:T(2,2)}: element (2,3) is at offset 17 of 24\n")
if(NOT runOutput STREQUAL expected)
  message(FATAL_ERROR "install test: layout-offset printed\n${runOutput}"
          "expected\n${expected}")
endif()

if(WITH_MLIR)
  run("configuring the MLIR consumer" ${CMAKE_COMMAND}
      -S ${TESSEL_SOURCE_DIR}/test/install/consumer -B ${WORK_DIR}/build-mlir
      -G ${GENERATOR} -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix}
      -DWITH_MLIR=ON)
  run("building the MLIR consumer" ${CMAKE_COMMAND} --build
      ${WORK_DIR}/build-mlir)
  run("running the MLIR consumer" ${WORK_DIR}/build-mlir/map-print)
  set(expected "(d0, d1) -> (d1, d0), domain: d0 in [0, 9], d1 in [0, 19]\n")
  if(NOT runOutput STREQUAL expected)
    message(FATAL_ERROR "install test: map-print printed\n${runOutput}"
            "expected\n${expected}")
  endif()

  # The installed tool runs from the prefix (libLLVM found through RPATH).
  run("the installed tessel" ${prefix}/bin/tessel layout index
      "f32[3,5]{1,0:T(2,2)}" 2,3)
  if(NOT runOutput STREQUAL "17\n")
    message(FATAL_ERROR "install test: tessel printed ${runOutput}")
  endif()
endif()
