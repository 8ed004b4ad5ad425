//! The end of decoding: the values the machine built become [`Object`]s, taken from the
//! arena when nothing else holds them and copied (and charged) when shared, at most
//! [`MAX_DEPTH`] levels deep.

use super::budget::{alloc_cost, vec_cost};
use super::reconstruct::{ArrayState, Global, MaskedState};
use super::{Decoded, Kind, Machine, Mapping, PickleInput, Value};
use crate::error::{Error, Result};
use crate::object::{Object, MAX_DEPTH};

impl<R: PickleInput> Machine<R> {
    /// At `STOP`, when nothing is to be built: the stack must hold exactly the built array
    /// of a list of values; its shape.
    pub(super) fn finish_check(&mut self, at: u64) -> Result<Vec<usize>> {
        let state = self.built_array(at)?;
        if state.raw.is_some()
            || !matches!(self.kind(Value::Node(state.list)), Some(Kind::List(_) | Kind::ListOf { .. }))
        {
            return Err(self.not_objects(&state, at));
        }
        Ok(state.shape)
    }

    /// At `STOP`: the stack must hold exactly the built array; its values become
    /// [`Object`]s within the budget.
    pub(super) fn finish(&mut self, at: u64) -> Result<Decoded> {
        let state = self.built_array(at)?;
        if state.raw.is_some() {
            return Err(self.not_objects(&state, at));
        }
        let (shape, fortran, list, len) = (state.shape, state.fortran, state.list, state.len);
        let strings = state.strings;
        if !matches!(self.kind(Value::Node(list)), Some(Kind::List(_))) {
            return Err(self.err(at, "the ndarray's values are not a list"));
        }
        let top = match self.stack[..] {
            [Value::Node(i)] => Some(i as usize),
            _ => None,
        };
        let refs = self.refs(Value::Node(list), top, at)?;
        let list_at = self.nodes[list as usize].at();
        self.charge(vec_cost::<Object>(len), list_at)?;
        let mut items = Vec::with_capacity(len);
        for i in 0..len {
            let v = self.item(list as usize, i);
            let obj = self.object(v, 1, false, &refs).map_err(|e| match e.into_kind() {
                crate::error::ErrorKind::Pickle { offset, reason } => {
                    Error::pickle(offset, format!("element {i} (in C order): {reason}"))
                }
                other => other.into(),
            })?;
            items.push(obj);
        }
        let string_dtype = match strings {
            None => None,
            Some((coerce, na)) => {
                let na_object = match na {
                    None => None,
                    Some(v) => Some(self.object(v, 1, false, &refs)?),
                };
                Some(crate::object::StringDType { coerce, na_object })
            }
        };
        Ok(Decoded { shape, fortran, items, string_dtype, at: self.input.base })
    }

    /// The error of a pickle whose array is not one of objects (a file's header says `|O`).
    fn not_objects(&self, state: &ArrayState, at: u64) -> Error {
        match &state.raw {
            Some((dtype, _)) => {
                self.err(at, format!("the pickle holds an ndarray of dtype {}, not an object array", dtype.descr()))
            }
            None => self.err(at, "the ndarray's values are not a list"),
        }
    }

    /// The state of the array on the stack at `STOP`, which must be built.
    fn built_array(&self, at: u64) -> Result<ArrayState> {
        if !self.marks.is_empty() {
            return Err(self.err(at, "STOP inside a MARK"));
        }
        let array = match self.stack[..] {
            [v] => v,
            [] => return Err(self.err(at, "STOP with an empty stack")),
            _ => {
                return Err(
                    self.err(at, format!("STOP with {} values on the stack (one ndarray expected)", self.stack.len()))
                )
            }
        };
        let state = match self.kind(array) {
            Some(Kind::Array(Some(state))) => state,
            Some(Kind::Array(None)) => return Err(self.err(at, "the pickle's ndarray was never built (no BUILD)")),
            _ => return Err(self.err(at, format!("the pickle holds a {}, not a numpy.ndarray", self.type_name(array)))),
        };
        Ok(ArrayState::clone(state))
    }

    /// Item `i` of the list or tuple at arena index `node` (of the dict's entries, keys and
    /// values in turn).
    pub(super) fn item(&self, node: usize, i: usize) -> Value {
        match &self.nodes[node].kind {
            Kind::List(items) | Kind::Tuple { items, .. } => items[i],
            Kind::Dict(entries) if i.is_multiple_of(2) => entries[i / 2].0,
            Kind::Dict(entries) => entries[i / 2].1,
            _ => Value::None,
        }
    }

    /// How many places in lists, tuples and dicts hold each arena entry (0, 1, or 2 for
    /// more), counting `root` once more: the entries the final [`Object`]s may take
    /// instead of copy are those held once, in containers held once, up to `root`.
    /// `skip` is the array whose values `root` are (its own reference to them is `root`).
    pub(super) fn refs(&mut self, root: Value, skip: Option<usize>, at: u64) -> Result<Vec<u8>> {
        self.charge(vec_cost::<u8>(self.nodes.len()), at)?;
        let mut refs = vec![0u8; self.nodes.len()];
        let mut count = |v: Value| {
            if let Value::Node(i) = v {
                refs[i as usize] = refs[i as usize].saturating_add(1).min(2);
            }
        };
        count(root);
        for (n, node) in self.nodes.iter().enumerate() {
            match &node.kind {
                Kind::List(items) | Kind::Tuple { items, .. } => items.iter().copied().for_each(&mut count),
                Kind::Dict(entries) | Kind::Mapping { entries, .. } => entries.iter().for_each(|&(k, v)| {
                    count(k);
                    count(v);
                }),
                Kind::Set(set) => set.items.iter().copied().for_each(&mut count),
                Kind::Deque(deque) => deque.0.iter().copied().for_each(&mut count),
                Kind::Masked(Some(state)) => {
                    match &state.array.raw {
                        Some((_, data)) => count(*data),
                        None => count(Value::Node(state.array.list)),
                    }
                    count(state.mask);
                    count(state.fill);
                }
                Kind::Slice(parts) => parts.iter().copied().for_each(&mut count),
                Kind::Array(Some(state)) if Some(n) != skip => match &state.raw {
                    Some((_, data)) => count(*data),
                    None => count(Value::Node(state.list)),
                },
                _ => {}
            }
        }
        Ok(refs)
    }

    /// The [`Object`] of a value, `depth` levels down, charging what it takes. A value
    /// that nothing else holds (`shared` false, and `refs` 1) is moved out of the arena;
    /// any other is copied. The recursion is at most [`MAX_DEPTH`] + 1 calls deep, and
    /// every call is charged (a slot of its container at least), so a memoised value
    /// repeated many times stops at the budget.
    pub(super) fn object(&mut self, v: Value, depth: usize, shared: bool, refs: &[u8]) -> Result<Object> {
        let i = match v {
            Value::None => return Ok(Object::None),
            Value::Bool(b) => return Ok(Object::Bool(b)),
            Value::Int(n) => return Ok(Object::Int(n)),
            Value::Float(x) => return Ok(Object::Float(x)),
            // Only checks read inputs in memory, and they build no values; a copy all the same.
            Value::StrAt { .. } => return Ok(Object::Str(self.str_text(v).unwrap_or_default().to_string())),
            Value::BytesAt { .. } => return Ok(Object::Bytes(self.bytes_of(v).unwrap_or_default().to_vec())),
            // Only a sparse check makes these, and it builds no values.
            Value::BytesOut { .. } => return Err(self.err(0, "a bytes whose content was left out")),
            Value::Node(i) => i as usize,
        };
        let shared = shared || refs[i] > 1;
        let at = self.nodes[i].at();
        // The number of items of a container, or the cost of copying a str, bytes or int.
        let len = match &mut self.nodes[i].kind {
            Kind::Str(s) if !shared => return Ok(Object::Str(std::mem::take(s))),
            Kind::Bytes(b) if !shared => return Ok(Object::Bytes(std::mem::take(b))),
            Kind::BigInt(t) if !shared => return Ok(Object::BigInt(std::mem::take(t))),
            // Copies, charged before they are made.
            Kind::Str(s) | Kind::BigInt(s) => alloc_cost(s.len()),
            Kind::Bytes(b) => alloc_cost(b.len()),
            Kind::Complex(re, im) => return Ok(Object::Complex(*re, *im)),
            Kind::List(items) | Kind::Tuple { items, .. } => items.len(),
            Kind::Dict(entries) => entries.len(),
            _ => return self.object_beyond(i, depth, shared, refs),
        };
        match &self.nodes[i].kind {
            Kind::Str(_) | Kind::BigInt(_) | Kind::Bytes(_) => {
                self.charge(len, at)?;
                return Ok(match &self.nodes[i].kind {
                    Kind::Str(s) => Object::Str(s.clone()),
                    Kind::BigInt(t) => Object::BigInt(t.clone()),
                    Kind::Bytes(b) => Object::Bytes(b.clone()),
                    _ => unreachable!("matched above"),
                });
            }
            _ => {}
        }
        if depth > MAX_DEPTH {
            return Err(self.err(at, format!("values nested deeper than {MAX_DEPTH} levels")));
        }
        let obj = if let Kind::Dict(_) = self.nodes[i].kind {
            self.charge(vec_cost::<(Object, Object)>(len), at)?;
            let mut out = Vec::with_capacity(len);
            for j in 0..len {
                let key = self.object(self.item(i, 2 * j), depth + 1, shared, refs)?;
                let value = self.object(self.item(i, 2 * j + 1), depth + 1, shared, refs)?;
                out.push((key, value));
            }
            Object::Dict(out)
        } else {
            self.charge(vec_cost::<Object>(len), at)?;
            let mut out = Vec::with_capacity(len);
            for j in 0..len {
                out.push(self.object(self.item(i, j), depth + 1, shared, refs)?);
            }
            if matches!(self.nodes[i].kind, Kind::List(_)) {
                Object::List(out)
            } else {
                Object::Tuple(out)
            }
        };
        if !shared {
            // Visited once: its buffer of values is no longer needed.
            let freed = match &mut self.nodes[i].kind {
                Kind::List(items) | Kind::Tuple { items, .. } => vec_cost::<Value>(std::mem::take(items).capacity()),
                Kind::Dict(entries) => vec_cost::<(Value, Value)>(std::mem::take(entries).capacity()),
                _ => 0,
            };
            self.budget.refund(freed);
        }
        Ok(obj)
    }

    /// The [`Object`] of an arena entry beyond plain values: a built value, a set, an
    /// `OrderedDict` or `Counter`, a slice, an ndarray, a class.
    fn object_beyond(&mut self, i: usize, depth: usize, shared: bool, refs: &[u8]) -> Result<Object> {
        let at = self.nodes[i].at();
        if depth > MAX_DEPTH {
            return Err(self.err(at, format!("values nested deeper than {MAX_DEPTH} levels")));
        }
        match &mut self.nodes[i].kind {
            Kind::Leaf(obj) if !shared => return Ok(std::mem::take(&mut **obj)),
            Kind::Leaf(obj) => {
                let copy = (**obj).clone();
                self.charge(super::stdlib::leaf_cost(&copy), at)?;
                return Ok(copy);
            }
            &mut Kind::Global(g) => {
                return match g.as_type() {
                    Some((module, name)) => Ok(Object::Type(module.to_string(), name.to_string())),
                    None => Err(self.not_plain(i)),
                }
            }
            _ => {}
        }
        // The values inside, copied out (a few: a set's items, a mapping's entries).
        let mut factory = None;
        let mut maxlen = None;
        let (values, what): (Vec<Value>, u8) = match &self.nodes[i].kind {
            Kind::Set(set) => (set.items.clone(), if set.frozen { 1 } else { 0 }),
            Kind::Mapping { entries, of } => {
                let what = match of {
                    Mapping::OrderedDict => 2,
                    Mapping::Counter => 3,
                    Mapping::DefaultDict(f) => {
                        factory = Some(*f);
                        5
                    }
                };
                (entries.iter().flat_map(|&(k, v)| [k, v]).collect(), what)
            }
            Kind::Deque(deque) => {
                maxlen = deque.1;
                (deque.0.clone(), 6)
            }
            Kind::Slice(parts) => (parts.to_vec(), 4),
            Kind::Array(Some(state)) => return self.nested_array(i, &ArrayState::clone(state), depth, shared, refs),
            Kind::Masked(Some(state)) => {
                let state = MaskedState::clone(state);
                return self.masked_array(i, &state, depth, shared, refs);
            }
            _ => return Err(self.not_plain(i)),
        };
        self.charge(vec_cost::<Value>(values.len()) + vec_cost::<Object>(values.len()), at)?;
        let mut out = Vec::with_capacity(values.len());
        for v in values {
            out.push(self.object(v, depth + 1, shared, refs)?);
        }
        let pairs = |out: Vec<Object>| {
            let mut it = out.into_iter();
            let mut pairs = Vec::new();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            pairs
        };
        Ok(match what {
            0 => Object::Set(out),
            1 => Object::FrozenSet(out),
            2 => Object::OrderedDict(pairs(out)),
            3 => Object::Counter(pairs(out)),
            5 => {
                let factory = match factory.flatten().and_then(Global::as_type) {
                    Some((module, name)) => Object::Type(module.to_string(), name.to_string()),
                    None => Object::None,
                };
                self.charge(alloc_cost(std::mem::size_of::<crate::object::DefaultDict>()), at)?;
                Object::DefaultDict(Box::new(crate::object::DefaultDict { factory, entries: pairs(out) }))
            }
            6 => {
                self.charge(alloc_cost(std::mem::size_of::<crate::object::Deque>()), at)?;
                Object::Deque(Box::new(crate::object::Deque { items: out, maxlen }))
            }
            _ => {
                let mut it = out.into_iter();
                let mut next = || it.next().unwrap_or_default();
                Object::Slice(Box::new([next(), next(), next()]))
            }
        })
    }

    /// An ndarray inside the object array: an [`Object::Array`] of its bytes, or an
    /// [`Object::ObjectArray`] of its values (in the order its `is_fortran` flag says).
    fn nested_array(
        &mut self,
        i: usize,
        state: &ArrayState,
        depth: usize,
        shared: bool,
        refs: &[u8],
    ) -> Result<Object> {
        let at = self.nodes[i].at();
        let header = |dtype: crate::dtype::DType| crate::header::Header {
            dtype,
            fortran_order: state.fortran,
            shape: state.shape.clone(),
        };
        if let Some((dtype, bytes)) = &state.raw {
            let taken = match *bytes {
                Value::Node(b) if !shared && refs[b as usize] <= 1 => match &mut self.nodes[b as usize].kind {
                    Kind::Bytes(data) => Some(std::mem::take(data)),
                    _ => None,
                },
                _ => None,
            };
            let mut data = match taken {
                Some(data) => data,
                None => {
                    let copy = self.bytes_of(*bytes).ok_or_else(|| self.err(at, "an ndarray's data is not bytes"))?;
                    let copy = copy.to_vec();
                    self.charge(alloc_cost(copy.len()), at)?;
                    copy
                }
            };
            // NumPy's `__setstate__` swaps a scalar dtype of the other byte order to native.
            let dtype = super::reconstruct::to_native((**dtype).clone(), &mut data);
            let array = crate::array::DynArray::new(header(dtype), data)
                .map_err(|e| self.err(at, format!("an ndarray inside the object array: {e}")))?;
            return Ok(Object::Array(Box::new(array)));
        }
        let list = state.list as usize;
        if !matches!(self.nodes[list].kind, Kind::List(_)) {
            return Err(self.err(at, "an ndarray's values are not a list"));
        }
        let shared = shared || refs[list] > 1;
        self.charge(vec_cost::<Object>(state.len), at)?;
        let mut items = Vec::with_capacity(state.len);
        for j in 0..state.len {
            let v = self.item(list, j);
            items.push(self.object(v, depth + 1, shared, refs)?);
        }
        let decoded = super::Decoded {
            shape: state.shape.clone(),
            fortran: state.fortran,
            items,
            string_dtype: None,
            at: self.input.base + at,
        };
        let array = crate::object::into_array(decoded, None, state.fortran)?.into_array();
        Ok(Object::ObjectArray(Box::new(array)))
    }

    /// A masked array inside the object array: its data as [`Self::nested_array`] makes
    /// it, its mask as a bool array of the same shape and order, its fill value.
    fn masked_array(
        &mut self,
        i: usize,
        state: &MaskedState,
        depth: usize,
        shared: bool,
        refs: &[u8],
    ) -> Result<Object> {
        let at = self.nodes[i].at();
        let data = self.nested_array(i, &state.array, depth, shared, refs)?;
        let mask_dtype = match &state.array.raw {
            Some((dtype, _)) => super::reconstruct::mask_dtype(dtype),
            None => Some(crate::dtype::DType::native(crate::dtype::ScalarType::Bool)),
        }
        .ok_or_else(|| self.err(at, "a masked array whose dtype has no mask dtype"))?;
        let bits = self.bytes_of(state.mask).ok_or_else(|| self.err(at, "a masked array's mask is not bytes"))?;
        let bits = bits.to_vec();
        self.charge(alloc_cost(bits.len()) + alloc_cost(std::mem::size_of::<crate::array::DynArray>()) + 256, at)?;
        let header = crate::header::Header {
            dtype: mask_dtype,
            fortran_order: state.array.fortran,
            shape: state.array.shape.clone(),
        };
        let mask = crate::array::DynArray::new(header, bits)
            .map_err(|e| self.err(at, format!("a masked array's mask: {e}")))?;
        let fill_value = match state.fill {
            Value::None => None,
            v => Some(self.object(v, depth + 1, shared, refs)?),
        };
        self.charge(alloc_cost(std::mem::size_of::<crate::object::MaskedArray>()), at)?;
        Ok(Object::MaskedArray(Box::new(crate::object::MaskedArray { data, mask, fill_value })))
    }

    /// The error of an arena entry that is not a plain value.
    #[cold]
    fn not_plain(&self, i: usize) -> Error {
        let node = &self.nodes[i];
        let reason = match &node.kind {
            Kind::Global(g) => format!("{} is a callable, not a plain value", g.name()),
            Kind::Dtype(d) => format!("a numpy.dtype ({}) is not a plain value", d.dtype.descr()),
            Kind::StringDtype { .. } => "a numpy.dtypes.StringDType is not a plain value".to_string(),
            Kind::Array(None) => "an ndarray that was never built (no BUILD)".to_string(),
            Kind::NewUuid => "a uuid.UUID that was never built (no BUILD)".to_string(),
            Kind::ZoneUnpickle => "zoneinfo.ZoneInfo._unpickle is a method, not a plain value".to_string(),
            Kind::Masked(None) => "a numpy.ma.MaskedArray that was never built (no BUILD)".to_string(),
            Kind::SafeUuid => "a uuid.SafeUUID is only a UUID's is_safe, not a value".to_string(),
            &Kind::Safe(i) => format!(
                "an instance of the safe global {} is built only by an unpickler that may run its code \
                 (the npy Python package's), not into Rust values",
                self.global_name(Global::Safe(i))
            ),
            _ => "not a plain value".to_string(),
        };
        self.err(node.at(), reason)
    }
}
