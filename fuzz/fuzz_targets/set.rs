//! cargo-fuzz target `set`: the body is `usim::fuzz_entry::set`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::set(data));
