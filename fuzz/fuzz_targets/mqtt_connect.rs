//! cargo-fuzz target `mqtt_connect`: the body is `usim::fuzz_entry::mqtt_connect`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::mqtt_connect(data));
