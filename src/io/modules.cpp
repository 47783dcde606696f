#include "advplan/io/modules.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>

namespace advplan::io {

void* open_module(const std::string& file_name, bool global, const std::string& purpose) {
  static std::mutex mu;
  static std::map<std::string, void*> opened;
  std::lock_guard lock(mu);
  if (const auto it = opened.find(file_name); it != opened.end()) return it->second;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&open_module), &info) == 0 || info.dli_fname == nullptr)
    throw std::runtime_error("cannot locate libadvplan to load " + file_name + " (" + purpose + ")");
  const std::string path = (std::filesystem::path(info.dli_fname).parent_path() / file_name).string();
  void* h = ::dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (h == nullptr) {
    const char* why = ::dlerror();
    throw std::runtime_error("cannot load " + path + " (" + purpose + "): " + (why ? why : "unknown error"));
  }
  opened.emplace(file_name, h);
  return h;
}

void* module_symbol(void* module, const std::string& file_name, const char* name) {
  void* s = ::dlsym(module, name);
  if (s == nullptr) throw std::runtime_error(file_name + " lacks " + name);
  return s;
}

}  // namespace advplan::io
