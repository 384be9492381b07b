# The API reference (Doxygen over include/prema, internals left out): the `docs` target, only
# where Doxygen is installed; the normal build never needs it. Warnings (an undocumented public
# name among them) fail the target. See docs/reference/api.md.
find_package(Doxygen QUIET)
if(NOT DOXYGEN_FOUND)
  message(STATUS "Doxygen not found: no `docs` target (the API reference)")
  return()
endif()

set(PREMA_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs/api)
configure_file(${PROJECT_SOURCE_DIR}/docs/reference/Doxyfile.in ${PROJECT_BINARY_DIR}/Doxyfile @ONLY)
file(GLOB_RECURSE PREMA_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/prema/*.hpp)
add_custom_command(
  OUTPUT ${PREMA_DOCS_OUTPUT}/html/index.html
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PREMA_DOCS_OUTPUT}
  COMMAND ${DOXYGEN_EXECUTABLE} ${PROJECT_BINARY_DIR}/Doxyfile
  DEPENDS ${PROJECT_BINARY_DIR}/Doxyfile ${PREMA_PUBLIC_HEADERS}
          ${PROJECT_SOURCE_DIR}/docs/reference/api-mainpage.md
          ${PROJECT_BINARY_DIR}/include/prema/version.hpp
  COMMENT "API reference (Doxygen) into ${PREMA_DOCS_OUTPUT}/html"
  VERBATIM)
add_custom_target(docs DEPENDS ${PREMA_DOCS_OUTPUT}/html/index.html)
