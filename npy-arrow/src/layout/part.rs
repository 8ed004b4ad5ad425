//! Parts of columns decoded as columns of their own ([`Layout::select`]): a record's field,
//! a subarray's item or a run of its items, an N-d array's row's items. A query of
//! `samples[10]` then reads four bytes of each row, not the whole subarray.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema};
use npy_core::{ErrorKind, Result};

use super::node::{Node, Residue};
use super::Layout;

/// One step from a column into its values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// A record's field, by name.
    Field(String),
    /// Item `k` (from 0) of a fixed-size list: a subarray's item along its first dim, a
    /// complex number's part (0 real, 1 imaginary), or an N-d array's row's item (its
    /// index in the row's items in C order, as the row's `FixedSizeList` holds them).
    Item(usize),
    /// Items `start..start + len` of a fixed-size list, as a list of `len` (at least 1).
    Items {
        /// The first item's index, from 0.
        start: usize,
        /// How many items.
        len: usize,
    },
}

/// A column of [`Layout::select`]: field `column` of the layout's schema, whole (no steps),
/// or the part of it that `steps` lead to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Part {
    /// The index of the field in the layout's schema.
    pub column: usize,
    /// The steps into it, from the column down.
    pub steps: Vec<Step>,
}

impl Part {
    /// Field `column`, whole.
    pub fn whole(column: usize) -> Part {
        Part { column, steps: Vec::new() }
    }

    /// The part of field `column` that `steps` lead to.
    pub fn new(column: usize, steps: Vec<Step>) -> Part {
        Part { column, steps }
    }

    /// How a schema names the part of a column named `column`: `receiver.x`,
    /// `samples[9]`, `samples[2:5]` (NumPy's indices, from 0, as `npy dump` names columns).
    pub fn name(&self, column: &str) -> String {
        let mut name = column.to_string();
        for step in &self.steps {
            // Writing to a String cannot fail.
            let _ = match step {
                Step::Field(f) => write!(name, ".{f}"),
                Step::Item(k) => write!(name, "[{k}]"),
                Step::Items { start, len } => write!(name, "[{start}:{}]", start + len),
            };
        }
        name
    }
}

impl Layout {
    /// This layout decoding `parts` as its columns, in that order: whole fields, as
    /// [`Layout::project`] keeps them, and parts of fields, each decoded from its own bytes
    /// (a subarray's item reads one value a row) into a field named by [`Part::name`]. The
    /// [`RESIDUE`](super::RESIDUE) column, when kept, is read whole, wherever it is put.
    /// The schema keeps the metadata.
    ///
    /// # Errors
    /// [`ErrorKind::WrongShape`] for an index past the last field, a part given twice, a
    /// step the field's type has not (a field a record has not, an item past a list's end,
    /// an empty run of items), or a step into the residue column.
    ///
    /// # Examples
    /// ```
    /// use arrow_array::{cast::AsArray, types::Float32Type};
    /// use npy_arrow::{Part, Step};
    /// use npy_core::header::Header;
    ///
    /// let header = Header::new("[('t0', '<f8'), ('samples', '<f4', (4,))]".parse()?, vec![2]);
    /// let layout = npy_arrow::Layout::new(&header, None)?;
    /// // Two rows: t0 0.0, then samples 0..4 and 4..8.
    /// let data: Vec<u8> = (0..2)
    ///     .flat_map(|r| [0u8; 8].into_iter().chain((0..4).flat_map(move |i| ((r * 4 + i) as f32).to_le_bytes())))
    ///     .collect();
    /// // samples[2] of each row: one f32 a row.
    /// let part = layout.select(&[Part::new(1, vec![Step::Item(2)])])?;
    /// let batch = part.decode(&data, 0, 2)?;
    /// assert_eq!(batch.schema().field(0).name(), "samples[2]");
    /// assert_eq!(batch.column(0).as_primitive::<Float32Type>().values().as_ref(), [2.0, 6.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn select(&self, parts: &[Part]) -> Result<Layout> {
        let all = self.schema.fields().len();
        let residue_at = self.residue.as_ref().map(|r| r.at);
        let mut seen = HashSet::new();
        let mut columns = Vec::with_capacity(parts.len());
        let mut fields = Vec::with_capacity(parts.len());
        let mut residue = None;
        for (k, part) in parts.iter().enumerate() {
            let wrong = |why: String| ErrorKind::WrongShape { reason: format!("part {k} of a selection: {why}") };
            if part.column >= all {
                return Err(wrong(format!("field {} of a schema of {all} fields", part.column)).into());
            }
            if !seen.insert(part) {
                return Err(wrong(format!("{} given twice", part.name(self.schema.field(part.column).name()))).into());
            }
            let field = self.schema.field(part.column);
            if Some(part.column) == residue_at {
                if !part.steps.is_empty() {
                    return Err(wrong(format!("the column {} is read whole", field.name())).into());
                }
                residue = self.residue.clone().map(|r| Residue { at: k, ..r });
                fields.push(field.clone());
                continue;
            }
            // The columns' trees skip the residue column.
            let at = part.column - usize::from(residue_at.is_some_and(|r| part.column > r));
            let (mut offset, mut node) = self.columns[at].clone();
            let mut stepped = field.clone();
            for (i, step) in part.steps.iter().enumerate() {
                let Some((o, n, f)) = take(node, step, self.tensor && i == 0) else {
                    let reached = Part::new(part.column, part.steps[..i].to_vec()).name(field.name());
                    let why = format!("{reached} has no {}", Part::new(0, vec![step.clone()]).name(""));
                    return Err(wrong(why).into());
                };
                (offset, node, stepped) = (offset + o, n, f);
            }
            if !part.steps.is_empty() {
                stepped = Field::new(part.name(field.name()), node.data_type(), true)
                    .with_metadata(stepped.metadata().clone());
            }
            columns.push((offset, node));
            fields.push(stepped);
        }
        let schema = Arc::new(Schema::new_with_metadata(fields, self.schema.metadata().clone()));
        Ok(Layout { columns, residue, schema, ..self.clone() })
    }
}

/// One step into `node`: the offset it adds, the node it reaches and that node's field
/// (before naming). `rows` when `node` is an N-d array's column, whose first step picks
/// items of each row. `None` when `node` has no such step.
fn take(node: Node, step: &Step, rows: bool) -> Option<(usize, Node, Field)> {
    match (node, step) {
        (Node::List { len, item, field, .. }, &Step::Item(k)) if rows && k < len => {
            Some((0, Node::Pick { of: len, start: k, len: 1, item, field: None }, field.as_ref().clone()))
        }
        (Node::List { len, item, field, .. }, &Step::Items { start, len: n }) if rows && valid(start, n, len) => {
            let list = Field::new("", DataType::FixedSizeList(field.clone(), n as i32), true);
            Some((0, Node::Pick { of: len, start, len: n, item, field: Some(field) }, list))
        }
        (Node::Struct(children, fields), Step::Field(name)) => {
            let i = fields.iter().position(|f| f.name() == name)?;
            let (offset, child) = children.into_iter().nth(i)?;
            Some((offset, child, fields[i].as_ref().clone()))
        }
        (Node::List { len, stride, item, field }, &Step::Item(k)) if !rows && k < len => {
            Some((k * stride, *item, field.as_ref().clone()))
        }
        (Node::List { len, stride, item, field }, &Step::Items { start, len: n }) if !rows && valid(start, n, len) => {
            let list = Field::new("", DataType::FixedSizeList(field.clone(), n as i32), true);
            Some((start * stride, Node::List { len: n, stride, item, field }, list))
        }
        // A step into one item of each row: into the item, the same item of each row.
        (Node::Pick { of, start, len: 1, item, field: None }, step) => {
            let (offset, item, field) = take(*item, step, false)?;
            Some((offset, Node::Pick { of, start, len: 1, item: Box::new(item), field: None }, field))
        }
        _ => None,
    }
}

/// Whether `start..start + n` is a run of at least one of `len` items.
fn valid(start: usize, n: usize, len: usize) -> bool {
    n >= 1 && start.checked_add(n).is_some_and(|end| end <= len)
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int16Type, Int32Type};
    use npy_core::header::Header;

    use super::*;

    fn layout(descr: &str, shape: Vec<usize>, fortran: bool) -> Layout {
        let mut header = Header::new(descr.parse().unwrap(), shape);
        header.fortran_order = fortran;
        Layout::new(&header, None).unwrap()
    }

    /// The bytes of `values` as little-endian `T`s.
    fn le_i16(values: impl IntoIterator<Item = i16>) -> Vec<u8> {
        values.into_iter().flat_map(i16::to_le_bytes).collect()
    }

    #[test]
    fn items_fields_and_runs_of_records() {
        // Records of a 2-byte id, a nested record (a: i2, b: (2, 3) i2 subarray): 16 bytes.
        let l = layout("[('id', '<i2'), ('r', [('a', '<i2'), ('b', '<i2', (2, 3))])]", vec![3], false);
        let data = le_i16((0..24).map(|v| v as i16));
        let parts = [
            Part::new(1, vec![Step::Field("b".into()), Step::Item(1), Step::Item(2)]),
            Part::whole(0),
            Part::new(1, vec![Step::Field("a".into())]),
            Part::new(1, vec![Step::Field("b".into()), Step::Items { start: 0, len: 1 }]),
        ];
        let batch = l.select(&parts).unwrap().decode(&data, 0, 3).unwrap();
        let names: Vec<_> = batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["r.b[1][2]", "id", "r.a", "r.b[0:1]"]);
        // Row i holds 8i..8i+8; b[1][2] is the row's 8th value, a its 2nd.
        assert_eq!(batch.column(0).as_primitive::<Int16Type>().values().as_ref(), [7, 15, 23]);
        assert_eq!(batch.column(1).as_primitive::<Int16Type>().values().as_ref(), [0, 8, 16]);
        assert_eq!(batch.column(2).as_primitive::<Int16Type>().values().as_ref(), [1, 9, 17]);
        let run = batch.column(3).as_fixed_size_list();
        assert_eq!(run.value_length(), 1);
        assert_eq!(
            run.value(2).as_fixed_size_list().values().as_primitive::<Int16Type>().values().as_ref(),
            [18, 19, 20]
        );
    }

    #[test]
    fn items_of_n_d_rows_in_c_and_fortran_order() {
        // A (3, 2, 2) array of i4: row r's items in C order are r*4..r*4+4 (C order data).
        let values: Vec<i32> = (0..12).collect();
        let c: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        // The same array in Fortran order: element (r, i, j) at r + 3 i + 6 j.
        let mut f = vec![0u8; 48];
        for r in 0..3 {
            for i in 0..2 {
                for j in 0..2 {
                    let at = (r + 3 * i + 6 * j) * 4;
                    f[at..at + 4].copy_from_slice(&((r * 4 + i * 2 + j) as i32).to_le_bytes());
                }
            }
        }
        for (fortran, data) in [(false, &c), (true, &f)] {
            let l = layout("<i4", vec![3, 2, 2], fortran);
            let parts = [Part::new(0, vec![Step::Item(3)]), Part::new(0, vec![Step::Items { start: 1, len: 2 }])];
            let picked = l.select(&parts).unwrap();
            let batch = picked.decode(data, 0, 3).unwrap();
            assert_eq!(batch.column(0).as_primitive::<Int32Type>().values().as_ref(), [3, 7, 11], "{fortran}");
            let run = batch.column(1).as_fixed_size_list();
            assert_eq!(run.values().as_primitive::<Int32Type>().values().as_ref(), [1, 2, 5, 6, 9, 10], "{fortran}");
            // The rows a filter kept, too.
            let kept = picked.decode_at(data, 0, &[2, 0]).unwrap();
            assert_eq!(kept.column(0).as_primitive::<Int32Type>().values().as_ref(), [11, 3], "{fortran}");
        }
    }

    #[test]
    fn complex_parts_and_items_of_complex_rows() {
        // (2, 2) complex128: the imaginary part of item 1 of each row.
        let l = layout("<c16", vec![2, 2], false);
        let data: Vec<u8> = (0..8).flat_map(|v| f64::from(v).to_le_bytes()).collect();
        let batch = l.select(&[Part::new(0, vec![Step::Item(1), Step::Item(1)])]).unwrap().decode(&data, 0, 2).unwrap();
        assert_eq!(batch.column(0).as_primitive::<Float64Type>().values().as_ref(), [3.0, 7.0]);
    }

    #[test]
    fn steps_a_column_has_not_are_refused() {
        let l = layout("[('id', '<i2'), ('s', '<f4', (4,))]", vec![2], false);
        for (part, why) in [
            (Part::new(1, vec![Step::Item(4)]), "s has no [4]"),
            (Part::new(1, vec![Step::Items { start: 2, len: 3 }]), "s has no [2:5]"),
            (Part::new(1, vec![Step::Items { start: 0, len: 0 }]), "s has no [0:0]"),
            (Part::new(0, vec![Step::Item(0)]), "id has no [0]"),
            (Part::new(1, vec![Step::Field("x".into())]), "s has no .x"),
            (Part::new(2, vec![]), "field 2 of a schema of 2 fields"),
        ] {
            let e = l.select(&[part]).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        let twice = l.select(&[Part::new(1, vec![Step::Item(0)]), Part::new(1, vec![Step::Item(0)])]);
        assert!(twice.unwrap_err().to_string().contains("s[0] given twice"));
    }
}
