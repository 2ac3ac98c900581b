//! cargo-fuzz target `view_client`: the body is `usim::fuzz_entry::view_client`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::view_client(data));
