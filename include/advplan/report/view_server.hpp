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

/// Whether `presented` is `token`, in a time that does not depend on where they differ (the length is public).
/// `view` and `play` check their token path with it.
bool same_view_token(std::string_view presented, std::string_view token);

/// Fetch Metadata: whether a request comes from another site (Sec-Fetch-Site cross-site, or same-site: another port
/// of this host) and is to be refused: a POST always, anything else unless it is a top-level navigation
/// (Sec-Fetch-Mode navigate, Sec-Fetch-Dest document) that opens the index (`opens_index`). A request without
/// Sec-Fetch-Site (not a browser, or an old one) passes. `view` and `play` both answer such a request with a 403.
bool from_another_site(const io::LocalRequest& request, bool opens_index);

/// The answer to one request: paths outside /TOKEN/ are a 404 naming no token, /TOKEN a redirect to /TOKEN/, and
/// /TOKEN/<file> ViewSite::get("/<file>"); a request whose Sec-Fetch-Site is cross-site or same-site is a 403
/// unless it is a top-level navigation (Sec-Fetch-Mode navigate, Sec-Fetch-Dest document) to the index. A file of
/// the run that changed since the start is a 409, another error a 500, each with one sentence.
io::LocalResponse answer_view_request(const ViewSite& site, std::string_view token, const io::LocalRequest& request);

}  // namespace advplan::report
