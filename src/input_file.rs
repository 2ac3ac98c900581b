//! The one reader of files from outside (configs, missions, sweep files
//! and parts, MOOS files, run CSVs, interp scripts, `profile --batch`
//! cases): regular files only, opened non-blocking so a FIFO cannot hang
//! the open, checked with `fstat` on the open descriptor (no race between
//! the check and the read), and read with a size cap so `/dev/zero` or a
//! file that keeps growing cannot fill memory. Limits: docs/sweeps.md
//! and docs/viewing.md, "Limits".
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Cap of a configuration-like text (vehicle config, mission, sweep file,
/// MOOS file, interp script), bytes: 64 MiB. A real one is a few kB;
/// 32,000 mission posts are ~2 MB.
pub const MAX_TEXT_BYTES: u64 = 64 * 1024 * 1024;

/// Cap of a data file read whole (a run CSV for `usim plot`, a sweep
/// summary part for `usim sweep merge`), bytes: 1 GiB.
pub const MAX_DATA_BYTES: u64 = 1024 * 1024 * 1024;

/// Cap of a file streamed row by row (`usim profile --batch` cases),
/// bytes: 1 GiB.
pub const MAX_STREAM_BYTES: u64 = 1024 * 1024 * 1024;

/// Open `path` for reading: regular files only, non-blocking open (a FIFO
/// without a writer returns at once and is then refused), at most `max`
/// bytes by its size now. The returned reader also stops with an error
/// if the file grows past `max` while being read. Errors name the file.
pub fn open(path: &Path, max: u64) -> io::Result<Capped> {
    let named =
        |e: io::Error| io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()));
    let file = open_nonblocking(path).map_err(named)?;
    let meta = file.metadata().map_err(named)?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a FIFO, socket or device?)"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot read {}: it is {kind}", path.display()),
        ));
    }
    if meta.len() > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "cannot read {}: it is {} bytes, more than the {max} bytes accepted",
                path.display(),
                meta.len()
            ),
        ));
    }
    set_blocking(&file);
    Ok(Capped {
        inner: file,
        left: max,
        path: path.display().to_string(),
        max,
    })
}

/// Read a whole file of at most `max` bytes ([`open`]'s rules).
pub fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut r = open(path, max)?;
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Read a whole UTF-8 text file of at most `max` bytes ([`open`]'s rules).
pub fn read_text(path: &Path, max: u64) -> io::Result<String> {
    let bytes = read(path, max)?;
    String::from_utf8(bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("cannot read {}: not UTF-8 text: {e}", path.display()),
        )
    })
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Back to blocking reads (a regular file never blocks anyway; this keeps
/// the descriptor ordinary for whoever reads it).
#[cfg(unix)]
fn set_blocking(file: &File) {
    use std::os::unix::io::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own; failure leaves it non-blocking,
    // which a regular file ignores.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

#[cfg(not(unix))]
fn set_blocking(_: &File) {}

/// A file reader that fails once more than its cap has been read.
#[derive(Debug)]
pub struct Capped {
    inner: File,
    left: u64,
    path: String,
    max: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One probe byte: at the cap exactly is fine, past it is not.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{} grew past the {} bytes accepted while being read",
                        self.path, self.max
                    ),
                )),
            };
        }
        let n = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let got = self.inner.read(&mut buf[..n])?;
        self.left -= got as u64;
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read(&p, 5).unwrap(), b"hello");
        let e = read(&p, 4).unwrap_err().to_string();
        assert!(e.contains("5 bytes, more than the 4"), "{e}");
        let e = read(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let e = read(&dir.path().join("none"), 10).unwrap_err().to_string();
        assert!(e.contains("none"), "{e}");
        std::fs::write(&p, b"\xff\xfe").unwrap();
        assert!(read_text(&p, 10).unwrap_err().to_string().contains("UTF-8"));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_at_once() {
        let e = read(Path::new("/dev/zero"), 10).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would hang here.
        let e = read(&fifo, 10).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
