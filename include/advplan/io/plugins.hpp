#pragma once
// Run-time policy plug-ins: shared objects built with advplan_add_policy() (cmake/AdvplanAddPolicy.cmake).
// Loading one runs its registration objects, after which its policies are selectable by name.
#include <string>
#include <vector>

namespace advplan::io {

/// Loads the plug-in at `path` (a path without '/' is taken relative to the working directory) and keeps it
/// loaded for the life of the process. Throws IoError naming the file and dlerror() when it cannot be loaded.
void load_plugin(const std::string& path);

/// The plug-in paths listed in the environment variable ADVPLAN_PLUGINS (colon-separated, empty entries skipped).
std::vector<std::string> plugins_from_env();

}  // namespace advplan::io
