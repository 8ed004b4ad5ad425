//! A table's files: found under a directory or pattern, opened (header, layout, or an
//! archive's members), and stamped so that a scan can tell a local file changed under it.

use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatchReader;
use arrow_schema::{Schema, SchemaRef};
use npy_arrow::Layout;
use npy_core::{Error, ErrorKind, Result};

use super::{FileKind, TableFile, TableOptions};
use crate::npz::RemoteNpz;
use crate::stamp::Stamp;
use crate::url::StoreLocation;

impl TableFile {
    /// Fails unless the file is still the one the table opened.
    pub(super) fn unchanged(&self) -> Result<()> {
        let Some(then) = self.stamp else { return Ok(()) };
        let now = Stamp::of_path(&local_path(&self.at)).map_err(|e| Error::from(e).reading(&self.name))?;
        if now == then {
            return Ok(());
        }
        let reason = "the file changed while it was scanned (its size, time or inode is not what the scan opened)";
        Err(Error::from(ErrorKind::Usage { reason: reason.into() }).reading(&self.name))
    }
}

/// Opens file `name` (`url`: an object at a URL, not stamped): the file and its columns.
pub(super) async fn open(name: &str, url: bool, options: &TableOptions) -> Result<(TableFile, SchemaRef)> {
    let stamp =
        if url { None } else { Some(Stamp::of_path(FsPath::new(name)).map_err(|e| Error::from(e).reading(name))?) };
    let at = crate::store_for(name)?;
    let npz = npy_core::header::FileKind::of_name(name) == Some(npy_core::header::FileKind::Zip);
    if options.members.is_some() && !npz {
        let reason = "members= names members of .npz archives; this is a .npy file".into();
        return Err(Error::from(ErrorKind::Usage { reason }).reading(name));
    }
    let convert = &options.convert;
    let (schema, rows, kind) = if npz {
        let archive = RemoteNpz::from_store(at.store.clone(), &at.path).await?;
        let names: Option<Vec<&str>> = options.members.as_ref().map(|m| m.iter().map(String::as_str).collect());
        let (schema, rows) = archive.table_schema_with(names.as_deref(), convert).await?;
        (schema, rows, FileKind::Npz { npz: archive })
    } else {
        let object = crate::fetch_header(at.store.as_ref(), &at.path).await?;
        if object.header.dtype.has_object() {
            objects(&at, convert).await?
        } else {
            let layout = Layout::new_with(&object.header, None, convert)?;
            let (schema, rows) = (layout.schema(), layout.rows());
            let (data_offset, e_tag, layout) = (object.data_offset, object.e_tag, Arc::new(layout));
            (schema, rows, FileKind::Npy { data_offset, layout, e_tag })
        }
    };
    Ok((TableFile { name: name.to_string(), at, stamp, rows, kind }, schema))
}

/// An object array's file: read whole and decoded by npy-arrow's
/// [`object_batches_with`](npy_arrow::object_batches_with) (text as Utf8, a ragged array
/// as a List column; other object arrays refused, naming the element).
async fn objects(at: &StoreLocation, convert: &npy_arrow::ConvertOptions) -> Result<(SchemaRef, usize, FileKind)> {
    use object_store::ObjectStoreExt;
    let got = at.store.get(&at.path).await.map_err(std::io::Error::other)?;
    let bytes = got.bytes().await.map_err(std::io::Error::other)?;
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
    Ok((schema, column.len(), FileKind::Objects { column }))
}

/// `e` naming file `name` (as the user named it; the store names it by its path there).
pub(super) fn named(e: Error, name: &str) -> Error {
    e.renamed(name).reading(name)
}

/// The local file of a location in a local store.
fn local_path(at: &StoreLocation) -> PathBuf {
    PathBuf::from(format!("/{}", at.path.as_ref()))
}

pub(super) fn same_columns(a: &Schema, b: &Schema) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields().iter().zip(b.fields()).all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type())
}

pub(super) fn describe(schema: &Schema) -> String {
    let fields: Vec<String> = schema.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect();
    fields.join(", ")
}
