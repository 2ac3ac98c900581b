//! cargo-fuzz target `current_field`: the body is `usim::fuzz_entry::current_field`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::current_field(data));
