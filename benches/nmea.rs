//! Criterion benchmarks of the NMEA/AIS encoder (docs/nmea.md): the cost
//! of one report in `usim nmea`, parse included: a NODE_REPORT parsed and
//! turned into one AIS type 1 (`!AIVDM`), or into the own ship's set (GGA,
//! RMC, VTG, HDT, ZDA, `!AIVDO`); and 1,000 vehicles' reports of one tick.
//!
//! Run: `cargo bench --bench nmea`. Throughput is in reports/s.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use usim::nmea::{parse_node_report, Engine, Options};

const REPORT: &[u8] = br#"{"k":1234,"t":123.4,"x":12.5,"y":-40.25,"speed":1.8,"heading":44.7,"depth":0,"altitude":null,"pitch":0,"yaw":0.79,"sog":1.8,"hog":44.7,"nav_speed":1.8,"nav_heading":44.7,"lat":42.3587452939259,"lon":-71.08721763700339,"drift_x":0,"drift_y":0,"rudder":0,"thrust":80,"elevator":0,"gt_x":12.5,"gt_y":-40.25,"thrust_l":0,"thrust_r":0,"current_x":0,"current_y":0}"#;

fn nmea(c: &mut Criterion) {
    let mut g = c.benchmark_group("nmea");
    g.throughput(Throughput::Elements(1));
    let every = Options {
        ais_interval_s: Some(1e-6),
        own_interval_s: 1e-6,
        ..Options::default()
    };
    let mut out = Vec::with_capacity(4096);
    for (label, own) in [
        ("AIS type 1 per report", None),
        ("own-ship set per report", Some("v")),
    ] {
        let mut e = Engine::new(every.clone(), own.map(String::from));
        let mut t = 0.0;
        g.bench_function(label, |b| {
            b.iter(|| {
                let mut s = parse_node_report(black_box(REPORT)).unwrap();
                t += 1.0;
                s.t = t;
                s.clock = 1.7e9 + t;
                out.clear();
                black_box(e.update("v", &s, &mut out).unwrap())
            })
        });
    }
    g.throughput(Throughput::Elements(1000));
    let names: Vec<String> = (0..1000).map(|i| format!("v{i:04}")).collect();
    let mut e = Engine::new(every, Some("v0000".into()));
    let mut t = 0.0;
    g.bench_function("1000 vehicles, one report each", |b| {
        b.iter(|| {
            t += 1.0;
            let mut n = 0;
            for name in &names {
                let mut s = parse_node_report(REPORT).unwrap();
                s.t = t;
                s.clock = 1.7e9 + t;
                out.clear();
                n += e.update(name, &s, &mut out).unwrap();
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, nmea);
criterion_main!(benches);
