//! `numpy.dtype` in a pickle: `REDUCE` of `numpy.dtype(descr, align, copy)` and `BUILD`
//! with its state, interpreted into the one dtype model ([`DType`]) and never called.
//!
//! NumPy pickles every dtype as `numpy.dtype(str, False, True)` (`'f8'`, `'U5'`, `'M8'`,
//! `'V52'` for a record or a subarray), then sets its state:
//!
//! ```text
//! (3, endian, subdtype, names, fields, elsize, alignment, flags)
//! (4, endian, subdtype, names, fields, elsize, alignment, flags, metadata)
//! ```
//!
//! `subdtype` is `(base, shape)` for a subarray; `names` a tuple and `fields` a dict
//! `{name: (dtype, offset[, title])}` (titles are keys too) for a record; `metadata` a
//! datetime's `(None, (unit, multiple, 1, 1))`. `alignment` and `flags` say whether
//! NumPy built the record with `align=True`: the model has no such flag (nor does a
//! `.npy` header), so they are checked for type only. The dtypes a record's fields refer
//! to are built first (a pickle is a post-order walk), so a dtype is whole when its
//! `BUILD` comes; memoised parts are copied into each dtype that uses them, and that
//! copying is charged against the machine's budget, node by node, and nesting is bounded
//! as in a header's descr.

use std::collections::{HashMap, HashSet};

use super::{quote, Kind, Machine, PickleInput, Value};
use crate::dtype::{ByteOrder, DType, Field, Record, Scalar, ScalarType, MAX_DTYPE_DEPTH};
use crate::error::Result;
use crate::literal::Literal;

/// What one node of a copied dtype tree takes at most: its field, its name's buffer, and a
/// share of its record's buffer and of the allocator's rounding.
const DTYPE_NODE_COST: usize = 2 * std::mem::size_of::<Field>() + 32;

/// A `numpy.dtype` on the machine's stack or in its memo.
#[derive(Debug)]
pub(in crate::object::pickle) struct DtypeNode {
    /// The dtype so far: before its `BUILD`, the scalar its descr names (`V52` for a record).
    pub(in crate::object::pickle) dtype: DType,
    /// Whether its `BUILD` came.
    pub(in crate::object::pickle) built: bool,
    /// Nodes in the dtype's tree (fields, subarrays, scalars), charged when it is copied.
    weight: usize,
    /// Levels of records and subarrays in it.
    depth: usize,
}

impl DtypeNode {
    /// The dtype of `numpy.dtype(descr, align, copy)`, before its state.
    pub(in crate::object::pickle) fn reduced(scalar: Scalar) -> DtypeNode {
        DtypeNode { dtype: DType::Scalar(scalar), built: false, weight: 1, depth: 0 }
    }

    /// The scalar, if the dtype is one.
    pub(in crate::object::pickle) fn scalar(&self) -> Option<Scalar> {
        self.dtype.as_scalar().copied()
    }
}

/// The parts of a dtype's state.
struct State {
    endian: ByteOrder,
    subdtype: Value,
    names: Value,
    fields: Value,
    elsize: i64,
    metadata: Option<Value>,
}

impl<R: PickleInput> Machine<R> {
    /// `numpy.dtype(descr, align, copy)`: the scalar `descr` names (its byte order comes
    /// with the state).
    pub(super) fn reduce_dtype(&mut self, descr: &str, at: u64) -> Result<Value> {
        let scalar = Scalar::parse(descr)
            .map_err(|e| self.err(at, format!("numpy.dtype({}): {}", quote(descr), e.into_kind())))?;
        self.node(Kind::Dtype(Box::new(DtypeNode::reduced(scalar))), at)
    }

    /// `BUILD` of a dtype with its state: the dtype it describes, replacing the node's.
    pub(super) fn build_dtype(&mut self, index: u32, state: Value, at: u64) -> Result<()> {
        let Some(Kind::Dtype(node)) = self.kind(Value::Node(index)) else {
            return Err(self.err(at, "BUILD of a dtype on something else"));
        };
        let Some(reduced) = node.scalar() else { return Err(self.err(at, "BUILD applied twice to the same object")) };
        let state = self.dtype_state(state, at)?;
        let (dtype, weight, depth) = self.dtype_of(reduced, &state, at)?;
        if depth > MAX_DTYPE_DEPTH {
            return Err(self.err(at, format!("a numpy.dtype nested deeper than {MAX_DTYPE_DEPTH} levels")));
        }
        // The copies of memoised parts: a dtype of two fields of one memoised dtype of two
        // fields of ... is charged for every node it holds (checked before each copy).
        self.charge(weight.saturating_mul(DTYPE_NODE_COST), at)?;
        self.nodes[index as usize].kind = Kind::Dtype(Box::new(DtypeNode { dtype, built: true, weight, depth }));
        Ok(())
    }

    fn dtype_state(&self, state: Value, at: u64) -> Result<State> {
        let bad = || {
            self.err(
                at,
                "a numpy.dtype state other than (3, endian, subdtype, names, fields, elsize, alignment, flags) \
                 or (4, ..., metadata)",
            )
        };
        let Some(items) = self.tuple_items(state) else { return Err(bad()) };
        let (endian, subdtype, names, fields, elsize, metadata) = match items[..] {
            [Value::Int(3), e, s, n, f, Value::Int(size), Value::Int(_), Value::Int(_)] => (e, s, n, f, size, None),
            [Value::Int(4), e, s, n, f, Value::Int(size), Value::Int(_), Value::Int(_), m] => {
                (e, s, n, f, size, Some(m))
            }
            _ => return Err(bad()),
        };
        let endian = match self.str_value(endian) {
            Some(e) => match e {
                "<" => ByteOrder::Little,
                ">" => ByteOrder::Big,
                "|" => ByteOrder::NotApplicable,
                "=" => ByteOrder::NATIVE,
                _ => return Err(bad()),
            },
            _ => return Err(bad()),
        };
        Ok(State { endian, subdtype, names, fields, elsize, metadata })
    }

    /// The dtype a state describes for a dtype reduced from `reduced`, with its weight and
    /// depth.
    fn dtype_of(&self, reduced: Scalar, state: &State, at: u64) -> Result<(DType, usize, usize)> {
        let elsize = |expected: usize| {
            if state.elsize != -1 && usize::try_from(state.elsize).ok() != Some(expected) {
                return Err(
                    self.err(at, format!("a numpy.dtype of {expected} bytes whose state says {}", state.elsize))
                );
            }
            Ok(())
        };
        let is_none = |v: Value| matches!(v, Value::None);
        let void = matches!(reduced.ty(), ScalarType::Void(_));
        if !is_none(state.subdtype) {
            if !(void && is_none(state.names) && is_none(state.fields)) {
                return Err(self.err(at, "a numpy.dtype state with a subdtype must be a void dtype without fields"));
            }
            let (base, shape) = self.subdtype(state.subdtype, at)?;
            let (weight, depth) = self.weight(base, at)?;
            self.affordable(weight + 1, at)?;
            let base = self.built(base, at)?.clone();
            let dtype = DType::subarray(base, shape).map_err(|e| self.err(at, e.into_kind().to_string()))?;
            elsize(dtype.itemsize())?;
            return Ok((dtype, weight + 1, depth + 1));
        }
        match (is_none(state.names), is_none(state.fields)) {
            (true, true) => {}
            (false, false) if void => return self.record(state, at),
            _ => return Err(self.err(at, "a numpy.dtype state with names and fields needs both, on a void dtype")),
        }
        let ty = match (reduced.ty(), state.metadata) {
            (ScalarType::DateTime(_) | ScalarType::TimeDelta(_), Some(meta)) => {
                self.date_type(reduced.ty(), meta, at)?
            }
            (ty, None) => ty,
            (ty, Some(meta)) if is_none(meta) => ty,
            (_, Some(meta)) => match self.dict_len(meta) {
                Some(0) => reduced.ty(),
                _ => return Err(self.err(at, "a numpy.dtype with metadata: only datetime units are decoded")),
            },
        };
        let scalar = Scalar::new(ty, state.endian);
        elsize(scalar.itemsize())?;
        Ok((DType::Scalar(scalar), 1, 0))
    }

    /// A datetime's unit from its metadata `(None, (b'ms', 1, 1, 1))`.
    fn date_type(&self, ty: ScalarType, meta: Value, at: u64) -> Result<ScalarType> {
        let bad = || self.err(at, "a datetime numpy.dtype's metadata other than (None, (unit, multiple, 1, 1))");
        let Some(items) = self.tuple_items(meta) else { return Err(bad()) };
        let [extra, unit] = items[..] else { return Err(bad()) };
        let extra_ok = match self.dict_len(extra) {
            Some(len) => len == 0,
            _ => matches!(extra, Value::None),
        };
        let Some(unit) = self.tuple_items(unit) else { return Err(bad()) };
        let (Some(code), [_, Value::Int(multiple), Value::Int(1), Value::Int(1)]) =
            (unit.first().and_then(|&u| self.bytes_of(u)), unit)
        else {
            return Err(bad());
        };
        if !extra_ok {
            return Err(bad());
        }
        // The one datetime spelling: the descr NumPy writes, parsed by the dtype model.
        let kind = if matches!(ty, ScalarType::DateTime(_)) { 'M' } else { 'm' };
        let code = String::from_utf8_lossy(code);
        let descr = match (code.as_ref(), multiple) {
            ("generic", 1) => format!("{kind}8"),
            (c, 1) => format!("{kind}8[{c}]"),
            (c, n) => format!("{kind}8[{n}{c}]"),
        };
        let scalar = Scalar::parse(&descr).map_err(|_| self.err(at, format!("a datetime unit {}", quote(&descr))))?;
        Ok(scalar.ty())
    }

    /// A subarray's `(base, shape)`.
    fn subdtype(&self, v: Value, at: u64) -> Result<(Value, Vec<usize>)> {
        let bad = || self.err(at, "a numpy.dtype subdtype other than (dtype, shape)");
        let Some(items) = self.tuple_items(v) else { return Err(bad()) };
        let [base, shape] = items[..] else { return Err(bad()) };
        let Some(dims) = self.tuple_items(shape) else { return Err(bad()) };
        if dims.len() > crate::header::MAX_DIMS {
            return Err(self.err(at, format!("a subarray of {} dimensions (at most 64)", dims.len())));
        }
        let shape = dims
            .iter()
            .map(|d| match d {
                Value::Int(n) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(bad)?;
        Ok((base, shape))
    }

    /// A record from the state's names and fields.
    fn record(&self, state: &State, at: u64) -> Result<(DType, usize, usize)> {
        let bad = |what: &str| self.err(at, format!("a numpy.dtype's fields: {what}"));
        let (Some(names), Some(entries)) = (self.tuple_items(state.names), self.dict_entries(state.fields)) else {
            return Err(bad("names must be a tuple and fields a dict"));
        };
        // NumPy maps every name and title to a tuple (and a check keeps the entries of no
        // dict holding anything else).
        if entries.iter().any(|&(_, v)| self.tuple_items(v).is_none()) {
            return Err(bad("an entry other than (dtype, offset[, title])"));
        }
        let text = |v: Value| self.str_text(v);
        // Keys looked up once each: a record of thousands of fields stays linear.
        let mut by_key: HashMap<&str, Value> = HashMap::with_capacity(entries.len());
        for &(k, v) in entries {
            by_key.insert(text(k).ok_or_else(|| bad("a key that is not a str"))?, v);
        }
        let mut fields = Vec::with_capacity(names.len());
        let mut keys: HashSet<&str> = HashSet::with_capacity(entries.len());
        let (mut weight, mut depth) = (1usize, 0usize);
        for &name in names {
            let name = text(name).ok_or_else(|| bad("a name that is not a str"))?;
            let entry = *by_key.get(name).ok_or_else(|| bad(&format!("no entry for the name {}", quote(name))))?;
            let Some(parts) = self.tuple_items(entry) else {
                return Err(bad("an entry other than (dtype, offset[, title])"));
            };
            let (dtype, offset, title) = match parts[..] {
                [d, Value::Int(o)] => (d, o, None),
                [d, Value::Int(o), t] => (d, o, Some(t)),
                _ => return Err(bad("an entry other than (dtype, offset[, title])")),
            };
            let offset = usize::try_from(offset).map_err(|_| bad("a negative offset"))?;
            keys.insert(name);
            let title = match title.map(|t| (t, self.bytes_of(t), self.str_text(t))) {
                None | Some((Value::None, _, _)) => None,
                Some((_, _, Some(t))) => {
                    keys.insert(t);
                    Some(Literal::Str(t.to_string()))
                }
                Some((_, Some(t), _)) => Some(Literal::Bytes(t.to_vec())),
                Some((Value::Int(t), _, _)) => Some(Literal::Int(i128::from(t))),
                _ => return Err(bad("a title that is not a str, bytes or int")),
            };
            let (w, d) = self.weight(dtype, at)?;
            weight = weight.saturating_add(w);
            depth = depth.max(d + 1);
            self.affordable(weight, at)?;
            let mut field = Field::new(name, self.built(dtype, at)?.clone(), offset);
            field.title = title;
            fields.push(field);
        }
        // Every other key must be a title of one of the fields (NumPy lists both).
        if let Some(key) = by_key.keys().find(|k| !keys.contains(*k)) {
            return Err(bad(&format!("{} is neither a name nor a title", quote(key))));
        }
        let itemsize = usize::try_from(state.elsize).map_err(|_| bad("a record's elsize must be its size"))?;
        let record = Record::new(fields, itemsize).map_err(|e| self.err(at, e.into_kind().to_string()))?;
        Ok((DType::Record(record), weight, depth))
    }

    /// An error unless copies of `weight` dtype nodes fit the budget (checked before they
    /// are made; [`Self::build_dtype`] charges them once made).
    fn affordable(&self, weight: usize, at: u64) -> Result<()> {
        let bytes = weight.saturating_mul(DTYPE_NODE_COST);
        if self.budget.used.saturating_add(bytes) > self.budget.limit(self.input.pos) {
            return Err(self.over(at));
        }
        Ok(())
    }

    /// A built dtype's weight and depth; an error for anything else.
    fn weight(&self, v: Value, at: u64) -> Result<(usize, usize)> {
        match self.kind(v) {
            Some(Kind::Dtype(node)) if node.built => Ok((node.weight, node.depth)),
            Some(Kind::Dtype(_)) => Err(self.err(at, "a numpy.dtype used before its BUILD")),
            _ => Err(self.err(at, format!("a {} where a numpy.dtype belongs", self.type_name(v)))),
        }
    }

    /// A copy of a built dtype, charged before it is made.
    pub(super) fn copy_built(&mut self, v: Value, at: u64) -> Result<DType> {
        let (weight, _) = self.weight(v, at)?;
        self.charge(weight.saturating_mul(DTYPE_NODE_COST), at)?;
        self.built(v, at).cloned()
    }

    /// A built dtype.
    pub(super) fn built(&self, v: Value, at: u64) -> Result<&DType> {
        self.weight(v, at)?;
        match self.kind(v) {
            Some(Kind::Dtype(node)) => Ok(&node.dtype),
            _ => Err(self.err(at, "a numpy.dtype expected")),
        }
    }
}
