# How skforge itself is packaged: `cpack -G DEB` in a build directory makes a Debian package.
set(CPACK_PACKAGE_NAME skforge)
set(CPACK_PACKAGE_VENDOR skforge)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Ahead-of-time static-kernel toolchain for Ascend NPUs")
set(CPACK_PACKAGE_CONTACT "skforge maintainers")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_GENERATOR TGZ)
include(CPack)
