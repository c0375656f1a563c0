# The Debian package (cpack -G DEB in a build tree): what `cmake --install`
# installs, under /usr: the executor, the CLI, libcatalyst_remote and its
# headers, the CMake package (find_package(CatalystRemote)) and the Python
# package, in the directory Debian's python3 reads packaged modules from.
# tests/package builds, installs, uses and purges it.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME catalyst-remote)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Runs Catalyst-compiled kernels in other processes and on other machines")
set(CPACK_PACKAGE_CONTACT "catalyst-remote maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# What the binaries link (ldd on Debian 12) and what the Python package
# imports; the Python package is built for python3.11, Debian 12's.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
  "libc6, libstdc++6, libllvm22, libssl3, libmimalloc2.0, libpmix2, python3 (>= 3.11), python3 (<< 3.12), python3-numpy")
# Python writes __pycache__ into the package's directory when root imports
# it: prerm removes it, so that purging leaves nothing behind.
if(NOT CATALYST_REMOTE_PYTHON_INSTALL_DIR)
  set(CATALYST_REMOTE_PYTHON_INSTALL_DIR lib/python3/dist-packages) # no Python package built
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian-prerm.in ${CMAKE_BINARY_DIR}/debian/prerm @ONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/debian/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
