# SPDX-License-Identifier: Apache-2.0
# yaml-cpp for the aarch64 cross build (cmake/toolchain-aarch64-linux-gnu.cmake): the target
# `yaml-cpp`, as Debian 12's yaml-cpp 0.7 exports it, from the arm64 runtime library
# (libyaml-cpp0.7:arm64) and the architecture-independent headers of the amd64 libyaml-cpp-dev.
set(_skforge_yaml_lib /usr/lib/aarch64-linux-gnu/libyaml-cpp.so.0.7)
if(NOT EXISTS ${_skforge_yaml_lib} OR NOT EXISTS /usr/include/yaml-cpp/yaml.h)
  set(yaml-cpp_FOUND FALSE)
  set(yaml-cpp_NOT_FOUND_MESSAGE
      "needs ${_skforge_yaml_lib} (libyaml-cpp0.7:arm64) and /usr/include/yaml-cpp (libyaml-cpp-dev); run scripts/bootstrap.sh arm64")
  return()
endif()
if(NOT TARGET yaml-cpp)
  add_library(yaml-cpp SHARED IMPORTED)
  set_target_properties(yaml-cpp PROPERTIES IMPORTED_LOCATION ${_skforge_yaml_lib}
                        IMPORTED_SONAME libyaml-cpp.so.0.7
                        INTERFACE_INCLUDE_DIRECTORIES /usr/include)
endif()
set(YAML_CPP_INCLUDE_DIR /usr/include)
set(YAML_CPP_LIBRARIES yaml-cpp)
