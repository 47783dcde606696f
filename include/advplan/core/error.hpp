#pragma once
// Typed exceptions. They are caught at the command or scenario boundary, never turned into exit() calls
// deep inside the library.
#include <stdexcept>
#include <string>

namespace advplan {

/// Base of every advplan error; what() is one sentence naming the file, key or field.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A config or template file is malformed (syntax, missing key, wrong type, unknown key, bad value).
struct ConfigError : Error {
  using Error::Error;
};
/// A plan (JSON) is malformed or violates the plan contract.
struct PlanError : Error {
  using Error::Error;
};
/// A trace CSV is missing, truncated or has the wrong columns.
struct CsvError : Error {
  using Error::Error;
};
/// An unknown policy name or invalid policy parameter.
struct PolicyError : Error {
  using Error::Error;
};
/// A file could not be read or written.
struct IoError : Error {
  using Error::Error;
};

}  // namespace advplan
