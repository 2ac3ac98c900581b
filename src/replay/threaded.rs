//! A replay on two threads: the calling thread steps the vehicles and takes
//! their snapshots (the model, the UTM inverse for lat/lon); a second thread
//! turns the snapshots into the output's bytes ([`Output::row`], e.g. CSV
//! text) and writes them. The two halves cost about the same (callgrind,
//! `missions/long_survey.toml`: ~2,000 instructions per row for the step
//! and snapshot, ~2,500 for the row's text and its `write`, plus the
//! kernel's copy of the bytes), so on two cores a replay takes about half
//! the wall time; the CPU time stays the same.
//!
//! The output is the same pure function of the mission as on one thread:
//! the second thread gets the rows and posts in the order the loop makes
//! them, over a FIFO channel, and calls the same [`Output`] methods in that
//! order, so it writes the same bytes. Memory is bounded for any length of
//! mission: at most [`DEPTH`] batches of [`BATCH`] rows (~61 KB each) wait
//! in the channel (the calling thread waits when it is full), and emptied
//! batches come back to be filled again; a new batch is made only when
//! none has come back, that is with at most `DEPTH + 2` others in use (the
//! channel's, the one being written, the one being sent), so at most
//! `DEPTH + 3` batches (~0.43 MB) exist at once. A fleet that steps in
//! parallel (1,024 vehicles or more, see `PARALLEL_FLEET`) hands over each output step whole (216 bytes a vehicle): up to
//! `DEPTH + 3` steps' snapshots at once.
//!
//! Errors: the first error of the output (a failed `write`, say) stops the
//! second thread; the calling thread stops at its next hand-off and the
//! replay returns that error, the same one a replay on one thread returns.
//! Nothing is renamed into place by this module: the caller commits its
//! atomic file only when the replay returned `Ok`.
use std::io;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use super::{Output, Summary};
use crate::mission::{Mission, Post};
use crate::model::{Snapshot, Vehicle};

/// Rows (or posts) per hand-off between the threads: a batch is ~60 KB, so
/// the hand-off's cost (a few hundred instructions) is spread over 256 rows.
pub const BATCH: usize = 256;

/// Batches that may wait in the channel while the second thread works on
/// one and the calling thread fills another.
pub const DEPTH: usize = 4;

/// One thing for the second thread to hand to the output, in loop order.
/// Rows, by far the most items, are kept inline (a box each would be an
/// allocation per row), hence the size difference between the variants.
#[allow(clippy::large_enum_variant)]
enum Item {
    /// [`Output::vehicle_row`]`(vehicle, snapshot, clock)`.
    Row(usize, Snapshot, f64),
    /// [`Output::post`]`(post, clock)`: posts are few, so a clone.
    Post(Box<Post>, f64),
    /// [`Output::fleet_rows`]`(snapshots, clock)` (fleets that step in parallel).
    Fleet(Vec<Snapshot>, f64),
}

/// The calling thread's side: an [`Output`] that batches what the replay
/// loop gives it and sends each full batch to the second thread.
struct Front {
    batch: Vec<Item>,
    tx: Option<SyncSender<Vec<Item>>>,
    /// Emptied batches coming back (no allocation per batch).
    back: Receiver<Vec<Item>>,
    wants_rows: bool,
}

/// Returned by the calling thread's side when the second thread has stopped
/// (after an error of the output, which the replay returns instead).
fn stopped() -> io::Error {
    io::Error::other("the output thread stopped")
}

impl Front {
    fn push(&mut self, item: Item) -> io::Result<()> {
        self.batch.push(item);
        if self.batch.len() >= BATCH {
            self.send()?;
        }
        Ok(())
    }

    fn send(&mut self) -> io::Result<()> {
        let next = self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        match &self.tx {
            Some(tx) => tx.send(full).map_err(|_| stopped()),
            None => Err(stopped()),
        }
    }
}

impl Output for Front {
    fn row(&mut self, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.push(Item::Row(0, *s, clock))
    }

    fn vehicle_row(&mut self, vehicle: usize, s: &Snapshot, clock: f64) -> io::Result<()> {
        self.push(Item::Row(vehicle, *s, clock))
    }

    fn post(&mut self, post: &Post, clock: f64) -> io::Result<()> {
        self.push(Item::Post(Box::new(post.clone()), clock))
    }

    fn fleet_rows(&mut self, snaps: &[Snapshot], clock: f64) -> io::Result<()> {
        self.push(Item::Fleet(snaps.to_vec(), clock))?;
        // A fleet's step is already a large batch: hand it over now.
        self.send()
    }

    fn wants_rows(&self) -> bool {
        self.wants_rows
    }

    fn finish(mut self) -> io::Result<()> {
        if !self.batch.is_empty() {
            self.send()?;
        }
        // Closing the channel ends the second thread's loop; it then
        // finishes the output.
        self.tx = None;
        Ok(())
    }
}

/// The second thread: hand every item to `out` in order, then finish it.
/// Stops at the output's first error and returns it.
fn drain<O: Output>(
    mut out: O,
    rx: Receiver<Vec<Item>>,
    back: SyncSender<Vec<Item>>,
) -> io::Result<()> {
    for mut batch in rx {
        for item in batch.drain(..) {
            match item {
                Item::Row(vehicle, s, clock) => out.vehicle_row(vehicle, &s, clock)?,
                Item::Post(post, clock) => out.post(&post, clock)?,
                Item::Fleet(snaps, clock) => out.fleet_rows(&snaps, clock)?,
            }
        }
        // The calling thread may have stopped taking batches back: then
        // the batch is dropped here.
        let _ = back.try_send(batch);
    }
    out.finish()
}

/// [`super::run_fleet`] with `out`'s rows made and written on a second
/// thread (see the module's documentation): the same rows, posts, summary
/// and errors. An output that wants the vehicles' publications
/// ([`Output::wants_publications`], alog) runs on the calling thread, as
/// [`super::run_fleet`].
pub fn run_fleet<O: Output + Send>(
    mission: &Mission,
    out: O,
    posts: Option<&mut dyn io::Write>,
    progress: impl FnMut(u64, u64),
    on_step: impl FnMut(u64, f64, &[Vehicle]),
) -> io::Result<Summary> {
    if out.wants_publications() {
        return super::run_fleet(mission, out, posts, progress, on_step);
    }
    let wants_rows = out.wants_rows();
    let (tx, rx) = sync_channel::<Vec<Item>>(DEPTH);
    let (back_tx, back_rx) = sync_channel::<Vec<Item>>(DEPTH + 2);
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("usim-output".into())
            .spawn_scoped(scope, move || drain(out, rx, back_tx))?;
        let front = Front {
            batch: Vec::with_capacity(BATCH),
            tx: Some(tx),
            back: back_rx,
            wants_rows,
        };
        // `front` is finished (or dropped on an error) inside, which closes
        // the channel, so the second thread's loop ends in either case.
        let replay = super::run_fleet(mission, front, posts, progress, on_step);
        let written = worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // The output's own error first: the calling thread's is then only
        // "the output thread stopped".
        written?;
        replay
    })
}
