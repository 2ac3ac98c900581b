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
///
/// With the `NAV` pose and `TRUE_X`/`TRUE_Y` rows (a classic vehicle
/// posts both; docs/model.md §4) that differ from `NAV_X`/`NAV_Y`
/// somewhere (a vehicle with `[sensors]`: NAV_* is the sensed fix), the
/// track is the true one, one row per `TRUE_X`, and the sensed track is
/// `NAV_X`/`NAV_Y` posted at the same time (NaN where none was: a
/// dropout). Without such a difference the runs are the `NAV` ones.
pub fn runs(a: &Alog) -> Result<Vec<Run>, String> {
    let Some(p) = prefix_of(a) else {
        return Err(
            "no pose in the alog: no PREFIX_X and PREFIX_Y rows (NAV_X/NAV_Y, USM_X/USM_Y)".into(),
        );
    };
    let pose = |x: &str, y: &str| {
        [
            format!("{x}_X"),
            format!("{y}_Y"),
            format!("{p}_SPEED"),
            format!("{p}_HEADING"),
            format!("{p}_DEPTH"),
            "DESIRED_RUDDER".to_string(),
            "DESIRED_THRUST".to_string(),
            "DESIRED_ELEVATOR".to_string(),
        ]
    };
    let has = |v: &str| a.entries.iter().any(|e| e.var == v);
    if p == "NAV" && has("TRUE_X") && has("TRUE_Y") {
        let truth = collect(a, &pose("TRUE", "TRUE"), Some(["NAV_X", "NAV_Y"]));
        let differs = truth
            .iter()
            .any(|r| (0..r.len()).any(|i| r.sensed_x[i] != r.x[i] || r.sensed_y[i] != r.y[i]));
        if differs {
            return Ok(truth);
        }
    }
    let out = collect(a, &pose(&p, &p), None);
    if out.is_empty() {
        return Err(format!("no {p}_X rows with a number"));
    }
    Ok(out)
}

/// One run per vehicle: a row at each time `vars[0]` was posted, with the
/// latest value of every other variable of `vars` at or before it; with
/// `sensed`, the sensed position from those two variables when posted at
/// the row's time (else NaN).
fn collect(a: &Alog, vars: &[String; 8], sensed: Option<[&str; 2]>) -> Vec<Run> {
    // per vehicle: latest values, time of a pending row, sensed (x, y, t)
    struct V {
        cur: [f64; 8],
        pending: Option<f64>,
        sensed: [f64; 3],
        run: Run,
    }
    let mut vs: Vec<V> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let emit = |v: &mut V, t: f64, with_sensed: bool| {
        let r = &mut v.run;
        r.k.push(r.t.len() as f64);
        r.t.push(t);
        for (col, x) in r.columns_mut().into_iter().skip(2).zip(v.cur) {
            col.push(x);
        }
        if with_sensed {
            let now = v.sensed[2] == t;
            r.sensed_x.push(if now { v.sensed[0] } else { f64::NAN });
            r.sensed_y.push(if now { v.sensed[1] } else { f64::NAN });
        }
    };
    for e in &a.entries {
        let slot = vars.iter().position(|v| *v == e.var);
        let sensed_slot = sensed.and_then(|s| s.iter().position(|v| *v == e.var));
        if slot.is_none() && sensed_slot.is_none() {
            continue;
        }
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
                    sensed: [f64::NAN; 3],
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
        if let Some(t) = v.pending.filter(|t| e.t > *t) {
            emit(v, t, sensed.is_some());
            v.pending = None;
        }
        if let Some(j) = sensed_slot {
            v.sensed[j] = x;
            v.sensed[2] = e.t;
        }
        if let Some(slot) = slot {
            v.cur[slot] = x;
            if slot == 0 {
                v.pending = Some(e.t);
            }
        }
    }
    let mut out = Vec::new();
    for mut v in vs {
        if let Some(t) = v.pending {
            emit(&mut v, t, sensed.is_some());
        }
        if !v.run.is_empty() {
            out.push(v.run);
        }
    }
    out
}
