//! Runs out of an alog (docs/alog.md), for `usim plot`: one run per
//! vehicle, the vehicle being the auxiliary text of the source
//! (`uSimMarine:alpha`, as `usim record` and fleet replays write it), or
//! one run named after the file when sources have none.
//!
//! The pose comes from `P_X`, `P_Y`, `P_SPEED`, `P_HEADING`, `P_DEPTH` with
//! the prefix `P` that has both `_X` and `_Y` rows (`NAV` first, then
//! `USM`, then any); the actuators from `DESIRED_THRUST`,
//! `DESIRED_RUDDER`, `DESIRED_ELEVATOR`, held until the next value. One
//! row per time at which `P_X` was posted, with the latest value of every
//! other variable at or before that time (NaN before the first).
use super::run_csv::Run;
use crate::alog::{Alog, AlogValue};

/// Vehicles at most (further sources are ignored).
pub const MAX_VEHICLES: usize = 1024;

/// The pose prefix: `NAV`, else `USM`, else the first `P` (in the order
/// of the `P_X` rows) with both `P_X` and `P_Y` rows. One pass over the
/// rows (an alog of 100,000 `_X` rows without a pose took 266 s when every
/// `_X` row scanned the file again).
fn prefix_of(a: &Alog) -> Option<String> {
    let mut xs: Vec<&str> = Vec::new();
    let mut seen_x = std::collections::HashSet::new();
    let mut ys = std::collections::HashSet::new();
    for e in &a.entries {
        if let Some(p) = e.var.strip_suffix("_X") {
            if !p.is_empty() && seen_x.insert(p) {
                xs.push(p);
            }
        } else if let Some(p) = e.var.strip_suffix("_Y") {
            ys.insert(p);
        }
    }
    let has = |p: &str| seen_x.contains(p) && ys.contains(p);
    ["NAV", "USM"]
        .into_iter()
        .find(|p| has(p))
        .or_else(|| xs.iter().copied().find(|p| ys.contains(p)))
        .map(str::to_string)
}

/// The runs of `a`; an error if it has no pose.
pub fn runs(a: &Alog) -> Result<Vec<Run>, String> {
    let Some(p) = prefix_of(a) else {
        return Err(
            "no pose in the alog: no PREFIX_X and PREFIX_Y rows (NAV_X/NAV_Y, USM_X/USM_Y)".into(),
        );
    };
    let vars = [
        format!("{p}_X"),
        format!("{p}_Y"),
        format!("{p}_SPEED"),
        format!("{p}_HEADING"),
        format!("{p}_DEPTH"),
        "DESIRED_RUDDER".to_string(),
        "DESIRED_THRUST".to_string(),
        "DESIRED_ELEVATOR".to_string(),
    ];
    // per vehicle: (name, latest values, time of a pending P_X, run)
    struct V {
        cur: [f64; 8],
        pending: Option<f64>,
        run: Run,
    }
    let mut vs: Vec<V> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let emit = |v: &mut V, t: f64| {
        let r = &mut v.run;
        r.k.push(r.t.len() as f64);
        r.t.push(t);
        r.x.push(v.cur[0]);
        r.y.push(v.cur[1]);
        r.speed.push(v.cur[2]);
        r.heading.push(v.cur[3]);
        r.depth.push(v.cur[4]);
        r.rudder.push(v.cur[5]);
        r.thrust.push(v.cur[6]);
        r.elevator.push(v.cur[7]);
    };
    for e in &a.entries {
        let Some(slot) = vars.iter().position(|v| *v == e.var) else {
            continue;
        };
        let AlogValue::Number(x) = e.value else {
            continue;
        };
        let name = e.aux().unwrap_or("");
        let i = match index.get(name) {
            Some(&i) => i,
            None if vs.len() < MAX_VEHICLES => {
                index.insert(name, vs.len());
                vs.push(V {
                    cur: [f64::NAN; 8],
                    pending: None,
                    run: Run {
                        vehicle: name.to_string(),
                        ..Run::default()
                    },
                });
                vs.len() - 1
            }
            None => continue,
        };
        let v = &mut vs[i];
        if let Some(t) = v.pending {
            if e.t > t {
                emit(v, t);
                v.pending = None;
            }
        }
        v.cur[slot] = x;
        if slot == 0 {
            v.pending = Some(e.t);
        }
    }
    let mut out = Vec::new();
    for mut v in vs {
        if let Some(t) = v.pending {
            emit(&mut v, t);
        }
        if !v.run.is_empty() {
            out.push(v.run);
        }
    }
    if out.is_empty() {
        return Err(format!("no {p}_X rows with a number"));
    }
    Ok(out)
}
