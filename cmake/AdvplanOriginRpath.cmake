# advplan_origin_rpath(TARGET OUTPUT_DIR INSTALL_REL): the RUNPATH of a binary that loads libadvplan.so, the same
# in the build and install trees and relative to the binary: first the build tree's library directory relative to
# OUTPUT_DIR (the directory the target is built in), then $ORIGIN/INSTALL_REL (where libadvplan.so is installed,
# relative to where the target is installed), then any dependency directory outside the system's.
#
# Why not CMake's default: a build-tree RPATH that install rewrites in place is padded with empty entries, and the
# loader reads an empty entry as the current directory, so a library planted where advplan runs would be loaded.
# The build tree's entry comes first so that an older installed libadvplan.so cannot shadow the fresh one. Under
# CMAKE_SKIP_INSTALL_RPATH (a distribution's policy: no RUNPATH installed) the build tree keeps CMake's own
# absolute RPATH, with the relative entry added.
function(advplan_origin_rpath target output_dir install_rel)
  set(lib_dir ${PROJECT_BINARY_DIR})
  if(CMAKE_LIBRARY_OUTPUT_DIRECTORY)
    get_filename_component(lib_dir "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}" ABSOLUTE BASE_DIR "${PROJECT_BINARY_DIR}")
  endif()
  get_filename_component(out_dir "${output_dir}" ABSOLUTE BASE_DIR "${PROJECT_BINARY_DIR}")
  file(RELATIVE_PATH rel "${out_dir}" "${lib_dir}")
  set(build_origin "$ORIGIN")
  if(rel)
    set(build_origin "$ORIGIN/${rel}")
  endif()
  if(CMAKE_SKIP_RPATH)
    return()
  endif()
  if(CMAKE_SKIP_INSTALL_RPATH)
    set_target_properties(${target} PROPERTIES BUILD_RPATH "${build_origin}")
    return()
  endif()
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON INSTALL_RPATH_USE_LINK_PATH ON
                        INSTALL_RPATH "${build_origin}:$ORIGIN/${install_rel}")
endfunction()
