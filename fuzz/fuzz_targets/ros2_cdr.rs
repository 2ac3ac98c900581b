//! cargo-fuzz target `ros2_cdr`: the body is `usim::fuzz_entry::ros2_cdr`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| usim::fuzz_entry::ros2_cdr(data));
