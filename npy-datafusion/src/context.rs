//! Registration: [`register`] (formats and `CREATE EXTERNAL TABLE` factories on a
//! session) and [`SessionContextNpyExt`] (`register_npy`, `register_npz`, `read_npy`).

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::common::TableReference;
use datafusion::dataframe::DataFrame;
use datafusion::datasource::file_format::FileFormat;
use datafusion::error::Result;
use datafusion::execution::context::SessionContext;
use datafusion::execution::SessionState;

use crate::format::{NpyFormat, NpyFormatFactory};
use crate::kind::Kind;
use crate::options::NpyReadOptions;
use crate::placement::PartsToScan;
use crate::table::{NpyTable, NpyTableFactory};

/// Teaches a session the `npy` and `npz` formats: file formats `npy` / `npz` (for `COPY
/// ... TO 'x.npy'` and `STORED AS`) and table factories `NPY` / `NPZ` (for `CREATE
/// EXTERNAL TABLE ... STORED AS NPY`, which then makes an [`NpyTable`]), and the analyzer
/// rule [`PartsToScan`], which lets scans decode `samples[10]` alone. Formats already
/// registered under those names are replaced; the rule is added once.
///
/// # Errors
/// None in practice (DataFusion's registration is fallible).
///
/// # Examples
/// ```
/// use datafusion::execution::session_state::SessionStateBuilder;
/// use datafusion::prelude::SessionContext;
///
/// let mut state = SessionStateBuilder::new().with_default_features().build();
/// npy_datafusion::register(&mut state)?;
/// let ctx = SessionContext::new_with_state(state);
/// assert!(ctx.state().get_file_format_factory("npy").is_some());
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
pub fn register(state: &mut SessionState) -> Result<()> {
    for kind in [Kind::Npy, Kind::Npz] {
        state.register_file_format(Arc::new(NpyFormatFactory::new(kind)), true)?;
        let factory = Arc::new(NpyTableFactory::new());
        state.table_factories_mut().insert(kind.ext().to_uppercase(), factory);
    }
    if !has_parts_rule(state) {
        state.add_analyzer_rule(Arc::new(PartsToScan));
    }
    Ok(())
}

/// Whether `state`'s analyzer has [`PartsToScan`].
fn has_parts_rule(state: &SessionState) -> bool {
    state.analyzer().rules.iter().any(|r| r.name() == crate::placement::NAME)
}

/// `.npy` / `.npz` tables on a [`SessionContext`], as `register_parquet` and friends. Each
/// adds [`PartsToScan`] to the session's analyzer (once).
///
/// A path is a file, a directory (every `.npy` / `.npz` file under it, in its folders
/// too), a glob pattern, or a URL of a registered object store (`s3://bucket/dir/`, after
/// [`SessionContext::register_object_store`]); a relative path is from the current
/// directory. A local path's files are those `npy_store::find` gives (and `npy.open`,
/// `npy.scan`, Dask and xarray read), sorted by path as text; a directory's are listed
/// again at each scan, in the folders that held files when it was registered.
#[async_trait]
pub trait SessionContextNpyExt {
    /// Registers the `.npy` files at `path` as table `name` (an [`NpyTable`]).
    ///
    /// # Errors
    /// An unreadable header, files whose columns differ (naming two of them), a store
    /// error.
    async fn register_npy(
        &self,
        name: impl Into<TableReference> + Send,
        path: impl AsRef<str> + Send,
        options: &NpyReadOptions,
    ) -> Result<()>;

    /// Registers the `.npz` archives at `path` as table `name`, each member a column.
    ///
    /// The columns are those `npy_arrow::NpzBatchReader` gives an archive
    /// (`npy_arrow::npz::MemberColumns`); archives whose members differ in length are an
    /// error naming them.
    ///
    /// # Errors
    /// As [`SessionContextNpyExt::register_npy`]; any `.npz` archive at `path`.
    async fn register_npz(
        &self,
        name: impl Into<TableReference> + Send,
        path: impl AsRef<str> + Send,
        options: &NpyReadOptions,
    ) -> Result<()>;

    /// A [`DataFrame`] over the `.npy` files at `path`.
    ///
    /// # Errors
    /// As [`SessionContextNpyExt::register_npy`].
    async fn read_npy(&self, path: impl AsRef<str> + Send, options: &NpyReadOptions) -> Result<DataFrame>;
}

#[async_trait]
impl SessionContextNpyExt for SessionContext {
    async fn register_npy(
        &self,
        name: impl Into<TableReference> + Send,
        path: impl AsRef<str> + Send,
        options: &NpyReadOptions,
    ) -> Result<()> {
        let name = name.into();
        let table = npy_table(self, Some(name.clone()), path.as_ref(), Kind::Npy, options).await?;
        self.register_table(name, Arc::new(table))?;
        Ok(())
    }

    async fn register_npz(
        &self,
        name: impl Into<TableReference> + Send,
        path: impl AsRef<str> + Send,
        options: &NpyReadOptions,
    ) -> Result<()> {
        let name = name.into();
        let table = npy_table(self, Some(name.clone()), path.as_ref(), Kind::Npz, options).await?;
        self.register_table(name, Arc::new(table))?;
        Ok(())
    }

    async fn read_npy(&self, path: impl AsRef<str> + Send, options: &NpyReadOptions) -> Result<DataFrame> {
        let table = npy_table(self, None, path.as_ref(), Kind::Npy, options).await?;
        self.read_table(Arc::new(table))
    }
}

/// The table of the `kind` files at `path`: listed, schema read from their headers, file
/// statistics cached in the session's cache.
async fn npy_table(
    ctx: &SessionContext,
    name: Option<TableReference>,
    path: &str,
    kind: Kind,
    options: &NpyReadOptions,
) -> Result<NpyTable> {
    if !has_parts_rule(&ctx.state()) {
        ctx.add_analyzer_rule(Arc::new(PartsToScan));
    }
    let mut located = crate::listing::locate(&ctx.state(), path, kind).await?;
    if let Some(name) = name {
        located.urls = located.urls.into_iter().map(|url| url.with_table_ref(name.clone())).collect();
    }
    crate::table::refuse_empty_files(&ctx.state(), &located.urls, kind).await?;
    let format: Arc<dyn FileFormat> = Arc::new(NpyFormat::new_with(kind, options));
    let listing = crate::listing::listing_table(&ctx.state(), located, format, None).await?;
    Ok(NpyTable::new_with(listing, kind, options))
}
