# ctest InstallAndOutOfTreePlugin (tests/CMakeLists.txt), script mode. Installs the built advplan into a
# temporary prefix, builds this folder's plug-in against that prefix with find_package(advplan), and runs
# the installed CLI with the plug-in on a small config that reads the installed templates; then loads each installed
# module (HTTP, pagmo2, MPI) through the CLI command that needs it.
# Inputs: -DBUILD_DIR -DPROJECT_DIR -DWORK_DIR -DCXX_COMPILER -DCXX_COMPILER_LAUNCHER -DBUILD_TYPE -DWITH_MPI_MODULE
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n--- stdout\n${out}\n--- stderr\n${err}")
  endif()
  set(STEP_OUT "${out}" PARENT_SCOPE)
  set(STEP_ERR "${err}" PARENT_SCOPE)
endfunction()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

run_step("install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/advplan include/advplan/version.hpp share/advplan/configs/templates/urban.yaml)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install: ${prefix}/${f} is missing")
  endif()
endforeach()

# The modules (pagmo2's routines, the HTTP client, and MPI when the build has it) are loaded from beside
# libadvplan.so (src/io/modules.cpp): they must be installed together.
file(GLOB_RECURSE installed_lib LIST_DIRECTORIES false "${prefix}/*/libadvplan.so")
list(LENGTH installed_lib n_lib)
if(NOT n_lib EQUAL 1)
  message(FATAL_ERROR "install: expected one libadvplan.so under ${prefix}, found '${installed_lib}'")
endif()
get_filename_component(libdir "${installed_lib}" DIRECTORY)
set(modules libadvplan_pagmo.so libadvplan_http.so)
if(WITH_MPI_MODULE)  # the build has MPI (the advplan_mpi target exists), wherever its output directory is
  list(APPEND modules libadvplan_mpi.so)
endif()
foreach(m ${modules})
  if(NOT EXISTS "${libdir}/${m}")
    message(FATAL_ERROR "install: ${libdir}/${m} is missing beside libadvplan.so")
  endif()
endforeach()

run_step("--version" "${prefix}/bin/advplan" --version)
if(NOT STEP_OUT MATCHES "^advplan [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [^)]+\\)")
  message(FATAL_ERROR "advplan --version printed '${STEP_OUT}'")
endif()

set(configure_args -S "${PROJECT_DIR}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${prefix}"
    "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
if(CXX_COMPILER_LAUNCHER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}")
endif()
run_step("configure the out-of-tree project" "${CMAKE_COMMAND}" ${configure_args})
run_step("build the out-of-tree plug-in" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
set(plugin "${WORK_DIR}/build/out_of_tree_blue.so")
if(NOT EXISTS "${plugin}")
  message(FATAL_ERROR "the out-of-tree build made no ${plugin}")
endif()

# One template, two seeds, few replications: a run of a few seconds.
file(WRITE "${WORK_DIR}/small.yaml" "name: out-of-tree
seed: 11
corpus:
  templates: [urban]
  seeds: [1, 2]
  template_dir: ${prefix}/share/advplan/configs/templates
simulator: {replications: 20}
bootstrap: {resamples: 50, seed: 3}
")
run_step("advplan evaluate with the plug-in" "${prefix}/bin/advplan" evaluate --plugin "${plugin}"
         --blue out_of_tree_blue --red single --no-reference --config "${WORK_DIR}/small.yaml"
         --out "${WORK_DIR}/run" --threads 2)
if(NOT EXISTS "${WORK_DIR}/run/per_scenario.csv")
  message(FATAL_ERROR "advplan evaluate wrote no ${WORK_DIR}/run/per_scenario.csv")
endif()
file(READ "${WORK_DIR}/run/per_scenario.csv" per)
if(NOT per MATCHES "out_of_tree_blue")
  message(FATAL_ERROR "per_scenario.csv has no out_of_tree_blue row:\n${per}")
endif()
message(STATUS "out-of-tree plug-in ran: ${STEP_ERR}")

# The installed modules load from the prefix, each through the CLI path that needs it. A module that is absent or
# does not load is an error before any work, so each step fails on exit status.
# - HTTP: an llm_live condition against a closed local port. The client is made (the module is loaded), and the
#   request fails as a recorded transport failure of that row, not of the run.
file(WRITE "${WORK_DIR}/modules.yaml" "name: installed-modules
seed: 11
corpus:
  templates: [urban]
  seeds: [1, 1]
  template_dir: ${prefix}/share/advplan/configs/templates
conditions: [greedy@2, llm_live]
simulator: {replications: 20}
bootstrap: {resamples: 50, seed: 3}
llm: {endpoint: \"http://127.0.0.1:9/v1\", model: m, timeout_s: 2, max_retries: 0, backoff_s: 0, max_repairs: 0}
")
run_step("the installed CLI with the HTTP module" "${prefix}/bin/advplan" run "${WORK_DIR}/modules.yaml"
         --out "${WORK_DIR}/modules-run" --threads 2)
file(READ "${WORK_DIR}/modules-run/per_scenario.csv" per)
if(NOT per MATCHES "llm_live")
  message(FATAL_ERROR "the llm_live condition wrote no row:\n${per}")
endif()
# - pagmo2: the frontier analysis ranks the run's RED candidate sets with pagmo's non-dominated sorting.
run_step("the installed CLI with the pagmo module" "${prefix}/bin/advplan" frontier "${WORK_DIR}/modules-run")
if(NOT EXISTS "${WORK_DIR}/modules-run/frontier")
  message(FATAL_ERROR "advplan frontier wrote no ${WORK_DIR}/modules-run/frontier")
endif()
# - MPI: two ranks of the installed CLI split the corpus and merge one run.
find_program(MPIRUN mpirun)
if(WITH_MPI_MODULE AND MPIRUN)
  file(READ "${WORK_DIR}/small.yaml" small)
  file(WRITE "${WORK_DIR}/mpi.yaml" "${small}conditions: [greedy@2]\n")
  run_step("the installed CLI under mpirun" "${MPIRUN}" --allow-run-as-root -n 2 "${prefix}/bin/advplan" run
           "${WORK_DIR}/mpi.yaml" --out "${WORK_DIR}/mpi-run" --threads 1)
  if(NOT EXISTS "${WORK_DIR}/mpi-run/per_scenario.csv")
    message(FATAL_ERROR "mpirun advplan run wrote no ${WORK_DIR}/mpi-run/per_scenario.csv")
  endif()
endif()
message(STATUS "installed modules loaded: HTTP, pagmo2, and MPI when the build has it")
