#include "advplan/experiment/studies.hpp"

namespace advplan {

std::vector<std::pair<std::string, std::string>> run_studies(const RunPlan&, const std::vector<Scenario>&,
                                                             const io::CsvTable&, const io::CsvTable&,
                                                             const BootstrapSettings&, const RunOptions&) {
  return {};
}

}  // namespace advplan
