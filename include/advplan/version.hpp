#pragma once
// The library's version and the commit it was built from. Both live in one generated source file
// (cmake/version.cpp.in), so a new commit recompiles that file only.
#include <string_view>

namespace advplan {

/// The project version from CMakeLists.txt, e.g. "0.1.0".
std::string_view version_string();
/// `git rev-parse --short HEAD` at build time, or "unknown" outside a git checkout.
std::string_view git_commit();

}  // namespace advplan
