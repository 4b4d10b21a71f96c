//! A gateway put to work: the chaos receiver, the demo, the drills that prove
//! nothing is lost, and the benchmarks.

pub mod bench;
pub mod chaos;
pub mod demo;
pub mod drill;
mod gateway_api;
