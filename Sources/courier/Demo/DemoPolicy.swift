internal import CourierPolicy
internal import CourierAuthorisers

/// The policy `courier demo` runs its requests through unless `--policy` names another: a copy of
/// policies/demo.yaml carried by the binary, so the demo works from any directory. The file in policies/ stays
/// the readable copy; a test checks that the two are the same, byte for byte (DemoCommandTests).
enum DemoPolicy {
    /// The name diagnostics and the demo's banner give the built-in policy.
    static let name = "policies/demo.yaml (built in)"

    /// The text of policies/demo.yaml.
    static let text = #"""
# yaml-language-server: $schema=policy.schema.json
#
# The policy `swift run courier demo` runs its requests through (docs/demo.md). The demo starts a small
# upstream server inside its own process, on 127.0.0.1 and a port the kernel picks, so that two demos (or a
# demo and the test suite) never fight over a port. Routing is by host, and a fallback address without a port
# keeps the request's port, so this file names hosts only: three loopback names for three services.
#   127.0.0.1  catalogue: rate limit pacing, 429 with Retry-After, 503 with jittered back-off
#   localhost  account: an OAuth 2 token refreshed once after a 401
#   [::1]      mirror: nothing listens there, so the loader falls back to 127.0.0.1
# The one place a port is needed, the token endpoint, reads it like a secret: `${env:COURIER_DEMO_PORT}`,
# a value the demo gives the loader factory together with the refresh token.
# The courier binary carries a copy of this file (Sources/courier/Demo/DemoPolicy.swift), so the demo runs from
# any directory; change both together (a test checks that they are the same, byte for byte).
version: 1

defaults:
  # Short, so a demo that goes wrong still ends quickly.
  timeouts: { connect: 2s, idle: 5s, total: 5s }
  retry:
    max-attempts: 4
    on: [connect-error, timeout, 429, 502, 503, 504]
    # Equal jitter: each delay is uniform in base/2…base, with base 100ms, 200ms, 400ms, …
    backoff: { initial: 100ms, max: 1s, multiplier: 2, jitter: equal }
    respect-retry-after: true
    retry-after-cap: 3s               # a Retry-After longer than this is clamped

authorisers:
  demo-oauth:
    plugin: oauth2-refresh
    timeout: 3s
    allow-plain-http: true            # the demo's token endpoint and API are plain http on loopback
    settings:
      token-url: "http://127.0.0.1:${env:COURIER_DEMO_PORT}/oauth/token"
      client-id: courier-demo
      refresh-token: "${env:COURIER_DEMO_REFRESH_TOKEN}"

services:
  catalogue:
    hosts: [127.0.0.1]
    scheme: http
    rate-limit:
      endpoints:
        /search: { requests-per-second: 5, burst: 1 }   # one request every 200ms, in arrival order

  account:
    hosts: [localhost]
    scheme: http
    authoriser: demo-oauth

  mirror:
    hosts: ["[::1]"]
    scheme: http
    fallbacks:
      "[::1]": [127.0.0.1]            # no port: the request's own port

"""#

    /// Compiles the built-in policy with the built-in authoriser plugins.
    static func compile() -> PolicyCompilation {
        PolicyCompiler(registry: .standard).compile(source: text, path: name)
    }
}
