#include "advplan/io/plugins.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/io/run_store.hpp"

namespace advplan::io {

namespace {
std::vector<LoadedPlugin>& plugins_loaded() {
  static std::vector<LoadedPlugin> v;
  return v;
}
}  // namespace

void load_plugin(const std::string& path) {
  // dlopen searches the library path for a bare name; a plug-in is a file, so anchor it to the working dir.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Never dlclose'd: the registries keep factories that live in the plug-in's code.
  // The digest first: what the run records is the file that is loaded (a plug-in is read once, by both).
  std::string digest;
  try {
    digest = sha256_file(file);
  } catch (const Error&) {
    digest.clear();  // dlopen names the problem below
  }
  if (::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
    const char* why = ::dlerror();
    throw IoError(fmt::format("cannot load plug-in {} ({})", path, why != nullptr ? why : "unknown dlopen error"));
  }
  plugins_loaded().push_back({path, digest});
}

const std::vector<LoadedPlugin>& loaded_plugins() { return plugins_loaded(); }

std::vector<std::string> plugins_from_env() {
  std::vector<std::string> out;
  const char* env = std::getenv("ADVPLAN_PLUGINS");
  if (env == nullptr) return out;
  std::stringstream ss(env);
  for (std::string item; std::getline(ss, item, ':');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace advplan::io
