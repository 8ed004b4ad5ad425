//! Parts of a table's columns named as [`Part::name`] writes them (`receiver.x`,
//! `samples[10]`, `samples[2:5]`), and the fields they decode to.

use arrow_schema::{DataType, Field, Schema};
use npy_arrow::{Part, Step};

/// The index of the column `name` starts with: the longest column name that is all of
/// `name` or is followed in it by `.` or `[`.
pub(super) fn column_of(schema: &Schema, name: &str) -> Option<usize> {
    (schema.fields().iter().enumerate())
        .filter(|(_, f)| starts(name, f.name()))
        .max_by_key(|(_, f)| f.name().len())
        .map(|(i, _)| i)
}

/// Whether `name` is `prefix`, or `prefix` followed by a step.
fn starts(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// The part of a column of `schema` that `name` names; the reason it names none.
pub(super) fn part(schema: &Schema, name: &str) -> Result<Part, String> {
    if let Ok(i) = schema.index_of(name) {
        return Ok(Part::whole(i));
    }
    let Some(column) = column_of(schema, name) else {
        let known: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        return Err(format!("no column {name:?} (its columns are {known:?})"));
    };
    let field = schema.field(column);
    let mut rest = &name[field.name().len()..];
    let mut ty = field.data_type().clone();
    let mut steps = Vec::new();
    while !rest.is_empty() {
        let reached = || Part::new(column, steps.clone()).name(field.name());
        if let Some(after) = rest.strip_prefix('.') {
            let DataType::Struct(fields) = &ty else {
                return Err(format!("{name:?}: {} is not a record, so it has no field {after:?}", reached()));
            };
            let Some(f) = fields.iter().filter(|f| starts(after, f.name())).max_by_key(|f| f.name().len()) else {
                let known: Vec<&str> = fields.iter().map(|f| f.name().as_str()).collect();
                return Err(format!("{name:?}: {} has no field {after:?} (its fields are {known:?})", reached()));
            };
            steps.push(Step::Field(f.name().clone()));
            (ty, rest) = (f.data_type().clone(), &after[f.name().len()..]);
        } else if let Some(after) = rest.strip_prefix('[') {
            let Some(close) = after.find(']') else {
                return Err(format!("{name:?}: a '[' without its ']'"));
            };
            let DataType::FixedSizeList(item, len) = &ty else {
                return Err(format!("{name:?}: {} has no items (it is {ty})", reached()));
            };
            let (item, len) = (item.clone(), usize::try_from(*len).unwrap_or(0));
            let step = index(&after[..close], len).map_err(|why| format!("{name:?}: {} {why}", reached()))?;
            ty = match &step {
                Step::Items { len, .. } => DataType::FixedSizeList(item, i32::try_from(*len).unwrap_or(i32::MAX)),
                _ => item.data_type().clone(),
            };
            steps.push(step);
            rest = &after[close + 1..];
        } else {
            return Err(format!("{name:?}: after {}, a step is .field or [index]", reached()));
        }
    }
    Ok(Part::new(column, steps))
}

/// The step `[inside]` of a list of `len` items: an index (from the end when negative), or
/// a slice of step 1 clamped as Python clamps.
fn index(inside: &str, len: usize) -> Result<Step, String> {
    let int = |s: &str| -> Result<Option<i64>, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        s.parse::<i64>().map(Some).map_err(|_| format!("has no item [{inside}]: {s:?} is not an integer"))
    };
    let n = i64::try_from(len).unwrap_or(i64::MAX);
    let Some((a, b)) = inside.split_once(':') else {
        let k = int(inside)?.ok_or_else(|| "has no item []".to_string())?;
        let at = if k < 0 { n + k } else { k };
        if !(0..n).contains(&at) {
            return Err(format!("has {len} items, so no item [{k}]"));
        }
        return Ok(Step::Item(at as usize));
    };
    let (b, stride) = match b.split_once(':') {
        Some((b, stride)) => (b, int(stride)?),
        None => (b, None),
    };
    if stride.is_some_and(|s| s != 1) {
        return Err(format!("has no run [{inside}]: runs of items have step 1"));
    }
    // Python's clamping of a slice of step 1.
    let clamp = |v: Option<i64>, default: i64| match v {
        None => default,
        Some(v) if v < 0 => (n + v).max(0),
        Some(v) => v.min(n),
    };
    let (start, stop) = (clamp(int(a)?, 0), clamp(int(b)?, n));
    if stop <= start {
        return Err(format!("has {len} items, so [{inside}] is an empty run"));
    }
    Ok(Step::Items { start: start as usize, len: (stop - start) as usize })
}

/// The field `part` of a column of `schema` decodes to: the column's own when whole, else
/// named by [`Part::name`], nullable, with the metadata of the field it reaches (as
/// [`npy_arrow::Layout::select`] makes it).
pub(super) fn field(schema: &Schema, part: &Part) -> Result<Field, String> {
    let Some(column) = schema.fields().get(part.column) else {
        return Err(format!("no column {} in a table of {} columns", part.column, schema.fields().len()));
    };
    if part.steps.is_empty() {
        return Ok(column.as_ref().clone());
    }
    let name = part.name(column.name());
    let mut at = column.as_ref().clone();
    for step in &part.steps {
        at = match (at.data_type(), step) {
            (DataType::Struct(fields), Step::Field(f)) => match fields.iter().find(|x| x.name() == f) {
                Some(x) => x.as_ref().clone(),
                None => return Err(format!("{name}: no field {f:?}")),
            },
            (DataType::FixedSizeList(item, len), Step::Item(k)) if (*k as i64) < i64::from(*len) => {
                item.as_ref().clone()
            }
            (DataType::FixedSizeList(item, len), Step::Items { start, len: n })
                if *n >= 1 && ((start + n) as i64) <= i64::from(*len) =>
            {
                let n = i32::try_from(*n).map_err(|_| format!("{name}: too many items"))?;
                Field::new("", DataType::FixedSizeList(item.clone(), n), true)
            }
            _ => return Err(format!("{name}: no such part of {}", column.name())),
        };
    }
    Ok(Field::new(name, at.data_type().clone(), true).with_metadata(at.metadata().clone()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn schema() -> Schema {
        let xy = DataType::Struct(
            vec![Field::new("x", DataType::Float64, false), Field::new("y", DataType::Float64, false)].into(),
        );
        let samples = DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, false)), 8);
        Schema::new(vec![
            Field::new("t0", DataType::Float64, false),
            Field::new("receiver", xy, false),
            Field::new("samples", samples, false),
            Field::new("a.b", DataType::Int8, false),
        ])
    }

    #[test]
    fn names_round_trip_through_parts() {
        let s = schema();
        for name in ["t0", "receiver", "receiver.x", "samples[0]", "samples[7]", "samples[2:5]", "a.b"] {
            let part = part(&s, name).unwrap();
            assert_eq!(part.name(s.field(part.column).name()), name);
            assert_eq!(field(&s, &part).unwrap().name(), name);
        }
        assert_eq!(part(&s, "samples[-1]").unwrap(), Part::new(2, vec![Step::Item(7)]));
        assert_eq!(part(&s, "samples[6:]").unwrap(), Part::new(2, vec![Step::Items { start: 6, len: 2 }]));
        assert_eq!(part(&s, "samples[-3:99]").unwrap(), Part::new(2, vec![Step::Items { start: 5, len: 3 }]));
        assert_eq!(part(&s, "samples[2:5:1]").unwrap(), Part::new(2, vec![Step::Items { start: 2, len: 3 }]));
        let run = field(&s, &part(&s, "samples[1:3]").unwrap()).unwrap();
        assert!(matches!(run.data_type(), DataType::FixedSizeList(_, 2)));
    }

    #[test]
    fn names_of_no_part_say_why() {
        let s = schema();
        for (name, why) in [
            ("nope", "no column \"nope\""),
            ("t0.x", "t0 is not a record"),
            ("receiver.z", "receiver has no field \"z\""),
            ("samples[8]", "has 8 items, so no item [8]"),
            ("samples[-9]", "no item [-9]"),
            ("samples[5:5]", "is an empty run"),
            ("samples[0:4:2]", "runs of items have step 1"),
            ("samples[x]", "\"x\" is not an integer"),
            ("samples[1", "without its ']'"),
            ("receiver[0]", "receiver has no items"),
            ("samples[0]x", "a step is .field or [index]"),
        ] {
            let got = part(&s, name).unwrap_err();
            assert!(got.contains(why), "{name}: {got}");
        }
    }
}
