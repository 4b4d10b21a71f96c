//! The end-to-end tests, one module per area, in one test binary: linking the
//! gateway (and wasmtime) once instead of once per area.

mod address_ranges;
mod api_endpoints;
mod api_events;
mod api_tenants;
mod bench_plugin_smoke;
mod cluster_api;
mod cluster_caps;
mod cluster_changes;
mod cluster_outage;
mod console;
mod delivery_burst;
mod delivery_https;
mod delivery_retries;
mod dlq;
mod durability;
mod egress;
mod fair_dns;
mod fair_limits;
mod isolation;
mod observability;
mod openapi_contract;
mod plugin_fairness;
mod plugins_api;
mod plugins_checks;
mod plugins_host;
mod plugins_platform;
mod plugins_refusals;
mod plugins_versions;
mod policy_api;
mod policy_simulate;
mod protection;
mod retention;
mod security;
mod store_outage;
mod tenant_secrets;
