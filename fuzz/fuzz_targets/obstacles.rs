//! cargo-fuzz target `obstacles`: the body is `usim::fuzz_entry::obstacles`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::obstacles(data));
