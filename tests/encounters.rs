//! Encounters (docs/fleets.md): the spatial grid finds exactly the pairs
//! the O(n²) check finds, and the crossing mission's encounter is the one
//! computed by hand.
use nalgebra::Vector2;
use proptest::prelude::*;
use usim::encounter::{pairs_within_brute, Grid};

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
