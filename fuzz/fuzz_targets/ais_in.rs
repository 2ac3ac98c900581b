//! cargo-fuzz target `ais_in`: the body is `usim::fuzz_entry::ais_in` (AIS input lines).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::ais_in(data));
