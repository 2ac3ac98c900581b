//! The seam between the true state and what the vehicle publishes: a
//! [`NavSensors`] (built by `crate::sensor` from the `[sensors]` table)
//! reads the NAV record once per posting iteration and returns what the
//! `NAV_*` postings, the snapshot's `sensed` block and the NMEA fix show.
//! The model only calls it; the noise, faults and latency live above the
//! model (docs/model.md, "Sensors"). Without sensors nothing here runs.

/// The true values a sensor reads, as the NAV record holds them. Units: m,
/// m/s, degrees, s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Truth {
    /// Mission time, s (clock − start time).
    pub t: f64,
    /// East, m.
    pub x: f64,
    /// North, m.
    pub y: f64,
    /// Speed as stored, m/s.
    pub speed: f64,
    /// Heading as stored, degrees.
    pub heading: f64,
    /// Depth, m.
    pub depth: f64,
}

/// What the sensors report for one iteration. `None`: that sensor has no
/// reading (a dropout or a failure): its `NAV_*` postings stop.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Reading {
    /// GPS position (east, north), m.
    pub pos: Option<(f64, f64)>,
    /// Speed, m/s.
    pub speed: Option<f64>,
    /// Heading, degrees (not wrapped).
    pub heading: Option<f64>,
    /// Depth, m.
    pub depth: Option<f64>,
    /// GGA fix quality: 0 = no fix, else the configured quality.
    pub fix_quality: u8,
    /// Horizontal dilution of precision (NaN without a fix).
    pub hdop: f64,
    /// Satellites in use (0 without a fix).
    pub satellites: u8,
}

/// A vehicle's sensor suite: advanced once per posting iteration, switched
/// by `USM_SENSOR` messages. Implementations are seeded and deterministic.
pub trait NavSensors: std::fmt::Debug + Send + Sync {
    /// Read `truth` (one call per posting iteration, in time order).
    fn sense(&mut self, truth: &Truth) -> Reading;
    /// Apply a `USM_SENSOR` message received at mission time `t` (s); an
    /// error names what is wrong and changes nothing.
    fn command(&mut self, text: &str, t: f64) -> Result<(), String>;
    /// A boxed copy (vehicles are `Clone`).
    fn box_clone(&self) -> Box<dyn NavSensors>;
    /// The suite itself, for the layers above the model that made it to
    /// read its settings back (a sweep redraws them per run).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// A boxed [`NavSensors`] that clones (for `Params` and `Vehicle`).
#[derive(Debug)]
pub struct SensorBox(pub Box<dyn NavSensors>);

impl Clone for SensorBox {
    fn clone(&self) -> Self {
        SensorBox(self.0.box_clone())
    }
}
