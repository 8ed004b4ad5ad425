//! One file's layout from its header, and a table's schema from its files' schemas.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::error::Result;
use npy_arrow::Layout;
use npy_core::{ErrorKind, ReadOptions};
use object_store::path::Path;
use object_store::ObjectStore;

use crate::{npy_error, Kind, NpyReadOptions};

/// Schema metadata that differs from file to file: never part of a table's schema.
const PER_FILE: [&str; 1] = [npy_arrow::schema::SHAPE_KEY];

/// The layout of the file at `location` (one ranged read of its header).
pub(crate) async fn file_layout(
    kind: Kind,
    store: &dyn ObjectStore,
    location: &Path,
    options: &NpyReadOptions,
) -> Result<Layout> {
    match kind {
        Kind::Npy => {
            let object = npy_store::fetch_header(store, location, &ReadOptions::default()).await.map_err(npy_error)?;
            let convert = options.convert_options(1);
            let layout = Layout::with_options(&object.header, None, &convert);
            layout.map_err(|e| npy_error(e.reading(location.as_ref())))
        }
        Kind::Npz => {
            let reason = format!("'{location}': npz tables are not supported yet");
            Err(npy_error(ErrorKind::Usage { reason }.into()))
        }
    }
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
