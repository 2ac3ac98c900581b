//! `usim plot`: a one-page figure of one or many runs, as SVG or PNG.
//!
//! Panels (top to bottom, each optional): the track in x/y with equal axes
//! (m; coloured by time, start ● and end ✕ marked, heading ticks along it),
//! then time series of speed (m/s), heading (degrees), depth (m) and the
//! actuators (rudder, thrust, elevator). Drawn with `plotters`; text is
//! measured and rasterised with the embedded DejaVu Sans font (no system
//! fonts), PNG encoded by the pure-Rust `png` crate.
use std::fmt;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

pub mod alog_run;
pub mod run_csv;
pub mod scene;

pub use run_csv::{CsvError, Run};

/// The embedded font (DejaVu Sans; licence in assets/fonts/).
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

/// Figure width, pixels.
pub const WIDTH: u32 = 1000;
const TRACK_H: u32 = 700;
const SERIES_H: u32 = 220;
const TITLE_H: u32 = 40;
const MAX_POINTS: usize = 4000;

/// A panel of the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    /// x/y track, equal axes.
    Track,
    /// Speed over time.
    Speed,
    /// Heading over time.
    Heading,
    /// Depth over time.
    Depth,
    /// Rudder, thrust and elevator over time.
    Actuators,
}

impl Panel {
    /// Every panel, in figure order.
    pub const ALL: [Panel; 5] = [
        Panel::Track,
        Panel::Speed,
        Panel::Heading,
        Panel::Depth,
        Panel::Actuators,
    ];

    /// The panel's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Panel::Track => "track",
            Panel::Speed => "speed",
            Panel::Heading => "heading",
            Panel::Depth => "depth",
            Panel::Actuators => "actuators",
        }
    }

    /// Parse a comma-separated list of panel names.
    pub fn parse_list(s: &str) -> Result<Vec<Panel>, String> {
        let mut out = Vec::new();
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let p = Panel::ALL
                .into_iter()
                .find(|p| p.name() == w)
                .ok_or_else(|| {
                    format!(
                        "unknown panel {w:?}; panels are {}",
                        Panel::ALL.map(Panel::name).join(",")
                    )
                })?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if out.is_empty() {
            return Err("no panel given".into());
        }
        Ok(out)
    }

    fn height(self) -> u32 {
        if self == Panel::Track {
            TRACK_H
        } else {
            SERIES_H
        }
    }
}

/// Image format of the figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics.
    Svg,
    /// PNG bitmap (8-bit RGB).
    Png,
}

/// What to draw.
#[derive(Debug, Clone)]
pub struct Figure {
    /// Panels in order.
    pub panels: Vec<Panel>,
    /// Title at the top (none: no title line).
    pub title: Option<String>,
    /// Obstacle polygons drawn under the tracks (`usim plot --obstacles`,
    /// docs/obstacles.md), m.
    pub obstacles: Vec<crate::obstacle::Polygon>,
    /// The wind and sea named in the track panel's legend (`usim plot
    /// --env`); nothing drawn when both are `None`.
    pub environment: EnvLegend,
}

/// The wind and sea of a run (a vehicle file's `[wind]` and `[sea]`), as
/// the track panel's legend shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EnvLegend {
    /// Mean wind speed, m/s, and the direction it comes from, degrees
    /// clockwise from north.
    pub wind: Option<(f64, f64)>,
    /// Significant wave height Hs (m), peak period Tp (s) and the
    /// direction the waves come from (degrees clockwise from north).
    pub sea: Option<(f64, f64, f64)>,
}

impl EnvLegend {
    /// The legend's lines: `wind 8.0 m/s from 060°`,
    /// `sea Hs 1.00 m, Tp 5.0 s from 045°`.
    pub fn lines(&self) -> Vec<String> {
        let deg = |d: f64| format!("{:03.0}", d.rem_euclid(360.0).round() % 360.0);
        let mut out = Vec::new();
        if let Some((u, from)) = self.wind {
            out.push(format!("wind {u:.1} m/s from {}°", deg(from)));
        }
        if let Some((hs, tp, from)) = self.sea {
            out.push(format!(
                "sea Hs {hs:.2} m, Tp {tp:.1} s from {}°",
                deg(from)
            ));
        }
        out
    }
}

/// Colour of the sensed (published) track: teal, as in the live view.
pub const SENSED_COLOUR: RGBColor = RGBColor(11, 114, 133);

/// Fill of the obstacle polygons in the track panel (light grey; the
/// edge is a darker grey).
pub const OBSTACLE_FILL: RGBColor = RGBColor(200, 200, 200);

/// A run with its legend label.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// Label (vehicle or file name).
    pub label: String,
    /// The data.
    pub run: Run,
}

/// A drawing error (from plotters or the PNG encoder).
#[derive(Debug, Clone)]
pub struct PlotError(pub String);

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

fn err(e: impl fmt::Display) -> PlotError {
    PlotError(e.to_string())
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            // The font is embedded and known to parse (tested).
            let _ = plotters::style::register_font(FAMILY, style, FONT);
        }
    });
}

/// Figure size in pixels for `fig`.
pub fn size(fig: &Figure) -> (u32, u32) {
    let h: u32 = fig.panels.iter().map(|p| p.height()).sum::<u32>()
        + if fig.title.is_some() { TITLE_H } else { 0 };
    (WIDTH, h)
}

/// Render `runs` as `format`; returns the file's bytes.
pub fn render(runs: &[Labelled], fig: &Figure, format: ImageFormat) -> Result<Vec<u8>, PlotError> {
    register_font();
    let (w, h) = size(fig);
    match format {
        ImageFormat::Svg => {
            let mut s = String::new();
            {
                let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
                draw(root, runs, fig)?;
            }
            Ok(s.into_bytes())
        }
        ImageFormat::Png => {
            let mut rgb = vec![255u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                draw(root, runs, fig)?;
            }
            let mut out = Vec::new();
            {
                let mut enc = png::Encoder::new(&mut out, w, h);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                enc.set_compression(png::Compression::Fast);
                let mut wr = enc.write_header().map_err(err)?;
                wr.write_image_data(&rgb).map_err(err)?;
                wr.finish().map_err(err)?;
            }
            Ok(out)
        }
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    runs: &[Labelled],
    fig: &Figure,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let mut rest = match &fig.title {
        Some(t) => root
            .titled(t, (FAMILY, 24).into_font().style(FontStyle::Bold))
            .map_err(err)?,
        None => root,
    };
    let (t0, t1) = time_range(runs);
    for (i, panel) in fig.panels.iter().enumerate() {
        let area = if i + 1 < fig.panels.len() {
            let (a, b) = rest.split_vertically(panel.height());
            rest = b;
            a
        } else {
            rest.clone()
        };
        match panel {
            Panel::Track => draw_track(&area, runs, fig, (t0, t1))?,
            Panel::Speed => draw_series(
                &area,
                runs,
                (t0, t1),
                "speed",
                "m/s",
                &[("", |r| &r.speed)],
                false,
            )?,
            Panel::Heading => {
                // Unwrapped: a course through north is a line, not a jump
                // between the 0 and 360 bands.
                let unwrapped: Vec<Labelled> = runs
                    .iter()
                    .map(|l| {
                        let mut l = l.clone();
                        l.run.heading = unwrap_heading(&l.run.heading);
                        l
                    })
                    .collect();
                draw_series(
                    &area,
                    &unwrapped,
                    (t0, t1),
                    "heading",
                    "degrees, unwrapped",
                    &[("", |r| &r.heading)],
                    false,
                )?
            }
            Panel::Depth => draw_series(
                &area,
                runs,
                (t0, t1),
                "depth",
                "m",
                &[("", |r| &r.depth)],
                false,
            )?,
            Panel::Actuators => draw_series(
                &area,
                runs,
                (t0, t1),
                "actuators",
                "percent of full",
                &[
                    ("rudder", |r| &r.rudder),
                    ("thrust", |r| &r.thrust),
                    ("elevator", |r| &r.elevator),
                ],
                false,
            )?,
        }
    }
    root_present(&rest)
}

fn root_present<DB: DrawingBackend>(a: &DrawingArea<DB, Shift>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    a.present().map_err(err)
}

/// Time range over all runs, s (finite, non-empty).
fn time_range(runs: &[Labelled]) -> (f64, f64) {
    let (lo, hi) = min_max(runs.iter().flat_map(|r| r.run.t.iter().copied()));
    if hi > lo {
        (lo, hi)
    } else {
        (lo, lo + 1.0)
    }
}

/// Minimum and maximum of the finite values (0, 0 without any).
fn min_max(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v.filter(|x| x.is_finite()) {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if lo > hi {
        (0.0, 0.0)
    } else {
        (lo, hi)
    }
}

/// A viridis-like colour for `f` in 0..1 (early = purple, late = yellow).
pub fn time_colour(f: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (68, 1, 84),
        (59, 82, 139),
        (33, 145, 140),
        (94, 201, 98),
        (253, 231, 37),
    ];
    let f = if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = f * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let u = x - i as f64;
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * u).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(lerp(a.0, b.0), lerp(a.1, b.1), lerp(a.2, b.2))
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

fn label_font(size: u32) -> TextStyle<'static> {
    (FAMILY, size).into_font().into()
}

fn draw_track<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    runs: &[Labelled],
    fig: &Figure,
    (t0, t1): (f64, f64),
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let (obstacles, env) = (&fig.obstacles, &fig.environment);
    let area = area
        .titled("track (x east, y north; colour = time)", label_font(16))
        .map_err(err)?;
    let ob_pts = || obstacles.iter().flat_map(|p| p.pts.iter().copied());
    let (xlo, xhi) = min_max(
        runs.iter()
            .flat_map(|r| r.run.x.iter().copied())
            .chain(ob_pts().map(|p| p.0)),
    );
    let (ylo, yhi) = min_max(
        runs.iter()
            .flat_map(|r| r.run.y.iter().copied())
            .chain(ob_pts().map(|p| p.1)),
    );
    // Equal axes: metres per pixel the same both ways.
    let (margin, xlab, ylab) = (10u32, 40u32, 70u32);
    let (aw, ah) = area.dim_in_pixel();
    let pw = aw.saturating_sub(2 * margin + ylab).max(10) as f64;
    let ph = ah.saturating_sub(2 * margin + xlab).max(10) as f64;
    let span_x = (xhi - xlo).max(1.0) * 1.1;
    let span_y = (yhi - ylo).max(1.0) * 1.1;
    let mpp = (span_x / pw).max(span_y / ph);
    let (cx, cy) = ((xlo + xhi) / 2.0, (ylo + yhi) / 2.0);
    let (hx, hy) = (mpp * pw / 2.0, mpp * ph / 2.0);
    let mut chart = ChartBuilder::on(&area)
        .margin(margin)
        .x_label_area_size(xlab)
        .y_label_area_size(ylab)
        .build_cartesian_2d(cx - hx..cx + hx, cy - hy..cy + hy)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("x (m)")
        .y_desc("y (m)")
        .label_style(label_font(13))
        .axis_desc_style(label_font(14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    for ob in obstacles {
        chart
            .draw_series(std::iter::once(Polygon::new(
                ob.pts.clone(),
                OBSTACLE_FILL.filled(),
            )))
            .map_err(err)?;
        let mut edge = ob.pts.clone();
        edge.extend(ob.pts.first().copied());
        chart
            .draw_series(std::iter::once(PathElement::new(
                edge,
                RGBColor(120, 120, 120).stroke_width(1),
            )))
            .map_err(err)?;
    }
    for lr in runs.iter().filter(|l| l.run.has_sensed()) {
        draw_sensed(&mut chart, &lr.run)?;
    }
    let tick_len = mpp * 7.0;
    let tspan = t1 - t0;
    for (ri, lr) in runs.iter().enumerate() {
        let r = &lr.run;
        let n = r.len();
        // Coloured pieces: about 200 per run, each one colour (its middle time).
        let piece = n.div_ceil(200).max(1);
        let mut start = 0;
        while start + 1 < n {
            let end = (start + piece).min(n - 1);
            let mid = (r.t[start] + r.t[end]) / 2.0;
            let colour = time_colour((mid - t0) / tspan);
            let pts = (start..=end)
                .filter(|&i| r.x[i].is_finite() && r.y[i].is_finite())
                .map(|i| (r.x[i], r.y[i]));
            chart
                .draw_series(std::iter::once(PathElement::new(
                    pts.collect::<Vec<_>>(),
                    colour.stroke_width(2),
                )))
                .map_err(err)?;
            start = end;
        }
        // Heading marks: about 40 small arrowheads spaced by distance along
        // the track (never closer than 4 arrow lengths on the page), pointing
        // where the bow points (0 = north, clockwise).
        let marks = arrow_rows(&r.x, &r.y, tick_len * 4.0);
        let ticks = marks.into_iter().filter_map(|i| {
            let (x, y, h) = (r.x[i], r.y[i], r.heading[i].to_radians());
            (x.is_finite() && y.is_finite() && h.is_finite()).then(|| {
                let (dx, dy) = (h.sin() * tick_len, h.cos() * tick_len);
                Polygon::new(
                    vec![
                        (x + dx, y + dy),
                        (x - 0.5 * dx + 0.6 * dy, y - 0.5 * dy - 0.6 * dx),
                        (x - 0.5 * dx - 0.6 * dy, y - 0.5 * dy + 0.6 * dx),
                    ],
                    RGBColor(40, 40, 40).mix(0.75).filled(),
                )
            })
        });
        chart.draw_series(ticks).map_err(err)?;
        // Start and end.
        let first = (0..n).find(|&i| r.x[i].is_finite() && r.y[i].is_finite());
        let last = (0..n)
            .rev()
            .find(|&i| r.x[i].is_finite() && r.y[i].is_finite());
        if let (Some(a), Some(b)) = (first, last) {
            chart
                .draw_series(std::iter::once(Circle::new(
                    (r.x[a], r.y[a]),
                    6,
                    RGBColor(0, 150, 0).filled(),
                )))
                .map_err(err)?;
            chart
                .draw_series(std::iter::once(Cross::new(
                    (r.x[b], r.y[b]),
                    7,
                    RGBColor(200, 0, 0).stroke_width(3),
                )))
                .map_err(err)?;
            if runs.len() > 1 || !lr.label.is_empty() {
                chart
                    .draw_series(std::iter::once(Text::new(
                        lr.label.clone(),
                        (r.x[a] + mpp * 8.0, r.y[a] + mpp * 8.0),
                        label_font(13).color(&PALETTE[ri % PALETTE.len()]),
                    )))
                    .map_err(err)?;
            }
        }
    }
    // Time colour bar, top left of the plotting area.
    let (x0, y0) = ((margin + ylab + 12) as i32, (margin + 8) as i32);
    let bar_w = 160;
    for i in 0..bar_w {
        let c = time_colour(i as f64 / (bar_w - 1) as f64);
        area.draw(&Rectangle::new(
            [(x0 + i, y0), (x0 + i + 1, y0 + 10)],
            c.filled(),
        ))
        .map_err(err)?;
    }
    let legend = label_font(12);
    area.draw(&Text::new(
        format!("{t0:.0} s"),
        (x0, y0 + 13),
        legend.clone(),
    ))
    .map_err(err)?;
    area.draw(&Text::new(
        format!("{t1:.0} s   ● start  ✕ end  ▲ heading"),
        (x0 + bar_w - 20, y0 + 13),
        legend.clone(),
    ))
    .map_err(err)?;
    if runs.iter().any(|l| l.run.has_sensed()) {
        area.draw(&Text::new(
            "— true track   --- sensed fix (GPS; gaps: dropouts)",
            (x0, y0 + 28),
            legend.color(&SENSED_COLOUR),
        ))
        .map_err(err)?;
    }
    draw_env_legend(&area, env)?;
    Ok(())
}

/// The sensed track of `r`: a thin teal line through the sensed fixes,
/// broken where there is none (NaN rows: dropouts).
fn draw_sensed<DB: DrawingBackend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    r: &Run,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let mut piece: Vec<(f64, f64)> = Vec::new();
    let style = SENSED_COLOUR.stroke_width(1);
    for i in 0..=r.len() {
        let p = (i < r.len())
            .then(|| (r.sensed_x[i], r.sensed_y[i]))
            .filter(|(x, y)| x.is_finite() && y.is_finite());
        match p {
            Some(p) => piece.push(p),
            None if !piece.is_empty() => {
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        std::mem::take(&mut piece),
                        style,
                    )))
                    .map_err(err)?;
            }
            None => {}
        }
    }
    Ok(())
}

/// The wind and sea legend at the top right of the track panel: one line
/// each, and an arrow per line that flies with the wind (or the waves):
/// it points to the direction they come from + 180°, north up.
fn draw_env_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    env: &EnvLegend,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let dirs = [env.wind.map(|w| w.1), env.sea.map(|s| s.2)];
    let lines = env.lines();
    let mut dirs = dirs.into_iter().flatten();
    for (i, line) in lines.iter().enumerate() {
        let y = 28 + 22 * i as i32;
        let x = w as i32 - 330;
        area.draw(&Text::new(line.clone(), (x + 26, y - 6), label_font(13)))
            .map_err(err)?;
        let Some(from) = dirs.next() else { continue };
        let a = (from + 180.0).to_radians();
        let (dx, dy) = (a.sin() * 9.0, -a.cos() * 9.0);
        let (cx, cy) = (x as f64 + 10.0, y as f64);
        let tip = ((cx + dx) as i32, (cy + dy) as i32);
        let colour = if i == 0 && env.wind.is_some() {
            RGBColor(52, 73, 94)
        } else {
            RGBColor(58, 123, 213)
        };
        area.draw(&PathElement::new(
            vec![((cx - dx) as i32, (cy - dy) as i32), tip],
            colour.stroke_width(2),
        ))
        .map_err(err)?;
        let (px, py) = (-dy * 0.45, dx * 0.45);
        area.draw(&Polygon::new(
            vec![
                tip,
                ((cx + 0.3 * dx + px) as i32, (cy + 0.3 * dy + py) as i32),
                ((cx + 0.3 * dx - px) as i32, (cy + 0.3 * dy - py) as i32),
            ],
            colour.filled(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

type Column = fn(&Run) -> &Vec<f64>;

/// Headings made continuous: each step of more than 180 degrees is taken
/// the short way round, then the whole series is shifted by a multiple of
/// 360 so that its median lies in [0, 360). NaN stays NaN.
pub fn unwrap_heading(h: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(h.len());
    let mut prev: Option<(f64, f64)> = None; // (raw, unwrapped)
    for &v in h {
        if !v.is_finite() {
            out.push(f64::NAN);
            continue;
        }
        let u = match prev {
            None => v,
            Some((raw, un)) => {
                let d = (v - raw + 180.0).rem_euclid(360.0) - 180.0;
                un + d
            }
        };
        prev = Some((v, u));
        out.push(u);
    }
    let mut finite: Vec<f64> = out.iter().copied().filter(|x| x.is_finite()).collect();
    if !finite.is_empty() {
        let mid = finite.len() / 2;
        let (_, m, _) = finite.select_nth_unstable_by(mid, f64::total_cmp);
        let shift = (*m / 360.0).floor() * 360.0;
        if shift != 0.0 {
            for x in out.iter_mut() {
                *x -= shift;
            }
        }
    }
    out
}

/// Rows at which to draw heading arrows: the first finite row, then each
/// row at least `spacing` (m) further along the track than the last mark,
/// the spacing being also at least 1/40 of the track's length.
pub fn arrow_rows(x: &[f64], y: &[f64], spacing: f64) -> Vec<usize> {
    let n = x.len().min(y.len());
    let mut length = 0.0;
    let mut last: Option<(f64, f64)> = None;
    for i in 0..n {
        if x[i].is_finite() && y[i].is_finite() {
            if let Some((px, py)) = last {
                length += (x[i] - px).hypot(y[i] - py);
            }
            last = Some((x[i], y[i]));
        }
    }
    let step = (length / 40.0).max(spacing).max(f64::MIN_POSITIVE);
    let mut out = Vec::new();
    let mut along = 0.0;
    let mut next = 0.0;
    let mut last: Option<(f64, f64)> = None;
    for i in 0..n {
        if !(x[i].is_finite() && y[i].is_finite()) {
            continue;
        }
        if let Some((px, py)) = last {
            along += (x[i] - px).hypot(y[i] - py);
        }
        last = Some((x[i], y[i]));
        if along >= next {
            out.push(i);
            next = along + step;
        }
    }
    out
}

/// The panels worth drawing: `depth` is left out when every run's depth is
/// 0 (or unset) throughout, unless it is the only panel.
pub fn panels_for(runs: &[Labelled], panels: &[Panel]) -> Vec<Panel> {
    let surface = runs
        .iter()
        .all(|l| l.run.depth.iter().all(|d| !d.is_finite() || *d == 0.0));
    let kept: Vec<Panel> = panels
        .iter()
        .copied()
        .filter(|p| !(surface && *p == Panel::Depth))
        .collect();
    if kept.is_empty() {
        panels.to_vec()
    } else {
        kept
    }
}

/// Points `(t, v)` of finite values in runs of consecutive ones, at most
/// about [`MAX_POINTS`] in all (every n-th row); with `wrap`, a jump of more
/// than 180 (degrees) also breaks the line.
fn pieces(t: &[f64], v: &[f64], wrap: bool) -> Vec<Vec<(f64, f64)>> {
    let stride = t.len().div_ceil(MAX_POINTS).max(1);
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for i in (0..t.len()).step_by(stride) {
        let (ti, vi) = (t[i], v[i]);
        if !(ti.is_finite() && vi.is_finite()) {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if wrap {
            if let Some(&(_, prev)) = cur.last() {
                if (vi - prev).abs() > 180.0 {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
        cur.push((ti, vi));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn draw_series<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    runs: &[Labelled],
    (t0, t1): (f64, f64),
    name: &str,
    unit: &str,
    columns: &[(&str, Column)],
    wrap: bool,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let (mut lo, mut hi) = min_max(runs.iter().flat_map(|r| {
        columns
            .iter()
            .flat_map(move |(_, c)| c(&r.run).iter().copied())
    }));
    if wrap {
        (lo, hi) = (lo.min(0.0), hi.max(360.0));
    }
    let pad = ((hi - lo) * 0.05).max(0.5);
    (lo, hi) = (lo - pad, hi + pad);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(t0..t1, lo..hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("t (s)")
        .y_desc(format!("{name} ({unit})"))
        .label_style(label_font(12))
        .axis_desc_style(label_font(14))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(err)?;
    let mut legend = false;
    for (ri, lr) in runs.iter().enumerate() {
        for (ci, (col_name, col)) in columns.iter().enumerate() {
            let colour = PALETTE[(ri * columns.len() + ci) % PALETTE.len()];
            let mut first = true;
            for piece in pieces(&lr.run.t, col(&lr.run), wrap) {
                let s = chart
                    .draw_series(std::iter::once(PathElement::new(
                        piece,
                        colour.stroke_width(2),
                    )))
                    .map_err(err)?;
                if first {
                    first = false;
                    let label = match (col_name.is_empty(), runs.len() > 1) {
                        (true, _) => lr.label.clone(),
                        (false, false) => col_name.to_string(),
                        (false, true) => format!("{} {col_name}", lr.label),
                    };
                    if !label.is_empty() && (runs.len() > 1 || columns.len() > 1) {
                        legend = true;
                        s.label(label).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
                        });
                    }
                }
            }
        }
    }
    if legend {
        chart
            .configure_series_labels()
            .label_font(label_font(12))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_parse() {
        assert_eq!(
            Panel::parse_list("track, depth,track").unwrap(),
            vec![Panel::Track, Panel::Depth]
        );
        assert!(Panel::parse_list("track,sped")
            .unwrap_err()
            .contains("sped"));
        assert!(Panel::parse_list("").is_err());
    }

    #[test]
    fn pieces_break_at_nan_and_heading_wrap() {
        let t = [0.0, 1.0, 2.0, 3.0, 4.0];
        let v = [350.0, 355.0, 2.0, f64::NAN, 10.0];
        let p = pieces(&t, &v, true);
        assert_eq!(
            p,
            vec![
                vec![(0.0, 350.0), (1.0, 355.0)],
                vec![(2.0, 2.0)],
                vec![(4.0, 10.0)]
            ]
        );
    }

    #[test]
    fn colours_run_from_purple_to_yellow() {
        assert_eq!(time_colour(0.0), RGBColor(68, 1, 84));
        assert_eq!(time_colour(1.0), RGBColor(253, 231, 37));
        assert_eq!(time_colour(f64::NAN), RGBColor(68, 1, 84));
    }

    #[test]
    fn embedded_font_parses() {
        register_font();
        assert!(plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    }
}
