// An expert study in MA-Bench's layout (docs/RUBRIC.md "Validating a judge against experts"): parse_expert_study,
// then, for a study it accepts, the validation tables with a few resamples. Only advplan::Error may be thrown.
#include "advplan/core/error.hpp"
#include "advplan/rubric/validate.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  try {
    const rubric::ExpertStudy study = rubric::parse_expert_study(fuzz::text(data, size), "fuzz.jsonl");
    rubric::ValidationOptions o;
    o.resamples = 5;
    (void)rubric::validate_judges(study, {}, o);
  } catch (const Error&) {
  }
  return 0;
}
