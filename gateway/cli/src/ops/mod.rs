//! Operator tools that need no running gateway: admin tasks on a data dir,
//! migrating a database's schema, creating and checking a plugin, simulating a
//! retry policy, trying a transform on an event.

pub mod admin;
pub mod migrate;
pub mod plugin_check;
pub mod plugin_new;
pub mod policy;
pub mod transform_try;
