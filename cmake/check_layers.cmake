cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)
# Fails when a source of one layer includes a header of a layer it may not
# depend on (ARCHITECTURE.md, "Layers"). Run by lockstep_layer() in the
# top-level CMakeLists.txt before the layer's library is compiled.
#   -DLAYER=<name> -DSOURCES=<;-list> -DMAY_INCLUDE=<;-list of folders>
#   -DSTAMP=<file written on success>
# Project headers are included by their path from the source root
# ("controller/run/coordinator.h"); the folder is that path without its
# file name. Third-party and generated headers ("absl/...", "lockstep/v1/...")
# are not project folders and are not checked.
set(project_folders "common" "agent" "controller")
set(problems "")
foreach(src IN LISTS SOURCES)
  file(STRINGS "${src}" lines REGEX "^#include \"(common|agent|controller)/")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    get_filename_component(folder "${header}" DIRECTORY)
    if(NOT folder IN_LIST MAY_INCLUDE)
      string(REPLACE ";" ", " allowed "${MAY_INCLUDE}")
      string(APPEND problems
        "  ${src}: includes ${header}, but ${LAYER} may only include from ${allowed};\n"
        "    move the code to the layer that owns it, or pass what it needs in from above\n")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "Layering broken (see ARCHITECTURE.md):\n${problems}")
endif()
file(WRITE "${STAMP}" "ok\n")
