# `cmake --install` and `cpack -G DEB`. Components:
#   runtime      the candle-graph CLI
#   development  the public headers, the stage libraries and the CMake package config
#                (find_package(candle_graph): candle_graph::candle_graph, candle_graph::instrument)
#   python       the candle_graph Python package (integrations/python), when it is built
# The Debian package holds runtime and development; the Python package is installed by cmake
# --install (it needs the torch it was built against).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS candle-graph RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

file(GLOB CG_PUBLIC_HEADERS ${PROJECT_SOURCE_DIR}/include/candle_graph/*.hpp)
install(FILES ${CG_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/candle_graph
        COMPONENT development)
install(TARGETS ${CG_STAGE_TARGETS} candle_graph EXPORT candle_graph-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(CG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/candle_graph)
install(EXPORT candle_graph-targets NAMESPACE candle_graph:: DESTINATION ${CG_CMAKE_DIR}
        COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/candle_graphConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/candle_graphConfig.cmake
                              INSTALL_DESTINATION ${CG_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/candle_graphConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/candle_graphConfig.cmake
              ${PROJECT_BINARY_DIR}/candle_graphConfigVersion.cmake
        DESTINATION ${CG_CMAKE_DIR} COMPONENT development)

set(CPACK_PACKAGE_NAME candle-graph)
set(CPACK_PACKAGE_VENDOR "candle-graph")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Execution evidence for ML training and inference runs (trace/6, PyTorch profiler traces)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "candle-graph developers")
set(CPACK_GENERATOR DEB)
# One package of two components (the python component stays out).
set(CPACK_INSTALL_CMAKE_PROJECTS "${PROJECT_BINARY_DIR};candle_graph;runtime;/"
                                 "${PROJECT_BINARY_DIR};candle_graph;development;/")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# The shared libraries the CLI links (ldd build/candle-graph), as Debian 12 names them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libstdc++6 (>= 12), libgcc-s1, libsimdjson14, libsqlite3-0, zlib1g, libssl3, libisal2")
include(CPack)
