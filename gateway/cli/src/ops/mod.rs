//! Operator tools that need no running gateway: admin tasks on a data dir,
//! checking a plugin, simulating a retry policy.

pub mod admin;
pub mod plugin_check;
pub mod plugin_new;
pub mod policy;
