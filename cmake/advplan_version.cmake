# Script mode (cmake -P), run at every build by the advplan_version target and once at configure time:
# writes OUT from IN with the current commit. configure_file leaves OUT untouched when its text would not
# change, so only a new commit recompiles version.cpp.
# Inputs: -DSOURCE_DIR=... -DIN=... -DOUT=... -DADVPLAN_VERSION=...
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                OUTPUT_VARIABLE ADVPLAN_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT ADVPLAN_GIT_COMMIT)
  set(ADVPLAN_GIT_COMMIT "unknown")
endif()
configure_file("${IN}" "${OUT}" @ONLY)
