//! The `hookgate` binary's tests, one module per area, in one test binary: linking
//! the gateway (and wasmtime) once instead of once per area. `common` spawns the
//! binary and drives it.

mod bench_smoke;
mod chaos_receiver;
mod cli_client;
mod common;
mod crash_delivery;
mod crash_ingest;
mod crash_tasks;
mod demo;
mod docs_architecture;
mod docs_config;
mod docs_plugins;
mod drills;
mod frozen_node;
mod fuzz_equivalents;
mod import_svix;
mod json_logs;
mod migrate_command;
mod openapi_command;
mod plugin_new;
mod policy_props;
mod readme_quickstart;
mod transform_cli;
mod user_errors;
