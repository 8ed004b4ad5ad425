//! Parquet files written with their row groups encoded on worker threads.
//!
//! arrow-rs's `ArrowWriter` encodes on the caller's thread, and encoding, not conversion
//! or I/O, is most of the cost of writing Parquet. Here a row group's batches are collected
//! (up to a size in bytes), then encoded on a thread of their own, so that up to
//! [`workers`] row groups encode at once while the caller makes the next batches; the
//! encoded column chunks are appended to the file in row-group order by the caller's
//! thread. The file is what `ArrowWriter` writes (its schema conversion and its
//! `ARROW:schema` metadata, through [`ArrowWriter::into_serialized_writer`]).
//!
//! Memory: the batches of the row group being collected, and of each row group being
//! encoded (each batch is dropped once encoded), with their encoded pages: about
//! `(1 + 2 × workers) × row group bytes` at most.
//!
//! Threads: each row group's encoder owns its batches and column writers and waits on
//! nothing; the writer joins every encoder it started, on success, on error and when
//! dropped, so none outlives it.

use std::collections::VecDeque;
use std::io::Write;
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use npy_core::{Error, Result};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::ArrowWriter;
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;

use crate::error::from_parquet;

/// How many row groups encode at once: the CPUs, at most 4.
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// A row group being encoded: its column chunks when done.
type Encoding = JoinHandle<std::result::Result<Vec<ArrowColumnChunk>, ParquetError>>;

/// A Parquet file being written from batches of one schema.
pub(crate) struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The batches of the row group being collected, and their size in bytes.
    pending: Vec<RecordBatch>,
    pending_bytes: usize,
    row_group_bytes: usize,
    /// Row groups started (encoding or done).
    started: usize,
    /// Row groups being encoded, in file order.
    encoding: Encoders,
    workers: usize,
}

/// Row groups being encoded, in file order; joined when dropped (a failed or abandoned
/// write): they wait on nothing, so that ends when their encoding does.
#[derive(Default)]
struct Encoders(VecDeque<Encoding>);

impl Drop for Encoders {
    fn drop(&mut self) {
        for handle in self.0.drain(..) {
            let _ = handle.join();
        }
    }
}

impl<W: Write + Send> std::fmt::Debug for ParquetWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetWriter")
            .field("row_group_bytes", &self.row_group_bytes)
            .field("started", &self.started)
            .field("encoding", &self.encoding.0.len())
            .finish()
    }
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A file for batches of `schema`, with row groups of about `row_group_bytes` of Arrow
    /// data each.
    pub(crate) fn new(out: W, schema: SchemaRef, props: WriterProperties, row_group_bytes: usize) -> Result<Self> {
        let writer = ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(from_parquet)?;
        let (file, factory) = writer.into_serialized_writer().map_err(from_parquet)?;
        Ok(ParquetWriter {
            file,
            factory,
            schema,
            pending: Vec::new(),
            pending_bytes: 0,
            row_group_bytes: row_group_bytes.max(1),
            started: 0,
            encoding: Encoders::default(),
            workers: workers(),
        })
    }

    /// Adds a batch (of the writer's schema); a full row group starts encoding.
    ///
    /// # Errors
    /// A batch whose columns are not of the schema's types; errors of the row groups
    /// encoded so far.
    pub(crate) fn write(&mut self, batch: RecordBatch) -> Result<()> {
        let fields = batch.schema_ref().fields();
        let same = fields.len() == self.schema.fields().len()
            && fields.iter().zip(self.schema.fields()).all(|(a, b)| a.data_type() == b.data_type());
        if !same {
            let reason = format!("a batch of schema {} for a Parquet file of schema {}", batch.schema(), self.schema);
            return Err(npy_core::ErrorKind::Usage { reason }.into());
        }
        // The batch's own bytes: its columns may be slices of one allocation (see
        // `layout::codec::Strided`), which `get_array_memory_size` would count for each.
        let bytes: usize = batch.columns().iter().map(|c| c.to_data().get_slice_memory_size().unwrap_or(0)).sum();
        self.pending_bytes += bytes;
        self.pending.push(batch);
        if self.pending_bytes >= self.row_group_bytes {
            self.start_row_group()?;
        }
        Ok(())
    }

    /// Adds a key and value to the file's metadata.
    pub(crate) fn append_key_value_metadata(&mut self, kv: KeyValue) {
        self.file.append_key_value_metadata(kv);
    }

    /// Encodes the rest, appends every row group in order, writes the footer and returns
    /// the output.
    pub(crate) fn finish(mut self) -> Result<W> {
        self.start_row_group()?;
        while !self.encoding.0.is_empty() {
            self.append_first()?;
        }
        self.file.into_inner().map_err(from_parquet)
    }

    /// Starts encoding the collected batches as the next row group, on a thread of its
    /// own; first appends the oldest row group when `workers` are busy.
    fn start_row_group(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        while self.encoding.0.len() >= self.workers {
            self.append_first()?;
        }
        let writers = self.factory.create_column_writers(self.started).map_err(from_parquet)?;
        let batches = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        let schema = self.schema.clone();
        let encode = move || encode_row_group(writers, batches, &schema);
        let handle = std::thread::Builder::new().name("npy-parquet".into()).spawn(encode)?;
        self.encoding.0.push_back(handle);
        self.started += 1;
        Ok(())
    }

    /// Waits for the oldest row group being encoded and appends it to the file.
    fn append_first(&mut self) -> Result<()> {
        let Some(handle) = self.encoding.0.pop_front() else { return Ok(()) };
        let chunks = handle.join().map_err(|_| encoder_panicked())?.map_err(from_parquet)?;
        let mut row_group = self.file.next_row_group().map_err(from_parquet)?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut row_group).map_err(from_parquet)?;
        }
        row_group.close().map_err(from_parquet)?;
        Ok(())
    }
}

/// Encodes one row group's batches into its column chunks, dropping each batch once
/// encoded.
fn encode_row_group(
    mut writers: Vec<ArrowColumnWriter>,
    batches: Vec<RecordBatch>,
    schema: &SchemaRef,
) -> std::result::Result<Vec<ArrowColumnChunk>, ParquetError> {
    for batch in batches {
        let mut leaves = writers.iter_mut();
        for (field, column) in schema.fields().iter().zip(batch.columns()) {
            for leaf in compute_leaves(field, column)? {
                let writer = leaves.next().ok_or_else(|| ParquetError::General("more leaves than columns".into()))?;
                writer.write(&leaf)?;
            }
        }
    }
    writers.into_iter().map(ArrowColumnWriter::close).collect()
}

fn encoder_panicked() -> Error {
    std::io::Error::other("a Parquet row group encoder panicked").into()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int32Array};

    use super::*;

    fn batch(from: i32, n: i32) -> RecordBatch {
        let ints: ArrayRef = Arc::new(Int32Array::from_iter_values(from..from + n));
        let floats: ArrayRef = Arc::new(Float64Array::from_iter_values((from..from + n).map(f64::from)));
        RecordBatch::try_from_iter([("i", ints), ("f", floats)]).unwrap()
    }

    /// A writer that fails once it has taken `left` bytes.
    #[derive(Debug)]
    struct FailsAfter {
        left: usize,
    }

    impl Write for FailsAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.left {
                return Err(std::io::Error::other("disk full"));
            }
            self.left -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn row_groups_encoded_on_threads_come_out_in_order() {
        let schema = batch(0, 1).schema();
        // 12 bytes a row: row groups of 100 rows, encoded several at once.
        let mut w = ParquetWriter::new(Vec::new(), schema, WriterProperties::default(), 1200).unwrap();
        for k in 0..20 {
            w.write(batch(k * 50, 50)).unwrap();
        }
        let bytes = bytes::Bytes::from(w.finish().unwrap());
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 10);
        let mut next = 0;
        for b in reader.build().unwrap() {
            let b = b.unwrap();
            let ints = b.column(0).as_any().downcast_ref::<Int32Array>().unwrap();
            for v in ints.values() {
                assert_eq!(*v, next);
                next += 1;
            }
        }
        assert_eq!(next, 1000);
    }

    #[test]
    fn a_failing_output_ends_the_write_and_every_encoder() {
        let schema = batch(0, 1).schema();
        let mut w =
            ParquetWriter::new(FailsAfter { left: 2000 }, schema.clone(), WriterProperties::default(), 1200).unwrap();
        let mut failed = None;
        for k in 0..50 {
            if let Err(e) = w.write(batch(k * 50, 50)) {
                failed = Some(e);
                break;
            }
        }
        let e = match failed {
            Some(e) => e,
            None => w.finish().unwrap_err(),
        };
        assert!(e.to_string().contains("disk full"), "{e}");
        // Abandoned with row groups still encoding: dropping joins them.
        let mut w =
            ParquetWriter::new(FailsAfter { left: usize::MAX }, schema, WriterProperties::default(), 1200).unwrap();
        for k in 0..4 {
            w.write(batch(k * 100, 100)).unwrap();
        }
        drop(w);
    }

    #[test]
    fn a_failing_encoder_is_an_error_of_the_write_and_batches_of_another_schema_are_refused() {
        let schema = batch(0, 1).schema();
        let mut w = ParquetWriter::new(Vec::new(), schema.clone(), WriterProperties::default(), 1 << 20).unwrap();
        let strings = RecordBatch::try_from_iter([
            ("i", Arc::new(arrow_array::StringArray::from(vec!["x"])) as ArrayRef),
            ("f", Arc::new(Float64Array::from(vec![1.0])) as ArrayRef),
        ])
        .unwrap();
        let e = w.write(strings.clone()).unwrap_err();
        assert!(matches!(e.kind(), npy_core::ErrorKind::Usage { .. }), "{e}");
        // An encoder given what its column writers cannot take fails; the write says so.
        w.pending.push(strings);
        let e = w.finish().unwrap_err();
        assert!(e.to_string().contains("Incompatible type"), "{e}");
    }
}
