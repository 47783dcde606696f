#pragma once
// The one error that ends a whole command at once, never one row or one call (docs/LLM.md "Retries, backoff and
// timeouts"): a live model's endpoint refused the key (HTTP 401 or 403), so every further request would fail the
// same way. The places that turn a policy's error into a failure row or a failed call rethrow it.
#include "advplan/core/error.hpp"

namespace advplan {

struct StopRunError : Error {
  using Error::Error;
};

}  // namespace advplan
