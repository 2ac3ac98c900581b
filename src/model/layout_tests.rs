//! The vehicle's memory layout (see [`Vehicle`]): the fields a classic step
//! reads or writes lie in few cache lines. A field added in the middle, or
//! a struct losing its `repr(C)`, fails here instead of quietly making a
//! large fleet's steps slower.
use super::*;
use std::mem::{align_of, offset_of, size_of};

/// 64-byte cache lines that the bytes `[start, end)` of a 64-aligned
/// vehicle touch.
fn lines(start: usize, end: usize) -> usize {
    (end - 1) / 64 - start / 64 + 1
}

#[test]
fn a_step_reads_params_from_the_first_line() {
    assert_eq!(align_of::<Vehicle>(), 64);
    assert_eq!(offset_of!(Vehicle, params), 0);
    // the Params fields `propagate_record`, `step` and `set_rudder` read
    for end in [
        offset_of!(Params, variant) + size_of::<ModelVariant>(),
        offset_of!(Params, dual_state) + 1,
        offset_of!(Params, math) + size_of::<trig::MathMode>(),
        offset_of!(Params, max_acceleration) + 8,
        offset_of!(Params, max_deceleration) + 8,
        offset_of!(Params, turn_spd_loss) + 8,
        offset_of!(Params, max_depth_rate) + 8,
        offset_of!(Params, max_depth_rate_speed) + 8,
        offset_of!(Params, current_field) + 8,
        offset_of!(Params, max_rudder_degs_per_sec) + 8,
    ] {
        assert!(end <= 64, "a per-step Params field ends at byte {end}");
    }
}

#[test]
fn a_step_reads_the_vehicle_from_one_span_of_few_lines() {
    let (start, end) = STEP_SPAN;
    assert_eq!(start, offset_of!(Vehicle, v22.sailing_on));
    // every per-step field of the vehicle lies in [start, end)
    let hot = [
        (offset_of!(Vehicle, nav), size_of::<Record>()),
        (offset_of!(Vehicle, iteration), 8),
        (offset_of!(Vehicle, paused_whole_s), 8),
        (offset_of!(Vehicle, paused_since), 16),
        (offset_of!(Vehicle, rudder), 8),
        (offset_of!(Vehicle, thrust), 8),
        (offset_of!(Vehicle, elevator), 8),
        (offset_of!(Vehicle, rudder_t_last), 8),
        (offset_of!(Vehicle, map_cache), 16),
        (
            offset_of!(Vehicle, turn_factors),
            size_of::<heading::TurnFactors>(),
        ),
        (offset_of!(Vehicle, rotate_speed), 8),
        (offset_of!(Vehicle, buoyancy_rate), 8),
        (offset_of!(Vehicle, turn_rate), 8),
        (offset_of!(Vehicle, water_depth), 8),
        (offset_of!(Vehicle, turn_radius), 8),
        (offset_of!(Vehicle, drift), 16),
        (offset_of!(Vehicle, current), 16),
        (
            offset_of!(Vehicle, nav_posted),
            size_of::<Option<(f64, f64, bool)>>(),
        ),
        (offset_of!(Vehicle, posted), size_of::<Option<Posting>>()),
        (offset_of!(Vehicle, mode_diff), 1),
        (offset_of!(Vehicle, reverse), 1),
        (offset_of!(Vehicle, enabled), 1),
        (offset_of!(Vehicle, obstacle), 1),
        (offset_of!(Vehicle, reset_fresh), 1),
        (offset_of!(Vehicle, drift_fresh), 1),
        (offset_of!(Vehicle, trig), size_of::<position::TrigMemo>()),
    ];
    for (at, len) in hot {
        assert!(
            start <= at && at + len <= end,
            "field at {at}..{} outside {start}..{end}",
            at + len
        );
    }
    let n = lines(start, end);
    println!(
        "vehicle {} bytes (Params {}, v22 at {}); per-step span {start}..{end}: {n} lines, plus the Params line",
        size_of::<Vehicle>(), size_of::<Params>(), offset_of!(Vehicle, v22)
    );
    assert!(n <= 9, "the per-step span touches {n} cache lines");
}

/// A batch step's setpoints store thrust and rudder (8 bytes each) right
/// before the step reads them: as neighbours they were read as one
/// 16-byte load, which store forwarding cannot serve from two stores.
/// And the shaping fields those setpoints write lie in the span's last
/// line and the one after it (what `prefetch_setpoint_step` fetches).
#[test]
fn a_batch_step_reads_thrust_and_rudder_apart_and_its_shaping_lines_follow_the_span() {
    let (r, t) = (offset_of!(Vehicle, rudder), offset_of!(Vehicle, thrust));
    assert!(r.abs_diff(t) > 8, "rudder at {r}, thrust at {t}");
    let (_, end) = STEP_SPAN;
    assert!(
        lines(end - 1, SETPOINT_END) <= 2,
        "setpoint fields end at {SETPOINT_END}, the span at {end}"
    );
}
