//! cargo-fuzz target `message`: the body is `usim::fuzz_entry::message`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::message(data));
