//! The logical and physical extension codecs that carry npy tables and scans through
//! Ballista's plans.

use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{not_impl_err, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::from_proto::{parse_protobuf_file_scan_config, parse_table_schema_from_proto};
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    ComposedPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use npy_datafusion::{NpyFormat, NpyFormatFactory, NpySource, NpyTable};

use crate::wire::{self, FormatProto, ScanProto, TableProto, Tag};

/// The logical extension codec for npy tables: an [`NpyTable`] or an [`NpyFormatFactory`]
/// as a blob of ours, everything else through Ballista's codec
/// ([`BallistaLogicalExtensionCodec`], which knows Ballista's own plan nodes and the
/// Parquet, CSV, JSON, Arrow and Avro formats).
///
/// A decoded table is an [`NpyTable`] over a `ListingTable` with the schema from the plan:
/// the files are listed again where it is decoded (the scheduler), their headers are not
/// read again for a schema.
///
/// Give it to Ballista with `SessionConfigExt::with_ballista_logical_extension_codec`, as
/// [`crate::ballista_state`] does.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::logical_plan::LogicalExtensionCodec;
/// use npy_ballista::NpyLogicalCodec;
/// use npy_datafusion::{Kind, NpyFormatFactory, NpyReadOptions};
///
/// let codec = NpyLogicalCodec::default();
/// let options = NpyReadOptions { batch_rows: Some(4096), ..Default::default() };
/// let mut blob = Vec::new();
/// codec.try_encode_file_format(&mut blob, Arc::new(NpyFormatFactory::new(Kind::Npz, options.clone())))?;
/// let back = codec.try_decode_file_format(&blob, &SessionContext::new().task_ctx())?;
/// let back = back.downcast_ref::<NpyFormatFactory>().unwrap();
/// assert_eq!((back.kind(), back.options()), (Kind::Npz, &options));
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// ```
#[derive(Debug, Default)]
pub struct NpyLogicalCodec {
    inner: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for NpyLogicalCodec {
    fn try_decode(&self, buf: &[u8], inputs: &[LogicalPlan], ctx: &TaskContext) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match wire::read::<TableProto>(buf, Tag::Table)? {
            Some(table) => Ok(Arc::new(decode_table(&table, table_ref, schema)?)),
            None => self.inner.try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match node.downcast_ref::<NpyTable>() {
            Some(table) => {
                wire::write(buf, Tag::Table, &encode_table(table, table_ref)?);
                Ok(())
            }
            None => self.inner.try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(&self, buf: &[u8], ctx: &TaskContext) -> Result<Arc<dyn FileFormatFactory>> {
        match wire::read::<FormatProto>(buf, Tag::Format)? {
            Some(format) => Ok(Arc::new(NpyFormatFactory::new(format.kind()?, format.options()?))),
            None => self.inner.try_decode_file_format(buf, ctx),
        }
    }

    fn try_encode_file_format(&self, buf: &mut Vec<u8>, node: Arc<dyn FileFormatFactory>) -> Result<()> {
        match node.downcast_ref::<NpyFormatFactory>() {
            Some(factory) => {
                wire::write(buf, Tag::Format, &FormatProto::new(factory.kind(), factory.options()));
                Ok(())
            }
            None => self.inner.try_encode_file_format(buf, node),
        }
    }
}

fn encode_table(table: &NpyTable, table_ref: &TableReference) -> Result<TableProto> {
    let listing = table.listing();
    let options = listing.options();
    if !options.file_sort_order.is_empty() || options.output_partitioning.is_some() {
        return not_impl_err!(
            "npy table {table_ref}: a declared sort order or output partitioning cannot be \
             sent to a ballista cluster yet"
        );
    }
    let paths = listing.table_paths();
    Ok(TableProto {
        format: Some(FormatProto::new(table.kind(), table.options())),
        urls: paths.iter().map(|p| p.as_str().to_owned()).collect(),
        globs: paths
            .iter()
            .map(|p| p.get_glob().as_ref().map_or_else(String::new, |g| g.as_str().to_owned()))
            .collect(),
        file_extension: options.file_extension.clone(),
        partition_cols: options.table_partition_cols.iter().map(|(name, _)| name.clone()).collect(),
    })
}

fn decode_table(table: &TableProto, table_ref: &TableReference, schema: SchemaRef) -> Result<NpyTable> {
    let format = table
        .format
        .as_ref()
        .ok_or_else(|| DataFusionError::Internal(format!("npy table {table_ref}: the plan blob has no format")))?;
    let (kind, options) = (format.kind()?, format.options()?);
    if table.urls.is_empty() || table.urls.len() != table.globs.len() {
        return Err(DataFusionError::Internal(format!(
            "npy table {table_ref}: the plan blob has {} urls and {} globs",
            table.urls.len(),
            table.globs.len()
        )));
    }
    let urls = table
        .urls
        .iter()
        .zip(&table.globs)
        .map(|(url, glob)| {
            let url = ListingTableUrl::parse(url)?;
            if glob.is_empty() {
                Ok(url)
            } else {
                url.with_glob(glob)
            }
        })
        .collect::<Result<Vec<_>>>()?;
    // The plan's schema is the table's: the file columns, then the partition columns.
    let mut partition_cols = Vec::with_capacity(table.partition_cols.len());
    for name in &table.partition_cols {
        let field = schema
            .field_with_name(name)
            .map_err(|e| DataFusionError::Internal(format!("npy table {table_ref}: partition column: {e}")))?;
        partition_cols.push((name.clone(), field.data_type().clone()));
    }
    let file_fields: Vec<_> =
        schema.fields().iter().filter(|f| !table.partition_cols.contains(f.name())).cloned().collect();
    let file_schema = Arc::new(Schema::new(file_fields).with_metadata(schema.metadata().clone()));
    let listing_options = ListingOptions::new(Arc::new(NpyFormat::new(kind, options.clone())))
        .with_file_extension(table.file_extension.clone())
        .with_table_partition_cols(partition_cols);
    let config =
        ListingTableConfig::new_with_multi_paths(urls).with_listing_options(listing_options).with_schema(file_schema);
    Ok(NpyTable::new(ListingTable::try_new(config)?, kind, options))
}

/// The physical extension codec for scans of npy tables: a `DataSourceExec` over an
/// [`NpySource`], as the source's kind and options around DataFusion's own file scan
/// message (files and their row ranges, projection, limit, statistics, batch size).
///
/// It declines every other plan, so it goes before Ballista's codec in a
/// [`ComposedPhysicalExtensionCodec`]: [`physical_codec`].
#[derive(Debug, Default)]
pub struct NpyPhysicalCodec;

impl PhysicalExtensionCodec for NpyPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        _inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(scan) = wire::read::<ScanProto>(buf, Tag::Scan)? else {
            return not_impl_err!("npy-ballista: not an npy scan");
        };
        let (format, conf) = scan.format.as_ref().zip(scan.conf.as_ref()).ok_or_else(|| {
            DataFusionError::Internal("npy scan: the plan blob lacks its format or its file scan".into())
        })?;
        let source = NpySource::new(parse_table_schema_from_proto(conf)?, format.kind()?, format.options()?);
        let conf = parse_protobuf_file_scan_config(
            conf,
            &PhysicalPlanDecodeContext::new(ctx, self),
            proto_converter,
            Arc::new(source),
        )?;
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some((conf, source)) =
            node.downcast_ref::<DataSourceExec>().and_then(|exec| exec.downcast_to_file_source::<NpySource>())
        else {
            return not_impl_err!("npy-ballista: not an npy scan: {}", node.name());
        };
        let scan = ScanProto {
            format: Some(FormatProto::new(source.kind(), source.options())),
            conf: Some(serialize_file_scan_config(conf, self, proto_converter)?),
        };
        wire::write(buf, Tag::Scan, &scan);
        Ok(())
    }
}

/// The physical codec to give Ballista (`SessionConfigExt::with_ballista_physical_extension_codec`,
/// as [`crate::ballista_state`] does): [`NpyPhysicalCodec`] first, then
/// [`BallistaPhysicalExtensionCodec`] for Ballista's own plan nodes (shuffles, ...).
///
/// The composed codec tags each blob with the position of the codec that wrote it, so
/// every process must use this same list.
pub fn physical_codec() -> ComposedPhysicalExtensionCodec {
    ComposedPhysicalExtensionCodec::new(vec![
        Arc::new(NpyPhysicalCodec),
        Arc::new(BallistaPhysicalExtensionCodec::default()),
    ])
}
