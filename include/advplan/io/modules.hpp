#pragma once
// Optional parts of advplan that live in modules beside libadvplan.so and are loaded with dlopen on first use
// (docs/ARCHITECTURE.md "Modules"): pagmo2's routines (libadvplan_pagmo.so), the HTTP client
// (libadvplan_http.so) and MPI (libadvplan_mpi.so). Linking them would load their libraries, and run their
// initialisers, in every process, though few runs use them.
#include <string>

namespace advplan::io {

/// The module `file_name` (e.g. "libadvplan_http.so") from the directory libadvplan.so was loaded from, opened
/// once per process and kept open. `global`: its symbols are made available to libraries it loads later (MPI's
/// components need that). `purpose` names it in the error (std::runtime_error) when it cannot be found or loaded.
void* open_module(const std::string& file_name, bool global, const std::string& purpose);
/// The symbol `name` of a module from open_module; std::runtime_error naming both when it is missing.
void* module_symbol(void* module, const std::string& file_name, const char* name);

}  // namespace advplan::io
