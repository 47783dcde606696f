// `advplan view RUN_DIR [--port P]` (docs/REPORT.md "Serving a large run"): the report's pages served from
// 127.0.0.1 only, under a secret path printed at the start, made on request (report::ViewSite) and served by
// advplan's own loopback server (io::LocalServer), for runs too large to bundle.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/local_server.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/report/report.hpp"
#include "advplan/report/view_server.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

void add_view_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("view", "Serve a run's report from 127.0.0.1, page by page, for runs too large to bundle");
  auto dir = std::make_shared<std::string>();
  auto port = std::make_shared<int>(8765);
  cmd->add_option("RUN_DIR", *dir, "a complete run directory")->required();
  cmd->add_option("--port", *port, "the port on 127.0.0.1 (0: any free one)")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->callback([&run, dir, port] {
    run = [dir, port] {
      const std::optional<ExperimentConfig> cfg = run_config_or_warn(*dir);
      const report::ViewSite site(report::ReportRun{*dir, cfg ? &*cfg : nullptr});
      const std::string token = report::new_view_token();
      io::LocalServer server(report::view_server_options(*port), [&](const io::LocalRequest& req) {
        return report::answer_view_request(site, token, req);
      });
      fmt::print(stderr, "advplan: serving {} ({} scenarios) at http://127.0.0.1:{}/{}/ (Ctrl-C stops)\n", *dir,
                 site.scenarios(), server.port(), token);
      std::fflush(stderr);
      server.run();  // until SIGINT ends the process (the CLI keeps the default action, include/advplan/run/interrupt.hpp)
      return 0;
    };
  });
}

}  // namespace advplan::cli
