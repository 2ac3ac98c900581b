//! Property tests of the timed-command interpolator and the `SET` parser.
use proptest::prelude::*;
use usim::interp::timed_commands::{
    parse_set, Actuator, ActuatorBank, TimedCommand, TimedCommands, UpdateKind,
};

const MS: i64 = 1000;

fn update_kind() -> impl Strategy<Value = UpdateKind> {
    prop_oneof![
        Just(UpdateKind::Merge),
        Just(UpdateKind::ClearAll),
        Just(UpdateKind::ClearAfter),
        Just(UpdateKind::ClearBefore),
    ]
}

/// Commands on a coarse ms grid, so that identical times happen often.
fn commands() -> impl Strategy<Value = Vec<TimedCommand>> {
    prop::collection::vec(
        (-1000.0..1000.0f64, 0i64..300).prop_map(|(value, t)| TimedCommand {
            value,
            time_us: t * MS,
        }),
        0..6,
    )
}

/// A session: calls, each followed by a cycle `dt_ms` after the previous one.
fn session() -> impl Strategy<Value = (f64, Vec<(UpdateKind, Vec<TimedCommand>, i64)>)> {
    (
        -100.0..100.0f64,
        prop::collection::vec((update_kind(), commands(), 0i64..40), 1..30),
    )
}

/// A plain reference of the buffer semantics (sorted `Vec`, linear scans).
#[derive(Default)]
struct Reference(Vec<(i64, f64)>);

impl Reference {
    fn apply(&mut self, update: UpdateKind, cmds: &[TimedCommand]) {
        let first = cmds.iter().map(|c| c.time_us).min();
        let last = cmds.iter().map(|c| c.time_us).max();
        match update {
            UpdateKind::Merge => {}
            UpdateKind::ClearAll => self.0.clear(),
            UpdateKind::ClearAfter => {
                if let Some(f) = first {
                    self.0.retain(|&(t, _)| t < f);
                }
            }
            UpdateKind::ClearBefore => {
                if let Some(l) = last {
                    self.0.retain(|&(t, _)| t > l);
                }
            }
        }
        for c in cmds {
            self.0.retain(|&(t, _)| t != c.time_us);
            self.0.push((c.time_us, c.value));
        }
        self.0.sort_by_key(|&(t, _)| t);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The value after a cycle lies between the value before it and the
    /// pending command values (monotonic clock).
    #[test]
    fn output_stays_within_last_value_and_pending(s in session()) {
        let (initial, steps) = s;
        let mut tc = TimedCommands::new(initial);
        tc.start_us(0);
        let mut now = 0;
        for (kind, cmds, dt_ms) in steps {
            tc.apply(kind, &cmds);
            let before = tc.value();
            let (lo, hi) = tc.pending().fold((before, before), |(lo, hi), c| {
                (lo.min(c.value), hi.max(c.value))
            });
            now += dt_ms * MS;
            tc.cycle_us(now);
            let v = tc.value();
            prop_assert!(lo <= v && v <= hi, "{v} not in [{lo}, {hi}] at {now}");
            prop_assert_eq!(tc.send_command(), v.round());
        }
    }

    /// The buffer after any sequence of calls and cycles matches a plain
    /// sorted-list reference (update kinds, identical times, passed commands).
    #[test]
    fn buffer_matches_a_plain_reference(s in session()) {
        let (initial, steps) = s;
        let mut tc = TimedCommands::new(initial);
        let mut reference = Reference::default();
        let mut now = 0;
        for (kind, cmds, dt_ms) in steps {
            tc.apply(kind, &cmds);
            reference.apply(kind, &cmds);
            now += dt_ms * MS;
            tc.cycle_us(now);
            let mut last_applied = None;
            while reference.0.first().is_some_and(|&(t, _)| t <= now) {
                last_applied = Some(reference.0.remove(0));
            }
            if let Some((t, v)) = last_applied {
                prop_assert_eq!(tc.last_command_time_us(), Some(t));
                prop_assert_eq!(tc.last_command_value(), v);
            }
            let got: Vec<(i64, f64)> = tc.pending().map(|c| (c.time_us, c.value)).collect();
            prop_assert_eq!(&got, &reference.0);
        }
    }

    /// With one future command, the value follows the straight line from the
    /// start to it and reaches it exactly at its time.
    #[test]
    fn one_future_command_is_reached_exactly_at_its_time(
        initial in -1e3..1e3f64,
        target in -1e3..1e3f64,
        t_ms in 1i64..10_000,
        steps in prop::collection::vec(1i64..500, 1..50),
    ) {
        let mut tc = TimedCommands::new(initial);
        tc.start_us(0);
        tc.apply(UpdateKind::Merge, &[TimedCommand { value: target, time_us: t_ms * MS }]);
        let mut now = 0;
        for dt in steps {
            // Never step over the command's time: land on it exactly.
            now = (now + dt * MS).min(t_ms * MS);
            tc.cycle_us(now);
            let line = initial + (target - initial) * (now as f64 / (t_ms * MS) as f64);
            prop_assert!((tc.value() - line).abs() <= 1e-9 * (1.0 + initial.abs() + target.abs()));
            if now == t_ms * MS {
                prop_assert_eq!(tc.value(), target);
                break;
            }
        }
        tc.cycle_us(t_ms * MS);
        prop_assert_eq!(tc.value(), target);
        tc.cycle_us(t_ms * MS + 12_345);
        prop_assert_eq!(tc.value(), target);
    }

    /// Any times (also going backwards, extreme) and any values (NaN and
    /// infinities are skipped): no panic, the value stays finite.
    #[test]
    fn no_panic_on_any_times_or_values(
        initial in any::<f64>(),
        calls in prop::collection::vec(
            (update_kind(),
             prop::collection::vec((any::<f64>(), any::<i64>()), 0..5),
             any::<i64>()),
            0..20),
    ) {
        let mut tc = TimedCommands::new(initial);
        for (kind, cmds, now) in calls {
            let cmds: Vec<TimedCommand> = cmds
                .into_iter()
                .map(|(value, time_us)| TimedCommand { value, time_us })
                .collect();
            tc.apply(kind, &cmds);
            tc.cycle_us(now);
            prop_assert!(tc.value().is_finite());
        }
    }

    /// Arbitrary text as a `SET` payload: no panic.
    #[test]
    fn parse_set_never_panics_on_text(text in ".{0,80}", receipt in any::<f64>()) {
        let _ = parse_set(&text, receipt);
    }

    /// Payload-shaped JSON with random pieces: no panic; an accepted call
    /// has finite values; a refused one leaves the bank unchanged.
    #[test]
    fn set_calls_are_atomic_and_never_panic(
        target in prop_oneof![
            Just("DESIRED_RUDDER".to_string()),
            Just("THRUSTERS".to_string()),
            "[A-Z_]{0,12}",
        ],
        update in prop_oneof![
            Just("Merge".to_string()), Just("ClearAll".to_string()),
            Just("ClearAfter".to_string()), Just("ClearBefore".to_string()),
            "[A-Za-z]{0,10}",
        ],
        items in prop::collection::vec(
            prop_oneof![
                "-?[0-9]{1,3}(\\.[0-9]{1,3})?(e[0-9]{1,3})?",
                Just("\"NaN\"".to_string()),
                Just("\"+1.5\"".to_string()),
                Just("\"+inf\"".to_string()),
                Just("null".to_string()),
                Just("1e400".to_string()),
            ],
            0..8),
        receipt in -10.0..10.0f64,
    ) {
        let list: Vec<String> = items.chunks(2).map(|c| format!("[{}]", c.join(", "))).collect();
        let json = format!("[{target:?}, {update:?}, [{}]]", list.join(", "));
        let aliases = vec![(
            "THRUSTERS".to_string(),
            vec!["DESIRED_THRUST_L".to_string(), "DESIRED_THRUST_R".to_string()],
        )];
        let mut bank = ActuatorBank::new(&aliases).expect("valid aliases");
        bank.set_plain(Actuator::Rudder, 5.0, 100.0).expect("finite");
        let snapshot = |b: &ActuatorBank| -> Vec<Vec<(i64, f64)>> {
            Actuator::ALL
                .iter()
                .map(|&a| b.get(a).pending().map(|c| (c.time_us, c.value)).collect())
                .collect()
        };
        let before = snapshot(&bank);
        match parse_set(&json, receipt) {
            Ok(call) => {
                prop_assert!(call.commands.iter().all(|c| c.value.is_finite()));
                if bank.apply(&call).is_err() {
                    prop_assert_eq!(snapshot(&bank), before);
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        bank.cycle(receipt);
        for a in Actuator::ALL {
            prop_assert!(bank.value(a).is_finite());
        }
    }
}
