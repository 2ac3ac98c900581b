//! Unit tests; expected numbers come from the seed (`001_…`) or are computed
//! by hand in the comments.
use super::*;

const MS: i64 = 1000;

fn cmd(value: f64, t_ms: i64) -> TimedCommand {
    TimedCommand {
        value,
        time_us: t_ms * MS,
    }
}

fn times_ms(tc: &TimedCommands) -> Vec<(i64, f64)> {
    tc.pending().map(|c| (c.time_us / MS, c.value)).collect()
}

/// Seed, first example: a command (10 ms, 10) already applied; at t = 30 ms a
/// command (80 ms, 40) arrives; cycles every 10 ms.
#[test]
fn seed_example_1_value_by_value() {
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    tc.apply(UpdateKind::Merge, &[cmd(10.0, 10)]);
    tc.cycle_us(10 * MS);
    tc.cycle_us(20 * MS);
    assert_eq!(tc.value(), 10.0);
    tc.apply(UpdateKind::Merge, &[cmd(40.0, 80)]);
    // t = 30..80 ms: 15, 20, 25, 30, 35, 40 (seed); then 40 stays.
    for (t, want) in [
        (30, 15.0),
        (40, 20.0),
        (50, 25.0),
        (60, 30.0),
        (70, 35.0),
        (80, 40.0),
    ] {
        tc.cycle_us(t * MS);
        assert_eq!(tc.value(), want, "t = {t} ms");
        assert_eq!(tc.send_command(), want);
    }
    for t in [90, 100, 200] {
        assert!(!tc.cycle_us(t * MS));
        assert_eq!(tc.value(), 40.0);
    }
}

/// Seed, second example: at t = 10 ms (previous cycle at 0) four commands
/// (15, 10) (25, 30) (45, 20) (65, 0) arrive.
#[test]
fn seed_example_2_value_by_value() {
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    tc.apply(
        UpdateKind::Merge,
        &[cmd(10.0, 15), cmd(30.0, 25), cmd(20.0, 45), cmd(0.0, 65)],
    );
    // 10 ms: 10·10/15 = 20/3 (the seed prints 6.66); sendCommand 7.
    // 30 ms: 27.5 → 28 and 40 ms: 22.5 → 23 (halves away from zero).
    let want = [
        (10, 20.0 / 3.0, 7.0),
        (20, 20.0, 20.0),
        (30, 27.5, 28.0),
        (40, 22.5, 23.0),
        (50, 15.0, 15.0),
        (60, 5.0, 5.0),
        (70, 0.0, 0.0),
        (80, 0.0, 0.0),
    ];
    for (t, value, send) in want {
        tc.cycle_us(t * MS);
        assert_eq!(tc.value(), value, "t = {t} ms");
        assert_eq!(tc.send_command(), send, "t = {t} ms");
    }
    assert_eq!(tc.pending_len(), 0);
    assert_eq!(tc.last_command_time_us(), Some(65 * MS));
    assert_eq!(tc.last_command_value(), 0.0);
    assert_eq!(tc.last_cycle_time_us(), Some(80 * MS));
}

#[test]
fn merge_adds_and_same_time_replaces() {
    let mut tc = TimedCommands::new(0.0);
    tc.apply(UpdateKind::Merge, &[cmd(1.0, 10), cmd(3.0, 30)]);
    tc.apply(UpdateKind::Merge, &[cmd(2.0, 20), cmd(9.0, 30)]);
    assert_eq!(times_ms(&tc), vec![(10, 1.0), (20, 2.0), (30, 9.0)]);
}

#[test]
fn identical_times_within_one_list_the_later_item_wins() {
    let mut tc = TimedCommands::new(0.0);
    tc.apply(UpdateKind::Merge, &[cmd(5.0, 20), cmd(7.0, 20)]);
    assert_eq!(times_ms(&tc), vec![(20, 7.0)]);
    tc.cycle_us(20 * MS);
    assert_eq!(tc.value(), 7.0);
}

#[test]
fn clear_all_replaces_pending() {
    let mut tc = TimedCommands::new(0.0);
    tc.apply(UpdateKind::Merge, &[cmd(1.0, 10), cmd(3.0, 30)]);
    tc.apply(UpdateKind::ClearAll, &[cmd(2.0, 20)]);
    assert_eq!(times_ms(&tc), vec![(20, 2.0)]);
}

#[test]
fn clear_all_empty_clears_pending_and_keeps_the_value() {
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    tc.apply(UpdateKind::Merge, &[cmd(40.0, 40)]);
    tc.cycle_us(10 * MS); // 40·10/40 = 10
    assert_eq!(tc.value(), 10.0);
    tc.apply(UpdateKind::ClearAll, &[]);
    assert_eq!(tc.pending_len(), 0);
    for t in [20, 30, 100] {
        assert!(!tc.cycle_us(t * MS));
        assert_eq!(tc.value(), 10.0);
    }
}

#[test]
fn clear_after_drops_pending_from_the_first_new_one_on() {
    let mut tc = TimedCommands::new(0.0);
    tc.apply(
        UpdateKind::Merge,
        &[cmd(1.0, 10), cmd(2.0, 20), cmd(3.0, 30), cmd(4.0, 40)],
    );
    tc.apply(UpdateKind::ClearAfter, &[cmd(8.0, 35), cmd(7.0, 25)]);
    assert_eq!(
        times_ms(&tc),
        vec![(10, 1.0), (20, 2.0), (25, 7.0), (35, 8.0)]
    );
}

#[test]
fn clear_before_drops_pending_up_to_the_last_new_one() {
    let mut tc = TimedCommands::new(0.0);
    tc.apply(
        UpdateKind::Merge,
        &[
            cmd(1.0, 10),
            cmd(2.0, 20),
            cmd(3.0, 30),
            cmd(4.0, 40),
            cmd(5.0, 50),
        ],
    );
    tc.apply(UpdateKind::ClearBefore, &[cmd(7.0, 25), cmd(8.0, 35)]);
    // 10, 20, 30 dropped (before 35); the new 25 and 35 added; 40, 50 kept.
    assert_eq!(
        times_ms(&tc),
        vec![(25, 7.0), (35, 8.0), (40, 4.0), (50, 5.0)]
    );
}

#[test]
fn clear_after_and_before_with_empty_list_drop_nothing() {
    let mut tc = TimedCommands::new(0.0);
    tc.apply(UpdateKind::Merge, &[cmd(1.0, 10), cmd(2.0, 20)]);
    tc.apply(UpdateKind::ClearAfter, &[]);
    tc.apply(UpdateKind::ClearBefore, &[]);
    tc.apply(UpdateKind::Merge, &[]);
    assert_eq!(times_ms(&tc), vec![(10, 1.0), (20, 2.0)]);
}

#[test]
fn late_command_is_applied_at_the_next_cycle() {
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    tc.cycle_us(30 * MS);
    tc.apply(UpdateKind::Merge, &[cmd(50.0, 5)]);
    assert!(tc.cycle_us(40 * MS));
    assert_eq!(tc.value(), 50.0);
    assert_eq!(tc.last_command_time_us(), Some(5 * MS));
}

#[test]
fn late_command_then_future_ramps_from_the_previous_cycle() {
    // Previous cycle at 30 ms; received [(20 ms, 10), (60 ms, 40)]; cycle at
    // 40 ms applies (20, 10); 20 is not within [30, 40], so the ramp starts
    // at (30 ms, lastCommandDouble = 10): (40 − 10)·10/30 + 10 = 20.
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    tc.cycle_us(30 * MS);
    tc.apply(UpdateKind::Merge, &[cmd(10.0, 20), cmd(40.0, 60)]);
    tc.cycle_us(40 * MS);
    assert_eq!(tc.value(), 20.0);
    // 50 ms: (40 − 20)·10/20 + 20 = 30.
    tc.cycle_us(50 * MS);
    assert_eq!(tc.value(), 30.0);
}

#[test]
fn many_commands_passed_within_one_cycle() {
    // Values k at k ms for k = 1..9, then 100 at 25 ms. The cycle at 10 ms
    // applies all nine; lastCommandTime 9 ms is within [0, 10], so the ramp
    // starts at (9 ms, 9): (100 − 9)·1/16 + 9 = 14.6875.
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    let mut list: Vec<_> = (1..=9).map(|k| cmd(k as f64, k)).collect();
    list.push(cmd(100.0, 25));
    tc.apply(UpdateKind::Merge, &list);
    tc.cycle_us(10 * MS);
    assert_eq!(tc.value(), 14.6875);
    assert_eq!(tc.last_command_value(), 9.0);
    assert_eq!(tc.pending_len(), 1);
}

#[test]
fn plain_value_is_applied_at_once() {
    // A plain number: ClearAll with one command at the receipt time.
    let mut tc = TimedCommands::new(0.0);
    tc.apply(UpdateKind::Merge, &[cmd(80.0, 500)]);
    tc.apply(UpdateKind::ClearAll, &[cmd(-12.5, 100)]);
    assert!(tc.cycle_us(100 * MS));
    assert_eq!(tc.value(), -12.5);
    assert!(!tc.cycle_us(110 * MS));
    assert_eq!(tc.value(), -12.5);
}

#[test]
fn without_start_the_first_cycle_holds() {
    let mut tc = TimedCommands::new(3.0);
    tc.apply(UpdateKind::Merge, &[cmd(13.0, 20)]);
    tc.cycle_us(10 * MS);
    assert_eq!(tc.value(), 3.0);
    tc.cycle_us(15 * MS); // (13 − 3)·5/10 + 3 = 8
    assert_eq!(tc.value(), 8.0);
}

#[test]
fn without_ramp_each_command_is_stepped_to_at_its_time() {
    let mut tc = TimedCommands::new(0.0);
    tc.set_ramp(false);
    tc.start_us(0);
    tc.apply(UpdateKind::Merge, &[cmd(10.0, 15), cmd(30.0, 25)]);
    let want = [
        (10, 0.0, false),
        (20, 10.0, true),
        (30, 30.0, true),
        (40, 30.0, false),
    ];
    for (t, value, active) in want {
        assert_eq!(tc.cycle_us(t * MS), active, "t = {t} ms");
        assert_eq!(tc.value(), value, "t = {t} ms");
    }
}

#[test]
fn clock_going_backwards_holds_without_panic() {
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    tc.apply(UpdateKind::Merge, &[cmd(100.0, 100)]);
    tc.cycle_us(50 * MS);
    assert_eq!(tc.value(), 50.0);
    tc.cycle_us(20 * MS);
    assert_eq!(tc.value(), 50.0);
    tc.cycle_us(60 * MS); // (100 − 50)·40/80 + 50 = 75
    assert_eq!(tc.value(), 75.0);
}

#[test]
fn extreme_values_stay_finite_and_in_range() {
    let mut tc = TimedCommands::new(-f64::MAX);
    tc.start_us(0);
    tc.apply(UpdateKind::Merge, &[cmd(f64::MAX, 1_000_000)]);
    for t in 1..10 {
        tc.cycle_us(t * 100_000 * MS);
        assert!(tc.value().is_finite());
    }
    tc.cycle_us(i64::MAX);
    assert_eq!(tc.value(), f64::MAX);
}

#[test]
fn seconds_conversion_rounds_to_microseconds() {
    assert_eq!(seconds_to_us(0.03), Some(30_000));
    assert_eq!(seconds_to_us(14.5), Some(14_500_000));
    assert_eq!(seconds_to_us(-1e-7), Some(0));
    assert_eq!(seconds_to_us(f64::NAN), None);
    assert_eq!(seconds_to_us(f64::INFINITY), None);
    assert_eq!(seconds_to_us(1e15), None);
    assert_eq!(us_to_seconds(30_000), 0.03);
}

#[test]
fn update_kind_names_round_trip() {
    for k in UpdateKind::ALL {
        assert_eq!(UpdateKind::from_name(k.name()), Some(k));
    }
    assert_eq!(UpdateKind::from_name("merge"), None);
}

// ---- parsing -------------------------------------------------------------

#[test]
fn parse_set_absolute_relative_and_importance() {
    let call = parse_set(
        r#"["DESIRED_RUDDER", "Merge", [[30.0, 12.0], [0, "+2.5", 0], [-5, 14]]]"#,
        10.25,
    )
    .expect("valid call");
    assert_eq!(call.target, "DESIRED_RUDDER");
    assert_eq!(call.update, UpdateKind::Merge);
    assert_eq!(
        call.commands,
        vec![
            TimedCommand {
                value: 30.0,
                time_us: 12_000_000
            },
            TimedCommand {
                value: 0.0,
                time_us: 12_750_000
            },
            TimedCommand {
                value: -5.0,
                time_us: 14_000_000
            },
        ]
    );
}

#[test]
fn parse_set_relative_time_rounds_parts_separately() {
    // 0.03 s + 0.05 s: 30,000 µs + 50,000 µs = exactly 80,000 µs.
    let call = parse_set(r#"["DESIRED_THRUST", "ClearAll", [[1, "+0.05"]]]"#, 0.03).expect("valid");
    assert_eq!(call.commands[0].time_us, 80_000);
}

#[test]
fn parse_set_empty_list() {
    let call = parse_set(r#"["DESIRED_THRUST", "ClearAll", []]"#, 0.0).expect("valid");
    assert!(call.commands.is_empty());
}

fn err(json: &str) -> String {
    match parse_set(json, 1.0) {
        Ok(c) => panic!("expected an error for {json}, got {c:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn parse_set_errors_name_what_was_wrong() {
    let cases: &[(&str, &str)] = &[
        (r#"["DESIRED_RUDDER", "Merge", [[1, 2]]"#, "malformed JSON"),
        (r#"{"a": 1}"#, "expected a JSON array"),
        (r#"["DESIRED_RUDDER", "Merge"]"#, "expected 3 items"),
        (r#"[3, "Merge", []]"#, "item 0 (actuator) must be a string"),
        (
            r#"["DESIRED_RUDDER", "Mix", []]"#,
            "unknown update kind \"Mix\"",
        ),
        (
            r#"["DESIRED_RUDDER", "merge", []]"#,
            "unknown update kind \"merge\"",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", 5]"#,
            "the command list must be an array",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1]]]"#,
            "command 0: expected [value, time]",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, 2, 0, 4]]]"#,
            "command 0: expected [value, time]",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, 2], ["NaN", 3]]]"#,
            "command 1: value must be a number",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1e400, 3]]]"#,
            "malformed JSON: number out of range",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, 1e400]]]"#,
            "malformed JSON: number out of range",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, "+inf"]]]"#,
            "command 0: time \"+inf\"",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, "+NaN"]]]"#,
            "command 0: time \"+NaN\"",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, "+1e400"]]]"#,
            "command 0: time \"+1e400\"",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, "2.5"]]]"#,
            "command 0: time \"2.5\"",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, "+-2"]]]"#,
            "command 0: time \"+-2\"",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, null]]]"#,
            "command 0: time must be a number",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, 1e300]]]"#,
            "command 0: time 1e+300 s is not finite or out of range",
        ),
        (
            r#"["DESIRED_RUDDER", "Merge", [[1, 2, "high"]]]"#,
            "command 0: importance must be a number",
        ),
    ];
    for (json, want) in cases {
        let got = err(json);
        assert!(
            got.contains(want),
            "{json}: got {got:?}, want it to contain {want:?}"
        );
    }
}

#[test]
fn parse_set_rejects_a_bad_receipt_time() {
    let e = parse_set(r#"["DESIRED_RUDDER", "Merge", [[1, "+1"]]]"#, f64::NAN);
    assert!(matches!(e, Err(SetError::ReceiptTime(_))));
}

// ---- bank ------------------------------------------------------------------

fn thrusters() -> Vec<(String, Vec<String>)> {
    vec![(
        "THRUSTERS".to_string(),
        vec![
            "DESIRED_THRUST_L".to_string(),
            "DESIRED_THRUST_R".to_string(),
        ],
    )]
}

#[test]
fn actuator_names_round_trip() {
    for a in Actuator::ALL {
        assert_eq!(Actuator::from_name(a.name()), Some(a));
    }
    assert_eq!(Actuator::from_name("DESIRED_SPEED"), None);
}

#[test]
fn alias_updates_each_member() {
    let mut bank = ActuatorBank::new(&thrusters()).expect("valid aliases");
    bank.start(0.0);
    let call = parse_set(r#"["THRUSTERS", "ClearAll", [[40, 0.04]]]"#, 0.0).expect("valid");
    bank.apply(&call).expect("known alias");
    bank.cycle(0.01); // 40·10/40 = 10
    for a in [Actuator::ThrustL, Actuator::ThrustR] {
        assert_eq!(bank.value(a), 10.0);
        assert!(bank.is_active(a));
    }
    for a in [Actuator::Thrust, Actuator::Rudder, Actuator::Elevator] {
        assert_eq!(bank.value(a), 0.0);
        assert!(!bank.is_active(a));
    }
}

#[test]
fn unknown_actuator_is_an_error_and_changes_nothing() {
    let mut bank = ActuatorBank::new(&thrusters()).expect("valid aliases");
    let call = parse_set(r#"["DESIRED_SPEED", "Merge", [[40, 1]]]"#, 0.0).expect("parses");
    let e = bank.apply(&call).expect_err("unknown target");
    let msg = e.to_string();
    assert!(msg.contains("\"DESIRED_SPEED\""), "{msg}");
    assert!(msg.contains("THRUSTERS"), "{msg}");
    for a in Actuator::ALL {
        assert!(!bank.has_pending(a));
    }
}

#[test]
fn bad_alias_tables_are_refused() {
    let s = |v: &str| v.to_string();
    let cases = [
        (
            vec![(s("X"), vec![s("DESIRED_SPEED")])],
            "unknown actuator \"DESIRED_SPEED\"",
        ),
        (vec![(s("X"), vec![])], "no members"),
        (
            vec![(s("DESIRED_THRUST"), vec![s("DESIRED_RUDDER")])],
            "is an actuator name",
        ),
        (
            vec![
                (s("X"), vec![s("DESIRED_RUDDER")]),
                (s("X"), vec![s("DESIRED_THRUST")]),
            ],
            "defined twice",
        ),
        (
            vec![(s("A"), vec![s("DESIRED_RUDDER")]), (s("B"), vec![s("A")])],
            "unknown actuator \"A\"",
        ),
    ];
    for (aliases, want) in cases {
        let e = ActuatorBank::new(&aliases)
            .expect_err("bad alias table")
            .to_string();
        assert!(e.contains(want), "got {e:?}, want {want:?}");
    }
}

#[test]
fn set_plain_behaves_like_usimmarine() {
    let mut bank = ActuatorBank::new(&[]).expect("no aliases");
    bank.cycle(0.0);
    bank.set_plain(Actuator::Rudder, 30.0, 0.1).expect("finite");
    bank.cycle(0.1);
    assert_eq!(bank.value(Actuator::Rudder), 30.0);
    assert!(bank.is_active(Actuator::Rudder));
    bank.cycle(0.2);
    assert!(!bank.is_active(Actuator::Rudder));
    assert!(bank.set_plain(Actuator::Rudder, f64::NAN, 0.3).is_err());
    assert!(bank
        .set_plain(Actuator::Rudder, 1.0, f64::INFINITY)
        .is_err());
    assert!(!bank.has_pending(Actuator::Rudder));
    bank.cycle(f64::NAN);
    assert_eq!(bank.value(Actuator::Rudder), 30.0);
}

/// `round_half_away` is `f64::round` (std, the oracle) for every value:
/// the ties, the last values below them, the 2^52 edge, signs and zeros,
/// non-finite values and random bit patterns.
#[test]
fn round_half_away_is_f64_round() {
    let mut xs = vec![
        0.0,
        -0.0,
        0.5,
        -0.5,
        0.49999999999999994,
        -0.49999999999999994,
        1.5,
        2.5,
        -2.5,
        1.4999999999999998,
        4503599627370495.5,
        4503599627370496.0,
        4503599627370497.0,
        2251799813685247.5,
        9007199254740993.0,
        1e300,
        -1e300,
        f64::MIN_POSITIVE,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::NAN,
    ];
    for i in -2000..2000 {
        xs.push(i as f64 * 0.25);
        xs.push(i as f64 * 0.1 * 1e6);
    }
    let mut bits = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..200_000 {
        bits ^= bits << 13;
        bits ^= bits >> 7;
        bits ^= bits << 17;
        xs.push(f64::from_bits(bits));
        // Magnitudes where rounding matters: below 2^53.
        xs.push((bits >> 11) as f64 / (1u64 << (bits % 53)) as f64);
    }
    for x in xs {
        let (got, want) = (round_half_away(x), x.round());
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{x:e}: {got:e} vs {want:e}"
        );
    }
}
