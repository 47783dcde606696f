#pragma once
// `advplan view`'s HTTP side (docs/REPORT.md "Serving a large run"): the site is served under a secret first path
// segment, /TOKEN/, made anew at every start, so that a page of another site can neither guess where the run's data
// files are nor include them; requests a browser marks as coming from another site are refused but for a top-level
// navigation to the index; every response carries headers that keep other origins from reading or framing it.
// The server itself (io::LocalServer) checks the Host and bounds the connections.
#include <string>
#include <string_view>

#include "advplan/io/local_server.hpp"
#include "advplan/report/report.hpp"

namespace advplan::report {

/// 32 hexadecimal digits: 128 bits from the operating system's random source (getrandom). Throws IoError.
std::string new_view_token();

/// The server's options for view on 127.0.0.1:port: no body, GET and HEAD, the limits of docs/REPORT.md and the
/// headers sent with every response.
io::LocalServerOptions view_server_options(int port);

/// The answer to one request: paths outside /TOKEN/ are a 404 naming no token, /TOKEN a redirect to /TOKEN/, and
/// /TOKEN/<file> ViewSite::get("/<file>"); a request whose Sec-Fetch-Site is cross-site or same-site is a 403
/// unless it is a top-level navigation (Sec-Fetch-Mode navigate, Sec-Fetch-Dest document) to the index. A file of
/// the run that changed since the start is a 409, another error a 500, each with one sentence.
io::LocalResponse answer_view_request(const ViewSite& site, std::string_view token, const io::LocalRequest& request);

}  // namespace advplan::report
