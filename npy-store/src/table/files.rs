//! A table's files: found under a directory or pattern, opened (header, layout, or an
//! archive's members) through a [`Source`], whose stamp tells a scan a local file changed under it.

use std::sync::Arc;

use arrow_array::RecordBatchReader;
use arrow_schema::{Schema, SchemaRef};
use npy_arrow::Layout;
use npy_core::npz::ReaderOptions;
use npy_core::{Error, ErrorKind, ReadOptions, Result};

use super::{Contents, TableFile, TableOptions};
use crate::header::header_of;
use crate::npz::RemoteNpz;
use crate::source::Source;

impl TableFile {
    /// Fails unless the file is still the one the table opened (its [`Source`]'s stamp).
    pub(super) fn unchanged(&self) -> Result<()> {
        self.source.unchanged()
    }
}

/// Opens file `name`, a path or a URL, through a [`Source`] (one read of an archive's
/// tail, or of a `.npy`'s first bytes): the file and its columns.
pub(super) async fn open(name: &str, options: &TableOptions) -> Result<(TableFile, SchemaRef)> {
    let npz = npy_core::header::FileKind::of_name(name) == Some(npy_core::header::FileKind::Zip);
    if options.members.is_some() && !npz {
        let reason = "members= names members of .npz archives; this is a .npy file".into();
        return Err(Error::from(ErrorKind::Usage { reason }).reading(name));
    }
    let convert = &options.convert;
    let (source, schema, rows, kind) = if npz {
        let archive = RemoteNpz::open_with(name, &ReaderOptions::new()).await?;
        let names: Option<Vec<&str>> = options.members.as_ref().map(|m| m.iter().map(String::as_str).collect());
        let (schema, rows) = archive.table_schema_with(names.as_deref(), convert).await?;
        (archive.source().clone(), schema, rows, Contents::Npz { npz: archive })
    } else {
        let (source, prefix) = Source::open_start(name, crate::HEADER_PREFIX as u64).await?;
        let object = header_of(Arc::new(source), prefix, &ReadOptions::new()).await?;
        let (schema, rows, kind) = if object.header.dtype.has_object() {
            objects(&object.source, convert).await?
        } else {
            let layout = Layout::new_with(&object.header, None, convert)?;
            let (schema, rows) = (layout.schema(), layout.rows());
            (schema, rows, Contents::Npy { data_offset: object.data_offset, layout: Arc::new(layout) })
        };
        (object.source, schema, rows, kind)
    };
    Ok((TableFile { name: name.to_string(), source, rows, kind }, schema))
}

/// An object array's file: read whole and decoded by npy-arrow's
/// [`object_batches_with`](npy_arrow::object_batches_with) (text as Utf8, a ragged array
/// as a List column; other object arrays refused, naming the element).
/// Its bytes are one read of the source (on the condition of an object's ETag).
async fn objects(source: &Source, convert: &npy_arrow::ConvertOptions) -> Result<(SchemaRef, usize, Contents)> {
    let bytes = source.read_bytes(0..source.size()).await?;
    let reader = npy_core::NpyReader::from_reader(std::io::Cursor::new(bytes))?;
    let mut whole = convert.clone();
    whole.batch_rows(usize::MAX);
    // A value with no Arrow form is named by NumPy's name for the dtype, `object` (`|O` is
    // the sign of a dtype NumPy pickles, a record with object fields, to npy's Python).
    let mut batches = npy_arrow::object_batches_with(reader, &whole).map_err(|e| match e.kind() {
        ErrorKind::UnsupportedDtype { descr, reason } if descr == "|O" => {
            Error::from(ErrorKind::UnsupportedDtype { descr: "object".into(), reason: reason.clone() })
        }
        _ => e,
    })?;
    let schema = batches.schema();
    let column = match batches.next() {
        Some(batch) => batch.map_err(|e| Error::from(std::io::Error::other(e)))?.column(0).clone(),
        None => arrow_array::new_empty_array(schema.field(0).data_type()),
    };
    Ok((schema, column.len(), Contents::Objects { column }))
}

/// `e` naming file `name` (as the user named it; the store names it by its path there).
pub(super) fn named(e: Error, name: &str) -> Error {
    e.renamed(name).reading(name)
}

pub(super) fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields().iter().zip(b.fields()).all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type())
}

pub(super) fn describe(schema: &Schema) -> String {
    let fields: Vec<String> = schema.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
    fields.join(", ")
}
