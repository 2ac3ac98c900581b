//! Cost of the timed-command buffer at scale (docs/timed_commands.md, "Cost").
//!
//! `cargo bench --bench timed_commands`
//!
//! * `cycle/idle_1M`: one cycle with 1,000,000 pending commands, none due
//!   (the cycle interpolates toward the first one).
//! * `cycle/due_1M`: one cycle that applies one of 1,000,000 pending commands
//!   and interpolates toward the next.
//! * `merge/k_into_n`: a `Merge` of k new commands (fresh times, interleaved
//!   with the pending ones) into n pending commands; the buffer is rebuilt
//!   (untimed) whenever it has grown by 10 %.
//! * `bank/cycle_5_idle`: the per-iteration cost the simulator pays with no
//!   timed list running.
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use usim::interp::timed_commands::{ActuatorBank, TimedCommand, TimedCommands, UpdateKind};

const MILLION: usize = 1_000_000;

/// `n` pending commands at `first_us + i·step_us`, values 0..100 sawtooth.
fn buffer(n: usize, first_us: i64, step_us: i64) -> TimedCommands {
    let mut tc = TimedCommands::new(0.0);
    tc.start_us(0);
    let cmds: Vec<TimedCommand> = (0..n)
        .map(|i| TimedCommand {
            value: (i % 100) as f64,
            time_us: first_us + i as i64 * step_us,
        })
        .collect();
    tc.apply(UpdateKind::Merge, &cmds);
    tc
}

fn cycle(c: &mut Criterion) {
    let mut g = c.benchmark_group("cycle");
    g.measurement_time(Duration::from_secs(3));

    // Nothing due: first command at 10^12 µs, cycles 1 µs apart from 1 µs.
    let idle = buffer(MILLION, 1_000_000_000_000, 10_000);
    g.bench_function("idle_1M", |b| {
        let mut tc = idle.clone();
        let mut now = 0i64;
        b.iter(|| {
            now += 1;
            black_box(tc.cycle_us(black_box(now)));
            black_box(tc.value())
        })
    });
    drop(idle);

    // One command due per cycle: commands every 10 ms, cycles every 10 ms.
    let due = buffer(MILLION, 10_000, 10_000);
    g.bench_function("due_1M", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                // At most 900k cycles per fresh buffer: n stays near 10^6.
                let run = left.min(900_000);
                let mut tc = due.clone();
                let start = Instant::now();
                for k in 1..=run as i64 {
                    black_box(tc.cycle_us(black_box(k * 10_000)));
                }
                total += start.elapsed();
                left -= run;
            }
            total
        })
    });
    g.finish();
}

fn merge(c: &mut Criterion) {
    let mut g = c.benchmark_group("merge");
    g.measurement_time(Duration::from_secs(3));
    g.sample_size(30);
    for (k, n) in [
        (1usize, 1_000usize),
        (1, MILLION),
        (100, MILLION),
        (10_000, MILLION),
    ] {
        // Pending at even µs (step 2·n / n), new ones at odd µs spread over
        // the same span, so every merge inserts k new keys among n.
        let base = buffer(n, 0, 2 * 1000);
        g.throughput(Throughput::Elements(k as u64));
        g.bench_with_input(
            BenchmarkId::new("k_into_n", format!("{k}_into_{n}")),
            &k,
            |b, &k| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut tc = base.clone();
                    let mut grown = 0usize;
                    let mut seq: u64 = 0;
                    let span = n as u64 * 1000;
                    for _ in 0..iters {
                        if grown + k > n / 10 + k {
                            tc = base.clone();
                            grown = 0;
                        }
                        // Fresh odd times, scattered by a multiplicative hash.
                        let cmds: Vec<TimedCommand> = (0..k)
                            .map(|_| {
                                seq += 1;
                                let slot = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) % span;
                                TimedCommand {
                                    value: 1.0,
                                    time_us: (2 * slot + 1) as i64,
                                }
                            })
                            .collect();
                        let start = Instant::now();
                        tc.apply(UpdateKind::Merge, black_box(&cmds));
                        total += start.elapsed();
                        grown += k;
                    }
                    total
                })
            },
        );
    }
    g.finish();
}

fn bank(c: &mut Criterion) {
    let mut bank = ActuatorBank::new(&[]).expect("no aliases");
    let mut t = 0.0;
    c.bench_function("bank/cycle_5_idle", |b| {
        b.iter(|| {
            t += 0.1;
            bank.cycle(black_box(t));
        })
    });
}

criterion_group!(benches, cycle, merge, bank);
criterion_main!(benches);
