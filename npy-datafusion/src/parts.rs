//! Parts of columns that a scan decodes as columns of their own: [`ScanParts`].
//!
//! A scan's projection and filter may hold `get_field` of a struct column and
//! constant-index `array_element` or constant `array_slice` of a fixed-size list column
//! (`r['x']`, `samples[10]`, `samples[2:5]`: [`crate::placement`] moves the last two
//! there). Each such expression over a file column is a part of it
//! ([`npy_arrow::Part`]), which the scan decodes from its own bytes (four bytes a row for
//! `samples[10]` of `<f4`) instead of decoding the whole column and leaving DataFusion to
//! pick the part out. The projection and the filter are rewritten in terms of the decoded
//! columns: the file's columns, then the parts.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode, TreeNodeRecursion};
use datafusion::common::ScalarValue;
use datafusion::datasource::projection::SplitProjection;
use datafusion::error::{DataFusionError, Result};
use datafusion::functions::core::getfield::GetFieldFunc;
use datafusion::functions_nested::extract::{array_element_udf, array_slice_udf};
use datafusion::physical_expr::expressions::{CastExpr, Column, Literal, TryCastExpr};
use datafusion::physical_expr::projection::{ProjectionExpr, ProjectionExprs};
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use npy_arrow::{Part, Step};

use crate::placement::unwrapped;

/// What a scan decodes: the file's columns and the parts of them its expressions use, and
/// its projection and filter in terms of those.
#[derive(Debug, Clone)]
pub(crate) struct ScanParts {
    /// The columns a file's batches can be projected from: the table's file columns, then
    /// the parts, each with the type its expression gives.
    pub(crate) schema: SchemaRef,
    /// The layout part of each field of `schema`.
    pub(crate) parts: Vec<Part>,
    /// The scan's projection over `schema` (then the partition columns).
    pub(crate) projection: SplitProjection,
    /// The scan's filter over `schema`.
    pub(crate) predicate: Option<Arc<dyn PhysicalExpr>>,
}

impl ScanParts {
    /// The parts that `projection` (over the table schema: `files`, then partition columns)
    /// and `predicate` (over `files`) use, of the columns that `in_parts` lets the scan
    /// read in parts (the others are decoded whole).
    pub(crate) fn new(
        files: &SchemaRef,
        projection: &ProjectionExprs,
        predicate: Option<&Arc<dyn PhysicalExpr>>,
        in_parts: impl Fn(&Field) -> bool,
    ) -> Result<ScanParts> {
        let n = files.fields().len();
        let mut parts: Vec<Part> = (0..n).map(Part::whole).collect();
        let mut fields: Vec<Field> = files.fields().iter().map(|f| f.as_ref().clone()).collect();
        let mut index: HashMap<Part, usize> = HashMap::new();
        // The names the layouts give the columns decoded (npy-store's filtered scans match
        // a filter's columns to the output's by name): a part whose name is taken, as
        // `a.b` of a field `a` beside a field named `a.b`, is left to DataFusion.
        let mut names: HashSet<String> = files.fields().iter().map(|f| f.name().clone()).collect();
        for expr in projection.iter().map(|p| &p.expr).chain(predicate) {
            expr.apply(|e| {
                let read_alone = |p: &Part| !p.steps.is_empty() && in_parts(files.field(p.column));
                let Some(part) = part_of(e, files).filter(read_alone) else {
                    return Ok(TreeNodeRecursion::Continue);
                };
                if !index.contains_key(&part) {
                    if !names.insert(part.name(files.field(part.column).name())) {
                        return Ok(TreeNodeRecursion::Continue);
                    }
                    let name = sql_name(&part, files.field(part.column).name());
                    fields.push(Field::new(name, e.data_type(files)?, true));
                    index.insert(part.clone(), parts.len());
                    parts.push(part);
                }
                Ok(TreeNodeRecursion::Jump)
            })?;
        }
        let added = parts.len() - n;
        let schema = Arc::new(Schema::new(fields));
        let rewrite = |expr: &Arc<dyn PhysicalExpr>| -> Result<Arc<dyn PhysicalExpr>> {
            Arc::clone(expr)
                .transform_down(|e| {
                    if let Some(&at) = part_of(&e, files).and_then(|p| index.get(&p)) {
                        let column = Arc::new(Column::new(schema.field(at).name(), at)) as Arc<dyn PhysicalExpr>;
                        return Ok(Transformed::new(column, true, TreeNodeRecursion::Jump));
                    }
                    match e.downcast_ref::<Column>() {
                        // A partition column: after the parts.
                        Some(c) if c.index() >= n && added > 0 => {
                            Ok(Transformed::yes(Arc::new(Column::new(c.name(), c.index() + added)) as _))
                        }
                        _ => Ok(Transformed::no(e)),
                    }
                })
                .data()
        };
        let rewritten: Vec<ProjectionExpr> = (projection.iter())
            .map(|p| Ok(ProjectionExpr::new(rewrite(&p.expr)?, p.alias.clone())))
            .collect::<Result<_>>()?;
        let projection = SplitProjection::new(&schema, &ProjectionExprs::new(rewritten));
        let predicate = predicate.map(rewrite).transpose()?;
        Ok(ScanParts { schema, parts, projection, predicate })
    }

    /// The parts of the columns the projection reads, in order.
    pub(crate) fn projected(&self) -> Vec<Part> {
        self.projection.file_indices.iter().map(|&i| self.parts[i].clone()).collect()
    }

    /// The parts that are not whole columns, named as in `EXPLAIN` (`samples[2]`: SQL's
    /// indices, from 1).
    pub(crate) fn names(&self) -> Vec<&str> {
        let whole = self.parts.iter().take_while(|p| p.steps.is_empty()).count();
        self.schema.fields()[whole..].iter().map(|f| f.name().as_str()).collect()
    }
}

/// The part of a file column that `e` is: the column itself, a field of a struct part
/// (`get_field` with literal names), an item of a fixed-size list part (`array_element`
/// with a literal index in the list) or a run of its items (`array_slice` with literal
/// bounds in the list, step 1). `None` for anything else, out-of-range indices among them
/// (DataFusion's null).
fn part_of(e: &Arc<dyn PhysicalExpr>, files: &Schema) -> Option<Part> {
    if let Some(c) = e.downcast_ref::<Column>() {
        let field = files.fields().get(c.index())?;
        return (field.name() == c.name()).then(|| Part::whole(c.index()));
    }
    let call = e.downcast_ref::<ScalarFunctionExpr>()?;
    let func = unwrapped(call.fun());
    let (base, rest) = call.args().split_first()?;
    if func.inner().is::<GetFieldFunc>() {
        let mut part = part_of(base, files)?;
        let mut ty = data_type(&part, files)?;
        for name in rest {
            let name = match literal(name)? {
                ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => s,
                _ => return None,
            };
            let DataType::Struct(fields) = ty else { return None };
            ty = fields.iter().find(|f| f.name() == name)?.data_type().clone();
            part.steps.push(Step::Field(name.clone()));
        }
        return Some(part);
    }
    let element = *func == *array_element_udf();
    if !element && *func != *array_slice_udf() {
        return None;
    }
    // The array functions take lists: DataFusion casts a fixed-size list to one.
    let base = match (base.downcast_ref::<CastExpr>(), base.downcast_ref::<TryCastExpr>()) {
        (Some(c), _) if is_list(c.cast_type()) => c.expr(),
        (_, Some(c)) if is_list(c.cast_type()) => c.expr(),
        _ => base,
    };
    let mut part = part_of(base, files)?;
    let DataType::FixedSizeList(_, len) = data_type(&part, files)? else { return None };
    let len = i64::from(len);
    let int = |e: &Arc<dyn PhysicalExpr>| match literal(e)? {
        ScalarValue::Int64(Some(v)) => Some(*v),
        _ => None,
    };
    let step = match rest {
        [k] if element => {
            // From 1, or from the end when negative.
            let k = int(k)?;
            let at = if k < 0 { len + k } else { k - 1 };
            Step::Item(usize::try_from(at).ok().filter(|&at| (at as i64) < len)?)
        }
        [a, b] | [a, b, _] if !element => {
            if let [_, _, stride] = rest {
                (int(stride)? == 1).then_some(())?;
            }
            let (a, b) = (int(a)?, int(b)?);
            (1 <= a && a <= b && b <= len).then_some(())?;
            Step::Items { start: usize::try_from(a - 1).ok()?, len: usize::try_from(b - a + 1).ok()? }
        }
        _ => return None,
    };
    part.steps.push(step);
    Some(part)
}

/// The value of a literal.
fn literal(e: &Arc<dyn PhysicalExpr>) -> Option<&ScalarValue> {
    e.downcast_ref::<Literal>().map(Literal::value)
}

fn is_list(t: &DataType) -> bool {
    matches!(t, DataType::List(_) | DataType::LargeList(_))
}

/// The Arrow type of `part` of a column of `files`.
fn data_type(part: &Part, files: &Schema) -> Option<DataType> {
    let mut ty = files.fields().get(part.column)?.data_type().clone();
    for step in &part.steps {
        ty = match (ty, step) {
            (DataType::Struct(fields), Step::Field(name)) => {
                fields.iter().find(|f| f.name() == name)?.data_type().clone()
            }
            (DataType::FixedSizeList(item, _), Step::Item(_)) => item.data_type().clone(),
            (DataType::FixedSizeList(item, _), Step::Items { len, .. }) => {
                DataType::FixedSizeList(item, i32::try_from(*len).ok()?)
            }
            _ => return None,
        };
    }
    Some(ty)
}

/// How `EXPLAIN` names a part of column `column`, as SQL would write it: `r['x']`,
/// `samples[2]`, `samples[2:5]` (indices from 1, both ends in).
fn sql_name(part: &Part, column: &str) -> String {
    let mut name = column.to_string();
    for step in &part.steps {
        // Writing to a String cannot fail.
        let _ = match step {
            Step::Field(f) => write!(name, "['{f}']"),
            Step::Item(k) => write!(name, "[{}]", k + 1),
            Step::Items { start, len } => write!(name, "[{}:{}]", start + 1, start + len),
        };
    }
    name
}

/// `batch` with `schema`'s fields: each column cast to its field's type where the two
/// differ (a run of items is a `FixedSizeList` where the expression gives a `List`).
pub(crate) fn conform(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    conform_columns(batch.columns(), batch.num_rows(), schema)
}

/// [`conform`] of `rows` rows of `columns`.
pub(crate) fn conform_columns(columns: &[ArrayRef], rows: usize, schema: &SchemaRef) -> Result<RecordBatch> {
    let arrow = |e| DataFusionError::ArrowError(Box::new(e), None);
    let columns = (columns.iter().zip(schema.fields()))
        .map(|(c, f)| if c.data_type() == f.data_type() { Ok(Arc::clone(c)) } else { cast(c, f.data_type()) })
        .collect::<Result<Vec<_>, _>>()
        .map_err(arrow)?;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(Arc::clone(schema), columns, &options).map_err(arrow)
}
