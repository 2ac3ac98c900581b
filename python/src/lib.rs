//! `usim_marine._usim`: the native half of the Python package (see
//! `usim_marine/__init__.py` and docs/python.md). Thin: parsing, the model,
//! replays, sweeps and the batch fleet are the `usim` library's; this file
//! converts between Python objects and those, checks sizes before
//! allocating, releases the GIL around long loops, and turns every Rust
//! panic into a Python exception.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

mod encounter_obs;
mod snapshot;
use snapshot::{FJournal, FOp, PostVal, ResetOp, Source, VJournal, VOp, VOrigin};

use usim::batch::{BatchFleet, Field};
use usim::command::{self, Command, Payload};
use usim::config::{self, ConfigError as RConfigError, VehicleConfig};
use usim::mission::{self, Mission};
use usim::model::trig::MathMode;
use usim::model::{Actuator, PubValue, Snapshot, Vehicle as RVehicle};

create_exception!(
    usim_marine,
    ConfigError,
    PyValueError,
    "A vehicle config, mission or sweep file that could not be loaded. \
     The message reads `FILE:LINE: key `KEY`: why`; the attributes `path`, \
     `line` (int or None) and `key` (str or None) hold the same."
);
create_exception!(
    usim_marine,
    MessageError,
    PyValueError,
    "A message (`post`, a setpoint) the vehicle refuses, as over MQTT: the \
     attributes `var`, `payload` and `reason` say which and why."
);

create_exception!(
    usim_marine,
    SetpointWarning,
    pyo3::exceptions::PyUserWarning,
    "A setpoint the vehicle takes but a caller seldom means: a thrust outside \
     the nominal ±100 percent (DESIRED_THRUST is used unclipped, as uSimMarine \
     uses it; DESIRED_THRUST_L and _R are clipped to ±100)."
);

/// Largest replay output held in memory by default, bytes.
const DEFAULT_MAX_BYTES: u64 = 4 << 30;
/// Bytes per replay row held in memory (26 floats, `k`, the vehicle index).
const ROW_BYTES: u64 = 28 * 8;
/// Posts-log bytes assumed per vehicle iteration when sizing a posts log.
const POSTS_BYTES_PER_STEP: u64 = 400;

fn config_error(py: Python<'_>, e: &RConfigError) -> PyErr {
    let err = ConfigError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("path", e.path.display().to_string());
    let _ = v.setattr("line", e.line);
    let _ = v.setattr("key", e.key.clone());
    err
}

fn message_error(py: Python<'_>, e: &command::MessageError) -> PyErr {
    let err = MessageError::new_err(e.to_string());
    let v = err.value(py);
    let _ = v.setattr("var", e.var.clone());
    let _ = v.setattr("payload", e.payload.clone());
    let _ = v.setattr("reason", e.reason.clone());
    err
}

/// Run `f`, turning a Rust panic into `RuntimeError` (never an abort or
/// a `PanicException` the caller cannot catch as `Exception`).
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(panic_error(payload)),
    }
}

fn panic_error(payload: Box<dyn std::any::Any + Send>) -> PyErr {
    if payload.downcast_ref::<Interrupted>().is_some() {
        return PyKeyboardInterrupt::new_err("interrupted");
    }
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".to_string());
    PyRuntimeError::new_err(format!("internal error in usim (please report): {msg}"))
}

/// Unwinding payload of a loop stopped by a pending signal (Ctrl-C).
struct Interrupted;

/// Check for Ctrl-C from a loop running without the GIL; unwinds out of
/// the loop (no panic hook runs) if a signal handler raised.
fn check_signals() {
    let stop = Python::attach(|py| py.check_signals().is_err());
    if stop {
        std::panic::resume_unwind(Box::new(Interrupted));
    }
}

/// Where a config or mission comes from: `(path for messages, text)`.
/// A `dict` becomes TOML text, an `os.PathLike` or a one-line string
/// without `=` is a file, any other string is TOML text.
fn source_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(PathBuf, String)> {
    let py = obj.py();
    if let Ok(d) = obj.cast::<PyDict>() {
        let table = dict_to_toml(d, 0)?;
        let text = toml::to_string(&table)
            .map_err(|e| PyValueError::new_err(format!("{what} dict: {e}")))?;
        return Ok((PathBuf::from("<dict>"), text));
    }
    let text_or_path: Option<String> = if obj.is_instance_of::<PyString>() {
        Some(obj.extract()?)
    } else {
        None
    };
    let path: PathBuf = match text_or_path {
        Some(s) if s.contains('\n') || s.contains('=') || s.trim_start().starts_with('[') => {
            return Ok((PathBuf::from("<text>"), s));
        }
        Some(s) => PathBuf::from(s),
        None => obj.extract::<PathBuf>().map_err(|_| {
            PyTypeError::new_err(format!(
                "{what}: expected a path, TOML text or a dict, not {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?,
    };
    let text = config::read_text(&path, what).map_err(|e| config_error(py, &e))?;
    Ok((path, text))
}

fn dict_to_toml(d: &Bound<'_, PyDict>, depth: usize) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("config dict keys must be strings"))?;
        let value = py_to_toml(&v, depth + 1)
            .map_err(|e| PyValueError::new_err(format!("config key `{key}`: {e}")))?;
        t.insert(key, value);
    }
    Ok(t)
}

fn py_to_toml(v: &Bound<'_, PyAny>, depth: usize) -> PyResult<toml::Value> {
    if depth > 32 {
        return Err(PyValueError::new_err("nested too deep"));
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        let i: i64 = v
            .extract()
            .map_err(|_| PyValueError::new_err("integer out of range"))?;
        return Ok(toml::Value::Integer(i));
    }
    if v.is_instance_of::<PyFloat>() {
        let f: f64 = v.extract()?;
        if !f.is_finite() {
            return Err(PyValueError::new_err(format!("{f} is not a finite number")));
        }
        return Ok(toml::Value::Float(f));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(v.extract()?));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        return Ok(toml::Value::Table(dict_to_toml(d, depth)?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for item in v.try_iter()? {
            out.push(py_to_toml(&item?, depth + 1)?);
        }
        return Ok(toml::Value::Array(out));
    }
    Err(PyTypeError::new_err(format!(
        "unsupported value type {}",
        v.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

fn parse_math(math: Option<&str>) -> PyResult<Option<MathMode>> {
    match math {
        None => Ok(None),
        Some("libm") => Ok(Some(MathMode::Libm)),
        Some("fast") => Ok(Some(MathMode::Fast)),
        Some(other) => Err(PyValueError::new_err(format!(
            "math must be \"libm\" or \"fast\", not {other:?}"
        ))),
    }
}

fn load_vehicle_config(obj: &Bound<'_, PyAny>, math: Option<&str>) -> PyResult<VehicleConfig> {
    Ok(load_vehicle_config_src(obj, math)?.0)
}

/// A vehicle config and the text it was parsed from (for snapshots).
fn load_vehicle_config_src(
    obj: &Bound<'_, PyAny>,
    math: Option<&str>,
) -> PyResult<(VehicleConfig, Source)> {
    let py = obj.py();
    let (path, text) = source_of(obj, "vehicle config")?;
    let cfg = parse_config_text(py, &path, &text, math)?;
    Ok((cfg, Source::new(&path, text)))
}

fn parse_config_text(
    py: Python<'_>,
    path: &Path,
    text: &str,
    math: Option<&str>,
) -> PyResult<VehicleConfig> {
    let mut cfg = config::parse_vehicle(path, text).map_err(|e| config_error(py, &e))?;
    if let Some(m) = parse_math(math)? {
        cfg.params.math = m;
    }
    Ok(cfg)
}

fn load_mission(obj: &Bound<'_, PyAny>, math: Option<&str>) -> PyResult<Mission> {
    Ok(load_mission_src(obj, math)?.0)
}

/// A mission and the text it was parsed from (for snapshots).
fn load_mission_src(obj: &Bound<'_, PyAny>, math: Option<&str>) -> PyResult<(Mission, Source)> {
    let py = obj.py();
    let (path, text) = source_of(obj, "mission")?;
    let m = parse_mission_text(py, &path, &text, math)?;
    Ok((m, Source::new(&path, text)))
}

fn parse_mission_text(
    py: Python<'_>,
    path: &Path,
    text: &str,
    math: Option<&str>,
) -> PyResult<Mission> {
    let mut m = mission::parse(path, text).map_err(|e| config_error(py, &e))?;
    if let Some(mm) = parse_math(math)? {
        for i in 0..m.vehicle_count() {
            m.vehicle_at_mut(i).params.math = mm;
        }
    }
    Ok(m)
}

/// The value of a post as given: a `str`, a `bool` or a number.
fn post_value(var: &str, value: &Bound<'_, PyAny>) -> PyResult<PostVal> {
    if value.is_instance_of::<PyString>() {
        Ok(PostVal::Text(value.extract()?))
    } else if value.is_instance_of::<PyBool>() {
        Ok(PostVal::Bool(value.extract()?))
    } else if let Ok(v) = value.extract::<f64>() {
        Ok(PostVal::Num(v))
    } else {
        Err(PyTypeError::new_err(format!(
            "{var}: the value must be a str, a number or a bool"
        )))
    }
}

/// The payload text of a post (an MQTT payload).
fn post_text(val: &PostVal) -> String {
    match val {
        PostVal::Text(s) => s.clone(),
        PostVal::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
        PostVal::Num(v) => command::fmt_num(*v),
    }
}

/// Parse `value` for `var` exactly as an MQTT payload (a `str`) or a
/// mission value (a number or bool); NaN/inf and out-of-bounds values are
/// refused with [`MessageError`].
fn parse_post(py: Python<'_>, var: &str, value: &PostVal) -> PyResult<Command> {
    let cmd = match value {
        PostVal::Text(s) => command::parse_text(var, s),
        PostVal::Bool(b) => command::parse_text(var, if *b { "true" } else { "false" }),
        PostVal::Num(v) => command::parse(var, &Payload::Number(*v)),
    }
    .map_err(|e| message_error(py, &e))?;
    if let Err(reason) = command::check_bounds(&cmd) {
        return Err(message_error(
            py,
            &command::MessageError::new(var, post_text(value), reason),
        ));
    }
    Ok(cmd)
}

/// What `usim post` checks before sending, for a vehicle of `variant`:
/// a message that model does not read (`DESIRED_HEADING` to a classic
/// vehicle) is refused with the reason; a thrust outside ±100 % warns
/// ([`SetpointWarning`], see [`thrust_warning`]).
fn check_post(
    py: Python<'_>,
    var: &str,
    value: &PostVal,
    cmd: &Command,
    variant: usim::model::ModelVariant,
    who: &str,
) -> PyResult<()> {
    use usim::model::ModelVariant;
    let text = post_text(value);
    if let Err(e) = usim::mqtt::tools::accepted_by(var, &text, variant) {
        let (runs, other) = match variant {
            ModelVariant::Classic => ("classic", ModelVariant::V22),
            ModelVariant::V22 => ("v22", ModelVariant::Classic),
        };
        let reason = if usim::mqtt::tools::accepted_by(var, &text, other).is_ok() {
            let other = if runs == "classic" { "v22" } else { "classic" };
            format!(
                "{who} runs the {runs} model, which does not read {var}: only the {other} model \
                 reads it (model = \"{other}\" in the vehicle's config); not queued \
                 (check=False queues it anyway, and the vehicle drops it)"
            )
        } else {
            format!(
                "{}; not queued (check=False queues it anyway, and the vehicle drops it)",
                e.reason
            )
        };
        return Err(message_error(
            py,
            &command::MessageError::new(var, text, reason),
        ));
    }
    if let Command::DesiredThrust(v) | Command::DesiredThrustL(v) | Command::DesiredThrustR(v) = cmd
    {
        if v.abs() > 100.0 {
            let msg = thrust_warning(who, var, *v, "");
            PyErr::warn(py, &py.get_type::<SetpointWarning>(), &msg, 2)?;
        }
    }
    Ok(())
}

/// The [`SetpointWarning`] text for thrust `v` percent of `var` beyond
/// ±100: `DESIRED_THRUST` is used unclipped (as uSimMarine uses it; a
/// thrust map saturates at its last pair, a thrust factor does not), the
/// differential `_L` / `_R` are clipped to ±100.
fn thrust_warning(who: &str, var: &str, v: f64, tail: &str) -> std::ffi::CString {
    let what = if var == "DESIRED_THRUST" {
        "the model uses it unclipped, as uSimMarine does (a thrust map saturates at its last \
         pair, a thrust factor does not)"
    } else {
        "the model clips it to ±100, as uSimMarine does"
    };
    std::ffi::CString::new(format!(
        "{who}: {var} = {} is outside the nominal -100..100 percent: {what}{tail}",
        command::fmt_num(v)
    ))
    .unwrap_or_default()
}

/// The payload a parsed command carries, as Python (a float or a str).
fn command_payload(py: Python<'_>, c: &Command) -> PyResult<Py<PyAny>> {
    use Command as C;
    if let Some(v) = c.number() {
        return Ok(v.into_pyobject(py)?.into_any().unbind());
    }
    let s = match c {
        C::ThrustModeDifferential(s)
        | C::ThrustModeReverse(s)
        | C::SimPaused(s)
        | C::DriftVector(s)
        | C::DriftVectorAdd(s)
        | C::Reset(s)
        | C::Enabled(s)
        | C::Set(s)
        | C::ManualOverride(s)
        | C::ResetNav(s)
        | C::WindConditions(s)
        | C::BuoyancyControl(s)
        | C::TrimControl(s) => s.clone(),
        C::ObstacleHit(Payload::Text(s)) => s.clone(),
        other => format!("{other:?}"),
    };
    Ok(s.into_pyobject(py)?.into_any().unbind())
}

fn pub_value(py: Python<'_>, v: &PubValue) -> PyResult<Py<PyAny>> {
    Ok(match v {
        PubValue::Number(x) => x.into_pyobject(py)?.into_any().unbind(),
        PubValue::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

// ---------------------------------------------------------------- replay

/// Replay rows held column by column.
#[derive(Default)]
struct Columns {
    k: Vec<i64>,
    vehicle: Vec<i64>,
    values: Vec<Vec<f64>>,
}

struct ColumnsOut<'a>(&'a mut Columns);

impl usim::replay::Output for ColumnsOut<'_> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> std::io::Result<()> {
        self.vehicle_row(0, s, clock)
    }

    fn vehicle_row(&mut self, i: usize, s: &Snapshot, _clock: f64) -> std::io::Result<()> {
        let c = &mut *self.0;
        c.k.push(s.k as i64);
        c.vehicle.push(i as i64);
        let vals = s.values();
        // As the CSV prints it: t on the microsecond grid, the rest exact.
        c.values[0].push(usim::replay::csv::round_to_microsecond(vals[0]));
        for (col, v) in c.values[1..].iter_mut().zip(&vals[1..]) {
            col.push(*v);
        }
        Ok(())
    }

    fn finish(self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Rows a replay of `m` writes.
fn replay_rows(m: &Mission) -> u64 {
    let every = m.output_every.max(1);
    let steps = m.steps;
    let outs = steps / every + u64::from(steps % every != 0) + 1;
    outs.saturating_mul(m.vehicle_count() as u64)
}

/// replay(mission, *, math=None, posts=False, encounters=False, max_bytes=4 GiB)
///
/// Run a mission (path, TOML text or dict) as `usim replay` does. Returns
/// `(names, k, vehicle, values, vehicle_names, posts_csv, encounters_csv,
/// dropped)`; use `usim_marine.replay`, which wraps it in a `Run`.
#[pyfunction]
#[pyo3(signature = (mission, *, math=None, posts=false, encounters=false, max_bytes=DEFAULT_MAX_BYTES))]
#[allow(clippy::type_complexity)]
fn _replay<'py>(
    py: Python<'py>,
    mission: &Bound<'py, PyAny>,
    math: Option<&str>,
    posts: bool,
    encounters: bool,
    max_bytes: u64,
) -> PyResult<Bound<'py, PyTuple>> {
    guard(|| {
        let m = load_mission(mission, math)?;
        let rows = replay_rows(&m);
        let nveh = m.vehicle_count() as u64;
        let mut need = rows.saturating_mul(ROW_BYTES);
        if posts {
            need = need.saturating_add(
                m.steps
                    .saturating_mul(nveh)
                    .saturating_mul(POSTS_BYTES_PER_STEP),
            );
        }
        if need > max_bytes {
            return Err(PyValueError::new_err(format!(
                "this replay would hold about {:.3} GiB in memory ({rows} rows of {nveh} \
                 vehicle(s){}), more than max_bytes = {max_bytes}: raise max_bytes, set the \
                 mission's output_every, or run `usim replay` to a file",
                need as f64 / (1u64 << 30) as f64,
                if posts { " and the posts log" } else { "" }
            )));
        }
        let ranges = m.encounters;
        if encounters && ranges.is_none() {
            return Err(PyValueError::new_err(
                "encounters=True needs encounter ranges: set near_miss (and collision), m, \
                 in the [mission] table",
            ));
        }
        let names: Vec<String> = (0..m.vehicle_count())
            .map(|i| m.vehicle_at(i).name.clone())
            .collect();
        let run = || -> Result<_, Box<dyn std::any::Any + Send>> {
            catch_unwind(AssertUnwindSafe(|| {
                let mut cols = Columns {
                    values: (0..26).map(|_| Vec::with_capacity(rows as usize)).collect(),
                    ..Columns::default()
                };
                cols.k.reserve(rows as usize);
                cols.vehicle.reserve(rows as usize);
                let mut posts_buf: Vec<u8> = Vec::new();
                let mut enc_buf: Vec<u8> = Vec::new();
                let mut tracker = ranges.map(usim::encounter::Tracker::new);
                if encounters {
                    enc_buf.extend_from_slice(usim::encounter::CSV_HEADER.as_bytes());
                    enc_buf.push(b'\n');
                }
                let mut line = Vec::new();
                let on_step = |_k: u64, t: f64, vs: &[RVehicle]| {
                    if let (true, Some(tr)) = (encounters, tracker.as_mut()) {
                        usim::encounter::observe_fleet(tr, t, vs, |e| {
                            line.clear();
                            usim::encounter::push_csv(&mut line, &e, &names);
                            enc_buf.extend_from_slice(&line);
                        });
                    }
                };
                let progress = |k: u64, _n: u64| {
                    if k % (1 << 16) == 0 {
                        check_signals();
                    }
                };
                let posts_w: Option<&mut dyn std::io::Write> =
                    if posts { Some(&mut posts_buf) } else { None };
                let summary =
                    usim::replay::run_fleet(&m, ColumnsOut(&mut cols), posts_w, progress, on_step);
                (cols, summary, posts_buf, enc_buf)
            }))
        };
        let (cols, summary, posts_buf, enc_buf) = py.detach(run).map_err(panic_error)?;
        let summary = summary.map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let names_py = PyList::new(py, Snapshot::VALUE_NAMES)?;
        let k = PyArray1::from_vec(py, cols.k);
        let veh = PyArray1::from_vec(py, cols.vehicle);
        let values = PyList::empty(py);
        for c in cols.values {
            values.append(PyArray1::from_vec(py, c))?;
        }
        let vnames = PyList::new(
            py,
            (0..m.vehicle_count()).map(|i| m.vehicle_at(i).name.clone()),
        )?;
        let posts_text: Option<String> = if posts {
            Some(String::from_utf8_lossy(&posts_buf).into_owned())
        } else {
            None
        };
        let enc_text: Option<String> = if encounters {
            Some(String::from_utf8_lossy(&enc_buf).into_owned())
        } else {
            None
        };
        let dropped = PyList::empty(py);
        for d in &summary.dropped {
            dropped.append((d.k, d.line, d.reason.clone()))?;
        }
        PyTuple::new(
            py,
            [
                names_py.into_any(),
                k.into_any(),
                veh.into_any(),
                values.into_any(),
                vnames.into_any(),
                posts_text.into_pyobject(py)?.into_any(),
                enc_text.into_pyobject(py)?.into_any(),
                dropped.into_any(),
            ],
        )
    })
}

/// _mission_info(mission, math=None) -> dict
///
/// A mission's timing and posts: `dict(start_time, dt, dt_pattern, steps,
/// output_every, vehicles, posts=[(t, var, value, vehicle_index, line)])`.
#[pyfunction]
#[pyo3(signature = (mission, math=None))]
fn _mission_info<'py>(
    py: Python<'py>,
    mission: &Bound<'py, PyAny>,
    math: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    guard(|| {
        let m = load_mission(mission, math)?;
        let d = PyDict::new(py);
        d.set_item("start_time", m.start_time)?;
        match &m.timing {
            mission::Timing::Uniform(dt) => {
                d.set_item("dt", *dt)?;
                d.set_item("dt_pattern", py.None())?;
            }
            mission::Timing::Pattern(p) => {
                d.set_item("dt", py.None())?;
                d.set_item("dt_pattern", p.clone())?;
            }
        }
        d.set_item("steps", m.steps)?;
        d.set_item("output_every", m.output_every)?;
        let names: Vec<String> = (0..m.vehicle_count())
            .map(|i| m.vehicle_at(i).name.clone())
            .collect();
        d.set_item("vehicles", names)?;
        let posts = PyList::empty(py);
        for p in &m.posts {
            posts.append((
                p.t,
                p.var.clone(),
                command_payload(py, &p.command)?,
                p.vehicle,
                p.line,
            ))?;
        }
        d.set_item("posts", posts)?;
        Ok(d)
    })
}

/// _sweep(spec) -> str
///
/// Run a sweep file in-process (all runs) and return its summary CSV, the
/// bytes `usim sweep SPEC -o SUMMARY.csv` writes.
#[pyfunction]
fn _sweep(py: Python<'_>, spec: PathBuf) -> PyResult<String> {
    guard(|| {
        let sweep = usim::sweep::load(&spec).map_err(|e| config_error(py, &e))?;
        let total = sweep.spec.total_runs();
        let out = py
            .detach(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    let mut buf = Vec::new();
                    usim::sweep::run(&sweep, 0..total, &mut buf).map(|_| buf)
                }))
            })
            .map_err(panic_error)?
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        String::from_utf8(out).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    })
}

/// _sweep_total(spec) -> int
///
/// The number of runs of a sweep file (what `--shard I/N` slices).
#[pyfunction]
fn _sweep_total(py: Python<'_>, spec: PathBuf) -> PyResult<u64> {
    guard(|| {
        let sweep = usim::sweep::load(&spec).map_err(|e| config_error(py, &e))?;
        Ok(sweep.spec.total_runs())
    })
}

/// _sweep_shard(spec, index, count) -> str
///
/// Run shard `index`/`count` of a sweep file and return the bytes `usim
/// sweep SPEC --shard I/N -o PART.csv` writes: the header, that shard's
/// rows and its end line (spec hash, seed, shard, checksum).
#[pyfunction]
fn _sweep_shard(py: Python<'_>, spec: PathBuf, index: u64, count: u64) -> PyResult<String> {
    guard(|| {
        if count == 0 || index >= count {
            return Err(PyValueError::new_err(format!(
                "shard {index}/{count}: need 0 <= index < count"
            )));
        }
        let shard = usim::sweep::Shard { index, count };
        let sweep = usim::sweep::load(&spec).map_err(|e| config_error(py, &e))?;
        let total = sweep.spec.total_runs();
        let range = shard.range(total);
        let rows = range.end - range.start;
        let mut buf = py
            .detach(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    let mut buf = Vec::new();
                    usim::sweep::run(&sweep, range, &mut buf).map(|_| buf)
                }))
            })
            .map_err(panic_error)?
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let end = usim::sweep::PartEnd {
            spec: sweep.hash,
            seed: sweep.spec.seed,
            shard,
            total,
            rows,
            fnv: usim::sweep::Fnv::of(&buf),
        };
        buf.extend_from_slice(end.line().as_bytes());
        buf.push(b'\n');
        String::from_utf8(buf).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    })
}

/// _sweep_merge(parts) -> str
///
/// Join shard parts, a list of (name, text), into the unsharded summary
/// (`usim sweep merge`); a missing, damaged or foreign part raises
/// ValueError naming it.
#[pyfunction]
fn _sweep_merge(parts: Vec<(String, String)>) -> PyResult<String> {
    guard(|| usim::sweep::merge(&parts).map_err(PyValueError::new_err))
}

/// _encounter_obs(state, goal, starts, k, near_miss, scales) ->
///     (obs, goal_dist, nearest, penalty)
///
/// The encounter env's observations of every ship in one native pass:
/// `state` the (n, 6) fleet state (x, y, speed, heading, sog, hog), `goal`
/// (n, 2) m, `starts` each scenario instance's first row then n, `k`
/// nearest others, `scales` (distance m, speed m/s, time s, goal m).
/// Returns obs (n, 4 + 7k) float32 and, per ship, the goal distance (m),
/// the range to the nearest other (m, inf alone) and Σ max(0, 1 −
/// range / near_miss). The GIL is released while computing.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn _encounter_obs<'py>(
    py: Python<'py>,
    state: PyReadonlyArray2<'py, f64>,
    goal: PyReadonlyArray2<'py, f64>,
    starts: PyReadonlyArray1<'py, i64>,
    k: usize,
    near_miss: f64,
    scales: (f64, f64, f64, f64),
) -> PyResult<(
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
)> {
    use encounter_obs::{Ranges, Scales, WIDTH};
    let n = state.shape()[0];
    if state.shape() != [n, WIDTH] || goal.shape() != [n, 2] {
        return Err(PyValueError::new_err(format!(
            "state must be (n, {WIDTH}) and goal (n, 2), not {:?} and {:?}",
            state.shape(),
            goal.shape()
        )));
    }
    if !(1..=64).contains(&k) {
        return Err(PyValueError::new_err(format!("k = {k}: 1 to 64")));
    }
    let st: Vec<usize> = starts
        .as_array()
        .iter()
        .map(|&s| usize::try_from(s).unwrap_or(usize::MAX))
        .collect();
    let ok = st.first() == Some(&0) && st.last() == Some(&n) && st.windows(2).all(|w| w[0] <= w[1]);
    if !ok {
        return Err(PyValueError::new_err(
            "starts must rise from 0 to the number of rows",
        ));
    }
    let state = state.as_array();
    let goal = goal.as_array();
    let s: Vec<f64> = state.iter().copied().collect();
    let g: Vec<f64> = goal.iter().copied().collect();
    let dim = 4 + 7 * k;
    let sc = Scales {
        dist: scales.0,
        speed: scales.1,
        time: scales.2,
        goal: scales.3,
    };
    let (obs, out) = py
        .detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let mut obs = vec![0f32; n * dim];
                let mut out = vec![Ranges::default(); n];
                encounter_obs::observe(&s, &g, &st, k, near_miss, sc, &mut obs, &mut out);
                (obs, out)
            }))
        })
        .map_err(panic_error)?;
    let o = PyArray1::from_vec(py, obs).reshape([n, dim])?;
    let col = |f: fn(&Ranges) -> f64| PyArray1::from_vec(py, out.iter().map(f).collect());
    Ok((
        o,
        col(|r| r.goal_dist),
        col(|r| r.nearest),
        col(|r| r.penalty),
    ))
}

// ---------------------------------------------------------------- Vehicle

/// The state of a vehicle after its last step (the CSV columns of
/// `usim replay`, docs/formats.md §3). x = east, y = north; headings are
/// marine degrees (0 = north, 90 = east, clockwise); NaN = not set.
#[pyclass(module = "usim_marine", frozen, get_all)]
#[derive(Clone)]
struct State {
    /// Iteration index (0 = start-up).
    k: u64,
    /// Mission time, s (clock − start time; exact, not rounded).
    t: f64,
    /// East, m.
    x: f64,
    /// North, m.
    y: f64,
    /// Stored speed, m/s (negative astern).
    speed: f64,
    /// Heading, degrees.
    heading: f64,
    /// Depth, m (positive down).
    depth: f64,
    /// Altitude above the bottom, m (NaN until set).
    altitude: f64,
    /// Pitch, radians.
    pitch: f64,
    /// Yaw, radians (east-north-up sense).
    yaw: f64,
    /// Speed over ground, m/s.
    sog: f64,
    /// Heading over ground, degrees.
    hog: f64,
    /// Last published `<PREFIX>_SPEED`, m/s (NaN before the first).
    nav_speed: f64,
    /// Last published `<PREFIX>_HEADING`, degrees (NaN before the first).
    nav_heading: f64,
    /// Latitude, degrees (NaN without an origin).
    lat: f64,
    /// Longitude, degrees (NaN without an origin).
    lon: f64,
    /// Drift east, m/s.
    drift_x: f64,
    /// Drift north, m/s.
    drift_y: f64,
    /// Rudder as the model holds it, percent of full rudder.
    rudder: f64,
    /// Thrust, percent.
    thrust: f64,
    /// Elevator, percent.
    elevator: f64,
    /// Ground-truth east, m.
    gt_x: f64,
    /// Ground-truth north, m.
    gt_y: f64,
    /// Left thruster, percent (differential mode).
    thrust_l: f64,
    /// Right thruster, percent (differential mode).
    thrust_r: f64,
    /// Current-field velocity east at the vehicle, m/s.
    current_x: f64,
    /// Current-field velocity north at the vehicle, m/s.
    current_y: f64,
}

impl State {
    fn of(s: &Snapshot) -> State {
        State {
            k: s.k,
            t: s.t,
            x: s.x,
            y: s.y,
            speed: s.speed,
            heading: s.heading,
            depth: s.depth,
            altitude: s.altitude,
            pitch: s.pitch,
            yaw: s.yaw,
            sog: s.sog,
            hog: s.hog,
            nav_speed: s.nav_speed,
            nav_heading: s.nav_heading,
            lat: s.lat,
            lon: s.lon,
            drift_x: s.drift_x,
            drift_y: s.drift_y,
            rudder: s.rudder,
            thrust: s.thrust,
            elevator: s.elevator,
            gt_x: s.gt_x,
            gt_y: s.gt_y,
            thrust_l: s.thrust_l,
            thrust_r: s.thrust_r,
            current_x: s.current_x,
            current_y: s.current_y,
        }
    }
}

#[pymethods]
impl State {
    /// The names of the float fields, in CSV column order (after `k`).
    #[classattr]
    fn names() -> Vec<&'static str> {
        Snapshot::VALUE_NAMES.to_vec()
    }

    fn __repr__(&self) -> String {
        format!(
            "State(k={}, t={}, x={}, y={}, speed={}, heading={}, depth={})",
            self.k, self.t, self.x, self.y, self.speed, self.heading, self.depth
        )
    }
}

/// The environment layer as seen by vehicle `v` after its last step
/// (docs/python.md, "The environment"): `t` (the simulated time τ, s),
/// `wave` (surface elevation and heave in m, roll and pitch in degrees;
/// None without a sea), `wind` (speed m/s at τ, the gust in it, the
/// direction it comes from in degrees; None without a wind), `sensed` (the
/// last posting's sensed fix, as `NODE_REPORT`'s `sensed`; None without
/// `[sensors]`), `true` (the true position, heading and speed) and `gps_fix`
/// (False while the GPS has no fix; True without sensors).
fn environment_dict<'py>(py: Python<'py>, v: &RVehicle) -> PyResult<Bound<'py, PyDict>> {
    let s = v.snapshot();
    let tau = v.env_time();
    let d = PyDict::new(py);
    d.set_item("t", tau)?;
    match s.wave {
        Some(w) => {
            let wd = PyDict::new(py);
            wd.set_item("elevation", w.elevation)?;
            wd.set_item("heave", w.heave)?;
            wd.set_item("roll", w.roll)?;
            wd.set_item("pitch", w.pitch)?;
            d.set_item("wave", wd)?;
        }
        None => d.set_item("wave", py.None())?,
    }
    match v.environment().and_then(|e| e.wind.as_ref()) {
        Some(w) => {
            let wd = PyDict::new(py);
            wd.set_item("speed", w.speed_at(tau))?;
            wd.set_item("gust", w.gust_at(tau))?;
            wd.set_item("direction", w.settings.direction_deg)?;
            d.set_item("wind", wd)?;
        }
        None => d.set_item("wind", py.None())?,
    }
    let truth = PyDict::new(py);
    truth.set_item("x", s.x)?;
    truth.set_item("y", s.y)?;
    truth.set_item("heading", s.heading)?;
    truth.set_item("speed", s.speed)?;
    truth.set_item("lat", s.lat)?;
    truth.set_item("lon", s.lon)?;
    d.set_item("true", truth)?;
    match s.sensed {
        Some(n) => {
            let sd = PyDict::new(py);
            sd.set_item("x", n.x)?;
            sd.set_item("y", n.y)?;
            sd.set_item("lat", n.lat)?;
            sd.set_item("lon", n.lon)?;
            sd.set_item("speed", n.speed)?;
            sd.set_item("heading", n.heading)?;
            sd.set_item("depth", n.depth)?;
            sd.set_item("fix", n.fix)?;
            sd.set_item("hdop", n.hdop)?;
            sd.set_item("satellites", n.satellites)?;
            d.set_item("sensed", sd)?;
            d.set_item("gps_fix", n.fix > 0)?;
        }
        None => {
            d.set_item("sensed", py.None())?;
            d.set_item("gps_fix", true)?;
        }
    }
    Ok(d)
}

/// The sea-surface elevation of vehicle `v`'s sea at (x, y) m east and
/// north and simulated time `t` s (docs/model.md §24.1); NaN without a sea.
fn elevation_of(v: &RVehicle, x: f64, y: f64, t: f64) -> f64 {
    match v.environment().and_then(|e| e.sea.as_ref()) {
        Some(sea) => sea.elevation(x, y, t),
        None => f64::NAN,
    }
}

/// Vehicle(config, *, start_time=0.0, dt=0.1, math=None, history_bytes=256 MiB)
///
/// One simulated vehicle (classic uSimMarine or V22 with its embedded PID,
/// as the config's `model` says), stepped by hand.
///
/// config: a vehicle config file path, its TOML text, or a dict of the
/// same keys (docs/config.md). start_time: clock at start-up, s.
/// dt: the default step, s. math: "libm" or "fast" overrides the config's
/// trigonometry. history_bytes: the budget of the history kept for
/// `pickle` (0: none; `copy.deepcopy` needs none).
///
/// `post(var, value)` queues a message exactly as an MQTT payload
/// (`DESIRED_THRUST`, percent; `DESIRED_RUDDER`, percent; `DESIRED_HEADING`,
/// degrees; ...); it is handled at the next step's clock, as a replay does.
/// `state` has units in its field docstrings (m, m/s, degrees, radians).
/// A Vehicle pickles (its history is replayed: bit for bit the same
/// vehicle) and deep-copies (a clone).
#[pyclass(module = "usim_marine")]
#[derive(Clone)]
struct Vehicle {
    /// Boxed: the model is 64-byte aligned and a Python object's memory is
    /// not (a pyclass field of it would be a misaligned reference).
    v: Box<RVehicle>,
    start_time: f64,
    dt: f64,
    k: u64,
    rel: f64,
    /// The step every step so far used (None: varying, times accumulate).
    uniform: Option<f64>,
    queue: Vec<Command>,
    dropped: Vec<String>,
    /// What made this vehicle, for `pickle`.
    journal: VJournal,
}

impl Vehicle {
    fn advance(&mut self, rel: f64) -> PyResult<()> {
        let clock = self.start_time + rel;
        if !(rel.is_finite() && clock.is_finite() && clock.abs() <= command::limits::TIME_S) {
            return Err(PyValueError::new_err(format!(
                "time {rel} s is not a finite time within ±{} s",
                command::limits::TIME_S
            )));
        }
        self.k += 1;
        self.rel = rel;
        for cmd in std::mem::take(&mut self.queue) {
            if let Err(e) = self.v.handle_command(cmd, clock) {
                self.dropped.push(e.to_string());
            }
        }
        self.v.step(clock);
        Ok(())
    }

    fn check_dt(dt: f64) -> PyResult<f64> {
        if dt.is_finite() && dt > 0.0 && dt <= 3600.0 {
            Ok(dt)
        } else {
            Err(PyValueError::new_err(format!(
                "dt must be a finite step in (0, 3600] s, not {dt}"
            )))
        }
    }

    /// Queue a parsed post (checked first when `check`).
    fn post_value(&mut self, py: Python<'_>, var: &str, val: PostVal, check: bool) -> PyResult<()> {
        let cmd = parse_post(py, var, &val)?;
        if check {
            check_post(py, var, &val, &cmd, self.v.params().variant, "this vehicle")?;
        }
        if self.queue.len() >= 100_000 {
            return Err(PyValueError::new_err(
                "more than 100,000 messages queued without a step",
            ));
        }
        self.queue.push(cmd);
        self.journal.post(var, val);
        Ok(())
    }

    fn step_dt(&mut self, dt: Option<f64>) -> PyResult<()> {
        let dt = Self::check_dt(dt.unwrap_or(self.dt))?;
        let rel = match self.uniform {
            Some(u) if u == dt => (self.k + 1) as f64 * dt,
            None if self.k == 0 => dt,
            _ => self.rel + dt,
        };
        let uniform = match self.uniform {
            Some(u) if u == dt => Some(u),
            None if self.k == 0 => Some(dt),
            _ => None,
        };
        self.advance(rel)?;
        self.uniform = uniform;
        self.journal.step(dt);
        Ok(())
    }

    fn step_to_t(&mut self, t: f64) -> PyResult<()> {
        if t.is_nan() || t <= self.rel {
            return Err(PyValueError::new_err(format!(
                "step_to: t = {t} s must be after the current time {} s",
                self.rel
            )));
        }
        self.advance(t)?;
        self.uniform = None;
        self.journal.step_to(t);
        Ok(())
    }

    /// Rebuild a vehicle from a snapshot (`__reduce__`'s state).
    fn restore(py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (head, ops) = VJournal::from_py(state)?;
        let math = head.math.clone();
        let mut v = match &head.origin {
            VOrigin::Config(src) => {
                let cfg = parse_config_text(py, Path::new(&src.path), &src.text, math.as_deref())?;
                Self::from_config(&cfg, head.start_time, head.dt, head.journal_like())?
            }
            VOrigin::Mission { src, index } => {
                let m = parse_mission_text(py, Path::new(&src.path), &src.text, math.as_deref())?;
                if *index >= m.vehicle_count() {
                    return Err(PyValueError::new_err(
                        "snapshot: no such vehicle in its mission",
                    ));
                }
                Self::from_config(
                    m.vehicle_at(*index),
                    head.start_time,
                    head.dt,
                    head.journal_like(),
                )?
            }
        };
        for (j, op) in ops.into_iter().enumerate() {
            let r = match op {
                VOp::Post(var, val) => v.post_value(py, &var, val, false),
                VOp::Steps(bits, n) => (0..n).try_for_each(|i| {
                    if i % 65_536 == 65_535 {
                        py.check_signals()?;
                    }
                    v.step_dt(Some(f64::from_bits(bits)))
                }),
                VOp::StepTo(t) => v.step_to_t(t),
            };
            r.map_err(|e| PyValueError::new_err(format!("snapshot: operation {j}: {e}")))?;
        }
        Ok(v)
    }
}

#[pymethods]
impl Vehicle {
    #[new]
    #[pyo3(signature = (config, *, start_time=0.0, dt=0.1, math=None, history_bytes=snapshot::DEFAULT_HISTORY_BYTES))]
    fn new(
        config: &Bound<'_, PyAny>,
        start_time: f64,
        dt: f64,
        math: Option<&str>,
        history_bytes: u64,
    ) -> PyResult<Self> {
        guard(|| {
            let (cfg, src) = load_vehicle_config_src(config, math)?;
            let j = VJournal::new(VOrigin::Config(src), math, start_time, dt, history_bytes);
            Self::from_config(&cfg, start_time, dt, j)
        })
    }

    /// Vehicle.from_mission(mission, vehicle=0, *, math=None)
    ///
    /// The vehicle `vehicle` (index or name) of a mission, with the
    /// mission's start time and step (the posts are not applied: see
    /// `usim_marine.mission_info`).
    #[staticmethod]
    #[pyo3(signature = (mission, vehicle=None, *, math=None))]
    fn from_mission(
        mission: &Bound<'_, PyAny>,
        vehicle: Option<&Bound<'_, PyAny>>,
        math: Option<&str>,
    ) -> PyResult<Self> {
        guard(|| {
            let (m, src) = load_mission_src(mission, math)?;
            let i = match vehicle {
                None => 0,
                Some(v) if v.is_instance_of::<PyString>() => {
                    let name: String = v.extract()?;
                    m.vehicle_index(&name).ok_or_else(|| {
                        PyValueError::new_err(format!("the mission has no vehicle {name:?}"))
                    })?
                }
                Some(v) => v.extract::<usize>()?,
            };
            if i >= m.vehicle_count() {
                return Err(PyValueError::new_err(format!(
                    "vehicle index {i} out of range: the mission has {}",
                    m.vehicle_count()
                )));
            }
            let dt = match &m.timing {
                mission::Timing::Uniform(dt) => *dt,
                mission::Timing::Pattern(p) => p.first().copied().unwrap_or(0.1),
            };
            let j = VJournal::new(
                VOrigin::Mission { src, index: i },
                math,
                m.start_time,
                dt,
                snapshot::DEFAULT_HISTORY_BYTES,
            );
            Self::from_config(m.vehicle_at(i), m.start_time, dt, j)
        })
    }

    /// post(var, value, *, check=True)
    ///
    /// Queue message `var` = `value` for the next step, parsed as an MQTT
    /// payload (`str`) or a mission value (number, bool). Raises
    /// `MessageError` (a `ValueError`) naming the variable for an unknown
    /// variable, a malformed, NaN/inf or out-of-bounds value, and (with
    /// `check`, as `usim post` checks) for a message this vehicle's model
    /// does not read (`DESIRED_HEADING` to a classic vehicle). A thrust
    /// outside ±100 % warns (`SetpointWarning`) and is queued.
    #[pyo3(signature = (var, value, *, check=true))]
    fn post(
        &mut self,
        py: Python<'_>,
        var: &str,
        value: &Bound<'_, PyAny>,
        check: bool,
    ) -> PyResult<()> {
        guard(|| {
            let val = post_value(var, value)?;
            self.post_value(py, var, val, check)
        })
    }

    /// step(dt=None)
    ///
    /// One iteration `dt` s (default: the vehicle's `dt`) after the last:
    /// the queued messages are handled at the new clock, then the model
    /// steps. With a constant `dt` the mission time is `k·dt`, exactly as
    /// `usim replay` computes it.
    #[pyo3(signature = (dt=None))]
    fn step(&mut self, dt: Option<f64>) -> PyResult<()> {
        guard(|| self.step_dt(dt))
    }

    /// step_to(t)
    ///
    /// One iteration at mission time `t` s (after the last step's).
    fn step_to(&mut self, t: f64) -> PyResult<()> {
        guard(|| self.step_to_t(t))
    }

    /// run_until(t, dt=None)
    ///
    /// Step by `dt` (default the vehicle's) until the mission time reaches
    /// `t` s (within 1e-9 s). At most 100,000,000 steps per call.
    #[pyo3(signature = (t, dt=None))]
    fn run_until(&mut self, py: Python<'_>, t: f64, dt: Option<f64>) -> PyResult<()> {
        let d = Self::check_dt(dt.unwrap_or(self.dt))?;
        if !t.is_finite() {
            return Err(PyValueError::new_err(format!("t must be finite, not {t}")));
        }
        let n = ((t - self.rel) / d).ceil();
        if n > 1e8 {
            return Err(PyValueError::new_err(format!(
                "run_until({t}) would take {n} steps of {d} s; at most 1e8 per call"
            )));
        }
        let mut i = 0u64;
        while self.rel < t - 1e-9 {
            self.step(Some(d))?;
            i += 1;
            if i % 65_536 == 0 {
                py.check_signals()?;
            }
        }
        Ok(())
    }

    /// The state after the last step (units in `State`'s field docs).
    #[getter]
    fn state(&self) -> PyResult<State> {
        guard(|| Ok(State::of(&self.v.snapshot())))
    }

    /// The state as a float64 array of the 26 CSV columns after `k`
    /// (`State.names`), `t` exact (not rounded to the microsecond).
    fn values<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.v.snapshot().values().to_vec())
    }

    /// The environment after the last step, a dict: `t` (simulated time,
    /// s), `wave` (`elevation`, `heave` in m, `roll`, `pitch` in degrees;
    /// None without `[sea]`), `wind` (`speed`, `gust` in m/s, `direction`
    /// it comes from in degrees; None without `[wind]`), `true` (`x`, `y`
    /// m, `heading` degrees, `speed` m/s, `lat`, `lon`), `sensed` (the last
    /// posting's sensed `x`, `y`, `lat`, `lon`, `speed`, `heading`,
    /// `depth`, `fix`, `hdop`, `satellites`; NaN position without a fix;
    /// None without `[sensors]`) and `gps_fix` (bool).
    fn environment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| environment_dict(py, &self.v))
    }

    /// The sea-surface elevation, m, at (`x`, `y`) m east and north and
    /// simulated time `t` s (the mission time of a replay); NaN without a
    /// `[sea]`. Any point and time, not only the vehicle's.
    fn wave_elevation(&self, x: f64, y: f64, t: f64) -> f64 {
        elevation_of(&self.v, x, y, t)
    }

    /// What the last step published: a list of `(var, value)` with the
    /// prefix applied (`NAV_X`, ...), values float or str, in posting order.
    fn publications<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for p in self.v.publications() {
            out.append((p.var, pub_value(py, &p.value)?))?;
        }
        Ok(out)
    }

    /// Messages dropped when handled (as `usim replay` warns), oldest first.
    #[getter]
    fn dropped(&self) -> Vec<String> {
        self.dropped.clone()
    }

    /// Iterations run.
    #[getter]
    fn k(&self) -> u64 {
        self.k
    }

    /// Mission time, s.
    #[getter]
    fn t(&self) -> f64 {
        self.rel
    }

    /// The default step, s.
    #[getter]
    fn dt(&self) -> f64 {
        self.dt
    }

    /// Whether the model is V22 (embedded PID) rather than classic.
    #[getter]
    fn is_v22(&self) -> bool {
        self.v.params().variant == usim::model::ModelVariant::V22
    }

    /// The whole model state as text (every field, exact floats): equal
    /// texts are bit-identical vehicles (the snapshot tests compare them).
    fn _debug_state(&self) -> String {
        format!(
            "{:?} k={} rel={:?} uniform={:?} queue={:?} dropped={:?}",
            self.v, self.k, self.rel, self.uniform, self.queue, self.dropped
        )
    }

    fn __copy__(&mut self) -> Self {
        self.journal.freeze();
        self.clone()
    }

    fn __deepcopy__(&mut self, _memo: &Bound<'_, PyAny>) -> Self {
        self.journal.freeze();
        self.clone()
    }

    /// Pickle support: the history, replayed by `usim_marine._restore_vehicle`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if let Some(why) = self.journal.refusal() {
            return Err(pyo3::exceptions::PyTypeError::new_err(why));
        }
        let f = py.import("usim_marine")?.getattr("_restore_vehicle")?;
        (f, (self.journal.to_py(py)?,)).into_pyobject(py)
    }

    /// Rebuild a pickled vehicle (used by `pickle`; state from `__reduce__`).
    #[staticmethod]
    fn _restore(py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        guard(|| Self::restore(py, state))
    }

    fn __repr__(&self) -> String {
        let s = self.v.snapshot();
        format!(
            "Vehicle(k={}, t={}, x={}, y={}, heading={}, speed={})",
            self.k, self.rel, s.x, s.y, s.heading, s.speed
        )
    }
}

impl VJournal {
    /// An empty history with this one's header.
    fn journal_like(&self) -> VJournal {
        VJournal::new(
            self.origin.clone(),
            self.math.as_deref(),
            self.start_time,
            self.dt,
            self.limit,
        )
    }
}

impl Vehicle {
    fn from_config(
        cfg: &VehicleConfig,
        start_time: f64,
        dt: f64,
        journal: VJournal,
    ) -> PyResult<Self> {
        let dt = Self::check_dt(dt)?;
        if !(start_time.is_finite() && start_time.abs() <= command::limits::TIME_S) {
            return Err(PyValueError::new_err(format!(
                "start_time must be finite and within ±{} s",
                command::limits::TIME_S
            )));
        }
        Ok(Vehicle {
            v: Box::new(RVehicle::new(cfg, start_time)),
            start_time,
            dt,
            k: 0,
            rel: 0.0,
            uniform: None,
            queue: Vec::new(),
            dropped: Vec::new(),
            journal,
        })
    }
}

// ---------------------------------------------------------------- Fleet

fn actuator_of(name: &str) -> PyResult<Actuator> {
    let up = name.to_ascii_uppercase();
    let full = if up.starts_with("DESIRED_") {
        up
    } else {
        format!("DESIRED_{up}")
    };
    Actuator::from_name(&full).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown actuator {name:?}: one of thrust, rudder, elevator, thrust_l, thrust_r"
        ))
    })
}

/// Fleet(config, n=None, *, dt=0.1, start_time=0.0, actions=None,
///       state=("x", "y", "speed", "heading"), math=None, max_bytes=4 GiB,
///       history_bytes=256 MiB)
///
/// `n` vehicles stepped together from arrays: the batch interface for
/// reinforcement learning and Monte Carlo.
///
/// config: one vehicle config (path, TOML text or dict) with `n`, or a
/// list of configs (one per vehicle). dt: step, s. actions: the columns of
/// a setpoint row, actuator names (`thrust`, `rudder`, `elevator`,
/// `thrust_l`, `thrust_r`; percent); by default `thrust`, `rudder`, or
/// `thrust_l`, `thrust_r` when every vehicle starts in differential thrust
/// mode (a column a vehicle's mode does not read warns). state: the columns of a state row,
/// CSV column names (`x`, `y` m; `speed`, `sog` m/s; `heading`, `hog`
/// degrees; `t` s; `depth` m; `pitch`, `yaw` rad; `drift_x`, `drift_y` m/s;
/// `lat`, `lon` degrees and the actuator columns cost more per step).
/// max_bytes: a fleet that would need more memory is refused (`ValueError`)
/// before anything is allocated. history_bytes: the budget of the history
/// kept for `pickle` (0: none).
///
/// `step(actions)` takes an (n, k) float array of setpoints (k =
/// len(actions)), steps every vehicle once (the setpoints are handled as
/// the messages `DESIRED_THRUST`, ... at the step's clock) and returns
/// the (n, m) float64 state array `Fleet.state`, written in place: the
/// same array every step (copy it to keep a history). NaN, inf or
/// out-of-bounds setpoints raise `MessageError` and change nothing; so
/// does a step whose clock would pass 1e12 s (as `Vehicle` refuses).
/// A Fleet pickles (its history is replayed: bit for bit the same fleet)
/// and deep-copies (a clone).
#[pyclass(module = "usim_marine")]
struct Fleet {
    fleet: BatchFleet,
    state: Py<PyArray2<f64>>,
    journal: FJournal,
    /// A thrust past ±100 % was warned about (once per fleet).
    warned: bool,
}

/// The arguments of `Fleet.reset`, checked.
struct ResetArgs {
    seed: Option<u64>,
    idx: Vec<usize>,
    start: Option<Vec<f64>>,
    drift: Option<Vec<f64>>,
    start_radius: f64,
    heading_spread: f64,
    max_drift: f64,
}

impl Fleet {
    /// A fleet of `params` and the header of its history.
    fn build(
        py: Python<'_>,
        params: Vec<usim::model::Params>,
        journal: FJournal,
        acts: Vec<Actuator>,
        fields: Vec<Field>,
    ) -> PyResult<Self> {
        let nveh = params.len();
        let w = fields.len();
        let fleet =
            BatchFleet::new(params, journal.start_time, journal.dt, acts, fields).map_err(|e| {
                if e.0.contains("does not fit in memory") {
                    pyo3::exceptions::PyMemoryError::new_err(e.0)
                } else {
                    PyValueError::new_err(e.0)
                }
            })?;
        let arr = PyArray2::<f64>::zeros(py, [nveh, w], false);
        {
            let mut rw = arr.readwrite();
            fleet
                .write_state(rw.as_slice_mut()?)
                .map_err(|e| PyRuntimeError::new_err(e.0))?;
        }
        Ok(Fleet {
            fleet,
            state: arr.unbind(),
            journal,
            warned: false,
        })
    }

    /// Parse the column names.
    fn columns(
        actions: &Option<Vec<String>>,
        state: &Option<Vec<String>>,
    ) -> PyResult<(Vec<Actuator>, Vec<Field>)> {
        let acts = match actions {
            None => vec![Actuator::Thrust, Actuator::Rudder],
            Some(names) => names
                .iter()
                .map(|s| actuator_of(s))
                .collect::<PyResult<_>>()?,
        };
        let fields = match state {
            None => vec![Field::X, Field::Y, Field::Speed, Field::Heading],
            Some(names) => names
                .iter()
                .map(|s| {
                    Field::from_name(s).ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "unknown state column {s:?}: one of {}",
                            Snapshot::VALUE_NAMES.join(", ")
                        ))
                    })
                })
                .collect::<PyResult<_>>()?,
        };
        Ok((acts, fields))
    }

    /// The setpoint columns for vehicles `params`: without `actions=`, the
    /// thrusters (`thrust_l`, `thrust_r`) when every vehicle starts in
    /// differential thrust mode (which ignores DESIRED_THRUST/RUDDER),
    /// else thrust and rudder; a mixed fleet must name its actions. A
    /// column that some vehicle's starting mode does not read warns
    /// (`SetpointWarning`), since a message can switch the mode later.
    fn actions_for(
        py: Python<'_>,
        explicit: bool,
        acts: Vec<Actuator>,
        params: &[usim::model::Params],
    ) -> PyResult<Vec<Actuator>> {
        let diff = params.iter().filter(|p| p.thrust_mode_diff).count();
        if !explicit {
            return match diff {
                0 => Ok(acts),
                d if d == params.len() => Ok(vec![Actuator::ThrustL, Actuator::ThrustR]),
                d => Err(PyValueError::new_err(format!(
                    "{d} of the {} vehicles start in differential thrust mode (thrust_mode_diff) \
                     and the others do not: name the setpoint columns with actions=, e.g. \
                     (\"thrust\", \"rudder\", \"thrust_l\", \"thrust_r\")",
                    params.len()
                ))),
            };
        }
        for (i, p) in params.iter().enumerate() {
            let unread = acts.iter().find(|a| match a {
                Actuator::Thrust | Actuator::Rudder => p.thrust_mode_diff,
                Actuator::ThrustL | Actuator::ThrustR => !p.thrust_mode_diff,
                Actuator::Elevator => false,
            });
            if let Some(a) = unread {
                let (mode, reads) = if p.thrust_mode_diff {
                    ("differential", "DESIRED_THRUST_L/_R")
                } else {
                    ("normal", "DESIRED_THRUST and DESIRED_RUDDER")
                };
                let msg = format!(
                    "vehicle {i} starts in {mode} thrust mode, which does not read {}: it reads \
                     {reads} (a THRUST_MODE_DIFFERENTIAL message switches the mode)",
                    a.name()
                );
                let msg = std::ffi::CString::new(msg).unwrap_or_default();
                PyErr::warn(py, &py.get_type::<SetpointWarning>(), &msg, 1)?;
                break;
            }
        }
        Ok(acts)
    }

    /// Restart the vehicles of `a`; records what took effect. On an error
    /// the vehicles before the bad one stay reset (and are recorded).
    fn do_reset(&mut self, a: ResetArgs) -> PyResult<()> {
        let mut done = 0;
        let mut err = None;
        for (j, &i) in a.idx.iter().enumerate() {
            let r = match a.seed {
                Some(s) if a.start.is_none() && a.drift.is_none() => {
                    self.fleet
                        .reset_random(i, s, a.start_radius, a.heading_spread, a.max_drift)
                }
                _ => self.fleet.reset_vehicle(
                    i,
                    a.start
                        .as_ref()
                        .map(|v| (v[3 * j], v[3 * j + 1], v[3 * j + 2])),
                    a.drift.as_ref().map(|v| (v[2 * j], v[2 * j + 1])),
                ),
            };
            if let Err(e) = r {
                err = Some(PyValueError::new_err(e.0));
                break;
            }
            done = j + 1;
        }
        if done > 0 {
            self.journal.reset(ResetOp {
                idx: a.idx[..done].to_vec(),
                seed: a.seed,
                start: a.start.map(|v| v[..3 * done].to_vec()),
                drift: a.drift.map(|v| v[..2 * done].to_vec()),
                start_radius: a.start_radius,
                heading_spread: a.heading_spread,
                max_drift: a.max_drift,
            });
        }
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn do_post(
        &mut self,
        py: Python<'_>,
        i: usize,
        var: &str,
        val: PostVal,
        check: bool,
    ) -> PyResult<()> {
        let n = self.fleet.len();
        if i >= n {
            return Err(PyValueError::new_err(format!(
                "no vehicle {i} in a fleet of {n}"
            )));
        }
        let cmd = parse_post(py, var, &val)?;
        if check {
            let variant = self.fleet.vehicles()[i].params().variant;
            check_post(py, var, &val, &cmd, variant, &format!("vehicle {i}"))?;
        }
        // Recorded even when the vehicle refuses it: a refused message may
        // have been applied in part (a WIND_CONDITIONS up to its bad
        // element), and the replay must do the same.
        let r = self.fleet.send(i, cmd);
        self.journal.post(i, var, val);
        r.map_err(|e| MessageError::new_err(e.0))
    }

    fn do_drift(&mut self, a: &[f64]) -> PyResult<()> {
        let n = self.fleet.len();
        if a.len() != 2 * n {
            return Err(PyValueError::new_err(format!(
                "drift must have shape ({n}, 2)"
            )));
        }
        for i in 0..n {
            for (j, c) in [Command::DriftX(a[2 * i]), Command::DriftY(a[2 * i + 1])]
                .into_iter()
                .enumerate()
            {
                if let Err(reason) = command::check_bounds(&c) {
                    return Err(MessageError::new_err(format!(
                        "vehicle {i}: {} = {}: {reason}",
                        c.var(),
                        a[2 * i + j]
                    )));
                }
            }
        }
        let mut first_err = None;
        for i in 0..n {
            for c in [Command::DriftX(a[2 * i]), Command::DriftY(a[2 * i + 1])] {
                if let Err(e) = self.fleet.send(i, c) {
                    first_err.get_or_insert(e);
                }
            }
        }
        // Recorded whatever was refused: the rest took effect.
        self.journal.drift(a);
        match first_err {
            Some(e) => Err(MessageError::new_err(e.0)),
            None => Ok(()),
        }
    }

    fn write_state_array(&self, py: Python<'_>) -> PyResult<()> {
        let target = self.state.bind(py).clone();
        let mut rw = target
            .try_readwrite()
            .map_err(|e| PyValueError::new_err(format!("the state array is borrowed: {e}")))?;
        self.fleet
            .write_state(rw.as_slice_mut()?)
            .map_err(|e| PyRuntimeError::new_err(e.0))
    }

    /// Rebuild a pickled fleet: its constructor, then its history.
    fn restore(py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (head, ops) = FJournal::from_py(state)?;
        let math = head.math.clone();
        let mut parsed = Vec::with_capacity(head.sources.len());
        for s in &head.sources {
            parsed
                .push(parse_config_text(py, Path::new(&s.path), &s.text, math.as_deref())?.params);
        }
        if head.n == 0 || head.n > usim::batch::MAX_VEHICLES {
            return Err(PyValueError::new_err("snapshot: bad fleet size"));
        }
        let params = if head.which.is_empty() {
            vec![parsed[0].clone(); head.n]
        } else {
            head.which.iter().map(|&w| parsed[w].clone()).collect()
        };
        let (acts, fields) = Self::columns(&Some(head.actions.clone()), &Some(head.state.clone()))?;
        let n = head.n;
        let k = acts.len();
        let w = fields.len();
        let mut f = Self::build(py, params, head, acts, fields)?;
        let mut out = vec![0.0; n * w];
        for (j, op) in ops.into_iter().enumerate() {
            let r = match op {
                FOp::Step(sp) if sp.len() == n * k => f
                    .fleet
                    .step(&sp, &mut out)
                    .map(|_| f.journal.step(&sp))
                    .map_err(|e| PyValueError::new_err(e.0)),
                FOp::Step(_) => Err(PyValueError::new_err("setpoints of the wrong size")),
                // A post to a vehicle that is reset later may be refused
                // in the replay (its state before that reset is not kept):
                // nothing depends on it.
                FOp::Post { i, var, val } => {
                    let _ = f.do_post(py, i, &var, val, false);
                    Ok(())
                }
                FOp::Drift(d) => {
                    let _ = f.do_drift(&d);
                    Ok(())
                }
                FOp::Reset(r) => {
                    let r = std::sync::Arc::unwrap_or_clone(r);
                    let ok = r.idx.iter().all(|&i| i < n)
                        && r.start.as_ref().is_none_or(|v| v.len() == 3 * r.idx.len())
                        && r.drift.as_ref().is_none_or(|v| v.len() == 2 * r.idx.len());
                    if ok {
                        f.do_reset(ResetArgs {
                            seed: r.seed,
                            idx: r.idx,
                            start: r.start,
                            drift: r.drift,
                            start_radius: r.start_radius,
                            heading_spread: r.heading_spread,
                            max_drift: r.max_drift,
                        })
                    } else {
                        Err(PyValueError::new_err("reset of the wrong size"))
                    }
                }
            };
            r.map_err(|e| PyValueError::new_err(format!("snapshot: operation {j}: {e}")))?;
            if j % 4096 == 4095 {
                py.check_signals()?;
            }
        }
        f.write_state_array(py)?;
        Ok(f)
    }
}

#[pymethods]
impl Fleet {
    #[new]
    #[pyo3(signature = (config, n=None, *, dt=0.1, start_time=0.0, actions=None, state=None, math=None, max_bytes=DEFAULT_MAX_BYTES, history_bytes=snapshot::DEFAULT_HISTORY_BYTES))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        config: &Bound<'_, PyAny>,
        n: Option<usize>,
        dt: f64,
        start_time: f64,
        actions: Option<Vec<String>>,
        state: Option<Vec<String>>,
        math: Option<&str>,
        max_bytes: u64,
        history_bytes: u64,
    ) -> PyResult<Self> {
        guard(|| {
            let (acts, fields) = Self::columns(&actions, &state)?;
            let is_list = config.is_instance_of::<PyList>() || config.is_instance_of::<PyTuple>();
            let count = if is_list {
                let len = config.len().unwrap_or(0);
                if n.is_some_and(|n| n != len) {
                    return Err(PyValueError::new_err(
                        "n must be omitted or equal the number of configs",
                    ));
                }
                len
            } else {
                n.ok_or_else(|| {
                    PyValueError::new_err("Fleet(config, n): n is needed with one config")
                })?
            };
            if count == 0 || count > usim::batch::MAX_VEHICLES {
                return Err(PyValueError::new_err(format!(
                    "n must be in 1..={}, not {count}",
                    usim::batch::MAX_VEHICLES
                )));
            }
            // The size first (issue 37): nothing is allocated for a fleet
            // that would not fit.
            let need = BatchFleet::bytes_needed(count, fields.len());
            if need > max_bytes {
                return Err(PyValueError::new_err(format!(
                    "a fleet of {count} vehicles would need about {:.1} GiB ({} bytes per \
                     vehicle), more than max_bytes = {max_bytes}: use fewer vehicles or raise \
                     max_bytes",
                    need as f64 / (1u64 << 30) as f64,
                    need / count as u64
                )));
            }
            let (params, sources, which) = if is_list {
                let mut params = Vec::with_capacity(count);
                let mut sources: Vec<Source> = Vec::new();
                let mut which = Vec::with_capacity(count);
                for c in config.try_iter()? {
                    let (cfg, src) = load_vehicle_config_src(&c?, math)?;
                    params.push(cfg.params);
                    let at = match sources.iter().position(|s| *s == src) {
                        Some(at) => at,
                        None => {
                            sources.push(src);
                            sources.len() - 1
                        }
                    };
                    which.push(at);
                }
                (params, sources, which)
            } else {
                let (cfg, src) = load_vehicle_config_src(config, math)?;
                let mut params = Vec::new();
                params.try_reserve_exact(count).map_err(|e| {
                    pyo3::exceptions::PyMemoryError::new_err(format!(
                        "a fleet of {count} vehicles does not fit in memory ({e})"
                    ))
                })?;
                params.resize(count, cfg.params);
                (params, vec![src], Vec::new())
            };
            let acts = Self::actions_for(py, actions.is_some(), acts, &params)?;
            let journal = FJournal::new(
                sources,
                which,
                count,
                math,
                dt,
                start_time,
                acts.iter().map(|a| a.name().to_string()).collect(),
                fields.iter().map(|f| f.name().to_string()).collect(),
                history_bytes,
            );
            Self::build(py, params, journal, acts, fields)
        })
    }

    /// step(actions, out=None)
    ///
    /// Step every vehicle once with setpoint row i for vehicle i; returns
    /// `out` (an (n, m) float64 C-contiguous array) or `Fleet.state`.
    #[pyo3(signature = (actions, out=None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
        out: Option<Bound<'py, PyArray2<f64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let n = self.fleet.len();
        let k = self.fleet.actions().len();
        let arr: PyReadonlyArray2<'py, f64> = match actions.extract::<PyReadonlyArray2<'py, f64>>()
        {
            Ok(a) if a.is_c_contiguous() => a,
            _ => {
                let np = py.import("numpy")?;
                np.call_method1("ascontiguousarray", (actions, "float64"))?
                    .extract::<PyReadonlyArray2<'py, f64>>()
                    .map_err(|_| {
                        PyValueError::new_err(format!("actions must be an ({n}, {k}) float array"))
                    })?
            }
        };
        if arr.shape() != [n, k] {
            return Err(PyValueError::new_err(format!(
                "actions must have shape ({n}, {k}), not {:?}",
                arr.shape()
            )));
        }
        let target = match out {
            Some(o) => o,
            None => self.state.bind(py).clone(),
        };
        {
            let setpoints = arr.as_slice()?;
            let mut rw = target
                .try_readwrite()
                .map_err(|e| PyValueError::new_err(format!("the state array is borrowed: {e}")))?;
            let o = rw
                .as_slice_mut()
                .map_err(|_| PyValueError::new_err("out must be a C-contiguous float64 array"))?;
            // Warned before stepping: a warning turned into an error
            // (`-W error`) leaves the fleet unchanged, like any refusal.
            if !self.warned {
                if let Some((i, act, v)) = self.fleet.thrust_beyond_nominal(setpoints) {
                    let msg = thrust_warning(
                        &format!("vehicle {i}"),
                        act.name(),
                        v,
                        " (warned once per fleet)",
                    );
                    PyErr::warn(py, &py.get_type::<SetpointWarning>(), &msg, 1)?;
                    self.warned = true;
                }
            }
            let fleet = &mut self.fleet;
            let r = py
                .detach(|| catch_unwind(AssertUnwindSafe(|| fleet.step(setpoints, o))))
                .map_err(panic_error)?;
            r.map_err(|e| MessageError::new_err(e.0))?;
            self.journal.step(setpoints);
        }
        Ok(target)
    }

    /// reset(seed=None, indices=None, *, start=None, drift=None,
    ///       start_radius=0.0, heading_spread=0.0, max_drift=0.0)
    ///
    /// Restart vehicles (all, or `indices`) at their clock 0. `start`: an
    /// (len, 3) array of x, y (m) and heading (degrees); `drift`: an (len,
    /// 2) array of drift east, north (m/s). With `seed`, each vehicle i is
    /// moved within `start_radius` m of its start, its heading by up to
    /// ±`heading_spread` degrees, and given a drift of up to `max_drift`
    /// m/s in a uniform direction, drawn from (seed, i) alone. Returns
    /// `Fleet.state`.
    #[pyo3(signature = (seed=None, indices=None, *, start=None, drift=None, start_radius=0.0, heading_spread=0.0, max_drift=0.0))]
    #[allow(clippy::too_many_arguments)]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
        indices: Option<Vec<usize>>,
        start: Option<PyReadonlyArray2<'py, f64>>,
        drift: Option<PyReadonlyArray2<'py, f64>>,
        start_radius: f64,
        heading_spread: f64,
        max_drift: f64,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        guard(|| {
            let n = self.fleet.len();
            let idx: Vec<usize> = indices.unwrap_or_else(|| (0..n).collect());
            if let Some(bad) = idx.iter().find(|&&i| i >= n) {
                return Err(PyValueError::new_err(format!(
                    "index {bad} out of range for a fleet of {n}"
                )));
            }
            let rows = |a: &Option<PyReadonlyArray2<'py, f64>>, w: usize, what: &str| match a {
                None => Ok(None),
                Some(a) if a.shape() == [idx.len(), w] => {
                    Ok(Some(a.as_array().iter().copied().collect::<Vec<f64>>()))
                }
                Some(a) => Err(PyValueError::new_err(format!(
                    "{what} must have shape ({}, {w}), not {:?}",
                    idx.len(),
                    a.shape()
                ))),
            };
            let start = rows(&start, 3, "start")?;
            let drift = rows(&drift, 2, "drift")?;
            let r = self.do_reset(ResetArgs {
                seed,
                idx,
                start,
                drift,
                start_radius,
                heading_spread,
                max_drift,
            });
            // The state array shows what took effect, even on an error.
            self.write_state_array(py)?;
            r?;
            Ok(self.state.bind(py).clone())
        })
    }

    /// post(i, var, value, *, check=True)
    ///
    /// Send one message to vehicle `i`, handled now at its next step's
    /// clock (e.g. `post(3, "DRIFT_X", 0.4)`); parsed and checked as
    /// `Vehicle.post` (`check=False` sends what the check refuses).
    #[pyo3(signature = (i, var, value, *, check=true))]
    fn post(
        &mut self,
        py: Python<'_>,
        i: usize,
        var: &str,
        value: &Bound<'_, PyAny>,
        check: bool,
    ) -> PyResult<()> {
        guard(|| {
            let val = post_value(var, value)?;
            self.do_post(py, i, var, val, check)
        })
    }

    /// set_drift(drift)
    ///
    /// Set every vehicle's drift (current) from an (n, 2) array of east,
    /// north m/s (as `DRIFT_X` / `DRIFT_Y` messages).
    fn set_drift(&mut self, drift: PyReadonlyArray2<'_, f64>) -> PyResult<()> {
        guard(|| {
            let n = self.fleet.len();
            if drift.shape() != [n, 2] {
                return Err(PyValueError::new_err(format!(
                    "drift must have shape ({n}, 2), not {:?}",
                    drift.shape()
                )));
            }
            let a: Vec<f64> = drift.as_array().iter().copied().collect();
            self.do_drift(&a)
        })
    }

    /// The state of vehicle `i` as a `State` (every column, units there).
    fn vehicle_state(&self, i: usize) -> PyResult<State> {
        self.fleet
            .vehicles()
            .get(i)
            .map(|v| State::of(&v.snapshot()))
            .ok_or_else(|| PyValueError::new_err(format!("no vehicle {i}")))
    }

    /// Vehicle `i`'s environment after the last step: the dict of
    /// `Vehicle.environment()` (wave, wind, true and sensed fix, gps_fix).
    fn vehicle_environment<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyDict>> {
        let v = self
            .fleet
            .vehicles()
            .get(i)
            .ok_or_else(|| PyValueError::new_err(format!("no vehicle {i}")))?;
        guard(|| environment_dict(py, v))
    }

    /// The sea-surface elevation, m, of vehicle `i`'s sea at (`x`, `y`) m
    /// and simulated time `t` s; NaN without a `[sea]`.
    fn wave_elevation(&self, i: usize, x: f64, y: f64, t: f64) -> PyResult<f64> {
        self.fleet
            .vehicles()
            .get(i)
            .map(|v| elevation_of(v, x, y, t))
            .ok_or_else(|| PyValueError::new_err(format!("no vehicle {i}")))
    }

    /// The (n, m) float64 state array, columns `Fleet.state_names`.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        self.state.bind(py).clone()
    }

    /// Number of vehicles.
    #[getter]
    fn n(&self) -> usize {
        self.fleet.len()
    }

    fn __len__(&self) -> usize {
        self.fleet.len()
    }

    /// Step, s.
    #[getter]
    fn dt(&self) -> f64 {
        self.fleet.dt()
    }

    /// The setpoint columns (MOOS variable names).
    #[getter]
    fn action_names(&self) -> Vec<&'static str> {
        self.fleet.actions().iter().map(|a| a.name()).collect()
    }

    /// The state columns (CSV column names).
    #[getter]
    fn state_names(&self) -> Vec<&'static str> {
        self.fleet.fields().iter().map(|f| f.name()).collect()
    }

    /// Iterations of each vehicle since its last reset (an int64 array).
    #[getter]
    fn iterations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let v: Vec<i64> = (0..self.fleet.len())
            .map(|i| self.fleet.iterations(i) as i64)
            .collect();
        PyArray1::from_vec(py, v)
    }

    /// Bytes of history kept for `pickle` now (bounded by `history_bytes`).
    #[getter]
    fn history_bytes(&self) -> u64 {
        self.journal.held_bytes()
    }

    /// The whole state of every vehicle as text (exact floats): equal
    /// texts are bit-identical fleets (the snapshot tests compare them).
    fn _debug_state(&self) -> String {
        let ks: Vec<u64> = (0..self.fleet.len())
            .map(|i| self.fleet.iterations(i))
            .collect();
        format!("{:?} k={ks:?}", self.fleet.vehicles())
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        self.clone_fleet(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.clone_fleet(py)
    }

    /// Pickle support: the history, replayed by `usim_marine._restore_fleet`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        if let Some(why) = self.journal.refusal() {
            return Err(pyo3::exceptions::PyTypeError::new_err(why));
        }
        let f = py.import("usim_marine")?.getattr("_restore_fleet")?;
        (f, (self.journal.to_py(py)?,)).into_pyobject(py)
    }

    /// Rebuild a pickled fleet (used by `pickle`; state from `__reduce__`).
    #[staticmethod]
    fn _restore(py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<Self> {
        guard(|| Self::restore(py, state))
    }

    fn __repr__(&self) -> String {
        format!(
            "Fleet(n={}, dt={}, actions={:?}, state={:?})",
            self.fleet.len(),
            self.fleet.dt(),
            self.action_names(),
            self.state_names()
        )
    }
}

impl Fleet {
    /// A copy: the vehicles cloned, a new state array, the history shared.
    fn clone_fleet(&self, py: Python<'_>) -> PyResult<Self> {
        let arr = self.state.bind(py);
        let copy = PyArray2::<f64>::zeros(py, [arr.shape()[0], arr.shape()[1]], false);
        {
            let src = arr.readonly();
            let mut rw = copy.readwrite();
            rw.as_slice_mut()?.copy_from_slice(src.as_slice()?);
        }
        Ok(Fleet {
            fleet: self.fleet.clone(),
            state: copy.unbind(),
            journal: self.journal.clone(),
            warned: self.warned,
        })
    }
}

/// _render_scene(width, height, extent, vessels, goals=(), cpa_lines=()) -> ndarray
///
/// A top-down frame (usim's own plotting code, `usim::plot::scene`) as an
/// (height, width, 3) uint8 array. extent: (x min, y min, x max, y max) m;
/// vessels: (x, y m, heading degrees, length m, track) with track an (k, 2)
/// float array of past x, y or None; goals: (x, y, radius m, active);
/// cpa_lines: ((x, y), (x, y)) m. The GIL is released while drawing.
#[pyfunction]
#[pyo3(signature = (width, height, extent, vessels, goals=Vec::new(), cpa_lines=Vec::new()))]
#[allow(clippy::type_complexity)]
fn _render_scene<'py>(
    py: Python<'py>,
    width: u32,
    height: u32,
    extent: (f64, f64, f64, f64),
    vessels: Vec<(f64, f64, f64, f64, Option<PyReadonlyArray2<'py, f64>>)>,
    goals: Vec<(f64, f64, f64, bool)>,
    cpa_lines: Vec<((f64, f64), (f64, f64))>,
) -> PyResult<Bound<'py, numpy::PyArray3<u8>>> {
    use usim::plot::scene::{self, Goal, Scene, SceneVessel};
    let mut vs = Vec::with_capacity(vessels.len());
    for (x, y, heading, length, track) in vessels {
        let track = match track {
            None => Vec::new(),
            Some(t) if t.shape().len() == 2 && t.shape()[1] == 2 => {
                let a = t.as_array();
                let skip = a.nrows().saturating_sub(scene::MAX_TRACK);
                a.rows()
                    .into_iter()
                    .skip(skip)
                    .map(|r| (r[0], r[1]))
                    .collect()
            }
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "a track must have shape (k, 2), not {:?}",
                    t.shape()
                )))
            }
        };
        vs.push(SceneVessel {
            x,
            y,
            heading,
            length,
            track,
        });
    }
    let sc = Scene {
        width,
        height,
        extent,
        vessels: vs,
        goals: goals
            .into_iter()
            .map(|(x, y, radius, active)| Goal {
                x,
                y,
                radius,
                active,
            })
            .collect(),
        cpa_lines,
    };
    let rgb = py
        .detach(|| catch_unwind(AssertUnwindSafe(|| scene::render_rgb(&sc))))
        .map_err(panic_error)?
        .map_err(|e| PyValueError::new_err(e.0))?;
    let flat = PyArray1::from_vec(py, rgb);
    flat.reshape([height as usize, width as usize, 3])
}

/// _bench_native(config, n, steps) -> float
///
/// Seconds to step a fleet of `n` vehicles `steps` times from Rust alone
/// (the same `BatchFleet` and state columns as `Fleet` by default, thrust
/// 60 % and a rudder sweep), the native baseline of the Python benchmark.
#[pyfunction]
fn _bench_native(py: Python<'_>, config: &Bound<'_, PyAny>, n: usize, steps: u64) -> PyResult<f64> {
    let cfg = load_vehicle_config(config, None)?;
    let mut fleet = BatchFleet::new(
        vec![cfg.params; n.clamp(1, 1_000_000)],
        0.0,
        0.1,
        vec![Actuator::Thrust, Actuator::Rudder],
        vec![Field::X, Field::Y, Field::Speed, Field::Heading],
    )
    .map_err(|e| PyValueError::new_err(e.0))?;
    let n = fleet.len();
    py.detach(|| {
        // The setpoints the Python benchmark passes: thrust 60 %, rudder
        // spread over the fleet.
        let mut sp = vec![0.0; n * 2];
        for i in 0..n {
            sp[2 * i] = 60.0;
            sp[2 * i + 1] = (i % 200) as f64 - 100.0;
        }
        let mut out = vec![0.0; n * 4];
        let t0 = std::time::Instant::now();
        for _ in 0..steps {
            let _ = fleet.step(&sp, &mut out);
        }
        std::hint::black_box(&out);
        Ok(t0.elapsed().as_secs_f64())
    })
}

/// The native module of `usim_marine`.
#[pymodule]
fn _usim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("MessageError", py.get_type::<MessageError>())?;
    m.add("SetpointWarning", py.get_type::<SetpointWarning>())?;
    m.add_class::<Vehicle>()?;
    m.add_class::<Fleet>()?;
    m.add_class::<State>()?;
    m.add_function(wrap_pyfunction!(_replay, m)?)?;
    m.add_function(wrap_pyfunction!(_mission_info, m)?)?;
    m.add_function(wrap_pyfunction!(_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(_bench_native, m)?)?;
    m.add_function(wrap_pyfunction!(_sweep_total, m)?)?;
    m.add_function(wrap_pyfunction!(_sweep_shard, m)?)?;
    m.add_function(wrap_pyfunction!(_sweep_merge, m)?)?;
    m.add_function(wrap_pyfunction!(_encounter_obs, m)?)?;
    m.add_function(wrap_pyfunction!(_render_scene, m)?)?;
    m.add("CSV_HEADER", usim::replay::csv::HEADER)?;
    let _ = Path::new("");
    Ok(())
}
