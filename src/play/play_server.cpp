// `advplan play`'s requests (play/play.hpp): the viewer's security (a token as the first path segment, Fetch
// Metadata, the same headers; the Host check is io::LocalServer's), the page's files, its state, and the plan
// it validates or submits. Every POST body is untrusted: bounded by the server, parsed with a depth limit,
// and any fault is one sentence.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/untrusted.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/play/play.hpp"
#include "advplan/report/view_server.hpp"

namespace advplan::play {
namespace {

io::LocalResponse json_response(int status, std::string body) {
  io::LocalResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

io::LocalResponse messages_response(int status, const std::vector<std::string>& messages) {
  nlohmann::json j;
  j["messages"] = messages;
  return json_response(status, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

io::LocalResponse asset(std::string_view file) {
  static constexpr std::pair<std::string_view, std::string_view> kAssets[] = {
      {"index.html", "text/html; charset=utf-8"},
      {"play.js", "text/javascript; charset=utf-8"},
      {"play.css", "text/css; charset=utf-8"}};
  if (file.empty()) file = "index.html";
  for (const auto& a : kAssets) {
    if (a.first != file) continue;
    io::LocalResponse r;
    r.content_type = std::string(a.second);
    r.body = std::string(io::embedded_text(fmt::format("src/play/assets/{}", file)));
    return r;
  }
  return io::text_response(404, "Not found.");
}

/// The body {"scenario_id": "...", "plan": {...}}: the id and the plan's JSON text, or one sentence in
/// `error`.
bool read_body(const std::string& body, std::string& scenario_id, std::string& plan, std::string& error) {
  nlohmann::json j;
  if (const std::string e = untrusted::parse_json_bounded(body, j, kMaxBodyDepth); !e.empty()) {
    error = fmt::format("The request body is not JSON within the limits: {}", e);
    return false;
  }
  if (!j.is_object() || !j.contains("scenario_id") || !j["scenario_id"].is_string() || !j.contains("plan")) {
    error = "The request body is not an object with a string scenario_id and a plan.";
    return false;
  }
  scenario_id = j["scenario_id"].get<std::string>();
  plan = j["plan"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return true;
}

io::LocalResponse post(PlaySession& s, std::string_view file, const io::LocalRequest& req,
                       const std::function<void()>& on_submit) {
  std::string id, plan, error;
  if (!read_body(req.body, id, plan, error)) return io::text_response(400, error);
  const std::optional<std::size_t> i = s.current();
  if (file == "validate") {
    if (!i || id != s.scenario(*i).id)
      return messages_response(200, {"this is not the scenario to play; reload the page"});
    return messages_response(200, plan_messages(plan, s.scenario(*i), s.side()));
  }
  const std::vector<std::string> messages = s.submit(id, plan);
  if (!messages.empty()) return messages_response(422, messages);
  if (on_submit) on_submit();
  return json_response(200, s.state_json());
}

}  // namespace

io::LocalServerOptions play_server_options(int port) {
  io::LocalServerOptions o = report::view_server_options(port);
  o.methods = {"GET", "HEAD", "POST"};
  o.max_body_bytes = kMaxBodyBytes;
  return o;
}

io::LocalResponse answer_play_request(PlaySession& session, std::string_view token,
                                      const io::LocalRequest& request,
                                      const std::function<void()>& on_submit) {
  const std::string_view path = request.head.path;
  const std::size_t slash = path.empty() ? 0 : path.find('/', 1);
  const std::string_view first =
      path.empty() ? path : path.substr(1, slash == std::string_view::npos ? path.npos : slash - 1);
  if (path.empty() || path.front() != '/' || !report::same_view_token(first, token))
    return io::text_response(
        403, "Refused: open the address `advplan play` printed; it holds this sitting's secret path.");
  if (slash == std::string_view::npos) {
    io::LocalResponse r = io::text_response(301, "Moved to the folder's address.");
    r.headers.emplace_back("Location", fmt::format("/{}/", token));
    return r;
  }
  const std::string_view file = path.substr(slash + 1);
  if (report::from_another_site(request, file.empty() || file == "index.html"))
    return io::text_response(403, "Refused: a page of another site asked for this sitting.");
  if (request.head.method == "POST") {
    if (file != "validate" && file != "submit") return io::text_response(404, "Not found.");
    return post(session, file, request, on_submit);
  }
  if (file == "state") return json_response(200, session.state_json());
  return asset(file);
}

}  // namespace advplan::play
