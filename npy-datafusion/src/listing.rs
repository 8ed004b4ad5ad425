//! Where a table's files are: the files npy-store's one rule finds, the files every other
//! door (`npy.open`, `npy.scan`, Dask, xarray) reads for the same location. A local path's
//! are [`npy_store::find`]'s (the file itself, every `.npy` or `.npz` file under a
//! directory and its folders, or a glob pattern's matches, sorted by path as text); a URL
//! prefix ending in `/` holds [`npy_store::find_in_store`]'s (every `.npy` or `.npz`
//! object under it, listed through the session's store for it); any other URL is
//! listed by DataFusion as it stands (an object, or a pattern's objects by extension).
//!
//! A directory or prefix stays one to DataFusion, so that it lists it again at each scan
//! and `INSERT INTO` writes files into it: its table paths are the directory and each
//! folder below it that holds a file found (DataFusion lists a directory's own files
//! only, unless `listing_table_ignore_subdirectory` is off, when the directory alone
//! lists them all), each with the glob of the kind's suffix in any case
//! ([`Kind::files_glob`]: DataFusion compares an extension case by case). A pattern's or
//! a file's paths are the files themselves.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::plan_err;
use datafusion::datasource::file_format::FileFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::Result;
use datafusion::execution::SessionState;
use datafusion::logical_expr::CreateExternalTable;
use futures::TryStreamExt;
use npy_core::header::FileKind;

use crate::error::npy_error;
use crate::kind::Kind;

/// A table's files: the URLs its listing lists, and the extension it keeps of what they
/// list ("" for files found: named each, or by their folder's glob).
#[derive(Debug)]
pub(crate) struct Located {
    pub(crate) urls: Vec<ListingTableUrl>,
    pub(crate) extension: String,
    /// Whether `urls` hold the files npy-store's rule found (false: a location with
    /// nothing there yet, which DataFusion takes as it stands).
    pub(crate) found: bool,
}

/// Whether `location`'s files are found by npy-store's rule (see the module): a local
/// path, or a URL prefix ending in `/`.
pub(crate) fn is_found(location: &str) -> bool {
    !npy_store::is_url(location) || location.ends_with('/')
}

/// The files of a `kind` table at `location` (see the module).
///
/// # Errors
/// [`npy_store::find`]'s and [`npy_store::find_in_store`]'s, naming `location` (but for a
/// URL prefix with nothing under it yet, which DataFusion takes as it stands: a table to
/// insert into); a directory, prefix or pattern of the other kind's files; a path that is
/// not UTF-8.
pub(crate) async fn locate(state: &dyn Session, location: &str, kind: Kind) -> Result<Located> {
    let extension = format!(".{}", kind.ext());
    if !is_found(location) {
        return Ok(Located { urls: vec![ListingTableUrl::parse(location)?], extension, found: false });
    }
    let folder = |url: String| ListingTableUrl::parse(url)?.with_glob(kind.files_glob());
    if npy_store::is_url(location) {
        let url = ListingTableUrl::parse(location)?;
        let store = state.runtime_env().object_store(&url)?;
        let found = match npy_store::find_in_store(store.as_ref(), url.prefix(), location).await {
            Ok(found) => found,
            Err(e) if matches!(e.kind(), npy_core::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound) => {
                return Ok(Located { urls: vec![url], extension, found: false });
            }
            Err(e) => return Err(npy_error(e)),
        };
        refuse_other_kind(location, kind, found.iter().map(|f| Path::new(f.as_str())), false)?;
        let mut folders = vec![String::new()];
        if state.config_options().execution.listing_table_ignore_subdirectory {
            let mut below: Vec<_> =
                found.iter().filter_map(|f| f.rsplit_once('/').map(|(folder, _)| format!("{folder}/"))).collect();
            below.sort_unstable();
            below.dedup();
            folders.extend(below);
        }
        let urls = folders.iter().map(|f| folder(format!("{location}{f}"))).collect::<Result<_>>()?;
        return Ok(Located { urls, extension: String::new(), found: true });
    }
    let files = npy_store::find(location).map_err(npy_error)?;
    let path = Path::new(location);
    // A file named as itself is read as the table's kind, whatever its name.
    let named = files.len() == 1 && files[0] == path;
    refuse_other_kind(location, kind, files.iter().map(PathBuf::as_path), named)?;
    if !path.is_dir() {
        let urls = files.iter().map(|f| ListingTableUrl::parse(text(location, f)?)).collect::<Result<_>>()?;
        return Ok(Located { urls, extension: String::new(), found: true });
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
        .map(|f| folder(format!("{}/", text(location, f)?.trim_end_matches('/'))))
        .collect::<Result<_>>()?;
    Ok(Located { urls, extension: String::new(), found: true })
}

/// Fails if `files` (found at `location`) hold the other kind's, but for a file `named`
/// as itself, which is read as the table's kind whatever its name.
fn refuse_other_kind<'a>(
    location: &str,
    kind: Kind,
    mut files: impl Iterator<Item = &'a Path>,
    named: bool,
) -> Result<()> {
    let archive = |p: &Path| FileKind::of_name(&p.to_string_lossy()) == Some(FileKind::Zip);
    if let Some(other) = files.find(|f| !named && archive(f) != (kind == Kind::Npz)) {
        let (holds, as_kind) = match kind {
            Kind::Npy => (".npz archives", "an npz table (register_npz, STORED AS NPZ)"),
            Kind::Npz => (".npy files", "an npy table (register_npy, STORED AS NPY)"),
        };
        let reason = format!("it holds {holds} ({}): read it as {as_kind}", other.display());
        return Err(usage(location, reason));
    }
    Ok(())
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

/// The listing table of `located`, its files read by `format`: columns `declared`, else
/// inferred from all of them ([`infer_schema`]), statistics kept in the session's cache.
///
/// # Errors
/// [`infer_schema`]'s.
pub(crate) async fn listing_table(
    state: &dyn Session,
    located: Located,
    format: Arc<dyn FileFormat>,
    declared: Option<SchemaRef>,
) -> Result<ListingTable> {
    let schema = match declared {
        Some(schema) => schema,
        None => infer_schema(state, &format, &located).await?,
    };
    let options = ListingOptions::new(format).with_file_extension(located.extension);
    let config =
        ListingTableConfig::new_with_multi_paths(located.urls).with_listing_options(options).with_schema(schema);
    let cache = state.runtime_env().cache_manager.get_file_statistic_cache();
    Ok(ListingTable::try_new(config)?.with_cache(cache))
}

/// The format `CREATE EXTERNAL TABLE` names (`STORED AS NPY`), made by the session's
/// factory for it with the statement's `OPTIONS`, as DataFusion's table factory makes it.
///
/// # Errors
/// A session that is not a `SessionState`, or knows no such format; bad `OPTIONS`.
pub(crate) fn format_of(state: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn FileFormat>> {
    let Some(session) = state.as_any().downcast_ref::<SessionState>() else {
        return plan_err!("CREATE EXTERNAL TABLE of npy files needs a SessionState");
    };
    let Some(factory) = session.get_file_format_factory(&cmd.file_type) else {
        return plan_err!("no file format {} registered", cmd.file_type);
    };
    factory.create(state, &cmd.options)
}
