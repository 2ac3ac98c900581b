//! cargo-fuzz target `node_report`: the body is `usim::fuzz_entry::node_report`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::node_report(data));
