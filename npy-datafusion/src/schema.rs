//! One file's layout from its header, and a table's schema from its files' schemas.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::error::Result;
use npy_arrow::Layout;
use npy_core::ErrorKind;
use object_store::path::Path;
use object_store::ObjectStore;

use crate::error::npy_error;
use crate::kind::Kind;
use crate::options::NpyReadOptions;

/// Schema metadata that differs from file to file: never part of a table's schema.
const PER_FILE: [&str; 1] = [npy_arrow::schema::SHAPE_KEY];
/// Field metadata of an archive's member that differs from archive to archive.
const PER_MEMBER: [&str; 2] = [npy_arrow::schema::SHAPE_KEY, npy_arrow::npz::COMPRESSION_KEY];

/// What a file's header (or an archive's members' headers) says: its table's schema (a
/// file's own, with per-file metadata still in it), its rows, and bytes of data per row.
pub(crate) struct FileShape {
    pub(crate) schema: SchemaRef,
    pub(crate) rows: usize,
    pub(crate) row_bytes: usize,
}

/// The shape of the file at `location`: a `.npy` file's from one ranged read of its
/// header; an archive's from its directory and its members' headers (members as columns,
/// as [`npy_arrow::NpzBatchReader`] reads them).
pub(crate) async fn file_shape(
    kind: Kind,
    store: &Arc<dyn ObjectStore>,
    location: &Path,
    options: &NpyReadOptions,
) -> Result<FileShape> {
    let convert = options.convert_options(1);
    match kind {
        Kind::Npy => {
            let object = npy_store::fetch_header(store, location).await.map_err(npy_error)?;
            let layout = Layout::new_with(&object.header, None, &convert);
            let layout = layout.map_err(|e| npy_error(e.reading(location.as_ref())))?;
            Ok(FileShape { schema: layout.schema(), rows: layout.rows(), row_bytes: layout.row_bytes() })
        }
        Kind::Npz => {
            let npz = npy_store::RemoteNpz::from_store(Arc::clone(store), location).await.map_err(npy_error)?;
            let (schema, rows) = npz.table_schema_with(None, &convert).await.map_err(npy_error)?;
            // Bytes per row: the members' sizes (headers and all) over the rows; inexact.
            let bytes: u64 = npz.members().iter().map(|m| m.size).sum();
            let row_bytes = usize::try_from(bytes).unwrap_or(usize::MAX).checked_div(rows).unwrap_or(0);
            Ok(FileShape { schema: member_schema(&schema), rows, row_bytes })
        }
    }
}

/// An archive's table schema without what differs from archive to archive: each member's
/// shape (its rows) and how it was stored.
pub(crate) fn member_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<Field> = (schema.fields().iter())
        .map(|f| {
            let mut meta = f.metadata().clone();
            for key in PER_MEMBER {
                meta.remove(key);
            }
            f.as_ref().clone().with_metadata(meta)
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The schema of a table of files with these `(name, schema)`s: their fields, which must
/// be the same in every file, and the metadata all of them share except [`PER_FILE`] keys.
/// `None` for no files.
///
/// # Errors
/// [`ErrorKind::Usage`] naming the first file and the first that differs from it, and how.
pub(crate) fn table_schema_of(schemas: &[(String, SchemaRef)]) -> npy_core::Result<Option<SchemaRef>> {
    let Some((first_name, first)) = schemas.first() else { return Ok(None) };
    let mut metadata: HashMap<String, String> = first.metadata().clone();
    for key in PER_FILE {
        metadata.remove(key);
    }
    for (name, schema) in &schemas[1..] {
        if let Some(how) = difference(first, schema) {
            let reason = format!("table files disagree: '{name}' {how} where '{first_name}' has {}", describe(first));
            return Err(ErrorKind::Usage { reason }.into());
        }
        metadata.retain(|k, v| schema.metadata().get(k) == Some(v));
    }
    Ok(Some(Arc::new(Schema::new_with_metadata(first.fields().clone(), metadata))))
}

/// How `other`'s fields differ from `first`'s, if they do.
pub(crate) fn difference(first: &Schema, other: &Schema) -> Option<String> {
    if first.fields().len() != other.fields().len() {
        return Some(format!("has {}", describe(other)));
    }
    let (a, b) = first.fields().iter().zip(other.fields()).find(|(a, b)| a != b)?;
    Some(if a.name() != b.name() {
        format!("has field '{}' where '{}' is expected; it has {}", b.name(), a.name(), describe(other))
    } else {
        format!("has field {}", field(b))
    })
}

fn describe(schema: &Schema) -> String {
    let fields: Vec<String> = schema.fields().iter().map(|f| field(f)).collect();
    format!("fields [{}]", fields.join(", "))
}

fn field(f: &Field) -> String {
    let mut out = format!("'{}' {}", f.name(), f.data_type());
    let mut meta: Vec<_> = f.metadata().iter().collect();
    meta.sort();
    if !meta.is_empty() {
        out.push_str(&format!(" {meta:?}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::DataType;

    fn schema(fields: &[(&str, DataType)], shape: &str) -> SchemaRef {
        let fields: Vec<Field> = fields.iter().map(|(n, t)| Field::new(*n, t.clone(), true)).collect();
        let meta = HashMap::from([
            ("numpy.shape".to_string(), shape.to_string()),
            ("numpy.descr".to_string(), "d".to_string()),
        ]);
        Arc::new(Schema::new_with_metadata(fields, meta))
    }

    #[test]
    fn shared_metadata_kept_shape_dropped() {
        let a = schema(&[("x", DataType::Float32)], "[3]");
        let b = schema(&[("x", DataType::Float32)], "[5]");
        let got = table_schema_of(&[("a".into(), a), ("b".into(), b)]).unwrap().unwrap();
        assert_eq!(got.metadata(), &HashMap::from([("numpy.descr".to_string(), "d".to_string())]));
        assert_eq!(got.field(0).data_type(), &DataType::Float32);
        assert!(table_schema_of(&[]).unwrap().is_none());
    }

    #[test]
    fn mismatch_names_both_files() {
        let a = schema(&[("x", DataType::Float32)], "[3]");
        let b = schema(&[("x", DataType::Float64)], "[3]");
        let err = table_schema_of(&[("d/a.npy".into(), a.clone()), ("d/b.npy".into(), b)]).unwrap_err().to_string();
        assert_eq!(
            err,
            "table files disagree: 'd/b.npy' has field 'x' Float64 where 'd/a.npy' has fields ['x' Float32]"
        );
        let c = schema(&[("x", DataType::Float32), ("y", DataType::Int8)], "[3]");
        let err = table_schema_of(&[("a".into(), a), ("c".into(), c)]).unwrap_err().to_string();
        assert_eq!(
            err,
            "table files disagree: 'c' has fields ['x' Float32, 'y' Int8] where 'a' has fields ['x' Float32]"
        );
    }
}
