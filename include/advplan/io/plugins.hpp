#pragma once
// Run-time policy plug-ins: shared objects built with advplan_add_policy() (cmake/AdvplanAddPolicy.cmake).
// Loading one runs its registration objects, after which its policies are selectable by name.
#include <string>
#include <vector>

namespace advplan::io {

/// Loads the plug-in at `path` (a path without '/' is taken relative to the working directory) and keeps it
/// loaded for the life of the process. Throws IoError naming the file and dlerror() when it cannot be loaded.
/// The policy layer's load_policy_plugin (policy/registry_access.hpp) also refuses duplicate names: use that.
void load_plugin(const std::string& path);

/// A plug-in loaded by this process: the path as given and the sha256 of its bytes when it was loaded.
struct LoadedPlugin {
  std::string path, sha256;
};
/// Every plug-in loaded so far, in load order.
const std::vector<LoadedPlugin>& loaded_plugins();

/// The plug-in paths listed in the environment variable ADVPLAN_PLUGINS (colon-separated, empty entries skipped).
std::vector<std::string> plugins_from_env();

}  // namespace advplan::io
