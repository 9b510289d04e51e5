# `cmake --install build --prefix P`: tessel's libraries, headers, tools and
# its CMake package, P/lib/cmake/tessel/tesselConfig.cmake. An outside project
# then writes
#
#   find_package(tessel REQUIRED)                  # the core, no LLVM needed
#   target_link_libraries(app PRIVATE tessel::TesselLayout)
#
# and asks for the MLIR layers (tessel::TesselIndexingMap, TesselIndexing,
# TesselDialect) with find_package(tessel REQUIRED COMPONENTS MLIR), which
# also finds MLIR 19. test/install/ builds such a consumer (a ctest).
include(CMakePackageConfigHelpers)
set(tesselCmakeDir ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)

install(DIRECTORY ${TESSEL_SOURCE_DIR}/include/tessel
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(EXPORT tesselTargets NAMESPACE tessel::
        DESTINATION ${tesselCmakeDir})
if(TESSEL_ENABLE_MLIR)
  # The dialect's generated declarations (.h.inc) and definitions.
  install(DIRECTORY ${TESSEL_BINARY_DIR}/include/tessel
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.inc")
  install(EXPORT tesselMlirTargets NAMESPACE tessel::
          DESTINATION ${tesselCmakeDir})
  foreach(tool tessel tessel-opt)
    if(TARGET ${tool})
      install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    endif()
  endforeach()
endif()

configure_package_config_file(${TESSEL_SOURCE_DIR}/cmake/tesselConfig.cmake.in
  ${TESSEL_BINARY_DIR}/tesselConfig.cmake
  INSTALL_DESTINATION ${tesselCmakeDir})
write_basic_package_version_file(${TESSEL_BINARY_DIR}/tesselConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${TESSEL_BINARY_DIR}/tesselConfig.cmake
              ${TESSEL_BINARY_DIR}/tesselConfigVersion.cmake
        DESTINATION ${tesselCmakeDir})

# The consumer test: install into a scratch prefix, build test/install/consumer
# against it (the core alone; with the MLIR layers, the MLIR component too),
# run it. A sanitizer or fuzzing build is left out: its objects
# need runtime libraries the plain consumer does not link.
if(TESSEL_ENABLE_TESTS AND NOT TESSEL_SANITIZE AND NOT TESSEL_ENABLE_FUZZERS)
  set(withMlir)
  if(TARGET tessel)
    set(withMlir -DWITH_MLIR=ON)
  endif()
  add_test(NAME TesselInstallConsumer
    COMMAND ${CMAKE_COMMAND}
      -DTESSEL_BINARY_DIR=${TESSEL_BINARY_DIR}
      -DTESSEL_SOURCE_DIR=${TESSEL_SOURCE_DIR}
      -DWORK_DIR=${TESSEL_BINARY_DIR}/test-install
      -DGENERATOR=${CMAKE_GENERATOR}
      -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
      ${withMlir}
      -P ${TESSEL_SOURCE_DIR}/test/install/RunConsumer.cmake)
endif()
