//! cargo-fuzz target `nmea_tables`: the body is `usim::fuzz_entry::nmea_tables` (the NMEA bridge's bounded tables).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::nmea_tables(data));
