//! cargo-fuzz target `nmea_report`: the body is `usim::fuzz_entry::nmea_report` (NODE_REPORT payloads into the NMEA/AIS engine).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::nmea_report(data));
