//! A top-down frame of a live scene for environments' `render()`: vessel
//! tracks, hulls at their poses, goals and CPA lines, drawn into an 8-bit
//! RGB buffer with `plotters` (no text: a frame costs well under a
//! millisecond, fit for video of training runs).
//!
//! x is east and y north in m, headings are marine degrees (0 = north,
//! clockwise). The scene's extent is scaled uniformly (metres per pixel
//! the same both ways) and centred in the frame.
use plotters::prelude::*;

use super::{err, PlotError, PALETTE};

/// Largest frame side, pixels.
pub const MAX_SIDE: u32 = 4096;

/// Largest track points drawn per vessel (older points are dropped).
pub const MAX_TRACK: usize = 100_000;

/// One vessel of a scene.
#[derive(Debug, Clone, Default)]
pub struct SceneVessel {
    /// Position, m (east, north).
    pub x: f64,
    /// Position, m (north).
    pub y: f64,
    /// Heading, degrees (0 = north, clockwise).
    pub heading: f64,
    /// Hull length, m (drawn at least 8 pixels long).
    pub length: f64,
    /// Past positions, m, oldest first.
    pub track: Vec<(f64, f64)>,
}

/// A goal: a circle of `radius` m around (x, y); `active` is filled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Goal {
    /// Centre, m (east).
    pub x: f64,
    /// Centre, m (north).
    pub y: f64,
    /// Radius, m.
    pub radius: f64,
    /// The goal being steered for.
    pub active: bool,
}

/// What a frame shows.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    /// Frame width, pixels.
    pub width: u32,
    /// Frame height, pixels.
    pub height: u32,
    /// The area shown, m: (x min, y min, x max, y max).
    pub extent: (f64, f64, f64, f64),
    /// Vessels, the first drawn in the first palette colour.
    pub vessels: Vec<SceneVessel>,
    /// Goals.
    pub goals: Vec<Goal>,
    /// Closest-point-of-approach lines, m: ((x, y), (x, y)).
    pub cpa_lines: Vec<((f64, f64), (f64, f64))>,
}

/// The map from metres to pixels of a frame `w` × `h` showing `extent`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// Pixels per metre.
    pub scale: f64,
    cx: f64,
    cy: f64,
    w: f64,
    h: f64,
}

impl Projection {
    /// The uniform scale that fits `extent` into `w` × `h`, centred.
    pub fn new(w: u32, h: u32, extent: (f64, f64, f64, f64)) -> Projection {
        let (x0, y0, x1, y1) = extent;
        let sx = (x1 - x0).abs().max(1e-6);
        let sy = (y1 - y0).abs().max(1e-6);
        let scale = (w as f64 / sx).min(h as f64 / sy);
        Projection {
            scale,
            cx: (x0 + x1) / 2.0,
            cy: (y0 + y1) / 2.0,
            w: w as f64,
            h: h as f64,
        }
    }

    /// Pixel (column, row) of (x, y) m, clamped far outside the frame so
    /// the drawing code never sees huge or non-finite coordinates.
    pub fn px(&self, x: f64, y: f64) -> (i32, i32) {
        let c = self.w / 2.0 + (x - self.cx) * self.scale;
        let r = self.h / 2.0 - (y - self.cy) * self.scale;
        let clamp = |v: f64| {
            if v.is_finite() {
                v.round().clamp(-1e6, 1e6) as i32
            } else {
                -1_000_000
            }
        };
        (clamp(c), clamp(r))
    }
}

/// Background, grid, goal, active goal and CPA line colours.
const SEA: RGBColor = RGBColor(236, 244, 250);
const GRID: RGBColor = RGBColor(214, 226, 236);
const GOAL: RGBColor = RGBColor(46, 160, 67);
const CPA: RGBColor = RGBColor(214, 39, 40);

/// The colour of vessel `i` (the plot palette's, in order).
pub fn vessel_colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A grid step of about 1, 2 or 5 × 10^k m giving lines 40–100 pixels apart.
fn grid_step(scale: f64) -> f64 {
    let target = 60.0 / scale;
    let p = 10f64.powf(target.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s * scale >= 40.0)
        .unwrap_or(10.0 * p)
}

/// Draw `scene` into a new RGB buffer (rows top to bottom, 3 bytes a
/// pixel, `width * height * 3` bytes).
pub fn render_rgb(scene: &Scene) -> Result<Vec<u8>, PlotError> {
    let (w, h) = (scene.width, scene.height);
    if !(1..=MAX_SIDE).contains(&w) || !(1..=MAX_SIDE).contains(&h) {
        return Err(PlotError(format!(
            "frame size {w} x {h}: each side must be 1..={MAX_SIDE} pixels"
        )));
    }
    let (x0, y0, x1, y1) = scene.extent;
    if ![x0, y0, x1, y1].iter().all(|v| v.is_finite()) {
        return Err(PlotError("the scene's extent must be finite".into()));
    }
    let p = Projection::new(w, h, scene.extent);
    let mut rgb = vec![0u8; (w as usize) * (h as usize) * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        root.fill(&SEA).map_err(err)?;
        // Grid lines at round metres.
        let step = grid_step(p.scale);
        if step.is_finite() && step > 0.0 {
            let (gx0, gy0) = (
                x0.min(x1) - (w as f64) / p.scale,
                y0.min(y1) - (h as f64) / p.scale,
            );
            let (gx1, gy1) = (
                x0.max(x1) + (w as f64) / p.scale,
                y0.max(y1) + (h as f64) / p.scale,
            );
            let mut g = (gx0 / step).floor() * step;
            while g <= gx1 {
                let (c, _) = p.px(g, 0.0);
                if (0..w as i32).contains(&c) {
                    root.draw(&PathElement::new(vec![(c, 0), (c, h as i32)], GRID))
                        .map_err(err)?;
                }
                g += step;
            }
            let mut g = (gy0 / step).floor() * step;
            while g <= gy1 {
                let (_, r) = p.px(0.0, g);
                if (0..h as i32).contains(&r) {
                    root.draw(&PathElement::new(vec![(0, r), (w as i32, r)], GRID))
                        .map_err(err)?;
                }
                g += step;
            }
        }
        for goal in &scene.goals {
            let c = p.px(goal.x, goal.y);
            let rad = (goal.radius * p.scale).clamp(3.0, 1e5) as i32;
            let style = if goal.active {
                GOAL.mix(0.45).filled()
            } else {
                GOAL.stroke_width(2)
            };
            root.draw(&Circle::new(c, rad, style)).map_err(err)?;
        }
        for (i, v) in scene.vessels.iter().enumerate() {
            let colour = vessel_colour(i);
            let skip = v.track.len().saturating_sub(MAX_TRACK);
            let pts: Vec<(i32, i32)> = v.track[skip..].iter().map(|&(x, y)| p.px(x, y)).collect();
            if pts.len() > 1 {
                root.draw(&PathElement::new(pts, colour.mix(0.8).stroke_width(2)))
                    .map_err(err)?;
            }
        }
        for &(a, b) in &scene.cpa_lines {
            root.draw(&PathElement::new(
                vec![p.px(a.0, a.1), p.px(b.0, b.1)],
                CPA.stroke_width(2),
            ))
            .map_err(err)?;
        }
        for (i, v) in scene.vessels.iter().enumerate() {
            root.draw(&Polygon::new(hull(&p, v), vessel_colour(i).filled()))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(rgb)
}

/// A pointed hull outline at the vessel's pose, pixels: the bow at the
/// front, beam a third of the length.
fn hull(p: &Projection, v: &SceneVessel) -> Vec<(i32, i32)> {
    let len_px = (v.length * p.scale).max(8.0);
    let l = if len_px.is_finite() {
        len_px / p.scale
    } else {
        8.0 / p.scale
    };
    let h = if v.heading.is_finite() {
        v.heading.to_radians()
    } else {
        0.0
    };
    // Forward (bow) and starboard unit vectors in x east, y north.
    let (fx, fy) = (h.sin(), h.cos());
    let (sx, sy) = (fy, -fx);
    let b = l / 6.0;
    let at = |f: f64, s: f64| p.px(v.x + f * fx + s * sx, v.y + f * fy + s * sy);
    vec![
        at(0.5 * l, 0.0),
        at(0.2 * l, b),
        at(-0.5 * l, b),
        at(-0.5 * l, -b),
        at(0.2 * l, -b),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pixel(rgb: &[u8], w: u32, (c, r): (i32, i32)) -> (u8, u8, u8) {
        let i = 3 * (r as usize * w as usize + c as usize);
        (rgb[i], rgb[i + 1], rgb[i + 2])
    }

    fn rgb_of(c: RGBColor) -> (u8, u8, u8) {
        (c.0, c.1, c.2)
    }

    /// A hull heading east is drawn east of its centre, not north of it;
    /// the scale is uniform and centred.
    #[test]
    fn the_hull_points_where_the_heading_says() {
        let scene = Scene {
            width: 200,
            height: 100,
            extent: (-50.0, -50.0, 50.0, 50.0),
            vessels: vec![SceneVessel {
                x: 0.0,
                y: 0.0,
                heading: 90.0,
                length: 20.0,
                track: vec![],
            }],
            ..Scene::default()
        };
        let p = Projection::new(200, 100, scene.extent);
        assert_eq!(p.scale, 1.0);
        assert_eq!(p.px(0.0, 0.0), (100, 50));
        assert_eq!(p.px(10.0, 20.0), (110, 30));
        let rgb = render_rgb(&scene).unwrap();
        assert_eq!(rgb.len(), 200 * 100 * 3);
        let boat = rgb_of(vessel_colour(0));
        assert_eq!(pixel(&rgb, 200, (107, 50)), boat, "bow east");
        assert_eq!(pixel(&rgb, 200, (93, 50)), boat, "stern west");
        assert_ne!(pixel(&rgb, 200, (100, 42)), boat, "not north");
        assert_ne!(pixel(&rgb, 200, (112, 50)), boat, "ends at the bow");
    }

    #[test]
    fn bad_frames_are_refused_and_wild_coordinates_drawn_safely() {
        let mut s = Scene {
            width: 0,
            height: 10,
            ..Scene::default()
        };
        assert!(render_rgb(&s).is_err());
        s.width = 10;
        s.extent = (0.0, 0.0, f64::NAN, 1.0);
        assert!(render_rgb(&s).is_err());
        s.extent = (0.0, 0.0, 1.0, 1.0);
        s.vessels.push(SceneVessel {
            x: 1e300,
            y: f64::NAN,
            heading: f64::INFINITY,
            length: 1e308,
            track: vec![(f64::NAN, 1e300), (-1e300, 0.0)],
        });
        s.goals.push(Goal {
            x: 0.5,
            y: 0.5,
            radius: 1e300,
            active: true,
        });
        s.cpa_lines.push(((0.0, 0.0), (f64::INFINITY, 1.0)));
        assert_eq!(render_rgb(&s).unwrap().len(), 300);
    }
}
