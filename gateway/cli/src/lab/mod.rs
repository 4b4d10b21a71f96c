//! A gateway put to work: the chaos receiver, the demo, the drills that prove
//! nothing is lost, and the benchmarks; and what they share with the tests: a
//! gateway in this process, a gateway as a child process, the JSON client over the
//! command line's API client, and a receiver on a raw socket.

pub mod bench;
pub mod chaos;
pub mod child_gateway;
pub mod demo;
pub mod drill;
pub mod gateway_api;
pub mod in_process;
pub mod raw_receiver;
