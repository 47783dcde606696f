#pragma once
// The output paths a command writes, checked before its work starts (src/cli/output_paths.cpp).
#include <string>

namespace advplan::cli {

/// Checks, before any work, that `path` (given as `flag`, e.g. "--out") can be written as a file: its folder exists,
/// is a folder and is writable, and the path is a regular file (or a device or FIFO, written through) when it exists.
/// "" and "-" (stdout) pass. Throws IoError, one sentence naming the flag and the path.
void check_output_file(const std::string& path, const std::string& flag);
/// The same for an output folder: a folder when it exists; otherwise the nearest existing folder above it (where
/// the missing ones are created) is a writable folder.
void check_output_folder(const std::string& path, const std::string& flag);

}  // namespace advplan::cli
