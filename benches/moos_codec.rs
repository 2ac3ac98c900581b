//! MOOS V10 codec: encode and decode one packet of 50 NAV_* double
//! messages (the size of a busy vehicle iteration). Criterion reports the
//! time per packet and, through `Throughput::Elements(50)`, per message.
//! Run: `cargo bench --bench moos_codec`.
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;
use usim::moos::codec::{decode_packet, encode_packet, FrameReader, Message, MAX_PACKET};

fn nav_messages() -> Vec<Message> {
    let names = [
        "NAV_X",
        "NAV_Y",
        "NAV_SPEED",
        "NAV_HEADING",
        "NAV_DEPTH",
        "NAV_LAT",
        "NAV_LONG",
        "NAV_YAW",
        "NAV_PITCH",
        "NAV_Z",
    ];
    (0..50)
        .map(|i| {
            let mut m =
                Message::notify_double(names[i % names.len()], i as f64 * 1.25, 1.795e9 + i as f64);
            m.source = "uSimMarine".into();
            m.community = "alpha".into();
            m.id = i as i32;
            m
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let msgs = nav_messages();
    let mut g = c.benchmark_group("moos_codec");
    g.throughput(Throughput::Elements(msgs.len() as u64));
    g.bench_function("encode_decode_50_nav", |b| {
        b.iter(|| {
            let bytes = encode_packet(black_box(&msgs));
            black_box(decode_packet(&bytes).expect("decodes"))
        })
    });
    let bytes = encode_packet(&msgs);
    g.bench_function("frame_reader_50_nav", |b| {
        b.iter_batched(
            || FrameReader::new(MAX_PACKET),
            |mut r| {
                r.push(black_box(&bytes));
                black_box(r.next_packet().expect("frames"))
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
