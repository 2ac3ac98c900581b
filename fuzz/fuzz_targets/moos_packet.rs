//! cargo-fuzz target `moos_packet`: the body is `usim::fuzz_entry::moos_packet`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::moos_packet(data));
