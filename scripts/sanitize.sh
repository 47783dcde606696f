#!/usr/bin/env bash
# The whole test suite under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build directory
# (build-asan/). Not part of CI, whose 90 minutes do not fit a second full build: run it before a release or after
# touching parsers, process handling or memory-heavy code. Takes about 15 minutes on 2 cores.
# Usage: bash scripts/sanitize.sh [ctest args, e.g. -R Hardening]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null   # the Debian packages
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADVPLAN_SANITIZE=ON -DADVPLAN_BUILD_TESTS=ON \
  -DADVPLAN_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$(nproc)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Left out: the Python suites (an instrumented extension module cannot be loaded into the uninstrumented
# /usr/bin/python3 without preloading the sanitizer runtimes, which then report the interpreter's own leaks) and
# the mpirun tests (Open MPI's runtime leaks under LeakSanitizer; the install test runs the installed CLI under
# mpirun too), and the cross-CPU runs (ASan's shadow memory under QEMU's user-mode emulator; the DetMath checks
# stay). All run in the plain suite.
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E '^python\.|Mpirun|InstallAndOutOfTreePlugin|^CrossCpu\.' "$@"
