//! Where a table's files are. A local path's are the files npy-store's one rule finds
//! ([`npy_store::find`]: the file itself, every `.npy` or `.npz` file under a directory and
//! its folders, or a glob pattern's matches, sorted by path as text), the files every other
//! door (`npy.open`, `npy.scan`, Dask, xarray) reads for it; a URL's are listed by
//! DataFusion (a bucket prefix's files, by extension).
//!
//! A directory stays a directory to DataFusion, so that it lists it again at each scan
//! and `INSERT INTO` writes files into it: its table paths are the directory and each
//! folder below it that holds a file found (DataFusion lists a directory's own files
//! only, unless `listing_table_ignore_subdirectory` is off, when the directory alone
//! lists them all). A pattern's or a file's paths are the files themselves.

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::plan_err;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::ListingTableUrl;
use datafusion::error::Result;
use futures::TryStreamExt;

use crate::error::npy_error;
use crate::kind::Kind;

/// A table's files: the URLs its listing lists, and the extension it keeps of what they
/// list ("" for files found locally, each named: a pattern may match any suffix).
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) urls: Vec<ListingTableUrl>,
    pub(crate) extension: String,
}

/// Whether `location` is read from a local path (not a URL), through [`locate`].
pub(crate) fn is_local(location: &str) -> bool {
    !npy_store::is_url(location)
}

/// The files of a `kind` table at `location` (see the module).
///
/// # Errors
/// [`npy_store::find`]'s, naming `location`; a directory or pattern of the other kind's
/// files; a path that is not UTF-8.
pub(crate) fn locate(state: &dyn Session, location: &str, kind: Kind) -> Result<Located> {
    let extension = format!(".{}", kind.ext());
    if !is_local(location) {
        return Ok(Located { urls: vec![ListingTableUrl::parse(location)?], extension });
    }
    let files = npy_store::find(location).map_err(npy_error)?;
    let path = Path::new(location);
    let is_npz = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npz"));
    // A file named as itself is read as the table's kind, whatever its name.
    let named = files.len() == 1 && files[0] == path;
    if let Some(other) = files.iter().find(|f| !named && is_npz(f) != (kind == Kind::Npz)) {
        let (holds, as_kind) = match kind {
            Kind::Npy => (".npz archives", "an npz table (register_npz, STORED AS NPZ)"),
            Kind::Npz => (".npy files", "an npy table (register_npy, STORED AS NPY)"),
        };
        let reason = format!("it holds {holds} ({}): read it as {as_kind}", other.display());
        return Err(usage(location, reason));
    }
    if !path.is_dir() {
        let urls = files.iter().map(|f| ListingTableUrl::parse(text(location, f)?)).collect::<Result<_>>()?;
        return Ok(Located { urls, extension: String::new() });
    }
    let mut folders = vec![path.to_path_buf()];
    if state.config_options().execution.listing_table_ignore_subdirectory {
        let mut below: Vec<_> = files.iter().filter_map(|f| f.parent()).filter(|p| *p != path).collect();
        below.sort_unstable();
        below.dedup();
        folders.extend(below.into_iter().map(Path::to_path_buf));
    }
    let urls = folders
        .iter()
        .map(|folder| ListingTableUrl::parse(format!("{}/", text(location, folder)?.trim_end_matches('/'))))
        .collect::<Result<_>>()?;
    Ok(Located { urls, extension })
}

/// `path` as text, which a table's URL must be.
fn text<'a>(location: &str, path: &'a Path) -> Result<&'a str> {
    let reason = || format!("the path {} is not UTF-8, which a table's URL must be", path.display());
    path.to_str().ok_or_else(|| usage(location, reason()))
}

fn usage(location: &str, reason: String) -> datafusion::error::DataFusionError {
    npy_error(npy_core::Error::from(npy_core::ErrorKind::Usage { reason }).reading(location))
}

/// The schema of every file at `located`, as `format` infers it from all of them (as
/// `ListingOptions::infer_schema` does for one URL): files whose columns differ are an
/// error naming two.
///
/// # Errors
/// No file there; the format's errors; the store's.
pub(crate) async fn infer_schema(
    state: &dyn Session,
    format: &Arc<dyn FileFormat>,
    located: &Located,
) -> Result<SchemaRef> {
    let Some(first) = located.urls.first() else { return plan_err!("a table of no files") };
    let store = state.runtime_env().object_store(first)?;
    let mut files = Vec::new();
    for url in &located.urls {
        let listed: Vec<_> = url.list_all_files(state, store.as_ref(), &located.extension).await?.try_collect().await?;
        files.extend(listed);
    }
    if files.is_empty() {
        return plan_err!("No files found at {first}: a table needs at least one");
    }
    // Empty files are refused when the table is scanned, naming them.
    files.retain(|meta| meta.size > 0);
    format.infer_schema(state, &store, &files).await
}
