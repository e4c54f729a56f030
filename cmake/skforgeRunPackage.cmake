# SPDX-License-Identifier: Apache-2.0
# skforge_add_run_package(<target> GRAPH <graph.yaml> [NPU_ARCH <arch>] [NAME <name>]
#                         [OUTPUT_DIR <dir>] [SIGN_KEY <key.pem>] [PACKAGE_VERSION <version>])
#
# Adds a custom command that compiles GRAPH into <OUTPUT_DIR>/<NAME>.run with `skc compile`, and
# a target <target> (built by default) that depends on it. skc writes a depfile listing every
# file the compile read (the graph, each kernel's metadata, binary and source, the signing key
# and skc itself), so the .run is rebuilt exactly when one of them changes.
# Relative GRAPH and SIGN_KEY are taken from the current source directory, a relative OUTPUT_DIR
# from the current binary directory. The target's property SKFORGE_RUN_FILE is the .run's path.
# Documented in share/doc/cmake.md.
include_guard(GLOBAL)

# A function keeps the policies in effect where it is defined: paths in the depfile are read
# relative to the current binary directory for every generator (CMP0116).
cmake_policy(PUSH)
cmake_policy(SET CMP0116 NEW)

function(skforge_add_run_package target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "GRAPH;NPU_ARCH;NAME;OUTPUT_DIR;SIGN_KEY;PACKAGE_VERSION"
                        "")
  set(where "skforge_add_run_package(${target})")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(arg_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: no value for ${arg_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT arg_GRAPH)
    message(FATAL_ERROR "${where}: GRAPH <graph.yaml> is required")
  endif()
  if(NOT TARGET skforge::skc)
    message(FATAL_ERROR "${where}: skforge::skc is not defined; call find_package(skforge)")
  endif()
  if(NOT arg_NAME)
    set(arg_NAME "${target}")
  endif()
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR static_kernel_compile_outputs)
  endif()
  get_filename_component(graph "${arg_GRAPH}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(outdir "${arg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  set(run "${outdir}/${arg_NAME}.run")
  set(depfile "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.dir/${arg_NAME}.run.d")

  set(args compile "${graph}" -o "${outdir}" --name "${arg_NAME}" --depfile "${depfile}")
  set(depends "${graph}" "$<TARGET_FILE:skforge::skc>")
  if(arg_NPU_ARCH)
    list(APPEND args --npu-arch "${arg_NPU_ARCH}")
  endif()
  if(arg_SIGN_KEY)
    get_filename_component(key "${arg_SIGN_KEY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args --sign-key "${key}")
    list(APPEND depends "${key}")
  endif()
  if(arg_PACKAGE_VERSION)
    list(APPEND args --package-version "${arg_PACKAGE_VERSION}")
  endif()

  add_custom_command(
    OUTPUT "${run}"
    COMMAND skforge::skc ${args}
    DEPENDS ${depends}
    DEPFILE "${depfile}"
    COMMENT "skc compile ${arg_GRAPH} -> ${arg_NAME}.run"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${run}")
  set_target_properties(${target} PROPERTIES SKFORGE_RUN_FILE "${run}")
endfunction()

cmake_policy(POP)
