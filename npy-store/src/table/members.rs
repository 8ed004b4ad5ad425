//! What a scan of an archive's table reads of each member ([`MemberReads`]).

use arrow_schema::{DataType, Field, Schema};
use npy_arrow::Part;

/// What a scan of an archive's table reads of each member, for
/// [`RemoteNpz::checked_part_batches_with`](crate::RemoteNpz::checked_part_batches_with):
/// a record member's table columns whole (its `Struct` column and residue column), any
/// other member's parts (its column whole or `samples[k]`, and its residue column), and
/// where each decoded column is in the batches read.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberReads {
    /// The members read, in the order of the decoded columns, each whole (`None`) or in
    /// parts of its layout (its residue column whole).
    pub members: Vec<(String, Option<Vec<Part>>)>,
    /// Of each decoded column, its index in the batches read.
    pub at: Vec<usize>,
}

impl MemberReads {
    /// The reads of `decoded`, parts of the archive table's columns `table`
    /// ([`RemoteNpz::table_schema`](crate::RemoteNpz::table_schema)'s).
    pub fn new(table: &Schema, decoded: &[Part]) -> MemberReads {
        let mut members: Vec<(String, Option<Vec<Part>>)> = Vec::new();
        // Of each decoded column: its member's index, and its part of the member's layout
        // (`None` for the residue of a record member: after its table column).
        let mut wants: Vec<(usize, Option<Part>, bool)> = Vec::with_capacity(decoded.len());
        for part in decoded {
            let field = table.field(part.column);
            let residue = is_residue(field);
            let member = match field.name().strip_prefix(npy_arrow::npz::RESIDUE_PREFIX) {
                Some(member) if residue => member,
                _ => field.name().as_str(),
            };
            let whole = is_record(table, member);
            let at = match members.iter().position(|(m, _)| m == member) {
                Some(at) => at,
                None => {
                    members.push((member.to_string(), (!whole).then(Vec::new)));
                    members.len() - 1
                }
            };
            // A member's layout has its column, then its residue column.
            let wanted = (!whole).then(|| if residue { Part::whole(1) } else { Part::new(0, part.steps.clone()) });
            if let (Some(parts), Some(w)) = (&mut members[at].1, &wanted) {
                if !parts.contains(w) {
                    parts.push(w.clone());
                }
            }
            wants.push((at, wanted, residue));
        }
        // The columns each member gives: its table columns, or its parts.
        let widths: Vec<usize> = (members.iter())
            .map(|(m, parts)| match parts {
                Some(parts) => parts.len(),
                None => 1 + usize::from(has_residue(table, m)),
            })
            .collect();
        let at = (wants.into_iter())
            .map(|(m, wanted, residue)| {
                let base: usize = widths[..m].iter().sum();
                match (&members[m].1, wanted) {
                    (Some(parts), Some(w)) => base + parts.iter().position(|p| *p == w).unwrap_or(0),
                    _ => base + usize::from(residue),
                }
            })
            .collect();
        MemberReads { members, at }
    }

    /// Whether a filter over `parts` of the table `table` can be judged in the archive's
    /// scan ([`Filter`](crate::filter::Filter)): none is of a record member or a residue.
    pub fn filterable(table: &Schema, parts: &[Part]) -> bool {
        parts.iter().all(|p| {
            let field = table.field(p.column);
            !is_residue(field) && !is_record(table, field.name())
        })
    }
}

/// Whether member `member` of the table `table` is a record (its column a `Struct`).
fn is_record(table: &Schema, member: &str) -> bool {
    table.field_with_name(member).is_ok_and(|f| matches!(f.data_type(), DataType::Struct(_)))
}

/// Whether the table `table` has member `member`'s residue column.
fn has_residue(table: &Schema, member: &str) -> bool {
    let name = format!("{}{member}", npy_arrow::npz::RESIDUE_PREFIX);
    table.field_with_name(&name).is_ok_and(is_residue)
}

/// Whether `field` is a member's residue column.
pub(crate) fn is_residue(field: &Field) -> bool {
    field.metadata().contains_key(npy_arrow::schema::RESIDUE_KEY)
}
