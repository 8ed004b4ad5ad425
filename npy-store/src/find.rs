//! Which files a source names, one rule for every door that takes a directory or a
//! pattern: `npy.open` and `Shards`, `npy.scan` and `Table`, Dask's `from_npy`, xarray's
//! `engine="npy"`, the `npy` command.
//!
//! - A path that is a file (or names nothing: opening it then fails, naming it): itself.
//! - A directory: every `.npy` or `.npz` file under it, in every folder below it, other
//!   files (and names of other suffixes) left out.
//! - A glob pattern (`*`, `?` or `[` in a path that does not exist as written): the
//!   files it matches, of any suffix.
//!
//! Files come sorted by path, component by component (a folder `a/`'s files before a
//! file `a.npy`, as the name `a` sorts before `a.npy`), and rows in that order wherever
//! files are joined along axis 0. What a directory or pattern gives must be of one kind,
//! all `.npy` or all `.npz`, and not nothing. URLs name one object each (a bucket prefix
//! is not listed).

use std::path::{Path as FsPath, PathBuf};

use npy_core::{Error, ErrorKind, Result};

/// The files `source` names (see the module): itself, the `.npy` or `.npz` files under a
/// directory, or those a glob pattern matches; sorted by path, one kind only.
///
/// # Errors
/// Naming `source`: a path that does not exist, or a directory or pattern with no `.npy`
/// or `.npz` file ([`ErrorKind::Io`] of kind `NotFound`); a directory that cannot be
/// listed ([`ErrorKind::Io`]); a directory or pattern with both kinds, a pattern that is
/// not one ([`ErrorKind::Usage`]).
///
/// # Examples
/// ```
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("b"))?;
/// std::fs::create_dir(dir.path().join("c"))?;
/// for name in ["c.npy", "b/y.npy", "a.npy", "notes.txt", "b/x.npy", "c/z.npy"] {
///     std::fs::write(dir.path().join(name), b"")?;
/// }
/// let found = npy_store::find(dir.path().to_str().unwrap())?;
/// let names: Vec<_> = found.iter().map(|p| p.strip_prefix(dir.path()).unwrap().to_str().unwrap()).collect();
/// assert_eq!(names, ["a.npy", "b/x.npy", "b/y.npy", "c/z.npy", "c.npy"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn find(source: &str) -> Result<Vec<PathBuf>> {
    let usage = |reason: String| Error::from(ErrorKind::Usage { reason }).reading(source);
    let path = FsPath::new(source);
    let mut found: Vec<PathBuf> = if source.contains(['*', '?', '[']) && !path.exists() {
        let paths = glob::glob(source).map_err(|e| usage(format!("not a glob pattern: {e}")))?;
        let mut found = Vec::new();
        for path in paths {
            let path = path.map_err(|e| usage(format!("cannot list {}: {}", e.path().display(), e.error())))?;
            if path.is_file() {
                found.push(path);
            }
        }
        found
    } else if path.is_dir() {
        let mut found = Vec::new();
        walk(path, &mut found).map_err(|e| Error::from(e).reading(source))?;
        found.retain(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy") || e.eq_ignore_ascii_case("npz")));
        found
    } else {
        // A file (a missing one fails as it is opened, naming it).
        std::fs::metadata(path).map_err(|e| Error::from(e).reading(source))?;
        return Ok(vec![path.to_path_buf()]);
    };
    found.sort();
    let is_npz = |p: &PathBuf| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npz"));
    match (found.iter().find(|p| is_npz(p)), found.iter().find(|p| !is_npz(p))) {
        // Nothing there, as a missing file is: an I/O error of kind `NotFound`.
        (None, None) => {
            Err(Error::from(std::io::Error::new(std::io::ErrorKind::NotFound, "no .npy or .npz file there"))
                .reading(source))
        }
        (Some(a), Some(b)) => Err(usage(format!(
            "it holds .npz archives ({}) and .npy files ({}): a table is one kind",
            a.display(),
            b.display()
        ))),
        _ => Ok(found),
    }
}

/// Every file under `dir`, recursively.
fn walk(dir: &FsPath, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), found)?;
        } else if kind.is_file() {
            found.push(entry.path());
        }
    }
    Ok(())
}
