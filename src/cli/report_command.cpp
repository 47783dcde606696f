// `advplan report RUN_DIR [--against RUN_B] --out DIR` (docs/REPORT.md): a static site of a run, opened from
// file://, from its tables down to one model call.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_dir.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/report/report.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;


void add_report_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("report", "A static site of a run (or two side by side) that opens from file://");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto against = std::make_shared<std::string>();
  cmd->add_option("RUN_DIR", *dir, "a complete run directory")->required();
  cmd->add_option("--against", *against, "a second run: paired differences, and both runs' scenarios side by side");
  cmd->add_option("--out", *out, "the site's folder (outside the run, or inside it as report/ or report-NAME/)")->required();
  cmd->callback([&run, dir, out, against] {
    run = [dir, out, against] {
      io::check_analysis_output_dir(*out);
      // A temporary folder an interrupted report left (inside the run, it would fail the MANIFEST check below).
      io::remove_stale_output_temporaries(*out);
      const auto cfg = run_config_or_warn(*dir);
      const report::ReportRun a{*dir, cfg ? &*cfg : nullptr};
      std::optional<ExperimentConfig> cfg_b;
      std::optional<report::ReportRun> b;
      if (!against->empty()) {
        cfg_b = run_config_or_warn(*against);
        b = report::ReportRun{*against, cfg_b ? &*cfg_b : nullptr};
      }
      const auto files = report::report_files(a, b ? &*b : nullptr);
      io::write_output_dir(*out, files, "report");  // built beside it and switched in whole (io/atomic_dir.hpp)
      fmt::print(stderr, "advplan: wrote a report of {}{} ({} files) to {}; open {}\n", *dir,
                 against->empty() ? "" : " against " + *against, files.size(), *out,
                 (fs::absolute(*out) / "index.html").string());
      return 0;
    };
  });
}

}  // namespace advplan::cli
