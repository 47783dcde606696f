// CSV (run directories read back by `advplan tables`): a table or one CsvError; reading every cell as a
// number must not throw anything but CsvError either.
#include "advplan/core/error.hpp"
#include "advplan/io/csv.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  try {
    const io::CsvTable t = io::CsvTable::parse(fuzz::text(data, size), "fuzz.csv", {});
    for (std::size_t r = 0; r < t.size() && r < 16; ++r)
      for (const auto& h : t.header()) {
        try {
          (void)t.real(r, h);
        } catch (const Error&) {
        }
      }
    (void)io::CsvTable::parse(t.to_string(), "round-trip.csv", {});
  } catch (const Error&) {
  }
  return 0;
}
