#!/usr/bin/env bash
# The whole test suite from a fresh machine: installs what the tests need and the
# machine lacks (the wasm target for the example plugins, the official Standard
# Webhooks verifiers from PyPI and npm, the official Svix verifier and the
# `cryptography` package's ed25519 (for `svix-*` headers and `v1a` signatures),
# the Prometheus parser, the official OpenTelemetry protobuf messages
# (opentelemetry-proto) the OTLP receiver of the trace tests decodes with, and the OpenAPI
# contract tools: openapi-spec-validator, openapi-python-client with what its
# generated client imports (httpx, attrs), and Schemathesis, the official Svix
# SDKs (`svix` from PyPI and npm) that drive the Svix-compatible API, and
# Debian's Chromium with playwright-core and axe-core for the console's browser
# and accessibility tests, the brokers' Python clients (pika, nats-py,
# redis-py, boto3) and moto, the local Amazon SQS, SNS and Kinesis the AWS
# destination tests start for themselves), starts
# PostgreSQL if it is down, then runs every test of the workspace. Extra
# arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-unknown-unknown
python3 -m pip install --quiet standardwebhooks==1.1.0 svix==2.9.1 cryptography==48.0.0 \
  prometheus-client==0.21.1 \
  schemathesis==4.32.5 openapi-spec-validator==0.9.0 openapi-python-client==0.29.1 \
  httpx==0.28.1 attrs==26.1.0 opentelemetry-proto==1.45.2 \
  pika==1.4.4 nats-py==2.16.0 redis==8.1.0 'moto[server]==5.2.1' boto3==1.43.11
npm ci --prefix tests/scripts --no-audit --no-fund
# The console's browser tests drive Debian's Chromium, and the C example
# transform (plugins/envelope-c) is built with Debian's clang and lld (wasm-ld);
# without them those tests fail.
apt_missing=()
command -v chromium >/dev/null || apt_missing+=(chromium)
command -v clang >/dev/null || apt_missing+=(clang)
command -v wasm-ld >/dev/null || command -v wasm-ld-14 >/dev/null || apt_missing+=(lld)
if [ "${#apt_missing[@]}" -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${apt_missing[@]}"
fi
# The PostgreSQL tests make scratch databases on this server; they fail, never
# skip, without it. The machine's own server is started when it is down.
export HOOKGATE_TEST_POSTGRES="${HOOKGATE_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test}"
if ! pg_isready -q -d "$HOOKGATE_TEST_POSTGRES"; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
  pg_isready -q -t 30 -d "$HOOKGATE_TEST_POSTGRES"
fi
cargo test --workspace "$@"
