//! Output files that appear whole or not at all: written to a temporary
//! file beside the target (same directory, so the rename is atomic) and
//! renamed over it only when complete. A failed or interrupted write
//! removes the temporary file and leaves any existing target untouched.
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// A temporary file that becomes `target` on [`AtomicFile::commit`].
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Create the temporary file `.<name>.<pid>.tmp` beside `target`. The
    /// error names the target and says why (missing directory, permission).
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a file name", target.display()),
            )
        })?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if target.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is a directory", target.display()),
            ));
        }
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&tmp).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create {} (in {}): {e}",
                    target.display(),
                    dir.display()
                ),
            )
        })?;
        Ok(AtomicFile {
            target: target.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("file is open until commit")
    }

    /// Take the open file out (to wrap it in a writer); give it back to
    /// [`AtomicFile::commit_file`].
    pub fn take(&mut self) -> File {
        self.file.take().expect("file taken once")
    }

    /// Sync and rename the temporary file over the target.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take();
        self.finish(file)
    }

    /// Like [`AtomicFile::commit`] with the file taken by [`AtomicFile::take`].
    pub fn commit_file(mut self, file: File) -> io::Result<()> {
        self.finish(Some(file))
    }

    fn finish(&mut self, file: Option<File>) -> io::Result<()> {
        if let Some(f) = file {
            f.sync_all()?;
        }
        std::fs::rename(&self.tmp, &self.target).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot rename the finished file to {}: {e}",
                    self.target.display()
                ),
            )
        })?;
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn appears_only_on_commit_and_is_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.csv");
        let mut a = AtomicFile::create(&target).unwrap();
        a.file().write_all(b"hello").unwrap();
        assert!(!target.exists());
        a.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"hello");

        let mut b = AtomicFile::create(&target).unwrap();
        b.file().write_all(b"half").unwrap();
        drop(b);
        assert_eq!(std::fs::read(&target).unwrap(), b"hello", "old file kept");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp left"
        );
    }

    #[test]
    fn missing_directory_is_a_clear_error() {
        let e = AtomicFile::create(Path::new("/nonexistent-dir-usim/x.csv")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent-dir-usim/x.csv"), "{e}");
    }
}
