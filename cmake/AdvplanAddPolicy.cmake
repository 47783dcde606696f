# advplan_add_policy(NAME SOURCES...)
#
# Builds a planning-policy plug-in: a MODULE library NAME.so linking advplan::advplan. Load it at run time with
# `advplan --plugin path/to/NAME.so ...` (or ADVPLAN_PLUGINS=path/to/NAME.so); the policy's
# ADVPLAN_REGISTER_BLUE_POLICY / ADVPLAN_REGISTER_RED_POLICY object then registers it by name.
# Shipped in the installed package (find_package(advplan)) and used in-tree by examples/cpp_policy/.
function(advplan_add_policy NAME)
  if(ARGC LESS 2)
    message(FATAL_ERROR "advplan_add_policy(${NAME}): no source files given")
  endif()
  add_library(${NAME} MODULE ${ARGN})
  target_link_libraries(${NAME} PRIVATE advplan::advplan)
  # NAME.so, not libNAME.so: the file is a plug-in, never linked against.
  set_target_properties(${NAME} PROPERTIES PREFIX "")
endfunction()
