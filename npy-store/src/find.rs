//! Which files a source names, one rule for every door that takes a directory or a
//! pattern: `npy.open` and `Shards`, `npy.scan` and `Table`, Dask's `from_npy`, xarray's
//! `engine="npy"`, the `npy` command.
//!
//! - A path that is a file (or names nothing: opening it then fails, naming it): itself.
//! - A directory: every `.npy` or `.npz` file under it, in every folder below it,
//!   symbolic links followed (each folder once), other files (and names of other
//!   suffixes) left out.
//! - A glob pattern (`*`, `?` or `[` in a path that does not exist as written): the
//!   files it matches, of any suffix.
//!
//! Files come sorted by path as text, byte by byte (`a.npy` before `a/x.npy`, as `.`
//! sorts before `/`): the order DataFusion lists a table's files in (so SQL reads them in
//! it too), and Python's `sorted(glob.glob(...))`. Rows come in that order wherever files
//! are joined along axis 0. What a directory or pattern gives must be of one kind,
//! all `.npy` or all `.npz`, and not nothing.
//!
//! [`find_files`] takes URLs too: a URL whose path ends in `/` is a prefix, a bucket's
//! directory: every `.npy` or `.npz` object under it (at any depth), by the same rules and
//! in the same order as a local directory's files; any other URL is one object.

use std::path::{Path as FsPath, PathBuf};

use npy_core::header::FileKind;
use npy_core::{Error, ErrorKind, Result};
use object_store::path::Path;
use object_store::ObjectStore;

/// The files `source` names (see the module): itself, the `.npy` or `.npz` files under a
/// directory, or those a glob pattern matches; sorted by path as text, one kind only.
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
/// assert_eq!(names, ["a.npy", "b/x.npy", "b/y.npy", "c.npy", "c/z.npy"]);
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
            // Anything but a folder (or a link to nothing): a FIFO or a device is listed,
            // so that opening it fails naming it, rather than left out unsaid.
            if path.exists() && !path.is_dir() {
                found.push(path);
            }
        }
        found
    } else if path.is_dir() {
        let mut found = Vec::new();
        walk(path, &mut found).map_err(|e| Error::from(e).reading(source))?;
        found.retain(|p| kind_of(&p.to_string_lossy()).is_some());
        found
    } else {
        // A file (a missing one fails as it is opened, naming it).
        std::fs::metadata(path).map_err(|e| Error::from(e).reading(source))?;
        return Ok(vec![path.to_path_buf()]);
    };
    found.sort_by(|a, b| a.as_os_str().as_encoded_bytes().cmp(b.as_os_str().as_encoded_bytes()));
    let names: Vec<_> = found.iter().map(|p| p.to_string_lossy()).collect();
    one_kind(source, names.iter().map(|n| n.as_ref()))?;
    Ok(found)
}

/// The files or objects `source` names, as text: [`find`]'s for a path; for a URL, the
/// `.npy` or `.npz` objects under it if its path ends in `/` (a prefix), listed by its
/// store and sorted as [`find`] sorts, else the URL itself. What `Shards`, `Table` and
/// Python's doors open.
///
/// # Errors
/// As [`find`], naming `source`; a store that cannot list (a plain web server) is
/// [`ErrorKind::Io`], naming it.
///
/// # Examples
/// ```
/// let dir = tempfile::tempdir()?;
/// std::fs::create_dir(dir.path().join("b"))?;
/// for name in ["c.npy", "b/y.npy", "notes.txt"] {
///     std::fs::write(dir.path().join(name), b"")?;
/// }
/// let url = format!("file://{}/", dir.path().display());
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let found = npy_store::find_files(&url).await?;
/// assert_eq!(found, [format!("{url}b/y.npy"), format!("{url}c.npy")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub async fn find_files(source: &str) -> Result<Vec<String>> {
    if !crate::is_url(source) {
        return Ok(find(source)?.into_iter().map(|p| p.to_string_lossy().into_owned()).collect());
    }
    if !source.ends_with('/') {
        return Ok(vec![source.to_string()]);
    }
    let at = crate::store_for(source).map_err(|e| e.renamed(source).reading(source))?;
    let found = find_in_store(at.store.as_ref(), &at.path, source).await?;
    Ok(found.into_iter().map(|rest| format!("{source}{rest}")).collect())
}

/// The `.npy` or `.npz` objects under `prefix` in `store`, by [`find_files`]'s rule for a
/// URL prefix: each as its path below the prefix (`a/x.npy`), sorted as text, one kind.
/// For callers that hold their own store (DataFusion's, registered for a bucket).
///
/// # Errors
/// As [`find_files`], naming `source` (the prefix as the user gave it).
pub async fn find_in_store(store: &dyn ObjectStore, prefix: &Path, source: &str) -> Result<Vec<String>> {
    use futures::TryStreamExt;
    let listed: Vec<_> = store
        .list(Some(prefix))
        .try_collect()
        .await
        .map_err(|e| Error::from(crate::error::store_io(e)).reading(source))?;
    let base = prefix.as_ref();
    let mut found = Vec::new();
    for meta in listed {
        let location = meta.location.as_ref();
        let rest = if base.is_empty() {
            Some(location)
        } else {
            location.strip_prefix(base).and_then(|r| r.strip_prefix('/'))
        };
        // (An object outside the prefix is not the store's answer; it is left out.)
        if let Some(rest) = rest.filter(|r| kind_of(r).is_some()) {
            found.push(rest.to_string());
        }
    }
    found.sort();
    one_kind(source, found.iter().map(String::as_str))?;
    Ok(found)
}

/// `.npy` or `.npz` (`Some(true)` for an archive), by a name's suffix in any case
/// (npy-core's [`FileKind::of_name`]).
fn kind_of(name: &str) -> Option<bool> {
    FileKind::of_name(name).map(|kind| kind == FileKind::Zip)
}

/// Fails unless `found` holds something, of one kind (see [`find`]'s errors).
fn one_kind<'a>(source: &str, mut found: impl Iterator<Item = &'a str> + Clone) -> Result<()> {
    let archive = found.clone().find(|f| kind_of(f) == Some(true));
    let npy = found.find(|f| kind_of(f) != Some(true));
    match (archive, npy) {
        // Nothing there, as a missing file is: an I/O error of kind `NotFound`.
        (None, None) => {
            Err(Error::from(std::io::Error::new(std::io::ErrorKind::NotFound, "no .npy or .npz file there"))
                .reading(source))
        }
        (Some(a), Some(b)) => {
            let reason = format!("it holds .npz archives ({a}) and .npy files ({b}): a table is one kind");
            Err(Error::from(ErrorKind::Usage { reason }).reading(source))
        }
        _ => Ok(()),
    }
}

/// Every file under `dir` (every entry not a folder: FIFOs too), recursively, symbolic links followed (a data set assembled from
/// links is read through them); a folder reached twice (a link to a folder above it) is
/// listed once.
fn walk(dir: &FsPath, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut seen = std::collections::HashSet::new();
    walk_from(dir, found, &mut seen)
}

fn walk_from(
    dir: &FsPath,
    found: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let mut kind = entry.file_type()?;
        if kind.is_symlink() {
            // A link to nothing is left out, as the file it names is not there.
            match std::fs::metadata(entry.path()) {
                Ok(meta) => kind = meta.file_type(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        }
        // Anything but a folder is listed, a FIFO or a device too: opening one fails
        // naming it (as npy-core's `open_file` refuses it), rather than it being left out.
        if kind.is_dir() {
            walk_from(&entry.path(), found, seen)?;
        } else {
            found.push(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Folders below folders, links to a file, to a folder and to a folder above (listed
    /// once), a dangling link and a file of another suffix; the order is the text's, where
    /// it differs from comparing paths component by component (`a-b.npy`, `a.npy`, `a/`).
    #[cfg(unix)]
    #[test]
    fn a_directory_gives_its_files_through_links_in_text_order() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::create_dir_all(at("data/a/deep")).unwrap();
        std::fs::create_dir_all(at("elsewhere")).unwrap();
        for name in
            ["data/a.npy", "data/a-b.npy", "data/a/x.npy", "data/a/deep/y.npy", "data/notes.txt", "elsewhere/z.npy"]
        {
            std::fs::write(at(name), b"").unwrap();
        }
        std::os::unix::fs::symlink(at("elsewhere/z.npy"), at("data/linked.npy")).unwrap();
        std::os::unix::fs::symlink(at("elsewhere"), at("data/more")).unwrap();
        std::os::unix::fs::symlink(at("data"), at("data/a/up")).unwrap();
        std::os::unix::fs::symlink(at("gone.npy"), at("data/dangling.npy")).unwrap();
        let found = find(at("data").to_str().unwrap()).unwrap();
        let names: Vec<_> = found.iter().map(|p| p.strip_prefix(at("data")).unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["a-b.npy", "a.npy", "a/deep/y.npy", "a/x.npy", "linked.npy", "more/z.npy"]);
    }
}
