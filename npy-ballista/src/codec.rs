//! The logical and physical extension codecs that carry npy tables and scans through
//! Ballista's plans.

use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::compute::SortOptions;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{not_impl_err, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::datasource::physical_plan::{FileSink, FileSinkConfig};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_expr::{LexRequirement, PhysicalSortExpr, PhysicalSortRequirement};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::from_proto::{parse_protobuf_file_scan_config, parse_table_schema_from_proto};
use datafusion_proto::physical_plan::to_proto::serialize_file_scan_config;
use datafusion_proto::physical_plan::{
    ComposedPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use npy_datafusion::{NpyFormat, NpyFormatFactory, NpyReadOptions, NpySink, NpySource, NpyTable};

use crate::wire::{self, FormatProto, ScanProto, SinkProto, TableProto, Tag};

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
/// let mut options = NpyReadOptions::new();
/// options.batch_rows(4096);
/// let mut blob = Vec::new();
/// codec.try_encode_file_format(&mut blob, Arc::new(NpyFormatFactory::new_with(Kind::Npz, &options)))?;
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
            Some(format) => Ok(Arc::new(NpyFormatFactory::new_with(format.kind()?, &format.options()?))),
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
    let listing_options = ListingOptions::new(Arc::new(NpyFormat::new_with(kind, &options)))
        .with_file_extension(table.file_extension.clone())
        .with_table_partition_cols(partition_cols);
    let config =
        ListingTableConfig::new_with_multi_paths(urls).with_listing_options(listing_options).with_schema(file_schema);
    Ok(NpyTable::new_with(ListingTable::try_new(config)?, kind, &options))
}

/// The physical extension codec for scans of npy tables: a `DataSourceExec` over an
/// [`NpySource`], as the source's kind, options and filter around DataFusion's own file
/// scan message (files and their row ranges, projection, limit, statistics, batch size); and a
/// `DataSinkExec` into an [`NpySink`], as its kind, DataFusion's `FileSinkConfig` message
/// and the sink's required input order.
///
/// It declines every other plan, so it goes before Ballista's codec in a
/// [`ComposedPhysicalExtensionCodec`]: [`physical_codec`].
#[derive(Debug, Default)]
pub struct NpyPhysicalCodec;

impl PhysicalExtensionCodec for NpyPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let scan = match wire::open(buf)? {
            Some((Tag::Scan, body)) => wire::decode::<ScanProto>(Tag::Scan, body)?,
            Some((Tag::Sink, body)) => {
                return self.decode_sink(&wire::decode(Tag::Sink, body)?, inputs, ctx, proto_converter);
            }
            Some((tag, _)) => {
                return Err(DataFusionError::Internal(format!(
                    "npy-ballista: a physical plan blob holds a {}",
                    tag.name()
                )))
            }
            None => return not_impl_err!("npy-ballista: not an npy scan or sink"),
        };
        let (format, conf) = scan.format.as_ref().zip(scan.conf.as_ref()).ok_or_else(|| {
            DataFusionError::Internal("npy scan: the plan blob lacks its format or its file scan".into())
        })?;
        let table_schema = parse_table_schema_from_proto(conf)?;
        let decode = PhysicalPlanDecodeContext::new(ctx, self);
        let predicate = match &scan.predicate {
            Some(node) => Some(proto_converter.proto_to_physical_expr(node, table_schema.table_schema(), &decode)?),
            None => None,
        };
        let mut source = NpySource::new_with(table_schema, format.kind()?, &format.options()?);
        if let Some(predicate) = predicate {
            source = source.with_predicate(predicate);
        }
        let conf = parse_protobuf_file_scan_config(conf, &decode, proto_converter, Arc::new(source))?;
        Ok(DataSourceExec::from_data_source(conf))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if let Some(exec) = node.downcast_ref::<DataSinkExec>() {
            if let Some(sink) = exec.sink().downcast_ref::<NpySink>() {
                let sink = self.encode_sink(exec, sink, proto_converter)?;
                wire::write(buf, Tag::Sink, &sink);
                return Ok(());
            }
        }
        let Some((conf, source)) =
            node.downcast_ref::<DataSourceExec>().and_then(|exec| exec.downcast_to_file_source::<NpySource>())
        else {
            return not_impl_err!("npy-ballista: not an npy scan or sink: {}", node.name());
        };
        let predicate = match source.predicate() {
            Some(predicate) => Some(proto_converter.physical_expr_to_proto(predicate, self)?),
            None => None,
        };
        let scan = ScanProto {
            format: Some(FormatProto::new(source.kind(), source.options())),
            conf: Some(serialize_file_scan_config(conf, self, proto_converter)?),
            predicate,
        };
        wire::write(buf, Tag::Scan, &scan);
        Ok(())
    }
}

impl NpyPhysicalCodec {
    fn encode_sink(
        &self,
        exec: &DataSinkExec,
        sink: &NpySink,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<SinkProto> {
        let sort_order = match exec.sort_order() {
            None => None,
            Some(order) => {
                let mut nodes = Vec::with_capacity(order.len());
                for requirement in order.iter() {
                    let expr: PhysicalSortExpr = requirement.clone().into();
                    nodes.push(protobuf::PhysicalSortExprNode {
                        expr: Some(Box::new(proto_converter.physical_expr_to_proto(&expr.expr, self)?)),
                        asc: !expr.options.descending,
                        nulls_first: expr.options.nulls_first,
                    });
                }
                Some(protobuf::PhysicalSortExprNodeCollection { physical_sort_expr_nodes: nodes })
            }
        };
        Ok(SinkProto {
            format: Some(FormatProto::new(sink.kind(), &NpyReadOptions::default())),
            conf: Some(protobuf::FileSinkConfig::try_from(sink.config())?),
            sort_order,
        })
    }

    fn decode_sink(
        &self,
        sink: &SinkProto,
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let (format, conf) = sink.format.as_ref().zip(sink.conf.as_ref()).ok_or_else(|| {
            DataFusionError::Internal("npy sink: the plan blob lacks its format or its file sink".into())
        })?;
        let [input] = inputs else {
            return Err(DataFusionError::Internal(format!("npy sink: {} inputs, not one", inputs.len())));
        };
        let decode = PhysicalPlanDecodeContext::new(ctx, self);
        let schema = input.schema();
        let sort_order = match &sink.sort_order {
            None => None,
            Some(nodes) => {
                let mut exprs = Vec::with_capacity(nodes.physical_sort_expr_nodes.len());
                for node in &nodes.physical_sort_expr_nodes {
                    let expr = node
                        .expr
                        .as_ref()
                        .ok_or_else(|| DataFusionError::Internal("npy sink: a sort key without expression".into()))?;
                    exprs.push(PhysicalSortRequirement::from(PhysicalSortExpr {
                        expr: proto_converter.proto_to_physical_expr(expr, &schema, &decode)?,
                        options: SortOptions { descending: !node.asc, nulls_first: node.nulls_first },
                    }));
                }
                LexRequirement::new(exprs)
            }
        };
        let conf = FileSinkConfig::try_from(conf)?;
        let sink = Arc::new(NpySink::new(conf, format.kind()?));
        Ok(Arc::new(DataSinkExec::new(Arc::clone(input), sink, sort_order)))
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
