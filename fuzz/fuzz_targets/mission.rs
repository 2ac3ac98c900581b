//! cargo-fuzz target `mission`: the body is `usim::fuzz_entry::mission`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::mission(data));
