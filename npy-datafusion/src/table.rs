//! Tables of `.npy` / `.npz` files: [`NpyTable`] and [`NpyTableFactory`].

use std::borrow::Cow;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{ScanArgs, ScanResult, Session, TableProvider, TableProviderFactory};
use datafusion::common::{Constraints, Statistics};
use datafusion::datasource::listing::{ListingTable, ListingTableUrl};
use datafusion::datasource::listing_table_factory::ListingTableFactory;
use datafusion::error::Result;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{CreateExternalTable, Expr, LogicalPlan, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;
use futures::TryStreamExt;

use crate::error::npy_error;
use crate::format::NpyFormat;
use crate::kind::Kind;
use crate::options::NpyReadOptions;

/// A table of `.npy` or `.npz` files: a [`ListingTable`] (which lists the files, keeps
/// their statistics and plans the scans) that also says which kind of files it holds and
/// how they are read, so that it can be shipped to other processes (Ballista's codecs look
/// for this type: they cannot ship a `ListingTable` of a format they do not know).
///
/// [`crate::SessionContextNpyExt::register_npy`] and `CREATE EXTERNAL TABLE ... STORED AS
/// NPY|NPZ` (through [`NpyTableFactory`]) both make one. Every [`TableProvider`] method is
/// the listing table's.
#[derive(Debug, Clone)]
pub struct NpyTable {
    listing: ListingTable,
    kind: Kind,
    options: NpyReadOptions,
}

impl NpyTable {
    /// The table over `listing`, whose format should be an [`NpyFormat`] of `kind` and the
    /// default options.
    pub fn new(listing: ListingTable, kind: Kind) -> Self {
        NpyTable::new_with(listing, kind, &NpyReadOptions::new())
    }

    /// The table over `listing`, whose format should be an [`NpyFormat`] of `kind` and
    /// `options`.
    pub fn new_with(listing: ListingTable, kind: Kind, options: &NpyReadOptions) -> Self {
        NpyTable { listing, kind, options: options.clone() }
    }

    /// The table over `listing`, its kind and options taken from its format.
    ///
    /// # Errors
    /// When the listing table's format is not an [`NpyFormat`].
    pub fn try_from_listing(listing: ListingTable) -> Result<Self> {
        let format = listing.options().format.clone();
        let Some(format) = format.downcast_ref::<NpyFormat>() else {
            let reason = format!("a listing table of {:?} files is not an npy table", listing.options().format);
            return Err(npy_error(npy_core::ErrorKind::Usage { reason }.into()));
        };
        Ok(NpyTable::new_with(listing, format.kind(), format.options()))
    }

    /// The listing table: paths, listing options (the format), schema.
    pub fn listing(&self) -> &ListingTable {
        &self.listing
    }

    /// Which files the table holds.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// How the files are read.
    pub fn options(&self) -> &NpyReadOptions {
        &self.options
    }
}

#[async_trait]
impl TableProvider for NpyTable {
    fn schema(&self) -> SchemaRef {
        self.listing.schema()
    }

    fn constraints(&self) -> Option<&Constraints> {
        self.listing.constraints()
    }

    fn table_type(&self) -> TableType {
        self.listing.table_type()
    }

    fn get_table_definition(&self) -> Option<&str> {
        self.listing.get_table_definition()
    }

    fn get_logical_plan(&'_ self) -> Option<Cow<'_, LogicalPlan>> {
        self.listing.get_logical_plan()
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.listing.get_column_default(column)
    }

    /// The listing table's scan, after refusing empty files (the listing skips them).
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        refuse_empty_files(state, self.listing.table_paths(), self.kind).await?;
        self.listing.scan(state, projection, filters, limit).await
    }

    /// As [`NpyTable::scan`].
    async fn scan_with_args<'a>(&self, state: &dyn Session, args: ScanArgs<'a>) -> Result<ScanResult> {
        refuse_empty_files(state, self.listing.table_paths(), self.kind).await?;
        self.listing.scan_with_args(state, args).await
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        self.listing.supports_filters_pushdown(filters)
    }

    fn statistics(&self) -> Option<Statistics> {
        self.listing.statistics()
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.listing.insert_into(state, input, insert_op).await
    }
}

/// Makes an [`NpyTable`] for `CREATE EXTERNAL TABLE t STORED AS NPY|NPZ LOCATION '...'`:
/// DataFusion's [`ListingTableFactory`] does the work (locations, `OPTIONS` through
/// [`crate::NpyFormatFactory`], schema), and its table is wrapped. [`crate::register`]
/// installs it for `NPY` and `NPZ`.
#[derive(Debug, Default)]
pub struct NpyTableFactory {
    listing: ListingTableFactory,
}

impl NpyTableFactory {
    /// The factory.
    pub fn new() -> Self {
        NpyTableFactory::default()
    }
}

#[async_trait]
impl TableProviderFactory for NpyTableFactory {
    async fn create(&self, state: &dyn Session, cmd: &CreateExternalTable) -> Result<Arc<dyn TableProvider>> {
        // Local locations and URL prefixes name the files npy-store's rule finds: the table
        // is made here, as `register_npy` makes one, of every location's folders (each
        // globbed by its kind's suffix in any case: DataFusion's factory globs `*.npy`, a
        // bucket folder's objects of every name, and infers the columns of the first
        // location only), unless the table is partitioned by its folders' names or a
        // location holds nothing yet (DataFusion's factory takes those as they stand).
        let kind = if cmd.file_type.eq_ignore_ascii_case("npz") { Kind::Npz } else { Kind::Npy };
        let by_rule = cmd.table_partition_cols.is_empty() && cmd.locations.iter().all(|l| crate::listing::is_found(l));
        if by_rule {
            let mut all = crate::listing::Located { urls: Vec::new(), extension: String::new(), found: true };
            for location in &cmd.locations {
                let located = crate::listing::locate(state, location, kind).await?;
                all.found &= located.found;
                all.urls.extend(located.urls);
            }
            if all.found {
                let format = crate::listing::format_of(state, cmd)?;
                refuse_empty_files(state, &all.urls, kind).await?;
                let declared = (!cmd.schema.fields().is_empty()).then(|| Arc::new(cmd.schema.as_arrow().clone()));
                let listing = crate::listing::listing_table(state, all, format, declared)
                    .await?
                    .with_definition(cmd.definition.clone())
                    .with_constraints(cmd.constraints.clone())
                    .with_column_defaults(cmd.column_defaults.clone());
                return Ok(Arc::new(NpyTable::try_from_listing(listing)?));
            }
        }
        let provider = self.listing.create(state, cmd).await?;
        let Some(listing) = provider.downcast_ref::<ListingTable>() else {
            let reason = format!("table '{}': the listing table factory made no listing table", cmd.name);
            return Err(npy_error(npy_core::ErrorKind::Usage { reason }.into()));
        };
        let table = NpyTable::try_from_listing(listing.clone())?;
        refuse_empty_files(state, table.listing.table_paths(), table.kind).await?;
        Ok(Arc::new(table))
    }
}

/// Fails on the first empty (0-byte) file of `kind` at `paths`, with the error npy-core's
/// reader gives it, naming it. DataFusion's listing skips empty files, so a table would
/// otherwise read one as no rows, where `npy check`, `dump` and NumPy refuse it. Costs one
/// listing of `paths` (the session's listing cache serves it when it has one).
///
/// # Errors
/// That error; store errors of the listing.
pub(crate) async fn refuse_empty_files(state: &dyn Session, paths: &[ListingTableUrl], kind: Kind) -> Result<()> {
    let ext = format!(".{}", kind.ext());
    for url in paths {
        let store = state.runtime_env().object_store(url)?;
        // A folder's glob names its files (their suffix in any case); else the extension.
        let ext = if url.get_glob().is_some() { "" } else { ext.as_str() };
        let mut files = url.list_all_files(state, store.as_ref(), ext).await?;
        while let Some(file) = files.try_next().await? {
            if file.size == 0 {
                let empty = std::io::Cursor::new(Vec::new());
                let e = match kind {
                    Kind::Npy => npy_core::NpyReader::from_reader(empty).err(),
                    Kind::Npz => npy_core::npz::Reader::from_reader(empty).err(),
                };
                let e = e.unwrap_or_else(|| npy_core::ErrorKind::Truncated { expected: 8, found: 0 }.into());
                return Err(npy_error(e.reading(file.location.as_ref())));
            }
        }
    }
    Ok(())
}
