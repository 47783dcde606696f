#pragma once
// Per-thread scratch buffers in hot loops. libadvplan is a shared library, so a thread_local's address comes from a
// __tls_get_addr call, and GCC recomputes it at every use rather than keep it in a register (about 2 million calls
// in a paper run). `bound(x)` takes the address once and hides it from the optimiser, so a function binds its
// buffer at the top and pays one call:
//   thread_local std::vector<double> tls_buf;
//   std::vector<double>& buf = bound(tls_buf);
namespace advplan::detail {

template <typename T>
T& bound(T& x) {
  T* p = &x;
  asm("" : "+r"(p));  // p is now an opaque value: it cannot be rematerialised from the TLS address
  return *p;
}

}  // namespace advplan::detail
