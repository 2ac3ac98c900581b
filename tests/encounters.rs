//! Encounters (docs/fleets.md): the spatial grid finds exactly the pairs
//! the O(n²) check finds, and the crossing mission's encounter is the one
//! computed by hand.
use nalgebra::Vector2;
use proptest::prelude::*;
use usim::encounter::{pairs_within_brute, Grid, NearPairs};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn grid_finds_exactly_the_brute_force_pairs(
        pts in prop::collection::vec((-500.0f64..500.0, -500.0f64..500.0), 0..150),
        range in 0.5f64..120.0,
        clump in any::<bool>(),
    ) {
        // Clumped fleets put many vehicles in few cells (and exactly on
        // cell borders: multiples of the range).
        let positions: Vec<Vector2<f64>> = pts
            .iter()
            .map(|&(x, y)| if clump {
                Vector2::new((x / 100.0).round() * range, (y / 100.0).round() * range)
            } else {
                Vector2::new(x, y)
            })
            .collect();
        let mut grid = Grid::new();
        let mut out = Vec::new();
        grid.pairs_within(&positions, range, &mut out);
        prop_assert_eq!(&out, &pairs_within_brute(&positions, range));
        // The grid is reused: a second, different fleet.
        let moved: Vec<Vector2<f64>> = positions.iter().map(|p| p * 0.5).collect();
        grid.pairs_within(&moved, range, &mut out);
        prop_assert_eq!(&out, &pairs_within_brute(&moved, range));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    /// A fleet moving step by step (the grid keeps its sorted cells from
    /// one query to the next and re-sorts them): every step, exactly the
    /// brute-force pairs; with vehicles crossing cell borders, some
    /// vanishing (NaN, infinite) and some far out (cell numbers clamped).
    #[test]
    fn grid_follows_a_moving_fleet(
        start in prop::collection::vec(
            ((-300.0f64..300.0, -300.0f64..300.0), (-8.0f64..8.0, -8.0f64..8.0)),
            1..120,
        ),
        range in 1.0f64..60.0,
        odd in prop::collection::vec((0usize..120, 0usize..6), 0..6),
    ) {
        let mut grid = Grid::new();
        let mut out = Vec::new();
        let mut pos: Vec<Vector2<f64>> =
            start.iter().map(|&((x, y), _)| Vector2::new(x, y)).collect();
        for step in 0..12 {
            for (i, &(_, (vx, vy))) in start.iter().enumerate() {
                pos[i] += Vector2::new(vx, vy);
            }
            let mut q = pos.clone();
            for &(i, what) in &odd {
                if i < q.len() && step % 3 == what % 3 {
                    q[i] = match what {
                        0 => Vector2::new(f64::NAN, 1.0),
                        1 => Vector2::new(2.0, f64::INFINITY),
                        2 => Vector2::new(1e300, -1e300),
                        3 => Vector2::new(1e300, -1e300 + 1.0),
                        4 => Vector2::new(-9.3e18 * range, 0.0),
                        _ => Vector2::new(f64::NEG_INFINITY, f64::NAN),
                    };
                }
            }
            grid.pairs_within(&q, range, &mut out);
            prop_assert_eq!(&out, &pairs_within_brute(&q, range), "step {}", step);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    /// The Verlet list (candidates kept while every vehicle stays within
    /// half the skin) gives exactly the brute-force pairs every step, for
    /// fleets drifting slowly (candidates reused), jumping (rebuilt), with
    /// vehicles lost (NaN), far out, or the fleet changing size.
    #[test]
    fn near_pairs_equal_brute_force_every_step(
        start in prop::collection::vec(
            ((-200.0f64..200.0, -200.0f64..200.0), (-1.0f64..1.0, -1.0f64..1.0)),
            1..80,
        ),
        range in 1.0f64..40.0,
        speed in prop::sample::select(vec![0.01, 0.1, 0.5, 3.0]),
        odd in prop::collection::vec((0usize..80, 0usize..40, 0usize..5), 0..5),
    ) {
        let mut near = NearPairs::new();
        let mut out = Vec::new();
        let mut pos: Vec<Vector2<f64>> =
            start.iter().map(|&((x, y), _)| Vector2::new(x, y)).collect();
        for step in 0..40 {
            for (i, &(_, (vx, vy))) in start.iter().enumerate() {
                pos[i] += Vector2::new(vx, vy) * speed * range;
            }
            let mut q = pos.clone();
            for &(i, when, what) in &odd {
                if i < q.len() && step == when {
                    match what {
                        0 => q[i] = Vector2::new(f64::NAN, 0.0),
                        1 => q[i] = Vector2::new(3e7 * range, 0.0),
                        2 => pos[i] = pos[(i + 1) % pos.len()],
                        3 => q.truncate(i),
                        _ => pos[i] += Vector2::new(0.45 * range, -0.2 * range),
                    }
                }
            }
            near.pairs_within_by(q.len(), |i| q[i], range, &mut out);
            prop_assert_eq!(&out, &pairs_within_brute(&q, range), "step {}", step);
        }
    }
}

#[test]
fn crossing_mission_near_miss_is_the_hand_computed_cpa() {
    // Both boats run the same speed profile s(t) from the same time:
    // west at (s − 150, 0), south at (0, s − 160). Their distance²
    // (s − 150)² + (s − 160)² is least at s = 155: sqrt(5² + 5²) = sqrt(50),
    // with west at (5, 0) and south at (0, −5): bearing from west to
    // south 225°.
    let dir = tempfile::tempdir().unwrap();
    let enc = dir.path().join("enc.csv");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_usim"))
        .args(["replay", "missions/two_boats_crossing.toml", "-q", "-o"])
        .arg(dir.path().join("run.csv"))
        .arg("--encounters")
        .arg(&enc)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(&enc).unwrap();
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>().join(","),
        usim::encounter::CSV_HEADER
    );
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let kinds: Vec<&str> = rows.iter().map(|r| &r[1]).collect();
    assert_eq!(
        kinds,
        ["near_miss", "clear"],
        "a near miss, no collision (4 m)"
    );
    assert_eq!((&rows[0][2], &rows[0][3]), ("west", "south"));
    let f = |r: &csv::StringRecord, i: usize| r[i].parse::<f64>().unwrap();
    // Both at cruising speed when the pair comes within 20 m: the
    // constant-velocity CPA is exact.
    assert!(f(&rows[0], 4) <= 20.0);
    assert!(
        (f(&rows[0], 6) - 50f64.sqrt()).abs() < 1e-6,
        "{:?}",
        rows[0]
    );
    assert!((f(&rows[0], 7) - 225.0).abs() < 1e-6, "{:?}", rows[0]);
    // Sampled at 10 Hz (0.18 m per step) the least range seen is within
    // a step's worth of it.
    let least = f(&rows[1], 4);
    assert!(
        least >= 50f64.sqrt() - 1e-9 && least < 50f64.sqrt() + 0.01,
        "{least}"
    );
}

/// Fleets large enough for the grid's parallel path (keys and cells
/// scanned on several threads): a random fleet of 1,500 with a dense clump
/// and a few lost vehicles, moving for a few steps, gives exactly the
/// brute-force pairs every step.
#[test]
fn large_fleet_parallel_grid_equals_brute_force() {
    // SplitMix64: a fixed, reproducible fleet.
    let mut state = 0x5eed_u64;
    let mut unit = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let n = 1500;
    let mut pos: Vec<Vector2<f64>> = (0..n)
        .map(|i| {
            if i % 10 == 0 {
                // A clump: 150 vehicles in a 60 m square.
                Vector2::new(unit() * 60.0, unit() * 60.0)
            } else {
                Vector2::new(unit() * 2000.0 - 1000.0, unit() * 2000.0 - 1000.0)
            }
        })
        .collect();
    let vel: Vec<Vector2<f64>> = (0..n)
        .map(|_| Vector2::new(unit() * 6.0 - 3.0, unit() * 6.0 - 3.0))
        .collect();
    pos[17] = Vector2::new(f64::NAN, 0.0);
    pos[1234] = Vector2::new(1e300, 1e300);
    let mut grid = Grid::new();
    let mut out = Vec::new();
    for step in 0..3 {
        grid.pairs_within(&pos, 20.0, &mut out);
        let want = pairs_within_brute(&pos, 20.0);
        assert!(want.len() > 150, "step {step}: {} pairs", want.len());
        assert_eq!(out, want, "step {step}");
        for (p, v) in pos.iter_mut().zip(&vel) {
            *p += v;
        }
    }
}
