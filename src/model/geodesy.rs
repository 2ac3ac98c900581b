//! x/y (local metres) to lat/lon (degrees), as MOOSGeodesy does it
//! (docs/model.md §18). Sans-IO: plain functions of the origin and the position.
//!
//! Two conversions, chosen like the MOOS build option `USE_UTM`:
//!
//! * [`Geodesy::Utm`] (the MOOS default): x/y are UTM **grid** offsets from
//!   the origin's easting/northing in the origin's zone (classic `LLtoUTM`
//!   zone rules, with the Norway and Svalbard exceptions; southern
//!   hemisphere if the origin latitude is negative). The projection is
//!   PROJ's `+proj=utm +ellps=WGS84`, i.e. the Poder/Engsager extended
//!   transverse Mercator (6th-order Krüger series in the third flattening,
//!   evaluated with Clenshaw summation), reimplemented here in plain Rust.
//! * [`Geodesy::LocalGrid`]: MOOSGeodesy's `LocalGrid2LatLong`, a spherical
//!   approximation with a radius that depends on the origin latitude.
//!
//! Both reproduce MOOSGeodesy's degree/radian conversions, which use the
//! truncated `PI = 3.14159265` (shifting results by about 5e-8 degrees
//! compared with exact conversions).

use std::f64::consts::PI;
use std::fmt;

/// MOOSGeodesy's `PI` (truncated on purpose, docs/model.md §18).
#[allow(clippy::approx_constant)] // the truncation is what MOOS uses
const MOOS_PI: f64 = 3.14159265;
/// MOOSGeodesy's `deg2rad = PI / 180`.
const MOOS_DEG2RAD: f64 = MOOS_PI / 180.0;
/// MOOSGeodesy's `rad2deg = 180.0 / PI`.
const MOOS_RAD2DEG: f64 = 180.0 / MOOS_PI;

/// WGS84 semi-major axis, m.
const WGS84_A: f64 = 6378137.0;
/// WGS84 inverse flattening.
const WGS84_RF: f64 = 298.257223563;
/// UTM scale factor on the central meridian.
const UTM_K0: f64 = 0.9996;
/// UTM false easting, m.
const UTM_FALSE_EASTING: f64 = 500000.0;
/// UTM false northing in the southern hemisphere, m.
const UTM_FALSE_NORTHING_SOUTH: f64 = 10000000.0;
/// PROJ's limit on the normalised easting of the extended transverse
/// Mercator (about 150 degrees from the central meridian); beyond it the
/// projection fails.
const ETMERC_MAX_CE: f64 = 2.623395162778;

/// Local grid semi-major axis used by `LocalGrid2LatLong`, m.
const GRID_A: f64 = 6378137.0;
/// Local grid semi-minor axis used by `LocalGrid2LatLong`, m (rounded there).
const GRID_B: f64 = 6356752.0;

/// Which x/y → lat/lon conversion to use (MOOS build option `USE_UTM`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Geodesy {
    /// UTM grid offsets from the origin (MOOS default build, PROJ backend).
    Utm,
    /// MOOSGeodesy's `LocalGrid2LatLong` spherical approximation.
    LocalGrid,
}

/// Why a [`GeoConverter`] could not be made.
#[derive(Debug, Clone, PartialEq)]
pub enum GeodesyError {
    /// The origin latitude is NaN or infinite, or outside [−90, 90] degrees.
    BadLatitude(f64),
    /// The origin longitude is NaN or infinite, or outside [−180, 180] degrees.
    BadLongitude(f64),
}

impl fmt::Display for GeodesyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeodesyError::BadLatitude(v) => write!(
                f,
                "origin latitude {v} is not a finite number of degrees in [-90, 90]"
            ),
            GeodesyError::BadLongitude(v) => write!(
                f,
                "origin longitude {v} is not a finite number of degrees in [-180, 180]"
            ),
        }
    }
}

impl std::error::Error for GeodesyError {}

/// Converts local x (east, m) / y (north, m) to latitude/longitude (degrees)
/// about a fixed origin, like `CMOOSGeodesy` after `Initialise(lat0, lon0)`.
#[derive(Debug, Clone)]
pub struct GeoConverter {
    lat0_deg: f64,
    lon0_deg: f64,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Utm(Box<UtmState>),
    LocalGrid {
        /// Radius `R` of `LocalGrid2LatLong`, m.
        radius_m: f64,
        /// `cos(lat0 · deg2rad)`.
        cos_lat0: f64,
    },
}

#[derive(Debug, Clone)]
struct UtmState {
    zone: u8,
    south: bool,
    tm: Etmerc,
    /// Central meridian, radians.
    lam0: f64,
    /// Origin easting (E₀), m.
    e0_m: f64,
    /// Origin northing (N₀), m.
    n0_m: f64,
}

impl GeoConverter {
    /// A converter about the origin (`lat0_deg`, `lon0_deg`), degrees.
    ///
    /// Rejects NaN/infinite values, |lat| > 90 and |lon| > 180. For
    /// [`Geodesy::Utm`] the zone is chosen from the origin as `LLtoUTM` does
    /// and the origin easting/northing are computed with the forward
    /// projection.
    pub fn new(lat0_deg: f64, lon0_deg: f64, kind: Geodesy) -> Result<GeoConverter, GeodesyError> {
        if !lat0_deg.is_finite() || lat0_deg.abs() > 90.0 {
            return Err(GeodesyError::BadLatitude(lat0_deg));
        }
        if !lon0_deg.is_finite() || lon0_deg.abs() > 180.0 {
            return Err(GeodesyError::BadLongitude(lon0_deg));
        }
        let kind = match kind {
            Geodesy::LocalGrid => {
                // LocalGrid2LatLong, evaluated in the C++ order
                // (pow(v, 2) is folded to v*v by the compiler).
                let t = (lat0_deg * MOOS_DEG2RAD).tan();
                let tan2 = t * t;
                let radius_m = GRID_B * (1.0 + tan2).sqrt()
                    / ((GRID_B * GRID_B) / (GRID_A * GRID_A) + tan2).sqrt();
                Kind::LocalGrid {
                    radius_m,
                    cos_lat0: (lat0_deg * MOOS_DEG2RAD).cos(),
                }
            }
            Geodesy::Utm => {
                let zone = utm_zone(lat0_deg, lon0_deg);
                let south = lat0_deg < 0.0;
                let tm = Etmerc::new(WGS84_A, WGS84_RF, UTM_K0);
                // PROJ's utm setup: zero-based zone, centre of the zone.
                let lam0 = (f64::from(zone - 1) + 0.5) * PI / 30.0 - PI;
                let mut st = UtmState {
                    zone,
                    south,
                    tm,
                    lam0,
                    e0_m: 0.0,
                    n0_m: 0.0,
                };
                // MOOSGeodesy hands PROJ `lat * deg2rad`, `lon * deg2rad`.
                let (e0, n0) = st.forward(lat0_deg * MOOS_DEG2RAD, lon0_deg * MOOS_DEG2RAD);
                st.e0_m = e0;
                st.n0_m = n0;
                Kind::Utm(Box::new(st))
            }
        };
        Ok(GeoConverter {
            lat0_deg,
            lon0_deg,
            kind,
        })
    }

    /// The conversion this converter uses.
    pub fn kind(&self) -> Geodesy {
        match self.kind {
            Kind::Utm(_) => Geodesy::Utm,
            Kind::LocalGrid { .. } => Geodesy::LocalGrid,
        }
    }

    /// The origin (latitude, longitude), degrees.
    pub fn origin(&self) -> (f64, f64) {
        (self.lat0_deg, self.lon0_deg)
    }

    /// For [`Geodesy::Utm`]: the zone number (1–60) and whether the southern
    /// hemisphere false northing is used; `None` for the local grid.
    pub fn utm_zone(&self) -> Option<(u8, bool)> {
        match &self.kind {
            Kind::Utm(st) => Some((st.zone, st.south)),
            Kind::LocalGrid { .. } => None,
        }
    }

    /// For [`Geodesy::Utm`]: the origin's UTM (easting, northing), m.
    pub fn utm_origin_m(&self) -> Option<(f64, f64)> {
        match &self.kind {
            Kind::Utm(st) => Some((st.e0_m, st.n0_m)),
            Kind::LocalGrid { .. } => None,
        }
    }

    /// Latitude and longitude, degrees, of the local position `x_m` (east,
    /// m) / `y_m` (north, m).
    ///
    /// * Local grid: `LocalGrid2LatLong`; if either result is NaN (e.g. a
    ///   position farther than the Earth's radius), both are 0, as in MOOS.
    /// * UTM: PROJ's inverse of (x + E₀, y + N₀); if the projection fails
    ///   (non-finite input, or more than ~150° of longitude from the central
    ///   meridian) both are NaN, as MOOS leaves them.
    pub fn to_lat_lon(&self, x_m: f64, y_m: f64) -> (f64, f64) {
        match &self.kind {
            Kind::LocalGrid { radius_m, cos_lat0 } => {
                let y_arc_deg = (y_m / radius_m).asin() * MOOS_RAD2DEG;
                let x_arc_deg = (x_m / (radius_m * cos_lat0)).asin() * MOOS_RAD2DEG;
                let lat = y_arc_deg + self.lat0_deg;
                let lon = x_arc_deg + self.lon0_deg;
                if lat.is_nan() || lon.is_nan() {
                    (0.0, 0.0)
                } else {
                    (lat, lon)
                }
            }
            Kind::Utm(st) => {
                let e = x_m + st.e0_m;
                let n = y_m + st.n0_m;
                match st.inverse(e, n) {
                    Some((phi, lam)) => (phi * MOOS_RAD2DEG, lam * MOOS_RAD2DEG),
                    None => (f64::NAN, f64::NAN),
                }
            }
        }
    }

    /// The inverse of [`GeoConverter::to_lat_lon`]: local (x east, y north),
    /// m, of (`lat_deg`, `lon_deg`), like MOOSGeodesy's `LatLong2LocalUTM`
    /// (PROJ backend) or `LatLong2LocalGrid`.
    ///
    /// UTM: NaN if the projection fails. Local grid: the C++ formula (which
    /// is not the exact inverse of `LocalGrid2LatLong`: its radius uses the
    /// point's latitude, not the origin's).
    pub fn to_x_y(&self, lat_deg: f64, lon_deg: f64) -> (f64, f64) {
        match &self.kind {
            Kind::LocalGrid { .. } => {
                let t = (lat_deg * MOOS_DEG2RAD).tan();
                let tan2 = t * t;
                let radius = GRID_B * (1.0 + tan2).sqrt()
                    / ((GRID_B * GRID_B) / (GRID_A * GRID_A) + tan2).sqrt();
                let x_arc = (lon_deg - self.lon0_deg) * MOOS_DEG2RAD;
                let x = radius * x_arc.sin() * (lat_deg * MOOS_DEG2RAD).cos();
                let y_arc = (lat_deg - self.lat0_deg) * MOOS_DEG2RAD;
                let y = radius * y_arc.sin();
                (x, y)
            }
            Kind::Utm(st) => {
                let (e, n) = st.forward(lat_deg * MOOS_DEG2RAD, lon_deg * MOOS_DEG2RAD);
                (e - st.e0_m, n - st.n0_m)
            }
        }
    }
}

/// The UTM zone number of `LLtoUTM` (MOOSGeodesy) for a point in degrees:
/// ⌊(lon+180)/6⌋+1 after wrapping lon into [−180, 180), with the Norway
/// (32V) and Svalbard (31X, 33X, 35X, 37X) exceptions.
fn utm_zone(lat: f64, lon: f64) -> u8 {
    // C++: (Long+180) - int((Long+180)/360)*360 - 180, int truncates.
    let wraps = ((lon + 180.0) / 360.0).trunc();
    let lon_t = ((lon + 180.0) - wraps * 360.0) - 180.0;
    let mut zone = ((lon_t + 180.0) / 6.0).trunc() as i32 + 1;
    if (56.0..64.0).contains(&lat) && (3.0..12.0).contains(&lon_t) {
        zone = 32;
    }
    if (72.0..84.0).contains(&lat) {
        if (0.0..9.0).contains(&lon_t) {
            zone = 31;
        } else if (9.0..21.0).contains(&lon_t) {
            zone = 33;
        } else if (21.0..33.0).contains(&lon_t) {
            zone = 35;
        } else if (33.0..42.0).contains(&lon_t) {
            zone = 37;
        }
    }
    // lon in [-180, 180] always gives 1..=60; clamp defensively.
    zone.clamp(1, 60) as u8
}

impl UtmState {
    fn false_northing(&self) -> f64 {
        if self.south {
            UTM_FALSE_NORTHING_SOUTH
        } else {
            0.0
        }
    }

    /// PROJ forward: geodetic (φ, λ) radians → (easting, northing) m.
    fn forward(&self, phi: f64, lam: f64) -> (f64, f64) {
        let dlam = adjlon(lam - self.lam0);
        match self.tm.forward(phi, dlam) {
            Some((x, y)) => (
                self.tm.a * x + UTM_FALSE_EASTING,
                self.tm.a * y + self.false_northing(),
            ),
            None => (f64::NAN, f64::NAN),
        }
    }

    /// PROJ inverse: (easting, northing) m → geodetic (φ, λ) radians.
    fn inverse(&self, e: f64, n: f64) -> Option<(f64, f64)> {
        if !e.is_finite() || !n.is_finite() {
            return None;
        }
        let x = (e - UTM_FALSE_EASTING) / self.tm.a;
        let y = (n - self.false_northing()) / self.tm.a;
        let (phi, dlam) = self.tm.inverse(x, y)?;
        Some((phi, adjlon(dlam + self.lam0)))
    }
}

/// Wrap a longitude into [−π, π] radians (PROJ's `adjlon`).
fn adjlon(mut lam: f64) -> f64 {
    if lam.abs() <= PI {
        return lam;
    }
    lam += PI;
    lam -= 2.0 * PI * (lam / (2.0 * PI)).floor();
    lam - PI
}

/// Poder/Engsager extended transverse Mercator on a unit ellipsoid
/// (coordinates in units of the semi-major axis), origin latitude 0.
#[derive(Debug, Clone)]
struct Etmerc {
    /// Semi-major axis, m.
    a: f64,
    /// Normalised meridian quadrant times k0.
    qn: f64,
    /// Geodetic → Gaussian (conformal) latitude coefficients.
    geo_to_gauss: [f64; 6],
    /// Gaussian (conformal) → geodetic latitude coefficients.
    gauss_to_geo: [f64; 6],
    /// Ellipsoidal → spherical normalised N, E coefficients.
    ell_to_sph: [f64; 6],
    /// Spherical → ellipsoidal normalised N, E coefficients.
    sph_to_ell: [f64; 6],
}

impl Etmerc {
    fn new(a: f64, rf: f64, k0: f64) -> Etmerc {
        let f0 = 1.0 / rf;
        let es = 2.0 * f0 - f0 * f0;
        // Flattening and third flattening as PROJ derives them from es.
        let f = es / (1.0 + (1.0 - es).sqrt());
        let n = f / (2.0 - f);
        let n2 = n * n;
        let n3 = n2 * n;
        let n4 = n3 * n;
        let n5 = n4 * n;
        let n6 = n5 * n;

        // Series of Krüger / König & Weise, 6th order in n.
        let gauss_to_geo = [
            n * (2.0
                + n * (-2.0 / 3.0
                    + n * (-2.0 + n * (116.0 / 45.0 + n * (26.0 / 45.0 + n * (-2854.0 / 675.0)))))),
            n2 * (7.0 / 3.0
                + n * (-8.0 / 5.0
                    + n * (-227.0 / 45.0 + n * (2704.0 / 315.0 + n * (2323.0 / 945.0))))),
            n3 * (56.0 / 15.0
                + n * (-136.0 / 35.0 + n * (-1262.0 / 105.0 + n * (73814.0 / 2835.0)))),
            n4 * (4279.0 / 630.0 + n * (-332.0 / 35.0 + n * (-399572.0 / 14175.0))),
            n5 * (4174.0 / 315.0 + n * (-144838.0 / 6237.0)),
            n6 * (601676.0 / 22275.0),
        ];
        let geo_to_gauss = [
            n * (-2.0
                + n * (2.0 / 3.0
                    + n * (4.0 / 3.0
                        + n * (-82.0 / 45.0 + n * (32.0 / 45.0 + n * (4642.0 / 4725.0)))))),
            n2 * (5.0 / 3.0
                + n * (-16.0 / 15.0
                    + n * (-13.0 / 9.0 + n * (904.0 / 315.0 + n * (-1522.0 / 945.0))))),
            n3 * (-26.0 / 15.0 + n * (34.0 / 21.0 + n * (8.0 / 5.0 + n * (-12686.0 / 2835.0)))),
            n4 * (1237.0 / 630.0 + n * (-12.0 / 5.0 + n * (-24832.0 / 14175.0))),
            n5 * (-734.0 / 315.0 + n * (109598.0 / 31185.0)),
            n6 * (444337.0 / 155925.0),
        ];
        let qn = k0 / (1.0 + n) * (1.0 + n2 * (1.0 / 4.0 + n2 * (1.0 / 64.0 + n2 / 256.0)));
        let ell_to_sph = [
            n * (-0.5
                + n * (2.0 / 3.0
                    + n * (-37.0 / 96.0
                        + n * (1.0 / 360.0 + n * (81.0 / 512.0 + n * (-96199.0 / 604800.0)))))),
            n2 * (-1.0 / 48.0
                + n * (-1.0 / 15.0
                    + n * (437.0 / 1440.0 + n * (-46.0 / 105.0 + n * (1118711.0 / 3870720.0))))),
            n3 * (-17.0 / 480.0
                + n * (37.0 / 840.0 + n * (209.0 / 4480.0 + n * (-5569.0 / 90720.0)))),
            n4 * (-4397.0 / 161280.0 + n * (11.0 / 504.0 + n * (830251.0 / 7257600.0))),
            n5 * (-4583.0 / 161280.0 + n * (108847.0 / 3991680.0)),
            n6 * (-20648693.0 / 638668800.0),
        ];
        let sph_to_ell = [
            n * (0.5
                + n * (-2.0 / 3.0
                    + n * (5.0 / 16.0
                        + n * (41.0 / 180.0 + n * (-127.0 / 288.0 + n * (7891.0 / 37800.0)))))),
            n2 * (13.0 / 48.0
                + n * (-3.0 / 5.0
                    + n * (557.0 / 1440.0 + n * (281.0 / 630.0 + n * (-1983433.0 / 1935360.0))))),
            n3 * (61.0 / 240.0
                + n * (-103.0 / 140.0 + n * (15061.0 / 26880.0 + n * (167603.0 / 181440.0)))),
            n4 * (49561.0 / 161280.0 + n * (-179.0 / 168.0 + n * (6601661.0 / 7257600.0))),
            n5 * (34729.0 / 80640.0 + n * (-3418889.0 / 1995840.0)),
            n6 * (212378941.0 / 319334400.0),
        ];
        Etmerc {
            a,
            qn,
            geo_to_gauss,
            gauss_to_geo,
            ell_to_sph,
            sph_to_ell,
        }
    }

    /// (φ, Δλ) radians → normalised (x, y); `None` beyond ~150° of Δλ.
    fn forward(&self, phi: f64, dlam: f64) -> Option<(f64, f64)> {
        // Geodetic → Gaussian latitude.
        let chi = clenshaw_lat(&self.geo_to_gauss, phi);
        let (sin_chi, cos_chi) = chi.sin_cos();
        let (sin_l, cos_l) = dlam.sin_cos();
        // Gaussian → complementary spherical (transverse) coordinates.
        let cn = sin_chi.atan2(cos_l * cos_chi);
        let ce = (sin_l * cos_chi).atan2(sin_chi.hypot(cos_chi * cos_l));
        // Spherical → ellipsoidal normalised N, E (Mercator of the sphere).
        let ce = ce.tan().asinh();
        let (dn, de) = clenshaw_complex(&self.sph_to_ell, 2.0 * cn, 2.0 * ce);
        let cn = cn + dn;
        let ce = ce + de;
        if ce.abs() <= ETMERC_MAX_CE {
            Some((self.qn * ce, self.qn * cn))
        } else {
            None
        }
    }

    /// Normalised (x, y) → (φ, Δλ) radians; `None` beyond ~150° of Δλ.
    fn inverse(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let cn = y / self.qn;
        let ce = x / self.qn;
        if ce.abs() > ETMERC_MAX_CE {
            return None;
        }
        let (dn, de) = clenshaw_complex(&self.ell_to_sph, 2.0 * cn, 2.0 * ce);
        let cn = cn + dn;
        let ce = (ce + de).sinh().atan();
        let (sin_n, cos_n) = cn.sin_cos();
        let (sin_e, cos_e) = ce.sin_cos();
        let dlam = sin_e.atan2(cos_e * cos_n);
        let chi = (sin_n * cos_e).atan2(sin_e.hypot(cos_e * cos_n));
        let phi = clenshaw_lat(&self.gauss_to_geo, chi);
        Some((phi, dlam))
    }
}

/// `b + Σ c_k sin(2k·b)` by Clenshaw summation (PROJ's `gatg`).
fn clenshaw_lat(c: &[f64; 6], b: f64) -> f64 {
    let two_cos_2b = 2.0 * (2.0 * b).cos();
    let mut h1 = c[5];
    let mut h2 = 0.0;
    let mut h = 0.0;
    for &ck in c[..5].iter().rev() {
        h = -h2 + two_cos_2b * h1 + ck;
        h2 = h1;
        h1 = h;
    }
    b + h * (2.0 * b).sin()
}

/// `Σ c_k sin(k·(ar + i·ai))` by complex Clenshaw summation (PROJ's
/// `clenS`); returns (real, imaginary) parts.
fn clenshaw_complex(c: &[f64; 6], ar: f64, ai: f64) -> (f64, f64) {
    let (sin_r, cos_r) = ar.sin_cos();
    let sinh_i = ai.sinh();
    let cosh_i = ai.cosh();
    let r = 2.0 * cos_r * cosh_i;
    let i = -2.0 * sin_r * sinh_i;
    let mut hr = c[5];
    let mut hi = 0.0;
    let mut hr1 = 0.0;
    let mut hi1 = 0.0;
    for &ck in c[..5].iter().rev() {
        let hr2 = hr1;
        let hi2 = hi1;
        hr1 = hr;
        hi1 = hi;
        hr = -hr2 + r * hr1 - i * hi1 + ck;
        hi = -hi2 + i * hr1 + r * hi1;
    }
    let r = sin_r * cosh_i;
    let i = cos_r * sinh_i;
    (r * hr - i * hi, r * hi + i * hr)
}

#[cfg(test)]
#[allow(clippy::excessive_precision)] // values copied verbatim from the golden CSVs
mod tests {
    use super::*;

    fn conv(kind: Geodesy) -> GeoConverter {
        match GeoConverter::new(42.358456, -71.087589, kind) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn rejects_bad_origins() {
        for (lat, lon) in [
            (f64::NAN, 0.0),
            (0.0, f64::NAN),
            (f64::INFINITY, 0.0),
            (0.0, f64::NEG_INFINITY),
            (90.5, 0.0),
            (-91.0, 0.0),
            (0.0, 180.1),
            (0.0, -200.0),
        ] {
            for kind in [Geodesy::Utm, Geodesy::LocalGrid] {
                let r = GeoConverter::new(lat, lon, kind);
                assert!(r.is_err(), "{lat},{lon} accepted");
            }
        }
        let msg = match GeoConverter::new(95.0, 0.0, Geodesy::Utm) {
            Err(e) => e.to_string(),
            Ok(_) => String::new(),
        };
        assert!(msg.contains("latitude") && msg.contains("95"), "{msg}");
        assert!(GeoConverter::new(90.0, 180.0, Geodesy::Utm).is_ok());
        assert!(GeoConverter::new(-90.0, -180.0, Geodesy::LocalGrid).is_ok());
    }

    #[test]
    fn origin_maps_to_itself() {
        // Golden row k=0 of every run: x = y = 0 gives exactly the origin.
        for kind in [Geodesy::Utm, Geodesy::LocalGrid] {
            let (lat, lon) = conv(kind).to_lat_lon(0.0, 0.0);
            assert!((lat - 42.358456).abs() < 1e-12, "{kind:?} {lat}");
            assert!((lon - -71.087589).abs() < 1e-12, "{kind:?} {lon}");
        }
    }

    #[test]
    fn local_grid_golden_row_bit_exact() {
        // tests/golden/02_hard_turns_turn_loss.classic.csv, row k=500:
        // x=85.619364911775151, y=21.984724157191124,
        // lat=42.358653794022175, lon=-71.086546556381663
        let c = conv(Geodesy::LocalGrid);
        let (lat, lon) = c.to_lat_lon(85.619364911775151, 21.984724157191124);
        assert_eq!(lat, 42.358653794022175);
        assert_eq!(lon, -71.086546556381663);
    }

    #[test]
    fn local_grid_nan_gives_zeros() {
        // |y| > R: asin is NaN, so MOOS returns (0, 0).
        let c = conv(Geodesy::LocalGrid);
        assert_eq!(c.to_lat_lon(0.0, 7.0e6), (0.0, 0.0));
        assert_eq!(c.to_lat_lon(f64::NAN, 0.0), (0.0, 0.0));
    }

    #[test]
    fn utm_zone_rules() {
        assert_eq!(utm_zone(42.358456, -71.087589), 19);
        assert_eq!(utm_zone(0.0, -180.0), 1);
        assert_eq!(utm_zone(0.0, 180.0), 1);
        assert_eq!(utm_zone(0.0, 179.999), 60);
        assert_eq!(utm_zone(0.0, 0.0), 31);
        assert_eq!(utm_zone(-33.9, 18.4), 34);
        // Norway: 32V widened west to 3°E.
        assert_eq!(utm_zone(60.0, 5.0), 32);
        assert_eq!(utm_zone(55.9, 5.0), 31);
        // Svalbard.
        assert_eq!(utm_zone(78.0, 8.0), 31);
        assert_eq!(utm_zone(78.0, 15.0), 33);
        assert_eq!(utm_zone(78.0, 25.0), 35);
        assert_eq!(utm_zone(78.0, 40.0), 37);
        assert_eq!(utm_zone(84.0, 35.0), 36);
        assert_eq!(utm_zone(78.0, 35.0), 37);
    }

    #[test]
    fn utm_origin_matches_pyproj() {
        // pyproj 3.7.2 (bundled PROJ 9):
        //   scripts/check_utm_pyproj.py origin 42.358456 -71.087589
        //   -> 19 False 328080.97246797837 4691687.128861347
        let c = conv(Geodesy::Utm);
        assert_eq!(c.utm_zone(), Some((19, false)));
        let (e0, n0) = c.utm_origin_m().unwrap_or((0.0, 0.0));
        assert!((e0 - UTM_ORIGIN.0).abs() < 1e-6, "{e0}");
        assert!((n0 - UTM_ORIGIN.1).abs() < 1e-6, "{n0}");
    }

    /// Origin of the golden missions projected as MOOSGeodesy does (pyproj).
    const UTM_ORIGIN: (f64, f64) = (328080.97246797837, 4691687.128861347);

    #[test]
    fn utm_golden_row() {
        // tests/golden/02_hard_turns_turn_loss.classic.csv, row k=500:
        // x=85.619364911775151, y=21.984724157191124,
        // lat_utm=42.358672785851262, lon_utm=-71.086556554220522
        // (pyproj via scripts/check_utm_pyproj.py point ... agrees to 1e-14)
        let (lat, lon) = conv(Geodesy::Utm).to_lat_lon(85.619364911775151, 21.984724157191124);
        assert!((lat - GOLDEN_UTM.0).abs() < 1e-8, "{lat}");
        assert!((lon - GOLDEN_UTM.1).abs() < 1e-8, "{lon}");
    }

    const GOLDEN_UTM: (f64, f64) = (42.358672785851262, -71.086556554220522);

    #[test]
    fn utm_matches_pyproj_far_points() {
        // (lat0, lon0, x, y) -> (lat, lon), each expected value from
        //   scripts/check_utm_pyproj.py point LAT0 LON0 X Y
        // (pyproj 3.7.2, bundled PROJ 9): zones/hemispheres, far from the
        // central meridian, near the poles, Norway and Svalbard zones.
        let cases = [
            (
                (0.1, 3.0, 3.0e6, 1000.0),
                (0.09792333412315318, 29.010852825596977),
            ),
            (
                (-45.0, 170.0, -4.0e6, -2.0e6),
                (-47.34294256699599, 114.66452557491078),
            ),
            (
                (89.9, 10.0, 5000.0, -3000.0),
                (89.86488162876181, 29.142263439832135),
            ),
            (
                (-89.99, -179.99, 1000.0, 1000.0),
                (-89.97926389306593, -152.9975244895832),
            ),
            (
                (60.0, 5.0, -2.0e5, 1.0e5),
                (60.73330473464511, 1.2312010986252817),
            ),
            (
                (78.0, 15.0, 1.5e5, 0.0),
                (77.92609348575716, 21.436166404583474),
            ),
            (
                (10.0, -100.0, 8.0e6, 0.0),
                (5.301370861020284, -41.04820370074813),
            ),
        ];
        for ((lat0, lon0, x, y), (want_lat, want_lon)) in cases {
            let c = match GeoConverter::new(lat0, lon0, Geodesy::Utm) {
                Ok(c) => c,
                Err(e) => panic!("{e}"),
            };
            let (lat, lon) = c.to_lat_lon(x, y);
            assert!(
                (lat - want_lat).abs() < 1e-10,
                "{lat0},{lon0},{x},{y}: lat {lat}"
            );
            assert!(
                (lon - want_lon).abs() < 1e-10,
                "{lat0},{lon0},{x},{y}: lon {lon}"
            );
        }
    }

    #[test]
    fn utm_round_trip() {
        for (lat0, lon0) in [
            (42.358456, -71.087589),
            (-33.9, 18.4),
            (78.0, 15.0),
            (0.5, 179.9),
        ] {
            let c = match GeoConverter::new(lat0, lon0, Geodesy::Utm) {
                Ok(c) => c,
                Err(e) => panic!("{e}"),
            };
            for (x, y) in [(0.0, 0.0), (1234.5, -987.25), (-250_000.0, 300_000.0)] {
                let (lat, lon) = c.to_lat_lon(x, y);
                let (x2, y2) = c.to_x_y(lat, lon);
                assert!(
                    (x2 - x).abs() < 1e-6 && (y2 - y).abs() < 1e-6,
                    "{x},{y} -> {x2},{y2}"
                );
            }
        }
    }

    #[test]
    fn utm_failure_is_nan() {
        let c = conv(Geodesy::Utm);
        let (lat, lon) = c.to_lat_lon(f64::NAN, 0.0);
        assert!(lat.is_nan() && lon.is_nan());
        // Far beyond the 150° easting limit.
        let (lat, lon) = c.to_lat_lon(1.0e8, 0.0);
        assert!(lat.is_nan() && lon.is_nan());
    }
}
