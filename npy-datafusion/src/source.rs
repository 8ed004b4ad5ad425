//! The scan of `.npy` / `.npz` files: [`NpySource`].

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::physical_plan::{FileOpener, FileScanConfig, FileSource};
use datafusion::datasource::projection::{ProjectionOpener, SplitProjection};
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::Result;
use datafusion::physical_expr::utils::collect_columns;
use datafusion::physical_expr::{conjunction, PhysicalExpr};
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::projection::ProjectionExprs;
use datafusion::physical_plan::DisplayFormatType;
use object_store::ObjectStore;

use crate::kind::Kind;
use crate::opener::{NpyOpener, ScanMetrics};
use crate::options::NpyReadOptions;
use crate::parts::ScanParts;

/// The [`FileSource`] of `.npy` / `.npz` scans: decodes only the projected columns of each
/// file, and splits `.npy` files into row ranges for parallel scans (a byte range
/// `[start, end)` of a file scans the rows whose first byte lies in it). An `.npz`
/// archive is scanned whole by one partition.
///
/// Filters on the columns of `.npy` files, and on the members of `.npz` archives that are
/// not records, are evaluated by the scan ([`NpySource::predicate`]), `WHERE` clauses and
/// the dynamic filters of a `ORDER BY ... LIMIT` (top-k) alike: each block of rows has the
/// filter's columns (or members) decoded first, and the other projected columns only at
/// the rows it kept. Parts of columns (`samples[10]`, `r['x']`) in the projection and the
/// filter are decoded alone ([`crate::PartsToScan`]).
#[derive(Clone)]
pub struct NpySource {
    kind: Kind,
    options: NpyReadOptions,
    table_schema: TableSchema,
    projection: SplitProjection,
    /// The filters the scan evaluates, in terms of the table schema.
    predicate: Option<Arc<dyn PhysicalExpr>>,
    batch_size: Option<usize>,
    metrics: ExecutionPlanMetricsSet,
}

impl fmt::Debug for NpySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (f.debug_struct("NpySource"))
            .field("kind", &self.kind)
            .field("options", &self.options)
            .field("file_indices", &self.projection.file_indices)
            .field("predicate", &self.predicate.as_ref().map(|p| p.to_string()))
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

impl NpySource {
    /// A scan of files of `kind` whose table has `table_schema`, all columns projected,
    /// with the default options.
    pub fn new(table_schema: TableSchema, kind: Kind) -> Self {
        NpySource::new_with(table_schema, kind, &NpyReadOptions::new())
    }

    /// A scan of files of `kind` whose table has `table_schema`, all columns projected.
    pub fn new_with(table_schema: TableSchema, kind: Kind, options: &NpyReadOptions) -> Self {
        NpySource {
            kind,
            options: options.clone(),
            projection: SplitProjection::unprojected(&table_schema),
            predicate: None,
            table_schema,
            batch_size: None,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// Which files the scan reads.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The read settings.
    pub fn options(&self) -> &NpyReadOptions {
        &self.options
    }

    /// The filter the scan evaluates (in terms of the table schema): the conjunction of
    /// those pushed down to it, `None` for every row.
    pub fn predicate(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.predicate.as_ref()
    }

    /// This scan, also keeping only the rows `predicate` (in terms of the table schema, over
    /// the files' columns) is true for: how a plan's filter that was pushed down comes back
    /// from its serialized form (npy-ballista).
    pub fn with_predicate(&self, predicate: Arc<dyn PhysicalExpr>) -> NpySource {
        let predicate = match &self.predicate {
            Some(old) => conjunction([Arc::clone(old), predicate]),
            None => predicate,
        };
        NpySource { predicate: Some(predicate), ..self.clone() }
    }

    /// Whether the scan can evaluate `filter`: columns of the files only (not partition
    /// columns); of an archive, members that are not records (read in parts) and not
    /// residue columns.
    fn can_evaluate(&self, filter: &Arc<dyn PhysicalExpr>) -> bool {
        let files = self.table_schema.file_schema();
        let judged = |f: &Field| {
            self.kind == Kind::Npy
                || !(matches!(f.data_type(), DataType::Struct(_))
                    || f.metadata().contains_key(npy_arrow::schema::RESIDUE_KEY))
        };
        collect_columns(filter)
            .iter()
            .all(|c| files.fields().get(c.index()).is_some_and(|f| f.name() == c.name() && judged(f)))
    }

    /// What the scan decodes: the files' columns and parts of them (of an archive, parts
    /// of the members that are not records: record members are read whole).
    fn scan_parts(&self) -> Result<ScanParts> {
        let files = self.table_schema.file_schema();
        let kind = self.kind;
        let in_parts = |column: &Field| kind == Kind::Npy || !matches!(column.data_type(), DataType::Struct(_));
        ScanParts::new(files, &self.projection.source, self.predicate.as_ref(), in_parts)
    }

    /// Rows per batch: the table's `batch_rows`, else the session's batch size.
    fn batch_rows(&self) -> usize {
        let session = self.batch_size.unwrap_or(DEFAULT_BATCH_ROWS);
        self.options.batch_rows.unwrap_or(session).max(1)
    }
}

/// Rows per batch when neither the table nor the session says: DataFusion's default.
const DEFAULT_BATCH_ROWS: usize = 8192;

impl FileSource for NpySource {
    fn create_file_opener(
        &self,
        object_store: Arc<dyn ObjectStore>,
        base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        let file_schema = self.table_schema.file_schema().clone();
        let scan = self.scan_parts()?;
        let opener = NpyOpener {
            store: object_store,
            kind: self.kind,
            options: self.options.clone(),
            batch_rows: self.batch_rows(),
            projected: Arc::new(scan.schema.project(&scan.projection.file_indices)?),
            decoded: scan.projected(),
            file_schema,
            predicate: scan.predicate.clone().map(|p| (p, Arc::clone(&scan.schema), scan.parts.clone())),
            limit: base_config.limit,
            metrics: ScanMetrics::new(&self.metrics, partition),
        };
        ProjectionOpener::try_new(scan.projection, Arc::new(opener), &scan.schema)
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        Arc::new(NpySource { batch_size: Some(batch_size), ..self.clone() })
    }

    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        self.predicate.clone()
    }

    /// Takes every filter it can evaluate (its files' columns; of an archive, members that
    /// are not records): the scan evaluates it exactly (the rows it drops never leave the
    /// scan), so no such filter stays above it.
    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        let taken: Vec<PushedDown> =
            filters.iter().map(|f| if self.can_evaluate(f) { PushedDown::Yes } else { PushedDown::No }).collect();
        let mut source = self.clone();
        for (filter, taken) in filters.into_iter().zip(&taken) {
            if matches!(taken, PushedDown::Yes) {
                source = source.with_predicate(filter);
            }
        }
        let any = taken.iter().any(|t| matches!(t, PushedDown::Yes));
        let propagation = FilterPushdownPropagation::with_parent_pushdown_result(taken);
        Ok(if any { propagation.with_updated_node(Arc::new(source) as Arc<dyn FileSource>) } else { propagation })
    }

    fn projection(&self) -> Option<&ProjectionExprs> {
        Some(&self.projection.source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        self.kind.ext()
    }

    fn fmt_extra(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ", batch_rows={}", self.batch_rows())?;
        if self.options.map_local_files.is_some() {
            write!(f, ", local files mapped")?;
        }
        if let Some(predicate) = &self.predicate {
            write!(f, ", predicate={predicate}")?;
        }
        if let Ok(scan) = self.scan_parts() {
            let parts = scan.names();
            if !parts.is_empty() {
                write!(f, ", parts decoded=[{}]", parts.join(", "))?;
            }
        }
        Ok(())
    }

    /// `.npy` files split into row ranges; `.npz` archives are scanned whole.
    fn supports_repartitioning(&self) -> bool {
        self.kind == Kind::Npy
    }

    fn try_pushdown_projection(&self, projection: &ProjectionExprs) -> Result<Option<Arc<dyn FileSource>>> {
        let merged = self.projection.source.try_merge(projection)?;
        let projection = SplitProjection::new(self.table_schema.file_schema(), &merged);
        Ok(Some(Arc::new(NpySource { projection, ..self.clone() })))
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        match datafusion::physical_plan::apply_expression_roots(self.projection.source.iter(), f)? {
            TreeNodeRecursion::Stop => Ok(TreeNodeRecursion::Stop),
            _ => match &self.predicate {
                Some(predicate) => f(predicate),
                None => Ok(TreeNodeRecursion::Continue),
            },
        }
    }
}
