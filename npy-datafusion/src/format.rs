//! The `.npy` / `.npz` file formats: [`NpyFormat`] and [`NpyFormatFactory`].

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::parsers::CompressionTypeVariant;
use datafusion::common::stats::Precision;
use datafusion::common::{GetExt, Statistics};
use datafusion::datasource::file_format::file_compression_type::FileCompressionType;
use datafusion::datasource::file_format::{FileFormat, FileFormatFactory};
use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder, FileSinkConfig, FileSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_expr_common::sort_expr::LexRequirement;
use datafusion::physical_plan::ExecutionPlan;
use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectMeta, ObjectStore};

use crate::error::npy_error;
use crate::kind::Kind;
use crate::options::NpyReadOptions;
use crate::schema::{file_shape, table_schema_of};
use crate::source::NpySource;

/// How many headers [`NpyFormat::infer_schema`] reads at once.
const HEADER_CONCURRENCY: usize = 32;

/// The `.npy` / `.npz` [`FileFormat`]: schemas from the files' headers, exact row counts,
/// scans through [`NpySource`].
#[derive(Debug, Clone)]
pub struct NpyFormat {
    kind: Kind,
    options: NpyReadOptions,
}

impl NpyFormat {
    /// A format reading files of `kind` with the default options.
    pub fn new(kind: Kind) -> Self {
        NpyFormat::new_with(kind, &NpyReadOptions::new())
    }

    /// A format reading files of `kind` with `options`.
    pub fn new_with(kind: Kind, options: &NpyReadOptions) -> Self {
        NpyFormat { kind, options: options.clone() }
    }

    /// Which files this format reads.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The read settings.
    pub fn options(&self) -> &NpyReadOptions {
        &self.options
    }
}

#[async_trait]
impl FileFormat for NpyFormat {
    fn get_ext(&self) -> String {
        self.kind.ext().to_string()
    }

    fn get_ext_with_compression(&self, compression: &FileCompressionType) -> Result<String> {
        match compression.get_variant() {
            CompressionTypeVariant::UNCOMPRESSED => Ok(self.get_ext()),
            other => {
                let reason = format!(
                    "{} files cannot be read or written with {other:?} compression (npz members are \
                     compressed inside the archive)",
                    self.kind.ext()
                );
                Err(npy_error(npy_core::ErrorKind::Usage { reason }.into()))
            }
        }
    }

    fn compression_type(&self) -> Option<FileCompressionType> {
        None
    }

    /// The table schema: every file's header read (at most 32 at once),
    /// per-file metadata dropped, and all files required to agree.
    async fn infer_schema(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        objects: &[ObjectMeta],
    ) -> Result<SchemaRef> {
        let reads: Vec<_> = (objects.iter())
            .map(|object| async move {
                let shape = file_shape(self.kind, store, &object.location, &self.options).await?;
                Ok::<_, DataFusionError>((object.location.to_string(), shape.schema))
            })
            .collect();
        let schemas: Vec<(String, SchemaRef)> =
            futures::stream::iter(reads).buffered(HEADER_CONCURRENCY).try_collect().await?;
        match table_schema_of(&schemas) {
            Ok(Some(schema)) => Ok(schema),
            Ok(None) => Ok(Arc::new(Schema::empty())),
            Err(e) => Err(npy_error(e)),
        }
    }

    /// `num_rows` from the file's header, exact for a `.npy` file; `total_byte_size`
    /// inexact (the data's size). An archive's row count is inexact: with an exact one
    /// DataFusion answers `count(*)` from it alone, where the scan reads and checks every
    /// member (sizes, CRC-32) as the other paths check an archive before they answer.
    async fn infer_stats(
        &self,
        _state: &dyn Session,
        store: &Arc<dyn ObjectStore>,
        table_schema: SchemaRef,
        object: &ObjectMeta,
    ) -> Result<Statistics> {
        let shape = file_shape(self.kind, store, &object.location, &self.options).await?;
        let rows = shape.rows;
        let num_rows = match self.kind {
            Kind::Npy => Precision::Exact(rows),
            Kind::Npz => Precision::Inexact(rows),
        };
        Ok(Statistics {
            num_rows,
            total_byte_size: Precision::Inexact(rows.saturating_mul(shape.row_bytes)),
            column_statistics: Statistics::unknown_column(&table_schema),
        })
    }

    async fn create_physical_plan(&self, _state: &dyn Session, conf: FileScanConfig) -> Result<Arc<dyn ExecutionPlan>> {
        let mut source: Arc<dyn FileSource> = self.file_source(conf.file_source().table_schema().clone());
        // Keep the projection the scan was planned with.
        if let Some(projection) = conf.file_source().projection() {
            if let Some(projected) = source.try_pushdown_projection(projection)? {
                source = projected;
            }
        }
        let config = FileScanConfigBuilder::from(conf).with_source(source).build();
        Ok(DataSourceExec::from_data_source(config))
    }

    fn file_source(&self, table_schema: TableSchema) -> Arc<dyn FileSource> {
        Arc::new(NpySource::new_with(table_schema, self.kind, &self.options))
    }

    async fn create_writer_physical_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        _state: &dyn Session,
        conf: FileSinkConfig,
        order_requirements: Option<LexRequirement>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        crate::sink::writer_plan(input, conf, order_requirements, self.kind, &self.options)
    }
}

/// Makes [`NpyFormat`]s for `STORED AS NPY|NPZ`, `COPY ... TO 'x.npy'` and
/// [`crate::register`]: its `OPTIONS` are [`NpyReadOptions`]' keys.
#[derive(Debug, Clone)]
pub struct NpyFormatFactory {
    kind: Kind,
    options: NpyReadOptions,
}

impl NpyFormatFactory {
    /// A factory of formats of `kind`, whose `OPTIONS` change the default options.
    pub fn new(kind: Kind) -> Self {
        NpyFormatFactory::new_with(kind, &NpyReadOptions::new())
    }

    /// A factory of formats of `kind`, with `options` as the defaults `OPTIONS` change.
    pub fn new_with(kind: Kind, options: &NpyReadOptions) -> Self {
        NpyFormatFactory { kind, options: options.clone() }
    }

    /// Which files the formats read.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The default read settings.
    pub fn options(&self) -> &NpyReadOptions {
        &self.options
    }
}

impl FileFormatFactory for NpyFormatFactory {
    fn create(&self, _state: &dyn Session, format_options: &HashMap<String, String>) -> Result<Arc<dyn FileFormat>> {
        let mut options = self.options.clone();
        options.set_table_options(format_options)?;
        Ok(Arc::new(NpyFormat::new_with(self.kind, &options)))
    }

    fn default(&self) -> Arc<dyn FileFormat> {
        Arc::new(NpyFormat::new_with(self.kind, &self.options))
    }
}

impl GetExt for NpyFormatFactory {
    fn get_ext(&self) -> String {
        self.kind.ext().to_string()
    }
}
