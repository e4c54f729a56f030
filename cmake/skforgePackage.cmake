# SPDX-License-Identifier: Apache-2.0
# Installs skforge's CMake package into lib/cmake/skforge/: skforgeConfig.cmake, its version file,
# the imported executables (export set skforgeTargets, filled by the apps' install rules) and
# skforge_add_run_package(). Included from the top-level CMakeLists.txt.
include(CMakePackageConfigHelpers)
set(SKFORGE_CMAKE_DIR lib/cmake/skforge)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/skforgeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/skforgeConfig.cmake
                              INSTALL_DESTINATION ${SKFORGE_CMAKE_DIR})
# 0.x: a new minor version may change the function's interface (our choice).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/skforgeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(EXPORT skforgeTargets NAMESPACE skforge:: DESTINATION ${SKFORGE_CMAKE_DIR})
install(FILES ${PROJECT_BINARY_DIR}/skforgeConfig.cmake
              ${PROJECT_BINARY_DIR}/skforgeConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/skforgeRunPackage.cmake
        DESTINATION ${SKFORGE_CMAKE_DIR})
