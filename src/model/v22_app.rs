//! The uSimMarineV22 app around the model (docs/v22.md §1, §3, §7–§13): the
//! iteration's order (obstacle, disabled, embedded PID, propagation,
//! handshakes, pose group, drift summary, wormholes), the V22 mail and what
//! each iteration publishes.
//!
//! Postings are recorded as compact events during the step and turned into
//! [`Publication`]s only when asked for, so replays without a posts log pay
//! nothing for the strings.
use super::angles::{angle360, snap_to_step};
use super::handshake::{Handshake, Report};
use super::pid::{PidEngine, PidOutput, PidPost};
use super::sailing::Sailing;
use super::wormhole::WormholeSet;
use super::{drift, Params, PubValue, Publication, Record, Vehicle};
use crate::command::{Command, MessageError};

/// One posting of a V22 iteration, kept compact until published.
#[derive(Debug, Clone)]
pub(super) enum Ev {
    /// The pose group of the NAV record (`gt`: of the ground truth, with
    /// the `P_GT` prefix) as it stood when posted: the record itself while
    /// [`V22State::pose_live`], else the copy in [`V22State::posed`].
    Pose { gt: bool },
    /// `USM_DRIFT_SUMMARY`.
    DriftSummary((f64, f64)),
    /// `USM_RESET_COUNT`.
    ResetCount(u64),
    /// A PID posting.
    Pid(PidPost),
    /// `BUOYANCY_REPORT` / `TRIM_REPORT`.
    Report(Report),
    /// `P_TRANSP`.
    Transp(f64),
}

/// V22 state beyond the core model.
///
/// `repr(C)` with `sailing_on` last (but for a V22 flag in the padding
/// after it): every step (classic too) reads it, and
/// the vehicle's per-step fields follow this struct directly
/// (`Vehicle`'s layout), so the flag shares their cache lines.
#[derive(Debug, Clone)]
#[repr(C)]
pub(super) struct V22State {
    /// Boxed: the engine is large and only V22 vehicles with a coupled PID
    /// have one; inline it made every vehicle larger.
    pub pid: Option<Box<PidEngine>>,
    pub sailing: Sailing,
    /// The NAV record's sailing cap of the last step, m/s (NaN: none).
    pub sail_cap: f64,
    pub wormholes: WormholeSet,
    pub handshake: Handshake,
    /// This iteration's postings (mail postings first).
    pub events: Vec<Ev>,
    /// Postings made by mail since the last step.
    pub mail_events: Vec<Ev>,
    pid_posts: Vec<PidPost>,
    reports: Vec<Report>,
    /// The PID's outputs of the last iteration, if it ran.
    pub pid_out: Option<PidOutput>,
    /// Where among `events` the PID's outputs of the last iteration (when
    /// [`V22State::pid_out`] holds them) are posted on `post_des_thrust`'s
    /// and `post_des_rudder`'s variables (those configured, in that order):
    /// before the event of this index (after the last one when it is
    /// `events.len()`). A position rather than an event: the step pays
    /// nothing for it; it is read only with `pid_out` set, which the same
    /// iteration's PID step sets with it.
    pub des_out_at: usize,
    /// Where among `events` this iteration's pose group of the NAV record
    /// (and in dual-state mode the ground truth's after it) is posted, as
    /// [`V22State::des_out_at`] (after the PID's outputs when both are at
    /// the same index); `usize::MAX`: not posted. The pose groups of
    /// [`Ev::Pose`] events (the obstacle's) come where those events are.
    pub pose_at: usize,
    /// The posted NAV and ground-truth records when not
    /// [`V22State::pose_live`] (boxed and made on first use: most
    /// vehicles never need it).
    pub posed: Option<Box<[Record; 2]>>,
    /// The turn-speed map's spans (`TurnSpeedMap::spans`) as last
    /// normalized.
    pub tsm_spans: (f64, f64),
    /// [`Params::depth_control`], fixed at construction.
    depth_control: bool,
    /// The pose events of this iteration stand for `Vehicle::nav` and
    /// `Vehicle::gt` as they are (nothing changed them since they were
    /// posted): the step copies no record. Anything about to change a
    /// record first copies both into [`V22State::posed`]
    /// (`Vehicle::v22_freeze_poses`).
    pub pose_live: bool,
    /// Sailing enabled (wind set and a polar point), cached for the step.
    pub sailing_on: bool,
    /// `TurnSpeedMap::plain` of the map as last normalized (with
    /// [`V22State::tsm_spans`]; in the padding after `sailing_on`).
    pub tsm_plain: bool,
}

/// Whether the environment's wind drives the sailing cap: `[wind]` on and
/// a polar plot given (docs/model.md §24.4; the wind then replaces
/// `wind_conditions` every step).
fn env_wind_sails(p: &Params, sailing: &super::sailing::Sailing) -> bool {
    p.env.as_ref().is_some_and(|e| e.wind.is_some()) && !sailing.plot.is_empty()
}

impl V22State {
    pub fn new(p: &Params) -> V22State {
        let sailing = p.sailing.clone();
        V22State {
            pid: p
                .pid
                .clone()
                .map(|s| Box::new(PidEngine::with_math(s, p.math))),
            sailing_on: sailing.enabled() || env_wind_sails(p, &sailing),
            sailing,
            sail_cap: f64::NAN,
            wormholes: p.wormholes.clone(),
            handshake: Handshake::default(),
            events: Vec::with_capacity(16),
            mail_events: Vec::new(),
            pid_posts: Vec::with_capacity(8),
            reports: Vec::new(),
            pid_out: None,
            des_out_at: usize::MAX,
            pose_at: usize::MAX,
            depth_control: p.depth_control(),
            pose_live: false,
            posed: None,
            tsm_spans: (f64::NAN, f64::NAN),
            tsm_plain: false,
        }
    }
}

/// The V22 columns of the CSV beyond the 23 base ones (docs/v22.md §17):
/// NaN where not meaningful.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct V22Columns {
    /// PID rudder of the iteration (NaN when it did not run).
    pub desired_rudder: f64,
    /// PID thrust of the iteration, percent.
    pub desired_thrust: f64,
    /// PID elevator of the iteration, degrees.
    pub desired_elevator: f64,
    /// Ground-truth heading, degrees.
    pub gt_heading: f64,
    /// Ground-truth stored speed, m/s.
    pub gt_speed: f64,
    /// Turn radius in force, m (0 = off).
    pub turn_radius: f64,
    /// Wormhole transparency, 0..1 (NaN without wormholes).
    pub transp: f64,
    /// Sailing speed cap the step used, m/s (NaN without sailing).
    pub sail_cap: f64,
}

fn dropped(var: &str, payload: impl std::fmt::Display, why: &str) -> MessageError {
    MessageError::new(var, payload, why)
}

impl Vehicle {
    /// The V22 columns after the last step (all NaN for the classic model,
    /// except the ground truth and the turn radius).
    pub fn v22_columns(&self) -> V22Columns {
        let (dr, dt, de) = match self.v22.pid_out {
            Some(o) => (o.rudder, o.thrust, o.elevator),
            None => (f64::NAN, f64::NAN, f64::NAN),
        };
        V22Columns {
            desired_rudder: dr,
            desired_thrust: dt,
            desired_elevator: de,
            gt_heading: self.gt.heading,
            gt_speed: self.gt.speed,
            turn_radius: self.turn_radius,
            transp: if self.v22.wormholes.is_empty() {
                f64::NAN
            } else {
                self.v22.wormholes.transparency()
            },
            sail_cap: if self.v22.sailing_on {
                self.v22.sail_cap
            } else {
                f64::NAN
            },
        }
    }

    /// The embedded PID's outputs of the last iteration, if it ran.
    pub fn pid_output(&self) -> Option<PidOutput> {
        self.v22.pid_out
    }

    /// The embedded PID's engine, if one is configured.
    pub fn pid(&self) -> Option<&PidEngine> {
        self.v22.pid.as_deref()
    }

    pub(super) fn v22_reset_posted(&mut self) {
        self.v22.mail_events.push(Ev::ResetCount(self.reset_count));
    }

    /// The V22 mail beyond the core (docs/v22.md §3): PID inputs first,
    /// then the simulator's handling.
    pub(super) fn handle_v22_command(
        &mut self,
        cmd: Command,
        t_s: f64,
    ) -> Result<(), MessageError> {
        use Command as C;
        let var = cmd.var();
        if !self.is_v22() {
            return Err(dropped(
                var,
                format!("{cmd:?}"),
                "not read by the classic model this vehicle runs: only the v22 model (uSimMarineV22) \
                 reads it (model = \"v22\" in the config)",
            ));
        }
        const NO_PID: &str =
            "no embedded PID on this vehicle (configure yaw_pid_kp etc. to couple it)";
        let enabled = self.enabled;
        let st = &mut self.v22;
        match cmd {
            C::DesiredHeading(v) => st
                .pid
                .as_mut()
                .ok_or_else(|| dropped(var, v, NO_PID))?
                .set_desired_heading(v),
            C::DesiredSpeed(v) => st
                .pid
                .as_mut()
                .ok_or_else(|| dropped(var, v, NO_PID))?
                .set_desired_speed(v),
            C::DesiredDepth(v) => st
                .pid
                .as_mut()
                .ok_or_else(|| dropped(var, v, NO_PID))?
                .set_desired_depth(v),
            C::SpeedFactor(v) => st
                .pid
                .as_mut()
                .ok_or_else(|| dropped(var, v, NO_PID))?
                .set_speed_factor(v),
            C::ManualOverride(s) => {
                let pid = st.pid.as_mut().ok_or_else(|| dropped(var, &s, NO_PID))?;
                if !pid.manual_override(&s) {
                    return Err(dropped(var, format!("{s:?}"), "expected true or false"));
                }
            }
            C::NavHeading(v) => {
                let fed = match st.pid.as_mut() {
                    Some(p) => {
                        p.set_nav_heading(v);
                        true
                    }
                    None => false,
                };
                if !enabled {
                    self.nav.heading = v;
                    self.gt.heading = v;
                    self.rudder = 0.0;
                } else if !fed {
                    return Err(dropped(var, v, "ignored while USM_ENABLED is true"));
                }
            }
            C::NavX(v) | C::NavY(v) => {
                if enabled {
                    return Err(dropped(var, v, "ignored while USM_ENABLED is true"));
                }
                let is_x = matches!(cmd, C::NavX(_));
                for r in [&mut self.nav, &mut self.gt] {
                    if is_x {
                        r.x = v;
                    } else {
                        r.y = v;
                    }
                }
                self.rudder = 0.0;
            }
            C::ResetNav(_) => {
                // docs/v22.md §7: every field, the time stamp included
                self.nav = self.gt;
            }
            C::WindConditions(s) => {
                let r = st.sailing.set_wind(&s);
                st.sailing_on = st.sailing.enabled() || env_wind_sails(&self.params, &st.sailing);
                r.map_err(|e| {
                    dropped(
                        var,
                        format!("{s:?}"),
                        &format!(
                            "{e}; the elements before it were applied (as uSimMarineV22 does)"
                        ),
                    )
                })?;
            }
            C::BuoyancyControl(s) => {
                if !s.trim().eq_ignore_ascii_case("true") {
                    return Err(dropped(
                        var,
                        format!("{s:?}"),
                        "only `true` starts a request",
                    ));
                }
                self.buoyancy_rate = 0.0;
                let r = st.handshake.request_buoyancy(t_s);
                st.mail_events.push(Ev::Report(r));
            }
            C::TrimControl(s) => {
                if !s.trim().eq_ignore_ascii_case("true") {
                    return Err(dropped(
                        var,
                        format!("{s:?}"),
                        "only `true` starts a request",
                    ));
                }
                let r = st.handshake.request_trim(t_s);
                st.mail_events.push(Ev::Report(r));
            }
            other => {
                return Err(dropped(var, format!("{other:?}"), "not handled"));
            }
        }
        Ok(())
    }

    /// Remember the NAV record's published speed and heading (CSV columns).
    fn note_nav_published(&mut self, rec: &Record) {
        self.nav_posted = Some((rec.speed, rec.heading, false));
    }

    /// Before a record changes while this iteration's pose events stand
    /// for the records themselves ([`V22State::pose_live`]): copy both
    /// records for them. Mail calls it first thing; the step before a
    /// wormhole moves the vehicle.
    #[cold]
    pub(super) fn v22_freeze_poses(&mut self) {
        let (nav, gt) = (self.nav, self.gt);
        let st = &mut self.v22;
        **st.posed.get_or_insert_with(Default::default) = [nav, gt];
        st.pose_live = false;
    }

    /// The record a pose event of this iteration posts (`gt`: the ground
    /// truth's).
    fn posed_record(&self, gt: bool) -> &Record {
        match (&self.v22.posed, self.v22.pose_live) {
            (Some(b), false) => &b[usize::from(gt)],
            _ if gt => &self.gt,
            _ => &self.nav,
        }
    }

    fn published_speed(&self, v: f64) -> f64 {
        let s = snap_to_step(v, 0.01);
        if s > self.params.max_speed {
            self.params.max_speed
        } else {
            s
        }
    }

    /// One V22 iteration at clock `t_s` (docs/v22.md §1).
    pub(super) fn step_v22(&mut self, t_s: f64) {
        let k = self.iteration;
        {
            let st = &mut self.v22;
            st.events.clear();
            if !st.mail_events.is_empty() {
                st.events.append(&mut st.mail_events);
            }
            st.pose_at = usize::MAX;
            st.sail_cap = f64::NAN;
            st.pose_live = false;
        }
        if self.obstacle {
            self.v22.pid_out = None;
            if k % 2 == 0 {
                let mut r = self.nav;
                r.speed = 0.0;
                self.note_nav_published(&r);
                let gt = self.gt;
                let st = &mut self.v22;
                **st.posed.get_or_insert_with(Default::default) = [r, gt];
                st.events.push(Ev::Pose { gt: false });
                st.events.push(Ev::Pose { gt: false });
            }
            return;
        }
        if !self.enabled {
            self.v22.pid_out = None;
            self.nav.stamp = t_s;
            self.gt.stamp = t_s;
            return;
        }
        let st = &mut self.v22;
        if let Some(pid) = st.pid.as_mut() {
            let out = pid.step(t_s, &self.nav, &mut st.pid_posts);
            st.pid_out = Some(out);
            st.des_out_at = st.events.len();
            // apply_actuator's V22 rules for the rudder and the thrust
            if !self.mode_diff {
                self.set_rudder(out.rudder, t_s);
                self.thrust = out.thrust;
            }
            self.elevator = out.elevator;
            // the PID's postings after the outputs are applied (the outputs
            // are not live across the growth of `events`: no spills)
            let st = &mut self.v22;
            if !st.pid_posts.is_empty() {
                st.events.extend(st.pid_posts.drain(..).map(Ev::Pid));
            }
        } else {
            st.pid_out = None;
        }
        self.propagate(t_s);
        if self.v22.depth_control && self.v22.handshake.pending() {
            let st = &mut self.v22;
            st.handshake.check(
                t_s,
                self.nav.pitch,
                self.params.trim_tolerance,
                self.params.max_trim_delay,
                &mut st.reports,
            );
            st.events.extend(st.reports.drain(..).map(Ev::Report));
        }
        if k % 2 == 0 {
            // the records themselves stand for the pose (no copy): see
            // `V22State::pose_live`
            self.nav_posted = Some((self.nav.speed, self.nav.heading, false));
            self.v22.pose_live = true;
            // (a position rather than events, as `des_out_at`)
            self.v22.pose_at = self.v22.events.len();
        }
        if self.drift_fresh {
            self.drift_fresh = false;
            self.v22.events.push(Ev::DriftSummary(self.drift));
        }
        if !self.v22.wormholes.is_empty() {
            if let Some((x, y)) = self.v22.wormholes.update(t_s, self.nav.x, self.nav.y) {
                if self.v22.pose_live {
                    self.v22_freeze_poses();
                }
                for r in [&mut self.nav, &mut self.gt] {
                    r.x = x;
                    r.y = y;
                }
                self.rudder = 0.0;
            }
            let a = self.v22.wormholes.transparency();
            self.v22.events.push(Ev::Transp(a));
        }
    }

    /// What the last V22 iteration published, in order.
    pub(super) fn publications_v22(&self) -> Vec<Publication> {
        let mut out = Vec::with_capacity(self.v22.events.len() * 8);
        let num = |out: &mut Vec<Publication>, var: String, v: f64| {
            out.push(Publication {
                var,
                value: PubValue::Number(v),
            })
        };
        let text = |out: &mut Vec<Publication>, var: &str, v: String| {
            out.push(Publication {
                var: var.to_string(),
                value: PubValue::Text(v),
            })
        };
        let p = &self.params;
        let des_out = |out: &mut Vec<Publication>| {
            if let Some(o) = self.v22.pid_out {
                if let Some(name) = &p.post_des_thrust {
                    num(out, name.clone(), o.thrust);
                }
                if let Some(name) = &p.post_des_rudder {
                    num(out, name.clone(), o.rudder);
                }
            }
        };
        let poses = |out: &mut Vec<Publication>| {
            self.pose_group(out, self.posed_record(false), false);
            if p.dual_state {
                self.pose_group(out, self.posed_record(true), true);
            }
        };
        for (i, ev) in self.v22.events.iter().enumerate() {
            if i == self.v22.des_out_at {
                des_out(&mut out);
            }
            if i == self.v22.pose_at {
                poses(&mut out);
            }
            match ev {
                Ev::Pose { gt } => self.pose_group(&mut out, self.posed_record(*gt), *gt),
                Ev::DriftSummary(d) => text(&mut out, "USM_DRIFT_SUMMARY", drift::summary(*d)),
                Ev::ResetCount(n) => num(&mut out, "USM_RESET_COUNT".into(), *n as f64),
                Ev::Pid(PidPost::HasControl(b)) => text(&mut out, "PID_HAS_CONTROL", b.to_string()),
                Ev::Pid(PidPost::Stale(tag, d)) => {
                    text(&mut out, "PID_STALE", super::pid::stale_text(tag, *d))
                }
                Ev::Report(r) => text(&mut out, r.var(), r.text()),
                Ev::Transp(a) => num(&mut out, format!("{}_TRANSP", p.prefix), *a),
            }
        }
        if self.v22.des_out_at == self.v22.events.len() {
            des_out(&mut out);
        }
        if self.v22.pose_at == self.v22.events.len() {
            poses(&mut out);
        }
        // Never publish NaN/inf (e.g. a latitude beyond the projection far
        // from the datum), as in the classic postings.
        out.retain(|p| !matches!(p.value, PubValue::Number(x) if !x.is_finite()));
        out
    }

    /// The pose group of `rec` (docs/v22.md §13).
    fn pose_group(&self, out: &mut Vec<Publication>, rec: &Record, gt: bool) {
        let p = &self.params;
        let prefix = if gt {
            format!("{}_GT", p.prefix)
        } else {
            p.prefix.clone()
        };
        let mut num = |name: &str, v: f64| {
            out.push(Publication {
                var: format!("{prefix}_{name}"),
                value: PubValue::Number(v),
            })
        };
        num("X", rec.x);
        num("Y", rec.y);
        let ll = self
            .geo
            .as_ref()
            .map(|g| g.to_lat_lon(rec.ll_xy.0, rec.ll_xy.1));
        if let Some((lat, lon)) = ll {
            num("LAT", lat);
            num("LONG", lon);
        }
        let summary = p.post_navpos_summary.then(|| {
            let mut s = format!("x={},y={}", drift::fmt_x(rec.x, 3), drift::fmt_x(rec.y, 3));
            if let Some((lat, lon)) = ll {
                if lat != 0.0 && lon != 0.0 && lat.is_finite() && lon.is_finite() {
                    s.push_str(&format!(
                        ",lat={},lon={}",
                        drift::fmt_x(lat, 7),
                        drift::fmt_x(lon, 7)
                    ));
                }
            }
            s
        });
        let fixed = |out: &mut Vec<Publication>, var: &str, value: PubValue| {
            out.push(Publication {
                var: var.to_string(),
                value,
            })
        };
        if let Some(s) = summary {
            fixed(out, "USM_NAVPOS_SUMMARY", PubValue::Text(s));
        }
        let mut num = |name: &str, v: f64| {
            out.push(Publication {
                var: format!("{prefix}_{name}"),
                value: PubValue::Number(v),
            })
        };
        num("HEADING", angle360(rec.heading));
        num("SPEED", self.published_speed(rec.speed));
        num("DEPTH", rec.depth);
        if p.depth_control() {
            fixed(out, "SIMULATION_MODE", PubValue::Text("TRUE".into()));
            let mut num = |name: &str, v: f64| {
                out.push(Publication {
                    var: format!("{prefix}_{name}"),
                    value: PubValue::Number(v),
                })
            };
            num("Z", -rec.depth);
            num("PITCH", rec.pitch);
            num("YAW", rec.yaw);
            fixed(out, "TRUE_X", PubValue::Number(rec.x));
            fixed(out, "TRUE_Y", PubValue::Number(rec.y));
        }
        let mut num = |name: &str, v: f64| {
            out.push(Publication {
                var: format!("{prefix}_{name}"),
                value: PubValue::Number(v),
            })
        };
        num("HEADING_OVER_GROUND", angle360(rec.hog()));
        num("SPEED_OVER_GROUND", rec.sog);
        if let Some(a) = rec.altitude {
            num("ALTITUDE", a);
        }
    }
}
