//! Batches held aside while the width their text needs is measured: [`TextSpool`].

use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom};

use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{ArrowError, SchemaRef};
use npy_core::{Error, Result};

use crate::foreign::Canonical;
use crate::write::text_widths;

/// Batches spooled to an unnamed temporary file (an Arrow IPC stream) while the widths of
/// their text columns are measured: for writers of `.npy` data whose text widths are not
/// fixed by a header ([`crate::write::needs_text_widths`]), so that the `U`/`S` items are as
/// wide as the longest value of all the batches, not of the first one. [`TextSpool::finish`]
/// gives the widths ([`crate::write::text_widths`]' maxima, for
/// [`crate::BatchWriter::text_widths`]) and the batches again, in order.
///
/// The batches are spooled cast to their canonical types ([`crate::foreign`]), so that
/// they are measured and given back as the writers take them; a batch that cannot be cast
/// (a null or ragged list row) is an error here, naming the column and the row.
///
/// The file is gone when the spool or its replay is dropped; it holds the data once more
/// on disk, never in memory.
///
/// # Examples
/// ```
/// use std::sync::Arc;
/// use arrow_array::{RecordBatch, StringArray};
/// use npy_arrow::formats::TextSpool;
///
/// let batch = |names: Vec<&str>| {
///     RecordBatch::try_from_iter([("name", Arc::new(StringArray::from(names)) as _)]).unwrap()
/// };
/// let mut spool = TextSpool::new(&batch(vec![]).schema())?;
/// spool.write(&batch(vec!["a", "bc"]))?;
/// spool.write(&batch(vec!["defgh"]))?;
/// let (widths, batches) = spool.finish()?;
/// assert_eq!(widths, [5]);
/// assert_eq!(batches.map(|b| b.map(|b| b.num_rows())).collect::<Result<Vec<_>, _>>()?, [2, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TextSpool {
    /// The spool file, until the first batch gives the schema of the stream written to it.
    file: Option<BufWriter<File>>,
    writer: Option<StreamWriter<BufWriter<File>>>,
    widths: Vec<usize>,
    foreign: Canonical,
    rows: usize,
}

impl std::fmt::Debug for TextSpool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextSpool").field("widths", &self.widths).finish_non_exhaustive()
    }
}

impl TextSpool {
    /// An empty spool for batches of `schema`.
    ///
    /// # Errors
    /// [`npy_core::ErrorKind::Io`] when the temporary file cannot be made.
    pub fn new(schema: &SchemaRef) -> Result<TextSpool> {
        let file = BufWriter::with_capacity(1 << 20, tempfile::tempfile()?);
        let widths = vec![1; schema.fields().len()];
        Ok(TextSpool { file: Some(file), writer: None, widths, foreign: Canonical::new(schema.clone()), rows: 0 })
    }

    /// Spools a batch and measures its text.
    ///
    /// # Errors
    /// A list column with a null row or a row of another length than the first's (naming
    /// the column and the row); I/O errors writing the spool.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = self.foreign.batch(batch, self.rows)?;
        if batch.num_rows() == 0 && self.foreign.needs_rows() {
            return Ok(());
        }
        for (w, n) in self.widths.iter_mut().zip(text_widths(&batch)) {
            *w = n.max(*w);
        }
        self.rows += batch.num_rows();
        self.writer()?.write(&batch).map_err(|e| spool_error("spooling the rows", e))
    }

    /// The spool's stream, started with the canonical schema at the first batch.
    fn writer(&mut self) -> Result<&mut StreamWriter<BufWriter<File>>> {
        if let Some(file) = self.file.take() {
            let schema = self.foreign.schema()?;
            let writer = StreamWriter::try_new(file, &schema).map_err(|e| spool_error("spooling the rows", e))?;
            self.writer = Some(writer);
        }
        Ok(self.writer.as_mut().expect("the file or the stream is there"))
    }

    /// The widths of the text columns (at least 1 each), and the batches, read back.
    ///
    /// # Errors
    /// I/O errors ending or rewinding the spool.
    pub fn finish(mut self) -> Result<(Vec<usize>, SpooledBatchReader)> {
        let failed = |e| spool_error("spooling the rows", e);
        self.writer()?.finish().map_err(failed)?;
        let writer = self.writer.take().expect("started above");
        let mut file = writer.into_inner().map_err(failed)?.into_inner().map_err(|e| Error::from(e.into_error()))?;
        file.seek(SeekFrom::Start(0))?;
        let reader = StreamReader::try_new(BufReader::with_capacity(1 << 20, file), None)
            .map_err(|e| spool_error("reading the spooled rows back", e))?;
        Ok((self.widths, SpooledBatchReader { reader }))
    }
}

/// The batches of a [`TextSpool`], in the order they were written: a
/// [`RecordBatchReader`], and [`SpooledBatchReader::next_batch`] with npy's error type.
pub struct SpooledBatchReader {
    reader: StreamReader<BufReader<File>>,
}

impl std::fmt::Debug for SpooledBatchReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpooledBatchReader").finish_non_exhaustive()
    }
}

impl SpooledBatchReader {
    /// The next batch, or `None` after the last, with npy's error type.
    ///
    /// # Errors
    /// I/O errors reading the spool back.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        self.reader.next().transpose().map_err(|e| spool_error("reading the spooled rows back", e))
    }
}

impl Iterator for SpooledBatchReader {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(|e| ArrowError::ExternalError(Box::new(e))).transpose()
    }
}

impl RecordBatchReader for SpooledBatchReader {
    fn schema(&self) -> SchemaRef {
        self.reader.schema()
    }
}

fn spool_error(what: &str, e: arrow_schema::ArrowError) -> Error {
    match e {
        arrow_schema::ArrowError::IoError(_, io) => io.into(),
        e => std::io::Error::other(format!("{what}: {e}")).into(),
    }
}
