// `advplan view RUN_DIR [--port P]` (docs/REPORT.md "Serving a large run"): the report's pages served from
// 127.0.0.1 only, made on request (report::ViewSite), for runs too large to bundle.
#include <fmt/format.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/report/report.hpp"
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
      httplib::Server server;
      server.Get(R"(/.*)", [&](const httplib::Request& req, httplib::Response& res) {
        try {
          if (auto r = site.get(req.path)) {
            res.set_content(std::move(r->body), r->content_type);
            return;
          }
          res.status = 404;
          res.set_content("not found", "text/plain");
        } catch (const std::exception& e) {
          res.status = 500;
          res.set_content(untrusted::excerpt(e.what(), 300), "text/plain");
        }
      });
      const int bound = *port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", *port) ? *port : -1);
      if (bound < 0) throw IoError(fmt::format("view: cannot listen on 127.0.0.1:{} (in use?); pass --port", *port));
      fmt::print(stderr, "advplan: serving {} ({} scenarios) at http://127.0.0.1:{}/ (Ctrl-C stops)\n", *dir,
                 site.scenarios(), bound);
      std::fflush(stderr);
      server.listen_after_bind();
      return 0;
    };
  });
}

}  // namespace advplan::cli
