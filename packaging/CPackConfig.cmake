# SPDX-License-Identifier: Apache-2.0
# How skforge itself is packaged: `cpack -G DEB` (and `-G RPM` where rpmbuild exists) in a build
# directory. Packages install under /usr (CPACK_PACKAGING_INSTALL_PREFIX) whatever
# CMAKE_INSTALL_PREFIX the build was configured with.
set(SKFORGE_PACKAGE_MAINTAINER "skforge maintainers <maintainers@users.noreply.a-seed-852da939.example>"
    CACHE STRING "Maintainer field of the .deb and .rpm (Name <address>)")
set(SKFORGE_HOMEPAGE_URL "" CACHE STRING "Homepage field of the .deb and .rpm (none when empty)")
set(CPACK_PACKAGE_NAME skforge)
set(CPACK_PACKAGE_VENDOR skforge)
set(CPACK_PACKAGE_CONTACT "${SKFORGE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ahead-of-time static-kernel toolchain for Ascend NPUs")
set(CPACK_PACKAGE_DESCRIPTION
    "skc plans which operators of a graph fuse into SuperKernels, builds them
and packs the result into signed, reproducible, self-extracting .run
packages. skinstall installs such packages into CANN's
opp/static_kernel/ai_core/ layout in transactions and refuses symbolic
links; skrun runs host-target packages fused and op-by-op through
libskforge_runtime, the C library (and Python module skforge.runtime)
with which applications run installed packages.")
include(${CMAKE_CURRENT_LIST_DIR}/install.cmake)

set(CPACK_GENERATOR TGZ)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# Debian: skforge_<version>_<arch>.deb; library dependencies from dpkg-shlibdeps. sh, tar and
# gzip are Essential; zstd only unpacks zstd packages, a C++ compiler only builds host kernels.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "g++ | c++-compiler")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "zstd, python3")
if(SKFORGE_HOMEPAGE_URL)
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${SKFORGE_HOMEPAGE_URL}")
  set(CPACK_RPM_PACKAGE_URL "${SKFORGE_HOMEPAGE_URL}")
endif()

# libskforge_runtime as Debian wants a shared library (lintian): libskforge-runtime0 holds the
# library (soname libskforge_runtime.so.0, with its shlibs file and ldconfig trigger),
# libskforge-runtime-dev the header and the link-time symlink; skforge (every other file: the
# tools, skrun linking the library, the Python module) depends on the first.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Unspecified runtime devel)
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_NAME skforge)
# In component mode CPack needs each package's description; it puts the summary before it.
set(CPACK_DEBIAN_UNSPECIFIED_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libskforge-runtime0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/triggers)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "libskforge_runtime: run installed skforge packages
The C library with which applications open a package that skinstall
installed, bind its graph's tensors by name and run it fused (one launch
per SuperKernel), op by op, or one SuperKernel at a time.")
set(CPACK_DEBIAN_DEVEL_PACKAGE_NAME libskforge-runtime-dev)
set(CPACK_DEBIAN_DEVEL_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVEL_PACKAGE_DEPENDS "libskforge-runtime0 (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEVEL_DESCRIPTION "libskforge_runtime: development files
The header skforge/runtime.h and the link-time libskforge_runtime.so for
applications that run installed skforge packages.")
set(CPACK_DEBIAN_UNSPECIFIED_PACKAGE_DEPENDS "libskforge-runtime0 (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY "=")
# skrun links the library of the sibling package: dpkg-shlibdeps finds it in the build tree.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib/runtime)

# RPM (openEuler and other RPM hosts): library requirements from rpmbuild's own scan.
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE "Apache-2.0")
set(CPACK_RPM_PACKAGE_GROUP "Development/Tools")
set(CPACK_RPM_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
# Directories other packages own: listed, the package would claim them.
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/share/bash-completion /usr/share/bash-completion/completions /usr/share/man
    /usr/share/man/man1 /usr/share/man/man5 /usr/share/man/man8 /usr/lib/cmake
    /usr/share/lintian /usr/share/lintian/overrides /usr/lib/python3 /usr/lib/python3/dist-packages)

# The architecture is the target's. Natively cpack asks dpkg and uname; a cross build
# (scripts/cross-build.sh arm64) names it from CMAKE_SYSTEM_PROCESSOR, and dpkg-shlibdeps then
# reads the target's libraries and symbols files (the :arm64 packages installed by multiarch)
# with the target's objdump, which it does when DEB_HOST_ARCH names the target.
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
    set(CPACK_RPM_PACKAGE_ARCHITECTURE aarch64)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|amd64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
    set(CPACK_RPM_PACKAGE_ARCHITECTURE x86_64)
  else()
    message(FATAL_ERROR "packaging: no Debian/RPM architecture known for CMAKE_SYSTEM_PROCESSOR "
                        "'${CMAKE_SYSTEM_PROCESSOR}' (aarch64 and x86_64 are)")
  endif()
  set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/packaging/CPackCross.cmake)
  file(CONFIGURE OUTPUT ${CPACK_PROJECT_CONFIG_FILE} CONTENT
       "# Generated by packaging/CPackConfig.cmake: cpack reads this before each generator.\n\
if(CPACK_GENERATOR STREQUAL \"DEB\")\n\
  set(ENV{DEB_HOST_ARCH} @CPACK_DEBIAN_PACKAGE_ARCHITECTURE@)\n\
endif()\n" @ONLY)
  # rpmbuild strips with the build machine's strip, which cannot read the target's objects;
  # CPack has stripped them already (CPACK_STRIP_FILES, with the cross toolchain's strip).
  set(CPACK_RPM_SPEC_MORE_DEFINE "%define __strip ${CMAKE_STRIP}")
endif()
include(CPack)
