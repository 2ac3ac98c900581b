//! The four columns after the contract's 23: `thrust_l`, `thrust_r` (the
//! differential thrusters, percent) and `current_x`, `current_y` (the
//! current field at the vehicle, m/s), and `t` on the microsecond grid.
//! Expected values come from the missions' posts and the field file through
//! the formulas of docs/model.md §15.2 and §19, not from our own output.
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

struct Csv {
    header: Vec<String>,
    rows: Vec<Vec<f64>>,
    t_text: Vec<String>,
}

impl Csv {
    fn col(&self, name: &str) -> usize {
        self.header.iter().position(|h| h == name).unwrap()
    }
    fn get(&self, k: usize, name: &str) -> f64 {
        self.rows[k][self.col(name)]
    }
}

fn replay(mission: &str) -> Csv {
    let m = usim::mission::load(&root().join(mission)).unwrap();
    let mut out = Vec::new();
    usim::replay::run(&m, &mut out, |_, _| {}).unwrap();
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    let mut t_text = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        t_text.push(f[1].to_string());
        rows.push(f.iter().map(|v| v.parse::<f64>().unwrap()).collect());
    }
    Csv {
        header,
        rows,
        t_text,
    }
}

#[test]
fn the_new_columns_follow_the_old_23() {
    let c = replay("missions/gusts.toml");
    let old = "k,t,x,y,speed,heading,depth,altitude,pitch,yaw,sog,hog,nav_speed,nav_heading,lat,lon,drift_x,drift_y,rudder,thrust,elevator,gt_x,gt_y";
    assert_eq!(c.header[..23].join(","), old);
    assert_eq!(
        c.header[23..],
        ["thrust_l", "thrust_r", "current_x", "current_y"]
    );
}

#[test]
fn t_is_printed_on_the_microsecond_grid() {
    let c = replay("missions/gusts.toml"); // dt = 0.1
    for (k, t) in c.t_text.iter().enumerate() {
        // k/10 written exactly as its shortest decimal, e.g. 1.2, not 1.2000000000000002
        let expected = format!("{}", k as f64 / 10.0);
        let expected = expected.strip_suffix(".0").unwrap_or(&expected);
        assert_eq!(t, expected, "row {k}");
    }
}

/// catamaran_diff.toml with missions/differential.toml: the posts set the
/// thrusters (a post at t is delivered before the iteration with
/// rel_k >= t), then a SET ramps both from 80 at 90 s to 0 at 110 s.
#[test]
fn differential_mission_shows_both_thrusters() {
    let c = replay("missions/differential.toml");
    let expected = |t: f64| -> (f64, f64) {
        match t {
            t if t < 1.0 => (0.0, 0.0),
            t if t < 20.0 => (60.0, 60.0),
            t if t < 50.0 => (70.0, 40.0),
            t if t < 70.0 => (50.0, -50.0),
            t if t <= 90.0 => (80.0, 80.0),
            t if t < 110.0 => {
                let v = 80.0 * (110.0 - t) / 20.0;
                (v, v)
            }
            _ => (0.0, 0.0),
        }
    };
    for k in (0..c.rows.len()).step_by(5) {
        let t = k as f64 / 10.0;
        if [1.0, 20.0, 50.0, 70.0, 90.0, 110.0]
            .iter()
            .any(|e| (t - e).abs() < 0.05)
        {
            continue; // the boundary rows themselves: checked below
        }
        let (l, r) = expected(t);
        assert!(
            (c.get(k, "thrust_l") - l).abs() < 1e-9,
            "k={k}: thrust_l {} != {l}",
            c.get(k, "thrust_l")
        );
        assert!(
            (c.get(k, "thrust_r") - r).abs() < 1e-9,
            "k={k}: thrust_r {} != {r}",
            c.get(k, "thrust_r")
        );
        // differential mode: the single thrust stays 0, which is why the columns exist
        assert_eq!(c.get(k, "thrust"), 0.0);
    }
    // a post at t = 20.0 is due at iteration 200 (t <= rel_k + 1e-9)
    assert_eq!(
        (c.get(199, "thrust_l"), c.get(199, "thrust_r")),
        (60.0, 60.0)
    );
    assert_eq!(
        (c.get(200, "thrust_l"), c.get(200, "thrust_r")),
        (70.0, 40.0)
    );
    // no field on this vehicle: the current columns are 0
    assert!(c
        .rows
        .iter()
        .all(|r| r[c.col("current_x")] == 0.0 && r[c.col("current_y")] == 0.0));
}

/// The field of configs/fields/bay.cfd evaluated by the formula of
/// docs/model.md §19 (mean over the vectors within the radius of
/// (1 − d/R)²·velocity), read from the file here, independently of usim's
/// parser and spatial index.
fn bay_field(x: f64, y: f64) -> (f64, f64) {
    let text = std::fs::read_to_string(root().join("configs/fields/bay.cfd")).unwrap();
    let mut radius = 20.0;
    let mut vectors = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") || line.starts_with("fieldname") {
            continue;
        }
        if let Some(r) = line.strip_prefix("radius:") {
            radius = r.trim().parse().unwrap();
            continue;
        }
        let mut kv = std::collections::HashMap::new();
        for part in line.split(',') {
            let (k, v) = part.split_once('=').unwrap();
            kv.insert(k.trim().to_string(), v.trim().parse::<f64>().unwrap());
        }
        let (mut vx, mut vy) = (0.0, 0.0);
        if let (Some(m), Some(a)) = (kv.get("mag"), kv.get("ang")) {
            vx += a.to_radians().sin() * m;
            vy += a.to_radians().cos() * m;
        }
        vx += kv.get("xdot").copied().unwrap_or(0.0);
        vy += kv.get("ydot").copied().unwrap_or(0.0);
        vectors.push((kv["x"], kv["y"], vx, vy));
    }
    assert!(vectors.len() > 10);
    let (mut sx, mut sy, mut n) = (0.0, 0.0, 0);
    for (px, py, vx, vy) in vectors {
        let d = ((px - x).powi(2) + (py - y).powi(2)).sqrt();
        if d < radius {
            let w = (1.0 - d / radius).powi(2);
            sx += w * vx;
            sy += w * vy;
            n += 1;
        }
    }
    if n == 0 {
        (0.0, 0.0)
    } else {
        (sx / n as f64, sy / n as f64)
    }
}

#[test]
fn current_field_mission_shows_the_current_at_the_vehicle() {
    let c = replay("missions/current_field.toml");
    assert_eq!(c.get(0, "current_x"), 0.0, "no step yet");
    let mut strongest: f64 = 0.0;
    for k in 1..c.rows.len() {
        // the current of step k is taken where the step starts: row k-1
        let (ex, ey) = bay_field(c.get(k - 1, "x"), c.get(k - 1, "y"));
        let (gx, gy) = (c.get(k, "current_x"), c.get(k, "current_y"));
        assert!(
            (gx - ex).abs() < 1e-12 && (gy - ey).abs() < 1e-12,
            "k={k}: ({gx}, {gy}) != ({ex}, {ey})"
        );
        strongest = strongest.max(gx.hypot(gy));
        // and it moved the vehicle: x_k - x_{k-1} = (ẋ + drift_x + current_x)·dt,
        // with |ẋ|, |ẏ| <= the stored speed
        let dt = 0.1;
        let wx = (c.get(k, "x") - c.get(k - 1, "x")) / dt - c.get(k, "drift_x") - gx;
        let wy = (c.get(k, "y") - c.get(k - 1, "y")) / dt - c.get(k, "drift_y") - gy;
        assert!(
            (wx.hypot(wy) - c.get(k, "speed").abs()).abs() < 1e-6,
            "k={k}: water velocity {} vs speed {}",
            wx.hypot(wy),
            c.get(k, "speed")
        );
    }
    // the launch crosses the field: a current that is not negligible
    // (the radius-weighted mean of docs/model.md §19 is well below the
    // vectors' 0.6 m/s)
    assert!(strongest > 0.02, "strongest current {strongest}");
    let with_current = c
        .rows
        .iter()
        .filter(|r| r[c.col("current_x")] != 0.0)
        .count();
    assert!(with_current > 1000, "{with_current} rows with a current");
}
