# Helpers shared by tessel's CMake files.

# tessel_core_library(NAME SOURCES... [DEPENDS targets...])
# A plain C++17 library of the core (no LLVM/MLIR include paths).
function(tessel_core_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${TESSEL_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# tessel_mlir_library(NAME SOURCES... [DEPENDS targets...])
# A library above the MLIR line; links the MLIR and LLVM shared libraries.
function(tessel_mlir_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${TESSEL_SOURCE_DIR}/include)
  target_include_directories(${name} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS}
                                                   ${MLIR_INCLUDE_DIRS})
  target_compile_definitions(${name} PUBLIC ${LLVM_DEFINITIONS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPENDS} MLIR LLVM)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# tessel_unittest(NAME SOURCES... DEPENDS targets...)
function(tessel_unittest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPENDS} GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                           ${CMAKE_BINARY_DIR}/unittests)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
