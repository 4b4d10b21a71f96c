#!/usr/bin/env bash
# The whole test suite from a fresh machine: installs what the tests need and the
# machine lacks (the wasm target for the example plugins, the official Standard
# Webhooks verifiers from PyPI and npm, the Prometheus parser, and the OpenAPI
# contract tools: openapi-spec-validator, openapi-python-client with what its
# generated client imports (httpx, attrs), and Schemathesis), starts PostgreSQL
# if it is down, then runs every test of the workspace. Extra arguments go to
# `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-unknown-unknown
python3 -m pip install --quiet standardwebhooks==1.1.0 prometheus-client==0.21.1 \
  schemathesis==4.32.5 openapi-spec-validator==0.9.0 openapi-python-client==0.29.1 \
  httpx==0.28.1 attrs==26.1.0
npm ci --prefix tests/scripts --no-audit --no-fund
# The PostgreSQL tests need the server on 127.0.0.1:5432; they fail, never skip,
# without it.
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
fi
cargo test --workspace "$@"
