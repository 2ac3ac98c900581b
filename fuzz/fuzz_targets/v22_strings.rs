//! cargo-fuzz target `v22_strings`: the body is `usim::fuzz_entry::v22_strings`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::v22_strings(data));
