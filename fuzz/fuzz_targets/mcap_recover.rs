//! cargo-fuzz target `mcap_recover`: the body is `usim::fuzz_entry::mcap_recover`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::mcap_recover(data));
