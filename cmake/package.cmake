# The Debian package (`make deb`, or `cpack -G DEB` in the build directory): the installed tree of
# `cmake --install` as build/k3plan_<version>_<arch>.deb. Needs only dpkg-deb; the runtime
# dependencies are the Debian packages that own the shared libraries the binary links
# (dpkg-shlibdeps when dpkg-dev is installed, else `dpkg -S` over those libraries at configure
# time), so the package installs with apt on the release it was built on.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME k3plan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "k3plan")
set(CPACK_PACKAGE_CONTACT "k3plan maintainers <k3plan@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "plan GPU deployments of large open-weight models for vLLM and SGLang")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
find_program(K3PLAN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(K3PLAN_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # the packages owning the libraries the binary links
  set(deps "")
  foreach(lib libyaml-cpp.so libfmt.so libstdc++.so.6 libgcc_s.so.1 libc.so.6)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib} OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE
                    ERROR_QUIET)
    if(IS_ABSOLUTE "${path}" AND EXISTS "${path}")
      file(REAL_PATH "${path}" real)
      string(REGEX REPLACE "^/usr/lib/" "/lib/" merged "${real}")  # dpkg records /lib/... on merged-/usr systems
      foreach(candidate "${real}" "${merged}")
        execute_process(COMMAND dpkg -S "${candidate}" OUTPUT_VARIABLE owner OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
        if(rc EQUAL 0)
          string(REGEX REPLACE "^([^:,]+).*" "\\1" pkg "${owner}")
          list(APPEND deps "${pkg}")
          break()
        endif()
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES deps)
  string(REPLACE ";" ", " CPACK_DEBIAN_PACKAGE_DEPENDS "${deps}")
endif()
include(CPack)
