#!/usr/bin/env bash
# Removes the release build of Courier's own modules and of the benchmark executables (not the peers', which
# take minutes to rebuild). SwiftPM does not rebuild a target when only a module it reaches
# indirectly changes (swift-package-manager#10483); release builds inline
# across modules, so a stale binary can allocate objects of an old size and corrupt its heap.
set -euo pipefail
cd "$(dirname "$0")/.build" 2>/dev/null || exit 0
rm -rf release.yaml ./*/release/Courier*.build ./*/release/CCourier*.build ./*/release/Modules/Courier* \
    ./*/release/Modules/CCourier* ./*/release/http_bench.build ./*/release/policy_bench.build \
    ./*/release/courier_load.build ./*/release/cache_bench.build \
    ./*/release/http-bench ./*/release/courier-load ./*/release/policy-bench ./*/release/cache-bench
