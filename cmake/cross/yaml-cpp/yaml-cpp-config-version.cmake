# SPDX-License-Identifier: Apache-2.0
# The version of the arm64 runtime library cmake/cross/yaml-cpp/yaml-cpp-config.cmake describes.
set(PACKAGE_VERSION 0.7.0)
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
