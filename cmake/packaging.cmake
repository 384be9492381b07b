# Version header, install rules, CMake package config and pkg-config file of the prema library.
# Included from the top-level CMakeLists.txt once the `prema` target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The version number lives in project(prema VERSION ...) only; everything else derives from it.
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in
               ${PROJECT_BINARY_DIR}/include/prema/version.hpp @ONLY)
target_include_directories(prema PUBLIC $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
# Consumers of the installed target compile as C++20 too (coroutines, concepts in the headers).
target_compile_features(prema PUBLIC cxx_std_20)

set(PREMA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/prema)

install(TARGETS prema EXPORT premaTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/prema
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/prema/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/prema)
install(EXPORT premaTargets NAMESPACE prema:: DESTINATION ${PREMA_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/premaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/premaConfig.cmake INSTALL_DESTINATION ${PREMA_INSTALL_CMAKEDIR})
# 0.x: a minor release may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/premaConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/premaConfig.cmake ${PROJECT_BINARY_DIR}/premaConfigVersion.cmake
  DESTINATION ${PREMA_INSTALL_CMAKEDIR})

# pkg-config: libprema.a needs spdlog, fmt, liburing and libxxhash at link time, so they are plain Requires (not
# .private, which `pkg-config --libs` ignores). MPI comes from mpi-cxx.pc when the system has
# one (Debian, Open MPI); otherwise compile with mpicxx. cereal (header-only) has no .pc file:
# its include directory is added unless it is the compiler's default.
set(PREMA_PC_REQUIRES "spdlog fmt liburing libxxhash")
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PREMA_PC_MPI QUIET mpi-cxx)
  if(PREMA_PC_MPI_FOUND)
    set(PREMA_PC_REQUIRES "mpi-cxx ${PREMA_PC_REQUIRES}")
  endif()
endif()
set(PREMA_PC_CFLAGS "")
get_target_property(_prema_cereal_inc cereal::cereal INTERFACE_INCLUDE_DIRECTORIES)
foreach(_dir IN LISTS _prema_cereal_inc)
  if(_dir AND NOT _dir STREQUAL "/usr/include" AND NOT _dir STREQUAL "/usr/local/include")
    string(APPEND PREMA_PC_CFLAGS " -I${_dir}")
  endif()
endforeach()
# Relocatable: the prefix is found from the .pc file's own place, like the CMake config does,
# so `cmake --install build --prefix DIR` gives a correct file.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(PREMA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _prema_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _prema_up "${_prema_up}")
  set(PREMA_PC_PREFIX "\${pcfiledir}/${_prema_up}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/prema.pc.in ${PROJECT_BINARY_DIR}/prema.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/prema.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
