# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` (and so every package) puts beside the executables, each in its FHS
# place under the prefix: man pages and bash completions generated from share/doc (docgen.py),
# the Debian copyright and changelog, the host kernel header, the graph schema, the examples and
# the Python module skforge.runtime.
# Included from packaging/CPackConfig.cmake; destinations are relative, so any prefix works.
include(GNUInstallDirs)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(SKFORGE_GEN_DIR ${PROJECT_BINARY_DIR}/packaging)
set(docgen ${CMAKE_CURRENT_LIST_DIR}/docgen.py)
set(cli_md ${PROJECT_SOURCE_DIR}/share/doc/cli.md)
file(MAKE_DIRECTORY ${SKFORGE_GEN_DIR}/man ${SKFORGE_GEN_DIR}/completions)

# Man pages: skc(1), skinstall(8), skrun(1), skforge-op-compiler(1) from cli.md; skforge-run(5)
# from run-format.md.
set(skforge_generated)
foreach(page IN ITEMS skc.1 skinstall.8 skrun.1 skforge-op-compiler.1)
  string(REGEX REPLACE "\\.[0-9]+$" "" tool ${page})
  set(out ${SKFORGE_GEN_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND Python3::Interpreter ${docgen} man --cli ${cli_md} --tool ${tool}
            --version ${PROJECT_VERSION} --out ${out}
    DEPENDS ${docgen} ${cli_md} COMMENT "Generating man page ${page}" VERBATIM)
  string(REGEX REPLACE ".*\\." "" section ${page})
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  list(APPEND skforge_generated ${out})
endforeach()
set(out ${SKFORGE_GEN_DIR}/man/skforge-run.5.gz)
add_custom_command(OUTPUT ${out}
  COMMAND Python3::Interpreter ${docgen} man --format-doc ${PROJECT_SOURCE_DIR}/share/doc/run-format.md
          --version ${PROJECT_VERSION} --out ${out}
  DEPENDS ${docgen} ${PROJECT_SOURCE_DIR}/share/doc/run-format.md
  COMMENT "Generating man page skforge-run.5" VERBATIM)
install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
list(APPEND skforge_generated ${out})

# Bash completions, named as the commands so bash-completion loads them on first use.
foreach(tool IN ITEMS skc skinstall skrun)
  set(out ${SKFORGE_GEN_DIR}/completions/${tool})
  add_custom_command(OUTPUT ${out}
    COMMAND Python3::Interpreter ${docgen} completion --cli ${cli_md} --tool ${tool} --out ${out}
    DEPENDS ${docgen} ${cli_md} COMMENT "Generating bash completion for ${tool}" VERBATIM)
  install(FILES ${out} DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/bash-completion/completions)
  list(APPEND skforge_generated ${out})
endforeach()

# Debian's changelog for a native package, dated by SOURCE_DATE_EPOCH when set.
string(TIMESTAMP SKFORGE_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${SKFORGE_GEN_DIR}/changelog @ONLY)
set(out ${SKFORGE_GEN_DIR}/changelog.gz)
add_custom_command(OUTPUT ${out}
  COMMAND Python3::Interpreter ${docgen} gzip ${SKFORGE_GEN_DIR}/changelog ${out}
  DEPENDS ${docgen} ${SKFORGE_GEN_DIR}/changelog VERBATIM)
list(APPEND skforge_generated ${out})
add_custom_target(skforge_docs ALL DEPENDS ${skforge_generated})

set(SKFORGE_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/skforge)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright ${out} DESTINATION ${SKFORGE_DOCDIR})
# The runtime library's Debian packages (CPackConfig.cmake) carry the same copyright and changelog.
install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright ${out}
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/libskforge-runtime0 COMPONENT runtime)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/copyright ${out}
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/libskforge-runtime-dev COMPONENT devel)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/deb/libskforge-runtime0.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides RENAME libskforge-runtime0
        COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/share/skforge/include/skforge_host_kernel.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/skforge)
install(FILES ${PROJECT_SOURCE_DIR}/share/skforge/graph.schema.json
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/skforge)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/share/skforge/examples
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/skforge)
# The Python module over libskforge_runtime (lib/runtime installs the library and its header),
# where Debian's python3 looks: <prefix>/lib/python3/dist-packages.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/skforge DESTINATION lib/python3/dist-packages
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
