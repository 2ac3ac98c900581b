//! CSV output (docs/formats.md §3): the fixed columns, numbers written in
//! their shortest round-trip form (Ryū's digits) so they read back to the
//! same f64, `nan` for "not set", `inf` / `-inf` for the infinities.
use std::io::{self, Write};

use crate::model::Snapshot;

/// The CSV header, in the contract's order.
pub const HEADER: &str = "k,t,x,y,speed,heading,depth,altitude,pitch,yaw,sog,hog,nav_speed,nav_heading,lat,lon,drift_x,drift_y,rudder,thrust,elevator,gt_x,gt_y,thrust_l,thrust_r,current_x,current_y";

/// Writes snapshots as CSV rows through a buffer.
pub struct CsvWriter<W: Write> {
    out: io::BufWriter<W>,
    /// The row being put together.
    row: Box<[u8; ROW]>,
    cache: ColumnCache,
    /// Extra columns after [`HEADER`]'s (indices into
    /// [`Snapshot::EXTRA_NAMES`]; empty: the fixed columns only).
    extra: Vec<usize>,
    /// Scratch of the extra columns' text.
    tail: Vec<u8>,
}

impl<W: Write> CsvWriter<W> {
    /// Write the header and return the writer.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_columns(out, &[])
    }

    /// Write the header with the extra columns `extra` (indices into
    /// [`Snapshot::EXTRA_NAMES`], a mission's `columns`) and return the
    /// writer. With none, the same bytes as [`CsvWriter::new`].
    pub fn with_columns(out: W, extra: &[usize]) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(HEADER.as_bytes())?;
        out.write_all(extra_header(extra).as_bytes())?;
        out.write_all(b"\n")?;
        Ok(CsvWriter {
            out,
            row: Box::new([0; ROW]),
            cache: ColumnCache::default(),
            extra: extra.to_vec(),
            tail: Vec::new(),
        })
    }

    /// Write one row.
    pub fn write_row(&mut self, s: &Snapshot) -> io::Result<()> {
        let n = put_row_cached(&mut self.row, s, &mut self.cache);
        if self.extra.is_empty() {
            return self.out.write_all(&self.row[..n]);
        }
        self.tail.clear();
        push_extra(&mut self.tail, s, &self.extra);
        self.out.write_all(&self.row[..n - 1])?;
        self.out.write_all(&self.tail)
    }

    /// Flush everything.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `,name` for each extra column `extra` (indices into
/// [`Snapshot::EXTRA_NAMES`]; out-of-range ones skipped): what the header
/// adds after [`HEADER`].
pub fn extra_header(extra: &[usize]) -> String {
    extra
        .iter()
        .filter_map(|&i| Snapshot::EXTRA_NAMES.get(i))
        .map(|n| format!(",{n}"))
        .collect()
}

/// Append `,value` for each extra column of `s` and the row's newline.
pub fn push_extra(buf: &mut Vec<u8>, s: &Snapshot, extra: &[usize]) {
    for &i in extra {
        buf.push(b',');
        push_f64(buf, s.extra_value(i));
    }
    buf.push(b'\n');
}

/// [`push_row`] followed by the extra columns `extra`.
pub fn push_row_with(line: &mut Vec<u8>, s: &Snapshot, extra: &[usize]) {
    push_row(line, s);
    if !extra.is_empty() {
        line.pop();
        push_extra(line, s, extra);
    }
}

/// The CSV header of a multi-vehicle replay: `vehicle`, then [`HEADER`].
pub const FLEET_HEADER_PREFIX: &str = "vehicle,";

/// Writes a multi-vehicle replay as one CSV: the vehicle's name first,
/// then the columns of [`HEADER`].
pub struct FleetCsvWriter<W: Write> {
    out: io::BufWriter<W>,
    names: Vec<String>,
    line: Vec<u8>,
    /// Extra columns (see [`CsvWriter::with_columns`]).
    extra: Vec<usize>,
}

impl<W: Write> FleetCsvWriter<W> {
    /// Write the header and return the writer; `names` are the vehicles'
    /// names in mission order.
    pub fn new(out: W, names: Vec<String>) -> io::Result<Self> {
        Self::with_columns(out, names, &[])
    }

    /// [`FleetCsvWriter::new`] with the extra columns `extra` (see
    /// [`CsvWriter::with_columns`]).
    pub fn with_columns(out: W, names: Vec<String>, extra: &[usize]) -> io::Result<Self> {
        let mut out = io::BufWriter::with_capacity(1 << 16, out);
        out.write_all(FLEET_HEADER_PREFIX.as_bytes())?;
        out.write_all(HEADER.as_bytes())?;
        out.write_all(extra_header(extra).as_bytes())?;
        out.write_all(b"\n")?;
        Ok(FleetCsvWriter {
            out,
            names,
            line: Vec::with_capacity(512),
            extra: extra.to_vec(),
        })
    }
}

impl<W: Write> super::Output for FleetCsvWriter<W> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.vehicle_row(0, s, clock)
    }

    fn fleet_rows(&mut self, snaps: &[Snapshot], _clock: f64) -> io::Result<()> {
        // Rows formatted in parallel, 64 vehicles a chunk, written in order.
        use rayon::prelude::*;
        let names = &self.names;
        let extra = &self.extra;
        let chunks: Vec<Vec<u8>> = snaps
            .par_chunks(64)
            .enumerate()
            .map(|(c, part)| {
                let mut buf = Vec::with_capacity(part.len() * 400);
                for (j, s) in part.iter().enumerate() {
                    let name = names.get(c * 64 + j).map_or("", String::as_str);
                    push_field(&mut buf, name);
                    buf.push(b',');
                    push_row_with(&mut buf, s, extra);
                }
                buf
            })
            .collect();
        for c in chunks {
            self.out.write_all(&c)?;
        }
        Ok(())
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, _clock: f64) -> io::Result<()> {
        self.line.clear();
        let name = self.names.get(vehicle).map_or("", String::as_str);
        push_field(&mut self.line, name);
        self.line.push(b',');
        push_row_with(&mut self.line, s, &self.extra);
        self.out.write_all(&self.line)
    }

    fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// One CSV file per vehicle (`usim replay -o DIR/`), each exactly what the
/// vehicle's one-vehicle replay would write.
pub struct PerVehicleCsv<W: Write> {
    writers: Vec<CsvWriter<W>>,
}

impl<W: Write> PerVehicleCsv<W> {
    /// One writer per vehicle, in mission order (headers written).
    pub fn new(outs: Vec<W>) -> io::Result<Self> {
        Self::with_columns(outs, &[])
    }

    /// [`PerVehicleCsv::new`] with the extra columns `extra` (see
    /// [`CsvWriter::with_columns`]).
    pub fn with_columns(outs: Vec<W>, extra: &[usize]) -> io::Result<Self> {
        let writers = outs
            .into_iter()
            .map(|o| CsvWriter::with_columns(o, extra))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(PerVehicleCsv { writers })
    }
}

impl<W: Write> super::Output for PerVehicleCsv<W> {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.vehicle_row(0, s, clock)
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, _clock: f64) -> io::Result<()> {
        match self.writers.get_mut(vehicle) {
            Some(w) => w.write_row(s),
            None => Err(io::Error::other(format!("no output for vehicle {vehicle}"))),
        }
    }

    fn finish(self) -> io::Result<()> {
        for w in self.writers {
            w.finish()?;
        }
        Ok(())
    }
}

/// Append the CSV row of `s` (the [`HEADER`] columns) with its newline.
pub fn push_row(line: &mut Vec<u8>, s: &Snapshot) {
    push_u64(line, s.k);
    line.push(b',');
    let values = s.values();
    push_f64(line, round_to_microsecond(values[0]));
    for &v in &values[1..] {
        line.push(b',');
        push_f64(line, v);
    }
    line.push(b'\n');
}

/// A mission time as printed: rounded to the microsecond grid the mission
/// times live on (`k·dt` in f64 gives `1.2000000000000002`; the CSV shows
/// `1.2`). The model keeps the exact value.
pub fn round_to_microsecond(t_s: f64) -> f64 {
    if t_s.is_finite() && t_s.abs() < 1e15 {
        (t_s * 1e6).round() / 1e6
    } else {
        t_s
    }
}

impl<W: Write> super::Output for CsvWriter<W> {
    fn row(&mut self, s: &Snapshot, _clock: f64) -> io::Result<()> {
        self.write_row(s)
    }

    fn finish(self) -> io::Result<()> {
        CsvWriter::finish(self)
    }
}

/// Append `v` in its shortest form that reads back to the same f64 (the
/// text of Ryū's `format_finite` with a trailing `.0` removed: `0.1`, `42`,
/// `-0`, `2.5e20`, `4.008336720018362e-305`); `nan` for NaN, `inf` and
/// `-inf` for the infinities (which also read back as themselves: Rust's
/// `parse::<f64>`, Python's `float`, pandas, numpy all take them).
///
/// Integers below 10¹⁶ and whole numbers of millionths (mission times on
/// the microsecond grid, see `put_millionths`) take a digit loop;
/// everything else goes through `zmij` (about twice as fast as Ryū: the same shortest, closest digits)
/// with its exponent rewritten to Ryū's form (`e+20` → `e20`, `e-07` →
/// `e-7`). Plain notation for a leading-digit exponent in −5..=15 and
/// exponent notation elsewhere, as Ryū.
#[inline]
pub fn push_f64(buf: &mut Vec<u8>, v: f64) {
    let mut text = [0u8; SLOT];
    let n = format_f64(&mut text, v);
    buf.extend_from_slice(&text[..n]);
}

/// Bytes of a number's text slot: the longest text [`push_f64`] writes is
/// 24 bytes (`-2.2250738585072014e-308`); a slot of 32 lets whole slots be
/// copied with fixed-size moves (no `memcpy` call per number).
const SLOT: usize = 32;

/// The text of [`push_f64`], written at the start of `out`; returns its
/// length in bytes (at most 24).
#[inline]
fn format_f64(out: &mut [u8; SLOT], v: f64) -> usize {
    let i = v as i64;
    if i as f64 == v && i.unsigned_abs() < 10_000_000_000_000_000 {
        if i < 0 || (i == 0 && v.is_sign_negative()) {
            out[0] = b'-';
            put_u64(out, 1, i.unsigned_abs())
        } else {
            put_u64(out, 0, i as u64)
        }
    } else if v.is_nan() {
        out[..3].copy_from_slice(b"nan");
        3
    } else if v.is_infinite() {
        if v > 0.0 {
            out[..3].copy_from_slice(b"inf");
            3
        } else {
            out[..4].copy_from_slice(b"-inf");
            4
        }
    } else {
        match put_millionths(out, v) {
            Some(n) => n,
            None => format_zmij(out, v),
        }
    }
}

/// Write the decimal digits of `v` into `out` from `start`; returns the
/// end. Digits are counted first and written back to front, in place.
#[inline]
fn put_u64(out: &mut [u8], start: usize, mut v: u64) -> usize {
    let len = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    let end = start + len;
    let mut i = end;
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        out[i - 2..i].copy_from_slice(&DIGIT_PAIRS[r..r + 2]);
    } else {
        out[i - 1] = b'0' + v as u8;
    }
    end
}

/// The decimal fast path of [`push_f64`]: if `v` is exactly the f64 of a
/// whole number `n` of millionths (`n / 1e6` correctly rounded, as a
/// mission time on the microsecond grid, `0.1`, `12.3456`), with
/// 10 ≤ |n| < 10¹⁵, write `n·10⁻⁶` in plain notation, trailing zeros
/// removed, at the start of `out` and return its length; otherwise None.
///
/// Same text as Ryū: the decimal `n·10⁻⁶` reads back to `v` (the parser
/// and the division both round to nearest), and it has at most 15
/// significant digits, while two distinct decimals of at most 15 digits
/// lie more than 10⁻¹⁵ apart relative to their size, farther than the
/// one ulp (2.2·10⁻¹⁶ relative) of numbers that read back to `v`: so it
/// is the only, hence the shortest, decimal of ≤ 15 digits that does,
/// and Ryū's shortest digits are its digits. 10⁻⁵ ≤ |v| < 10⁹ keeps
/// Ryū's plain notation (its exponent form starts below 10⁻⁵).
#[inline]
fn put_millionths(out: &mut [u8; SLOT], v: f64) -> Option<usize> {
    let s = v * 1e6;
    if s.is_nan() || s.abs() >= 1e15 {
        return None;
    }
    // Nearest whole number (ties away; a miss only costs the fallback).
    let n = (s + 0.5f64.copysign(s)) as i64;
    let m = n.unsigned_abs();
    if m < 10 || m % 1_000_000 == 0 || (n as f64) / 1e6 != v {
        return None;
    }
    let mut at = 0;
    if n < 0 {
        out[0] = b'-';
        at = 1;
    }
    at = put_u64(out, at, m / 1_000_000);
    // The six fraction digits as `1dddddd`, the 1 then overwritten by the
    // point; trailing zeros dropped (the fraction is not 0).
    put_u64(out, at, m % 1_000_000 + 1_000_000);
    out[at] = b'.';
    let mut end = at + 7;
    while out[end - 1] == b'0' {
        end -= 1;
    }
    Some(end)
}

/// A CSV field: quoted (with `"` doubled) when it holds a comma, a quote, a
/// line break or leading/trailing blanks, or is empty.
pub fn push_field(buf: &mut Vec<u8>, s: &str) {
    let needs = s.is_empty()
        || s.contains([',', '"', '\n', '\r'])
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace);
    if needs {
        buf.push(b'"');
        for b in s.bytes() {
            if b == b'"' {
                buf.push(b'"');
            }
            buf.push(b);
        }
        buf.push(b'"');
    } else {
        buf.extend_from_slice(s.as_bytes());
    }
}

/// The non-integer, finite path of [`format_f64`]: zmij's text, with a
/// trailing `.0` removed and the exponent rewritten to Ryū's form.
#[inline(never)]
fn format_zmij(out: &mut [u8; SLOT], v: f64) -> usize {
    let mut b = zmij::Buffer::new();
    let text = b.format_finite(v).as_bytes();
    let len = text.len().min(SLOT);
    out[..len].copy_from_slice(&text[..len]);
    // Between 1e-4 and 1e15 the text is plain (zmij and Ryū write
    // exponents from 1e16 and below 1e-5) and has no `.0` (a non-integer
    // below 2^52 is farther from every integer than its rounding
    // interval reaches): the scan for `e` is needed only outside.
    let a = v.abs();
    if (1e-4..1e15).contains(&a) {
        return len;
    }
    match out[..len].iter().position(|&c| c == b'e') {
        None => {
            if out[..len].ends_with(b".0") {
                len - 2
            } else {
                len
            }
        }
        Some(e) => {
            // `e+20` → `e20`, `e-07` → `e-7`.
            let mut w = e + 1;
            let mut r = e + 1;
            match out[r] {
                b'+' => r += 1,
                b'-' => {
                    w += 1;
                    r += 1;
                }
                _ => {}
            }
            while len - r > 1 && out[r] == b'0' {
                r += 1;
            }
            out.copy_within(r..len, w);
            w + (len - r)
        }
    }
}

const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Append the decimal digits of `v` (with `-` when negative).
#[inline]
pub fn push_i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    push_u64(buf, v.unsigned_abs());
}

/// Append the decimal digits of `v`.
#[inline]
pub fn push_u64(buf: &mut Vec<u8>, v: u64) {
    let mut d = [0u8; 20];
    let n = put_u64(&mut d, 0, v);
    buf.extend_from_slice(&d[..n]);
}

/// The text of the last value written in each of a row's columns: a
/// column whose value did not change since the last row (most of them, in
/// a replay: depth, drift, actuators, ...) is copied, not formatted again.
/// Same bytes as [`push_f64`].
#[derive(Clone)]
pub struct ColumnCache {
    bits: [u64; 26],
    len: [u8; 26],
    text: [[u8; SLOT]; 26],
}

impl Default for ColumnCache {
    fn default() -> Self {
        ColumnCache {
            // A NaN payload `push_f64` never meets in a snapshot: the
            // first row formats every column.
            bits: [0x7ff8_dead_beef_0001; 26],
            len: [0; 26],
            text: [[0; SLOT]; 26],
        }
    }
}

impl ColumnCache {
    /// Append value `col` of a row, as [`push_f64`] would.
    #[inline]
    pub fn push(&mut self, buf: &mut Vec<u8>, col: usize, v: f64) {
        let n = self.text_of(col, v);
        buf.extend_from_slice(&self.text[col][..n]);
    }

    /// Make slot `col` hold the text of `v` (formatting it only if it is
    /// not the slot's last value); returns its length.
    #[inline]
    fn text_of(&mut self, col: usize, v: f64) -> usize {
        let bits = v.to_bits();
        if self.bits[col] != bits {
            let n = format_f64(&mut self.text[col], v);
            self.bits[col] = bits;
            self.len[col] = n as u8;
        }
        self.len[col] as usize
    }
}

/// Bytes of a row's scratch: `k` (≤ 20 digits) and 26 numbers of ≤ 24
/// bytes with their commas and the newline take at most 671; the rest is
/// room for whole-slot copies past the end of the last number.
const ROW: usize = 20 + 26 * 25 + 1 + SLOT;

/// [`push_row`] with a [`ColumnCache`] (one per output file: the cache holds
/// that file's previous row). Same bytes.
///
/// The row is put together in a fixed array, each number's slot copied
/// whole (fixed-size moves) and the end advanced by its length, then
/// appended to `line` at once.
pub fn push_row_cached(line: &mut Vec<u8>, s: &Snapshot, cache: &mut ColumnCache) {
    let mut row = [0u8; ROW];
    let n = put_row_cached(&mut row, s, cache);
    line.extend_from_slice(&row[..n]);
}

/// The row of [`push_row_cached`], written at the start of `row`; returns
/// its length.
#[inline]
fn put_row_cached(row: &mut [u8; ROW], s: &Snapshot, cache: &mut ColumnCache) -> usize {
    let mut at = put_u64(row, 0, s.k);
    let values = s.values();
    for (col, &v) in values.iter().enumerate() {
        let v = if col == 0 { round_to_microsecond(v) } else { v };
        let n = cache.text_of(col, v);
        row[at] = b',';
        row[at + 1..at + 1 + SLOT].copy_from_slice(&cache.text[col]);
        at += 1 + n;
    }
    row[at] = b'\n';
    at + 1
}

#[cfg(test)]
mod tests {

    #[test]
    fn header_is_k_then_the_snapshot_values() {
        let names = crate::model::Snapshot::VALUE_NAMES.join(",");
        assert_eq!(HEADER, format!("k,{names}"));
    }

    use super::*;

    #[test]
    fn round_trip_and_nan() {
        let values = [
            0.1 + 0.2,
            -0.0,
            4.008336720018362e-305,
            1.5e-7,
            2.5e20,
            1e-5,
            123.456,
            42.0,
        ];
        let mut b = Vec::new();
        push_f64(&mut b, f64::NAN);
        for v in values {
            b.push(b',');
            push_f64(&mut b, v);
        }
        let s = String::from_utf8(b).unwrap();
        let parts: Vec<&str> = s.split(',').collect();
        assert_eq!(parts[0], "nan");
        for (text, v) in parts[1..].iter().zip(values) {
            let back: f64 = text.parse().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
            assert!(text.len() <= 24, "short form: {text}");
        }
    }

    /// The text Ryū's `format_finite` gives (the CSV's digits since the
    /// first release), `.0` removed: the oracle the fast path must match.
    fn ryu_text(v: f64) -> String {
        let mut b = ryu::Buffer::new();
        let t = b.format_finite(v);
        t.strip_suffix(".0").unwrap_or(t).to_string()
    }

    fn ours(v: f64) -> String {
        let mut b = Vec::new();
        push_f64(&mut b, v);
        String::from_utf8(b).unwrap()
    }

    /// A small xorshift: reproducible values without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn same_text_as_ryu_for_every_kind_of_finite_value() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.3,
            42.0,
            123.456,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::EPSILON,
            5e-324,
            -5e-324,
            4.008336720018362e-305,
            2.5e20,
            9_007_199_254_740_992.0,
            9_223_372_036_854_775_808.0,
            -9_223_372_036_854_775_808.0,
            18_446_744_073_709_551_616.0,
        ];
        // Around every switch between plain and exponent notation, and
        // the integer path's edge at 1e16.
        for e in -330..=310 {
            let p = 10f64.powi(e);
            for m in [1.0, 1.5, 9.999_999_999_999_998, 0.999_999_999_999_999] {
                values.push(p * m);
                values.push(-p * m);
                values.push(f64::from_bits((p * m).to_bits().wrapping_add(1)));
                values.push(f64::from_bits((p * m).to_bits().wrapping_sub(1)));
            }
        }
        for i in [
            9_999_999_999_999_998i64,
            9_999_999_999_999_999,
            10_000_000_000_000_000,
            10_000_000_000_000_002,
            99_999_999,
            -12_345_678_901,
        ] {
            values.push(i as f64);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200_000 {
            // Any bit pattern (NaNs and infinities skipped below) ...
            values.push(f64::from_bits(rng.next()));
            // ... and the decimals a simulation writes: metres, degrees,
            // percent with a few decimals, integers.
            let r = rng.next();
            let digits = (r % 10_000_000_000) as f64;
            values.push(digits / 10f64.powi((r >> 40) as i32 % 12) - 5e4);
            values.push(((r >> 20) % 2000) as f64 - 1000.0);
        }
        for v in values.into_iter().filter(|v| v.is_finite()) {
            let text = ours(v);
            assert_eq!(text, ryu_text(v), "{v:e} ({:#x})", v.to_bits());
            let back: f64 = text.parse().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
        }
    }

    /// Issue 20: the largest finite number reads back as itself, and the
    /// infinities are written `inf` / `-inf` (Ryū's `format_finite` gave
    /// `1.797693134862316e308` for +inf: it reads back as infinity only by
    /// overflowing, and looks like a finite number that is not f64::MAX).
    #[test]
    fn largest_number_and_infinities_read_back_as_themselves() {
        assert_eq!(ours(f64::MAX), "1.7976931348623157e308");
        assert_eq!(ours(f64::MAX).parse::<f64>().unwrap(), f64::MAX);
        assert_eq!(ours(f64::INFINITY), "inf");
        assert_eq!(ours(f64::NEG_INFINITY), "-inf");
        assert_eq!(ours(f64::NAN), "nan");
        assert_eq!("inf".parse::<f64>().unwrap(), f64::INFINITY);
        assert_eq!("-inf".parse::<f64>().unwrap(), f64::NEG_INFINITY);
    }

    #[test]
    fn the_column_cache_writes_the_same_bytes() {
        let mut rng = Rng(7);
        let mut cache = ColumnCache::default();
        for row in 0..20_000u64 {
            let mut plain = Vec::new();
            let mut cached = Vec::new();
            for col in 0..26 {
                // Columns that change every row, now and then, or never.
                let v = match col % 4 {
                    0 => (rng.next() >> 11) as f64 / (1u64 << 40) as f64,
                    1 => ((row / 100) as f64) * 0.1,
                    2 => [f64::NAN, -0.0, 0.0, f64::INFINITY][(row / 7 % 4) as usize],
                    _ => 3.25,
                };
                push_f64(&mut plain, v);
                cache.push(&mut cached, col, v);
            }
            assert_eq!(plain, cached, "row {row}");
        }
    }

    /// The millionths fast path against Ryū: whole numbers of millionths
    /// (and tenths, hundredths, ...) of every size it takes, both signs,
    /// the mission-time grid, and its edges (10 millionths, 10^15).
    #[test]
    fn millionths_have_the_same_text_as_ryu() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut values = Vec::new();
        for k in 0..200_000u64 {
            values.push(k as f64 * 0.1);
            values.push(round_to_microsecond(k as f64 * 0.1));
            values.push(round_to_microsecond(k as f64 * 0.05 + 1e-6));
        }
        for _ in 0..300_000 {
            let r = rng.next();
            // n of 2..=15 digits, over 10^0..10^6.
            let digits = 2 + (r % 14) as i32;
            let n = (rng.next() % 10u64.pow(digits as u32)) as f64;
            let scale = 10f64.powi((r >> 8) as i32 % 7);
            values.push(n / scale);
            values.push(-n / scale);
            values.push(n / 1e6);
        }
        for v in [
            1e-5,
            1.1e-5,
            9e-6,
            999_999_999.999_999,
            1e9 - 1e-6,
            0.000_012,
        ] {
            values.push(v);
            values.push(-v);
        }
        for v in values.into_iter().filter(|v| v.is_finite()) {
            assert_eq!(ours(v), ryu_text(v), "{v:e} ({:#x})", v.to_bits());
        }
    }

    #[test]
    fn cached_rows_are_the_plain_rows() {
        let mut rng = Rng(11);
        let mut cache = ColumnCache::default();
        for row in 0..5_000u64 {
            let mut s = Snapshot {
                k: row * 977,
                t: row as f64 * 0.1,
                ..Snapshot::default()
            };
            s.x = (rng.next() >> 11) as f64 / (1u64 << 30) as f64;
            s.y = -s.x * 3.0;
            s.lat = f64::NAN;
            s.heading = ((row / 10) % 360) as f64 + 0.25;
            s.gt_x = if row % 3 == 0 { f64::INFINITY } else { -0.0 };
            s.current_y = 1e-7 * row as f64;
            let mut plain = Vec::new();
            let mut cached = Vec::new();
            push_row(&mut plain, &s);
            push_row_cached(&mut cached, &s, &mut cache);
            assert_eq!(String::from_utf8(plain), String::from_utf8(cached));
        }
    }

    #[test]
    fn integers_are_written_by_the_digit_loop() {
        for v in [0u64, 9, 10, 99, 100, 101, 12_345, u64::MAX] {
            let mut b = Vec::new();
            push_u64(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            let mut b = Vec::new();
            push_i64(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }

    #[test]
    fn header_keeps_the_23_columns_and_adds_four() {
        let cols: Vec<&str> = HEADER.split(',').collect();
        assert_eq!(cols.len(), 27);
        assert_eq!(cols[22], "gt_y");
        assert_eq!(
            &cols[23..],
            ["thrust_l", "thrust_r", "current_x", "current_y"]
        );
    }

    #[test]
    fn mission_time_is_printed_on_the_microsecond_grid() {
        let t = 12.0 * 0.1; // 1.2000000000000002
        assert_ne!(t, 1.2);
        assert_eq!(round_to_microsecond(t), 1.2);
        assert_eq!(round_to_microsecond(0.3 * 3.0), 0.9);
        assert_eq!(round_to_microsecond(1234.000001), 1234.000001);
        assert_eq!(round_to_microsecond(0.0), 0.0);
        assert!(round_to_microsecond(f64::NAN).is_nan());
    }
}
