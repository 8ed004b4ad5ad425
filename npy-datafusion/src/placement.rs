//! Moving `samples[k]` to the scan: [`PartsToScan`], the analyzer rule that lets
//! DataFusion's optimizer place constant-index `array_element` and constant `array_slice`
//! of columns right above the scan, as it places struct field access (`get_field`), so
//! that the scan receives them in its projection and decodes them directly
//! ([`crate::parts`]).
//!
//! DataFusion 55 moves an expression toward the scan when its function says
//! [`ExpressionPlacement::MoveTowardsLeafNodes`]; `get_field` says so, `array_element` and
//! `array_slice` do not. The rule wraps each such call whose array is a column (or a part
//! of one, through a cast to `List`) and whose indices are literals in [`ToScan`], which is
//! the same function in every other respect (its name, types, results and display), so
//! plans serialize and execute as before.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{ExprSchema, Result, ScalarValue};
use datafusion::functions_nested::extract::{array_element_udf, array_slice_udf};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::interval_arithmetic::Interval;
use datafusion::logical_expr::preimage::PreimageResult;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::sort_properties::{ExprProperties, SortProperties};
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ExpressionPlacement, LogicalPlan, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, StructFieldMapping,
};
use datafusion::optimizer::AnalyzerRule;

/// The rule's name, which registration checks so as to add it once.
pub(crate) const NAME: &str = "npy_parts_to_scan";

/// The analyzer rule that marks constant-index `array_element` and constant `array_slice`
/// calls on columns (`samples[10]`, `r['pos'][2]`, `samples[2:5]`) as placed toward the
/// scan: the optimizer then computes them in a projection right above it, which npy's
/// scan takes and decodes as parts of columns (`EXPLAIN` shows them in its `projection`).
/// [`crate::register`] and [`crate::SessionContextNpyExt`] add it to a session.
#[derive(Debug, Default)]
pub struct PartsToScan;

impl AnalyzerRule for PartsToScan {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let marked = plan.transform_up_with_subqueries(|plan| plan.map_expressions(|e| e.transform_up(mark)))?;
        Ok(marked.data)
    }

    fn name(&self) -> &str {
        NAME
    }
}

/// `e` wrapped in [`ToScan`] when it is an `array_element` or `array_slice` of a column's
/// part with literal indices.
fn mark(e: Expr) -> Result<Transformed<Expr>> {
    let Expr::ScalarFunction(call) = &e else { return Ok(Transformed::no(e)) };
    let is_part_access = (*call.func == *array_element_udf() || *call.func == *array_slice_udf())
        && call.args.first().is_some_and(is_column_part)
        && call.args[1..].iter().all(|a| matches!(a, Expr::Literal(ScalarValue::Int64(Some(_)), _)));
    if !is_part_access {
        return Ok(Transformed::no(e));
    }
    let func = Arc::new(ScalarUDF::new_from_impl(ToScan { inner: Arc::clone(&call.func) }));
    Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction::new_udf(func, call.args.clone()))))
}

/// Whether `e` is a column, a part of one that moves to the scan, or such a thing cast to a
/// list (how DataFusion hands a `FixedSizeList` to the array functions).
fn is_column_part(e: &Expr) -> bool {
    match e {
        Expr::Column(_) => true,
        Expr::Cast(c) => {
            matches!(c.field.data_type(), DataType::List(_) | DataType::LargeList(_)) && is_column_part(&c.expr)
        }
        Expr::ScalarFunction(_) => e.placement() == ExpressionPlacement::MoveTowardsLeafNodes,
        _ => false,
    }
}

/// The function of `udf`, unwrapped from [`ToScan`].
pub(crate) fn unwrapped(udf: &ScalarUDF) -> &ScalarUDF {
    match udf.inner().downcast_ref::<ToScan>() {
        Some(to_scan) => &to_scan.inner,
        None => udf,
    }
}

/// `array_element` or `array_slice`, placed toward the scan; otherwise the function it
/// wraps, which it delegates every method to.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct ToScan {
    inner: Arc<ScalarUDF>,
}

#[warn(clippy::missing_trait_methods)] // Delegates: every method but `placement`.
impl ScalarUDFImpl for ToScan {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn display_name(&self, args: &[Expr]) -> Result<String> {
        #[expect(deprecated)]
        self.inner.inner().display_name(args)
    }

    fn schema_name(&self, args: &[Expr]) -> Result<String> {
        self.inner.inner().schema_name(args)
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.inner().return_type(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs<'_>) -> Result<FieldRef> {
        self.inner.inner().return_field_from_args(args)
    }

    fn is_nullable(&self, args: &[Expr], schema: &dyn ExprSchema) -> bool {
        #[expect(deprecated)]
        self.inner.inner().is_nullable(args, schema)
    }

    fn is_strict(&self) -> bool {
        self.inner.inner().is_strict()
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        self.inner.inner().invoke_with_args(args)
    }

    fn with_updated_config(&self, _config: &ConfigOptions) -> Option<ScalarUDF> {
        None
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn simplify(&self, args: Vec<Expr>, info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        self.inner.inner().simplify(args, info)
    }

    fn preimage(&self, args: &[Expr], lit_expr: &Expr, info: &SimplifyContext) -> Result<PreimageResult> {
        self.inner.inner().preimage(args, lit_expr, info)
    }

    fn conditional_arguments<'a>(&self, args: &'a [Expr]) -> Option<(Vec<&'a Expr>, Vec<&'a Expr>)> {
        self.inner.inner().conditional_arguments(args)
    }

    fn short_circuits(&self) -> bool {
        self.inner.inner().short_circuits()
    }

    fn evaluate_bounds(&self, input: &[&Interval]) -> Result<Interval> {
        self.inner.inner().evaluate_bounds(input)
    }

    fn propagate_constraints(&self, interval: &Interval, inputs: &[&Interval]) -> Result<Option<Vec<Interval>>> {
        self.inner.inner().propagate_constraints(interval, inputs)
    }

    fn struct_field_mapping(&self, literal_args: &[Option<ScalarValue>]) -> Option<StructFieldMapping> {
        self.inner.inner().struct_field_mapping(literal_args)
    }

    fn output_ordering(&self, inputs: &[ExprProperties]) -> Result<SortProperties> {
        self.inner.inner().output_ordering(inputs)
    }

    fn preserves_lex_ordering(&self, inputs: &[ExprProperties]) -> Result<bool> {
        self.inner.inner().preserves_lex_ordering(inputs)
    }

    fn strictly_order_preserving(&self, inputs: &[ExprProperties]) -> Result<bool> {
        self.inner.inner().strictly_order_preserving(inputs)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.inner().coerce_types(arg_types)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    /// Toward the scan: [`mark`] wraps only calls on a column's part with literal indices.
    fn placement(&self, _args: &[ExpressionPlacement]) -> ExpressionPlacement {
        ExpressionPlacement::MoveTowardsLeafNodes
    }
}
