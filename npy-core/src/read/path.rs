//! Readers opened by path: [`NpyReader::from_path_with`] and its kin, the file's length
//! known so that a header claiming more data than the file holds fails before allocating.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::{Input, NpyReader, Origin};
use crate::error::{Error, ErrorKind, Result};
use crate::options::ReadOptions;

impl NpyReader<BufReader<File>> {
    /// Opens a file and reads its header with default [`ReadOptions`].
    ///
    /// # Errors
    /// As [`NpyReader::from_path_with`].
    ///
    /// # Examples
    /// ```
    /// use npy_core::{prelude::*, NpyReader};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("ids.npy");
    /// [7u32, 8, 9].write_npy(&path)?;
    /// let reader = NpyReader::from_path(&path)?;
    /// assert_eq!(reader.header().shape, [3]);
    /// assert_eq!(reader.read::<Vec<u32>>()?, [7, 8, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        NpyReader::from_path_with(path, &ReadOptions::default())
    }

    /// Opens a file and reads its header. The file's length is known, so a header that
    /// claims more data than the file holds is an error before anything is allocated.
    /// Only a regular file (or a symlink to one) is opened, as by [`crate::open_file`]; read a
    /// stream with [`NpyReader::from_reader_with`].
    ///
    /// # Errors
    /// As [`NpyReader::from_reader`]; [`ErrorKind::Io`] when the file cannot be opened or is not a
    /// regular file.
    pub fn from_path_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        NpyReader::from_opened(crate::file::open_file(path)?, path, options)
    }

    /// [`NpyReader::from_path_with`] of `file`, the regular file just opened at `path`
    /// (at its start).
    pub(crate) fn from_opened(file: File, path: &Path, options: &ReadOptions) -> Result<Self> {
        let mut opened = Some(file);
        let mut open = || -> Result<NpyReader<BufReader<File>>> {
            let mut tries = 0;
            loop {
                let file = match opened.take() {
                    Some(file) => file,
                    None => crate::file::open_file(path)?,
                };
                let len = file.metadata()?.len();
                let positional = file.try_clone().ok();
                let grew = |f: &Option<File>| f.as_ref().and_then(|f| f.metadata().ok()).is_some_and(|m| m.len() > len);
                match NpyReader::with_options(BufReader::with_capacity(64 << 10, file), options, Some(len)) {
                    // An append may finish between the length measured and the header read
                    // (its rows are written before the header that counts them): measured
                    // again, the rows are there.
                    Err(e) if matches!(e.kind(), ErrorKind::Truncated { .. }) && tries < 3 && grew(&positional) => {
                        tries += 1;
                    }
                    r => {
                        let mut r = r?.sized_as(|available| Input::File { available, positional });
                        r.origin = Some(Origin { path: Some(path.to_path_buf()), member: None });
                        return Ok(r);
                    }
                }
            }
        };
        open().map_err(|e: Error| e.reading(path))
    }
}
