//! The suite against its formulas: Gauss–Markov statistics, white noise,
//! outliers, dropouts, latency and the message syntax.
use super::*;

fn truth(t: f64) -> Truth {
    Truth {
        t,
        x: 100.0,
        y: -50.0,
        speed: 2.0,
        heading: 45.0,
        depth: 3.0,
    }
}

fn err_x(s: &mut Suite, t: f64) -> (f64, f64) {
    let r = s.sense(&truth(t));
    let (x, y) = r.pos.unwrap();
    (x - 100.0, y + 50.0)
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, var.sqrt())
}

fn autocorr(v: &[f64], lag: usize) -> f64 {
    let (m, s) = mean_std(v);
    let n = v.len() - lag;
    let c = (0..n).map(|i| (v[i] - m) * (v[i + lag] - m)).sum::<f64>() / n as f64;
    c / (s * s)
}

#[test]
fn the_bias_has_the_gauss_markov_mean_variance_and_autocorrelation() {
    // σ_b = 2 m, τ = 5 s, readings every Δt = 1 s: φ = exp(−1/5).
    let (sb, tau, dt) = (2.0, 5.0, 1.0);
    let n = 200_000;
    let mut s = Suite::new(
        Settings {
            seed: 11,
            gps_bias_sigma: sb,
            gps_bias_tau: tau,
            ..Settings::default()
        },
        "alpha",
    );
    let (mut ex, mut ey) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for k in 0..n {
        let (x, y) = err_x(&mut s, k as f64 * dt);
        ex.push(x);
        ey.push(y);
    }
    let phi: f64 = (-dt / tau).exp();
    // Standard error of the mean of an AR(1) series: σ_b·√((1+φ)/((1−φ)n)).
    let se = sb * ((1.0 + phi) / ((1.0 - phi) * n as f64)).sqrt();
    for e in [&ex, &ey] {
        let (m, sd) = mean_std(e);
        assert!(m.abs() < 4.0 * se, "mean {m} (se {se})");
        assert!((sd / sb - 1.0).abs() < 0.03, "std {sd} vs σ_b {sb}");
        for lag in [1usize, 2, 5, 10] {
            let want = phi.powi(lag as i32); // exp(−lag·Δt/τ)
            let got = autocorr(e, lag);
            assert!((got - want).abs() < 0.03, "lag {lag}: {got} vs {want}");
        }
    }
    // East and north are independent.
    let (mx, sx) = mean_std(&ex);
    let (my, sy) = mean_std(&ey);
    let cross = ex
        .iter()
        .zip(&ey)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / (n as f64 * sx * sy);
    assert!(cross.abs() < 0.03, "cross-correlation {cross}");
}

#[test]
fn white_noise_has_its_sigma_and_no_memory() {
    let mut s = Suite::new(
        Settings {
            seed: 3,
            gps_sigma: 3.0,
            heading_sigma: 1.5,
            heading_bias: 2.0,
            speed_sigma: 0.1,
            ..Settings::default()
        },
        "alpha",
    );
    let n = 100_000;
    let (mut ex, mut eh, mut ev) = (vec![], vec![], vec![]);
    for k in 0..n {
        let r = s.sense(&truth(k as f64 * 0.1));
        ex.push(r.pos.unwrap().0 - 100.0);
        eh.push(r.heading.unwrap() - 45.0);
        ev.push(r.speed.unwrap() - 2.0);
    }
    let se = |sigma: f64| 4.0 * sigma / (n as f64).sqrt();
    let (m, sd) = mean_std(&ex);
    assert!(
        m.abs() < se(3.0) && (sd / 3.0 - 1.0).abs() < 0.02,
        "{m} {sd}"
    );
    assert!(autocorr(&ex, 1).abs() < 0.02);
    let (m, sd) = mean_std(&eh);
    assert!(
        (m - 2.0).abs() < se(1.5) && (sd / 1.5 - 1.0).abs() < 0.02,
        "{m} {sd}"
    );
    let (m, sd) = mean_std(&ev);
    assert!(
        m.abs() < se(0.1) && (sd / 0.1 - 1.0).abs() < 0.02,
        "{m} {sd}"
    );
}

#[test]
fn outliers_come_at_their_rate_with_their_magnitude() {
    let (p, mag) = (0.05, 50.0);
    let mut s = Suite::new(
        Settings {
            seed: 5,
            gps_outlier_prob: p,
            gps_outlier_m: mag,
            ..Settings::default()
        },
        "alpha",
    );
    let n = 40_000;
    let mut hits = 0;
    for k in 0..n {
        let (x, y) = err_x(&mut s, k as f64);
        let r = x.hypot(y);
        if r > 0.0 {
            assert!((r - mag).abs() < 1e-9, "{r}");
            hits += 1;
        }
    }
    // Binomial: n·p ± 4·√(n·p·(1−p)).
    let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
    assert!((hits as f64 - mean).abs() < 4.0 * sd, "{hits} outliers");
}

#[test]
fn a_scheduled_dropout_removes_the_fix_for_its_duration() {
    let mut s = Suite::new(
        Settings {
            faults: vec![fault::parse("gps=off,at=120,for=30").unwrap()],
            ..Settings::default()
        },
        "alpha",
    );
    for k in 0..2000 {
        let t = k as f64 * 0.1;
        let r = s.sense(&truth(t));
        let out = (120.0..150.0).contains(&(t + 1e-9)) && t < 150.0 - 1e-9;
        assert_eq!(r.pos.is_none(), out, "t={t}");
        assert_eq!(r.fix_quality, if out { 0 } else { 8 }, "t={t}");
        assert_eq!(r.hdop.is_nan(), out);
        assert_eq!(r.satellites, if out { 0 } else { 12 });
        // The other sensors keep reading.
        assert_eq!(r.heading, Some(45.0));
        assert_eq!(r.speed, Some(2.0));
        assert_eq!(r.depth, Some(3.0));
    }
}

#[test]
fn messages_switch_sensors_now_or_later() {
    let mut s = Suite::new(Settings::default(), "alpha");
    s.command("heading=off", 1.0).unwrap();
    assert!(s.sense(&truth(1.0)).heading.is_none());
    s.command("all=on", 1.0).unwrap();
    assert!(s.sense(&truth(1.1)).heading.is_some());
    s.command("depth=off,at=5", 1.2).unwrap();
    assert!(s.sense(&truth(4.9)).depth.is_some());
    assert!(s.sense(&truth(5.0)).depth.is_none());
    s.command("all=off", 6.0).unwrap();
    let r = s.sense(&truth(6.0));
    assert!(r.pos.is_none() && r.speed.is_none() && r.heading.is_none());
    for bad in [
        "",
        "gps",
        "gps=maybe",
        "radar=off",
        "gps=off,at=-1",
        "gps=off,for=nan",
        "gps=off,heading=off",
        "at=5",
    ] {
        assert!(s.command(bad, 7.0).is_err(), "{bad:?} accepted");
    }
    // A flood of switches is capped, not stored without bound.
    let mut s = Suite::new(Settings::default(), "alpha");
    let mut refused = 0;
    for k in 0..2 * fault::MAX_PENDING {
        if s.command(&format!("gps=off,at={}", 1000 + k), 0.0).is_err() {
            refused += 1;
        }
    }
    assert_eq!(refused, fault::MAX_PENDING);
}

#[test]
fn latency_publishes_the_reading_of_latency_seconds_ago() {
    let settings = Settings {
        seed: 9,
        gps_sigma: 1.0,
        gps_bias_sigma: 2.0,
        gps_bias_tau: 30.0,
        ..Settings::default()
    };
    let mut now = Suite::new(settings.clone(), "alpha");
    let mut late = Suite::new(
        Settings {
            latency: 0.5,
            ..settings
        },
        "alpha",
    );
    let mut undelayed = Vec::new();
    for k in 0..100u32 {
        let t = f64::from(k) * 0.1;
        let tr = Truth { x: t, ..truth(t) };
        undelayed.push(now.sense(&tr));
        let r = late.sense(&tr);
        let want = undelayed[(k as usize).saturating_sub(5)];
        assert_eq!(r, want, "k={k}");
    }
}

#[test]
fn channels_have_their_own_streams_and_names_their_own_noise() {
    let base = Settings {
        seed: 1,
        gps_sigma: 2.0,
        heading_sigma: 1.0,
        ..Settings::default()
    };
    let mut a = Suite::new(base.clone(), "alpha");
    let mut b = Suite::new(
        Settings {
            heading_sigma: 0.0,
            ..base.clone()
        },
        "alpha",
    );
    let mut c = Suite::new(base, "bravo");
    let mut differ = 0;
    for k in 0..100 {
        let t = k as f64;
        let (ra, rb, rc) = (a.sense(&truth(t)), b.sense(&truth(t)), c.sense(&truth(t)));
        assert_eq!(ra.pos, rb.pos, "heading noise moved the GPS stream");
        differ += usize::from(ra.pos != rc.pos);
    }
    assert_eq!(differ, 100, "two vehicles drew the same noise");
}

#[test]
fn perfect_sensors_return_the_truth_bit_for_bit() {
    let mut s = Suite::new(Settings::default(), "alpha");
    let tr = Truth {
        t: 0.5,
        x: 0.1 + 0.2,
        y: -0.0,
        speed: 1.0 / 3.0,
        heading: 359.99,
        depth: 0.0,
    };
    let r = s.sense(&tr);
    assert_eq!(
        r.pos.map(|p| (p.0.to_bits(), p.1.to_bits())),
        Some((tr.x.to_bits(), tr.y.to_bits()))
    );
    assert_eq!(r.speed.map(f64::to_bits), Some(tr.speed.to_bits()));
    assert_eq!(r.heading.map(f64::to_bits), Some(tr.heading.to_bits()));
    // A perfect GPS: the HDOP rule's floor, 0.1.
    assert_eq!((r.fix_quality, r.hdop, r.satellites), (8, 0.1, 12));
}

/// HDOP = √(2(σ² + σ_b²)) / 5 m unless `gps_hdop` sets it; clamped into
/// [0.1, 99.9]; NaN with 0 satellites and quality 0 in a dropout.
#[test]
fn hdop_follows_the_noise_unless_set() {
    let s = |gps_sigma: f64, gps_bias_sigma: f64, gps_hdop: Option<f64>| Settings {
        gps_sigma,
        gps_bias_sigma,
        gps_bias_tau: 10.0,
        gps_hdop,
        ..Settings::default()
    };
    // σ = 3, σ_b = 4: √(2·25) / 5 = √2.
    assert!((s(3.0, 4.0, None).hdop() - 2f64.sqrt()).abs() < 1e-12);
    assert_eq!(s(0.0, 0.0, None).hdop(), 0.1);
    assert_eq!(s(1000.0, 0.0, None).hdop(), 99.9);
    assert_eq!(s(3.0, 4.0, Some(2.5)).hdop(), 2.5);
    let mut suite = Suite::new(s(3.0, 4.0, None), "alpha");
    suite.command("gps=off", 0.0).unwrap();
    let tr = Truth {
        t: 0.0,
        x: 1.0,
        y: 2.0,
        speed: 1.0,
        heading: 10.0,
        depth: 0.0,
    };
    let r = suite.sense(&tr);
    assert!(r.pos.is_none() && r.hdop.is_nan());
    assert_eq!((r.fix_quality, r.satellites), (0, 0));
}
