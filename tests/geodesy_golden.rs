//! Checks `usim::model::geodesy` against every golden run of the real
//! uSimMarine (tests/golden/*.csv): for each row, (x, y) → (lat, lon) with
//! the local grid (tolerance 1e-9°, the C++ code itself produced these) and
//! → (lat_utm, lon_utm) with UTM (tolerance 1e-8°, PROJ with MOOSGeodesy's
//! conversions). Tolerances from tests/golden/README.md.

use std::fs;
use std::path::{Path, PathBuf};

use usim::model::geodesy::{GeoConverter, Geodesy};

/// Origin used when a mission file does not give one (all golden missions
/// use this one).
const DEFAULT_ORIGIN: (f64, f64) = (42.358456, -71.087589);

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
}

/// `lat_origin` / `lon_origin` from the mission TOML next to the CSV.
fn origin_of(csv: &Path) -> (f64, f64) {
    let toml = csv.with_extension("toml");
    let text = fs::read_to_string(&toml).unwrap_or_default();
    let key = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            if k.trim() == name {
                v.trim().parse::<f64>().ok()
            } else {
                None
            }
        })
    };
    (
        key("lat_origin").unwrap_or(DEFAULT_ORIGIN.0),
        key("lon_origin").unwrap_or(DEFAULT_ORIGIN.1),
    )
}

fn parse(v: &str) -> f64 {
    match v.trim() {
        "nan" => f64::NAN,
        s => s
            .parse()
            .unwrap_or_else(|e| panic!("bad number {s:?} in golden CSV: {e}")),
    }
}

/// Difference that treats NaN == NaN as 0 and NaN vs number as infinite.
fn diff(got: f64, want: f64) -> f64 {
    match (got.is_nan(), want.is_nan()) {
        (true, true) => 0.0,
        (false, false) => (got - want).abs(),
        _ => f64::INFINITY,
    }
}

#[test]
fn geodesy_matches_every_golden_row() {
    let mut csvs: Vec<PathBuf> = fs::read_dir(golden_dir())
        .expect("tests/golden is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    csvs.sort();
    assert!(!csvs.is_empty(), "no golden CSVs found");

    let (mut rows, mut grid_bit_exact) = (0usize, 0usize);
    let (mut max_grid, mut max_utm) = (0.0f64, 0.0f64);
    let mut failures = Vec::new();
    for csv in &csvs {
        let name = csv.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        let (lat0, lon0) = origin_of(csv);
        let grid = GeoConverter::new(lat0, lon0, Geodesy::LocalGrid).expect("valid origin");
        let utm = GeoConverter::new(lat0, lon0, Geodesy::Utm).expect("valid origin");

        let text = fs::read_to_string(csv).expect("golden CSV is readable");
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
        let col = |n: &str| {
            header
                .iter()
                .position(|h| *h == n)
                .unwrap_or_else(|| panic!("{name}: no column {n}"))
        };
        let (ck, cx, cy) = (col("k"), col("x"), col("y"));
        let (clat, clon, culat, culon) = (col("lat"), col("lon"), col("lat_utm"), col("lon_utm"));

        for line in lines.filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split(',').collect();
            let (x, y) = (parse(f[cx]), parse(f[cy]));
            rows += 1;

            let (lat, lon) = grid.to_lat_lon(x, y);
            let (want_lat, want_lon) = (parse(f[clat]), parse(f[clon]));
            let e = diff(lat, want_lat).max(diff(lon, want_lon));
            max_grid = max_grid.max(e);
            if lat.to_bits() == want_lat.to_bits() && lon.to_bits() == want_lon.to_bits() {
                grid_bit_exact += 1;
            }
            if e > 1e-9 {
                failures.push(format!(
                    "{name} k={}: local grid ({lat}, {lon}) want ({want_lat}, {want_lon})",
                    f[ck]
                ));
            }

            let (lat, lon) = utm.to_lat_lon(x, y);
            let (want_lat, want_lon) = (parse(f[culat]), parse(f[culon]));
            let e = diff(lat, want_lat).max(diff(lon, want_lon));
            max_utm = max_utm.max(e);
            if e > 1e-8 {
                failures.push(format!(
                    "{name} k={}: utm ({lat}, {lon}) want ({want_lat}, {want_lon})",
                    f[ck]
                ));
            }
        }
    }
    eprintln!(
        "geodesy vs golden: {} files, {rows} rows; local grid max |Δ| = {max_grid:e}° \
         ({grid_bit_exact}/{rows} bit-exact); utm max |Δ| = {max_utm:e}°",
        csvs.len()
    );
    assert!(
        failures.is_empty(),
        "{} mismatches, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    assert!(rows > 1000, "suspiciously few golden rows: {rows}");
}
