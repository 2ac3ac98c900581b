//! Snapshots of `Vehicle` and `Fleet` for `pickle`: the history that made
//! the state (the config text, the constructor's arguments, then every
//! message, step and reset in order), replayed on restore. The model is a
//! pure function of that history (docs/python.md), so a restored object is
//! bit for bit the one that was pickled, in any process, without the model
//! knowing about serialisation. `copy.deepcopy` does not replay: it clones.
//!
//! A fleet's history keeps only what its vehicles still depend on: a reset
//! rebuilds a vehicle from its config, so the operations before the oldest
//! of the vehicles' last resets are dropped. A history larger than its
//! byte budget is dropped whole (pickling then raises, naming the budget)
//! until a reset of the whole fleet starts a new one.
use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// Version of the pickled layout (refused if different).
pub const VERSION: u32 = 1;

/// Default budget of a fleet's or vehicle's history, bytes.
pub const DEFAULT_HISTORY_BYTES: u64 = 256 << 20;

/// A posted value as the caller gave it (parsed again on restore).
#[derive(Clone, Debug)]
pub enum PostVal {
    Text(String),
    Num(f64),
    Bool(bool),
}

impl PostVal {
    fn bytes(&self) -> u64 {
        match self {
            PostVal::Text(s) => 32 + s.len() as u64,
            _ => 32,
        }
    }

    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(match self {
            PostVal::Text(s) => s.into_pyobject(py)?.into_any().unbind(),
            PostVal::Num(v) => v.into_pyobject(py)?.into_any().unbind(),
            PostVal::Bool(b) => pyo3::types::PyBool::new(py, *b)
                .to_owned()
                .into_any()
                .unbind(),
        })
    }

    fn from_py(v: &Bound<'_, PyAny>) -> PyResult<PostVal> {
        if v.is_instance_of::<pyo3::types::PyBool>() {
            Ok(PostVal::Bool(v.extract()?))
        } else if v.is_instance_of::<pyo3::types::PyString>() {
            Ok(PostVal::Text(v.extract()?))
        } else {
            Ok(PostVal::Num(v.extract()?))
        }
    }
}

/// A config or mission as text, with the path that anchors its relative
/// paths (absolute for a file, `<text>` / `<dict>` otherwise).
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub path: String,
    pub text: String,
}

impl Source {
    pub fn new(path: &std::path::Path, text: String) -> Source {
        let shown = path.to_string_lossy();
        let path = if shown.starts_with('<') {
            shown.into_owned()
        } else {
            std::path::absolute(path)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| shown.into_owned())
        };
        Source { path, text }
    }
}

fn f64s_to_bytes<'py>(py: Python<'py>, v: &[f64]) -> Bound<'py, PyBytes> {
    let mut b = Vec::with_capacity(v.len() * 8);
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
    PyBytes::new(py, &b)
}

fn bytes_to_f64s(b: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    let raw: &[u8] = b
        .cast::<PyBytes>()
        .map_err(|_| PyValueError::new_err(format!("snapshot: {what} must be bytes")))?
        .as_bytes();
    if raw.len() % 8 != 0 {
        return Err(PyValueError::new_err(format!(
            "snapshot: {what} is not a whole number of float64"
        )));
    }
    Ok(raw
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect())
}

fn bad(what: &str) -> PyErr {
    PyValueError::new_err(format!("not a usim_marine snapshot ({what})"))
}

// ---------------------------------------------------------------- Vehicle

/// Where a `Vehicle` came from.
#[derive(Clone, Debug)]
pub enum VOrigin {
    Config(Source),
    Mission { src: Source, index: usize },
}

/// One call that changed a `Vehicle`.
#[derive(Clone, Debug)]
pub enum VOp {
    Post(String, PostVal),
    /// `count` calls of `step(dt)` (dt's bits).
    Steps(u64, u64),
    StepTo(f64),
}

/// A frozen, shared run of a `Vehicle`'s history: copies of a vehicle
/// share what they have in common, so `copy.deepcopy` costs the same
/// whatever the history's length (a search tree copies nodes often).
#[derive(Debug)]
struct Chunk {
    prev: Option<Arc<Chunk>>,
    ops: Vec<VOp>,
}

impl Drop for Chunk {
    /// Iterative: a chain of a million chunks must not overflow the stack.
    fn drop(&mut self) {
        let mut next = self.prev.take();
        while let Some(a) = next {
            match Arc::try_unwrap(a) {
                Ok(mut c) => next = c.prev.take(),
                Err(_) => break,
            }
        }
    }
}

/// A `Vehicle`'s history: the frozen chunks (oldest first along `prev`),
/// then `ops`, the calls since the last freeze.
#[derive(Clone, Debug)]
pub struct VJournal {
    pub origin: VOrigin,
    pub math: Option<String>,
    pub start_time: f64,
    pub dt: f64,
    frozen: Option<Arc<Chunk>>,
    ops: Vec<VOp>,
    bytes: u64,
    pub limit: u64,
    pub overflow: bool,
}

impl VJournal {
    pub fn new(origin: VOrigin, math: Option<&str>, start_time: f64, dt: f64, limit: u64) -> Self {
        VJournal {
            origin,
            math: math.map(str::to_string),
            start_time,
            dt,
            frozen: None,
            ops: Vec::new(),
            bytes: 0,
            limit,
            overflow: false,
        }
    }

    fn push(&mut self, op: VOp, bytes: u64) {
        if self.overflow {
            return;
        }
        self.bytes += bytes;
        if self.bytes > self.limit {
            self.overflow = true;
            self.ops = Vec::new();
            self.frozen = None;
            return;
        }
        self.ops.push(op);
    }

    /// Freeze the recent calls into a shared chunk (before a copy: the
    /// copy then shares the whole history instead of cloning it).
    pub fn freeze(&mut self) {
        if !self.ops.is_empty() {
            let ops = std::mem::take(&mut self.ops);
            self.frozen = Some(Arc::new(Chunk {
                prev: self.frozen.take(),
                ops,
            }));
        }
    }

    /// Every recorded call, oldest first.
    fn all_ops(&self) -> impl Iterator<Item = &VOp> {
        let mut chunks = Vec::new();
        let mut c = self.frozen.as_deref();
        while let Some(ch) = c {
            chunks.push(ch);
            c = ch.prev.as_deref();
        }
        chunks
            .into_iter()
            .rev()
            .flat_map(|ch| ch.ops.iter())
            .chain(self.ops.iter())
    }

    pub fn post(&mut self, var: &str, val: PostVal) {
        let b = val.bytes() + var.len() as u64;
        self.push(VOp::Post(var.to_string(), val), b);
    }

    pub fn step(&mut self, dt: f64) {
        if let Some(VOp::Steps(bits, n)) = self.ops.last_mut() {
            if *bits == dt.to_bits() && !self.overflow {
                *n += 1;
                return;
            }
        }
        self.push(VOp::Steps(dt.to_bits(), 1), 24);
    }

    pub fn step_to(&mut self, t: f64) {
        self.push(VOp::StepTo(t), 24);
    }

    /// Why it cannot be pickled, if it cannot.
    pub fn refusal(&self) -> Option<String> {
        self.overflow.then(|| {
            format!(
                "this Vehicle's history (every post and step since it was made) passed its \
                 budget of {} bytes, so it can no longer be pickled; copy.deepcopy still \
                 works (raise history_bytes= when making it)",
                self.limit
            )
        })
    }

    pub fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let origin = match &self.origin {
            VOrigin::Config(s) => ("config", s.path.clone(), s.text.clone(), 0usize),
            VOrigin::Mission { src, index } => {
                ("mission", src.path.clone(), src.text.clone(), *index)
            }
        };
        let ops = PyList::empty(py);
        for op in self.all_ops() {
            let t = match op {
                VOp::Post(var, val) => ("p", var.clone(), val.to_py(py)?).into_pyobject(py)?,
                VOp::Steps(bits, n) => ("s", f64::from_bits(*bits), *n).into_pyobject(py)?,
                VOp::StepTo(t) => ("t", *t, 0u64).into_pyobject(py)?,
            };
            ops.append(t)?;
        }
        (
            VERSION,
            origin,
            self.math.clone(),
            self.start_time,
            self.dt,
            self.limit,
            ops,
        )
            .into_pyobject(py)
    }

    /// The header (an empty history) and the operations to replay.
    pub fn from_py(state: &Bound<'_, PyAny>) -> PyResult<(VJournal, Vec<VOp>)> {
        type Head<'a> = (
            u32,
            (String, String, String, usize),
            Option<String>,
            f64,
            f64,
            u64,
            Bound<'a, PyList>,
        );
        let (version, (kind, path, text, index), math, start_time, dt, limit, ops): Head =
            state.extract().map_err(|_| bad("layout"))?;
        if version != VERSION {
            return Err(bad(&format!(
                "version {version}, this package reads {VERSION}"
            )));
        }
        let src = Source { path, text };
        let origin = match kind.as_str() {
            "config" => VOrigin::Config(src),
            "mission" => VOrigin::Mission { src, index },
            _ => return Err(bad("origin")),
        };
        let mut out = Vec::with_capacity(ops.len());
        for op in ops.iter() {
            let (tag, a, b): (String, Bound<'_, PyAny>, Bound<'_, PyAny>) =
                op.extract().map_err(|_| bad("operation"))?;
            out.push(match tag.as_str() {
                "p" => VOp::Post(a.extract()?, PostVal::from_py(&b)?),
                "s" => VOp::Steps(a.extract::<f64>()?.to_bits(), b.extract()?),
                "t" => VOp::StepTo(a.extract()?),
                _ => return Err(bad("operation tag")),
            });
        }
        Ok((
            VJournal {
                origin,
                math,
                start_time,
                dt,
                frozen: None,
                ops: Vec::new(),
                bytes: 0,
                limit,
                overflow: false,
            },
            out,
        ))
    }
}

// ---------------------------------------------------------------- Fleet

/// The arguments of one `Fleet.reset` call that took effect.
#[derive(Clone, Debug)]
pub struct ResetOp {
    pub idx: Vec<usize>,
    pub seed: Option<u64>,
    /// Rows of x, y, heading (3 per index), if given.
    pub start: Option<Vec<f64>>,
    /// Rows of drift east, north (2 per index), if given.
    pub drift: Option<Vec<f64>>,
    pub start_radius: f64,
    pub heading_spread: f64,
    pub max_drift: f64,
}

/// One call that changed a `Fleet`.
#[derive(Clone, Debug)]
pub enum FOp {
    Step(Arc<[f64]>),
    Reset(Arc<ResetOp>),
    Post { i: usize, var: String, val: PostVal },
    Drift(Arc<[f64]>),
}

/// A `Fleet`'s constructor arguments and history.
#[derive(Clone, Debug)]
pub struct FJournal {
    /// Distinct configs; vehicle i uses `sources[which[i]]` (`which`
    /// empty: all use `sources[0]`).
    pub sources: Vec<Source>,
    pub which: Vec<usize>,
    pub n: usize,
    pub math: Option<String>,
    pub dt: f64,
    pub start_time: f64,
    pub actions: Vec<String>,
    pub state: Vec<String>,
    pub ops: VecDeque<FOp>,
    /// Global index of `ops[0]`.
    base: u64,
    /// Global index of the next operation.
    next: u64,
    /// Per vehicle, the global index of its last reset (0: none since made).
    start: Vec<u64>,
    bytes: u64,
    pub limit: u64,
    pub overflow: bool,
}

impl FJournal {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        sources: Vec<Source>,
        which: Vec<usize>,
        n: usize,
        math: Option<&str>,
        dt: f64,
        start_time: f64,
        actions: Vec<String>,
        state: Vec<String>,
        limit: u64,
    ) -> Self {
        FJournal {
            sources,
            which,
            n,
            math: math.map(str::to_string),
            dt,
            start_time,
            actions,
            state,
            ops: VecDeque::new(),
            base: 0,
            next: 0,
            start: vec![0; n],
            bytes: 0,
            limit,
            overflow: false,
        }
    }

    fn push(&mut self, op: FOp, bytes: u64) {
        self.next += 1;
        if self.overflow || !self.enabled() {
            return;
        }
        self.bytes += bytes;
        if self.bytes > self.limit {
            self.overflow = true;
            self.ops = VecDeque::new();
            self.bytes = 0;
            return;
        }
        self.ops.push_back(op);
    }

    /// Whether a history is kept at all (`history_bytes > 0`).
    pub fn enabled(&self) -> bool {
        self.limit > 0
    }

    pub fn step(&mut self, setpoints: &[f64]) {
        if self.overflow || !self.enabled() {
            self.next += 1;
            return;
        }
        let b = 8 * setpoints.len() as u64 + 16;
        self.push(FOp::Step(Arc::from(setpoints)), b);
    }

    pub fn post(&mut self, i: usize, var: &str, val: PostVal) {
        let b = val.bytes() + var.len() as u64 + 16;
        self.push(
            FOp::Post {
                i,
                var: var.to_string(),
                val,
            },
            b,
        );
    }

    pub fn drift(&mut self, d: &[f64]) {
        let b = 8 * d.len() as u64 + 16;
        self.push(FOp::Drift(Arc::from(d)), b);
    }

    /// Record a reset that took effect for `op.idx`, then drop what no
    /// vehicle depends on any more.
    pub fn reset(&mut self, op: ResetOp) {
        let g = self.next;
        for &i in &op.idx {
            if let Some(s) = self.start.get_mut(i) {
                *s = g;
            }
        }
        let oldest = self.start.iter().copied().min().unwrap_or(0);
        if self.overflow && oldest == g {
            // Every vehicle was reset by this call: a new history starts.
            self.overflow = false;
            self.base = g;
        }
        let b = 16
            + 8 * (op.idx.len() as u64)
            + 8 * op.start.as_ref().map_or(0, |v| v.len() as u64)
            + 8 * op.drift.as_ref().map_or(0, |v| v.len() as u64);
        self.push(FOp::Reset(Arc::new(op)), b);
        while self.base < oldest {
            let Some(front) = self.ops.pop_front() else {
                self.base = oldest;
                break;
            };
            self.bytes = self.bytes.saturating_sub(Self::op_bytes(&front));
            self.base += 1;
        }
    }

    fn op_bytes(op: &FOp) -> u64 {
        match op {
            FOp::Step(s) | FOp::Drift(s) => 8 * s.len() as u64 + 16,
            FOp::Post { var, val, .. } => val.bytes() + var.len() as u64 + 16,
            FOp::Reset(r) => {
                16 + 8 * (r.idx.len() as u64)
                    + 8 * r.start.as_ref().map_or(0, |v| v.len() as u64)
                    + 8 * r.drift.as_ref().map_or(0, |v| v.len() as u64)
            }
        }
    }

    /// Bytes the history holds now.
    pub fn held_bytes(&self) -> u64 {
        self.bytes
    }

    pub fn refusal(&self) -> Option<String> {
        if !self.enabled() {
            return Some(
                "this Fleet was made with history_bytes=0: it keeps no history and cannot be \
                 pickled (copy.deepcopy works)"
                    .to_string(),
            );
        }
        self.overflow.then(|| {
            format!(
                "this Fleet's history since its vehicles' oldest reset passed its budget of {} \
                 bytes, so it cannot be pickled until every vehicle has been reset (one \
                 reset() of all); copy.deepcopy works (raise history_bytes= when making it)",
                self.limit
            )
        })
    }

    pub fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let sources = PyList::empty(py);
        for s in &self.sources {
            sources.append((s.path.clone(), s.text.clone()))?;
        }
        let ops = PyList::empty(py);
        for op in &self.ops {
            let t: Bound<'py, PyTuple> = match op {
                FOp::Step(sp) => ("s", f64s_to_bytes(py, sp)).into_pyobject(py)?,
                FOp::Drift(d) => ("d", f64s_to_bytes(py, d)).into_pyobject(py)?,
                FOp::Post { i, var, val } => {
                    ("p", *i, var.clone(), val.to_py(py)?).into_pyobject(py)?
                }
                FOp::Reset(r) => (
                    "r",
                    r.idx.clone(),
                    r.seed,
                    r.start.as_ref().map(|v| f64s_to_bytes(py, v)),
                    r.drift.as_ref().map(|v| f64s_to_bytes(py, v)),
                    (r.start_radius, r.heading_spread, r.max_drift),
                )
                    .into_pyobject(py)?,
            };
            ops.append(t)?;
        }
        (
            VERSION,
            sources,
            self.which.clone(),
            self.n,
            self.math.clone(),
            (self.dt, self.start_time),
            (self.actions.clone(), self.state.clone()),
            self.limit,
            ops,
        )
            .into_pyobject(py)
    }

    /// The header (an empty history) and the operations to replay.
    pub fn from_py(state: &Bound<'_, PyAny>) -> PyResult<(FJournal, Vec<FOp>)> {
        type Head<'a> = (
            u32,
            Vec<(String, String)>,
            Vec<usize>,
            usize,
            Option<String>,
            (f64, f64),
            (Vec<String>, Vec<String>),
            u64,
            Bound<'a, PyList>,
        );
        let (version, sources, which, n, math, (dt, start_time), (actions, st), limit, ops): Head =
            state.extract().map_err(|_| bad("layout"))?;
        if version != VERSION {
            return Err(bad(&format!(
                "version {version}, this package reads {VERSION}"
            )));
        }
        if sources.is_empty()
            || !(which.is_empty() || which.len() == n)
            || which.iter().any(|&w| w >= sources.len())
        {
            return Err(bad("configs"));
        }
        let j = FJournal::new(
            sources
                .into_iter()
                .map(|(path, text)| Source { path, text })
                .collect(),
            which,
            n,
            math.as_deref(),
            dt,
            start_time,
            actions,
            st,
            limit,
        );
        let mut out = Vec::with_capacity(ops.len());
        for op in ops.iter() {
            let t = op.cast::<PyTuple>().map_err(|_| bad("operation"))?;
            let tag: String = t.get_item(0)?.extract().map_err(|_| bad("operation tag"))?;
            let o = match (tag.as_str(), t.len()) {
                ("s", 2) => FOp::Step(bytes_to_f64s(&t.get_item(1)?, "setpoints")?.into()),
                ("d", 2) => FOp::Drift(bytes_to_f64s(&t.get_item(1)?, "drift")?.into()),
                ("p", 4) => FOp::Post {
                    i: t.get_item(1)?.extract()?,
                    var: t.get_item(2)?.extract()?,
                    val: PostVal::from_py(&t.get_item(3)?)?,
                },
                ("r", 6) => {
                    let opt = |k: usize, what: &str| -> PyResult<Option<Vec<f64>>> {
                        let v = t.get_item(k)?;
                        if v.is_none() {
                            Ok(None)
                        } else {
                            bytes_to_f64s(&v, what).map(Some)
                        }
                    };
                    let (r, h, d): (f64, f64, f64) = t.get_item(5)?.extract()?;
                    FOp::Reset(Arc::new(ResetOp {
                        idx: t.get_item(1)?.extract()?,
                        seed: t.get_item(2)?.extract()?,
                        start: opt(3, "start")?,
                        drift: opt(4, "drift")?,
                        start_radius: r,
                        heading_spread: h,
                        max_drift: d,
                    }))
                }
                _ => return Err(bad("operation")),
            };
            out.push(o);
        }
        Ok((j, out))
    }
}
