//! The descr interpreter and writer: a header's `descr` value (read in place from the
//! literal parser's tape) to a [`DType`] exactly as NumPy's `descr_to_dtype`, and a
//! [`DType`] back to its descr, as a [`Literal`] (`to_descr`) or written straight as text
//! (`descr`, `write_descr`), exactly as NumPy's `dtype_to_descr` and `repr`.

use super::{
    object_field, push_decimal, repr, DType, Error, Field, Kind, Literal, NameSet, Record, Result, Scalar, ScalarType,
    SubArray, Tape, Value, MAX_DTYPE_DEPTH, MAX_ITEMSIZE,
};

impl DType {
    /// The dtype from a header's `descr` value, exactly as NumPy's `descr_to_dtype`:
    /// `('', '|Vn')` entries (and any unnamed void or subarray entry) are padding and
    /// become gaps between field offsets.
    ///
    /// # Errors
    /// [`ErrorKind::Dtype`](crate::ErrorKind::Dtype) for anything NumPy would refuse (bad
    /// type strings, duplicate names, bad shapes, sizes over NumPy's limits, nesting
    /// deeper than 32); [`ErrorKind::UnsupportedDtype`](crate::ErrorKind::UnsupportedDtype)
    /// for object fields in records and object subarrays (a whole object array, `'|O'`,
    /// is understood).
    ///
    /// # Examples
    /// ```
    /// use npy_core::dtype::DType;
    /// use npy_core::literal::parse;
    ///
    /// let descr = parse("[('a', '|u1'), ('', '|V7'), ('b', '<f8')]").unwrap();
    /// let dt = DType::from_descr(&descr)?;
    /// let rec = dt.as_record().unwrap();
    /// assert_eq!(rec.fields().len(), 2);
    /// assert_eq!(rec.field("b").unwrap().offset, 8);
    /// assert_eq!(dt.itemsize(), 16);
    /// assert_eq!(dt.descr(), "[('a', '|u1'), ('', '|V7'), ('b', '<f8')]");
    /// # Ok::<(), npy_core::Error>(())
    /// ```
    pub fn from_descr(descr: &Literal) -> Result<DType> {
        Self::from_value(Tape::of(descr).root())
    }

    /// [`DType::from_descr`] of a descr read from a tape (by the header codec and
    /// [`FromStr`]): the one interpreter of descrs, which reads the parsed text in place.
    pub(crate) fn from_value(descr: Value<'_, '_>) -> Result<DType> {
        Self::from_descr_at(descr, 0)
    }

    fn from_descr_at(descr: Value<'_, '_>, depth: usize) -> Result<DType> {
        if depth > MAX_DTYPE_DEPTH {
            return Err(Error::dtype("descr", format!("nested deeper than {MAX_DTYPE_DEPTH} levels")));
        }
        match descr.kind() {
            Kind::Str(s) => Ok(DType::Scalar(Scalar::parse(s)?)),
            Kind::Tuple if descr.len() == 2 => {
                let mut items = descr.items();
                let (Some(base), Some(shape)) = (items.next(), items.next()) else {
                    return Err(Error::dtype(descr.repr(), "expected a (type, shape) tuple"));
                };
                let base = Self::from_descr_at(base, depth + 1)?;
                sized_base(&base, descr)?;
                let shape = parse_subarray_shape(shape)?;
                DType::subarray(base, shape)
            }
            Kind::List => Self::record_from_descr(descr, depth),
            _ => Err(Error::dtype(descr.repr(), "expected a type string, a list of fields or a (type, shape) tuple")),
        }
    }

    /// A record's descr, read in one pass, and checked as [`Record::new`] checks a record,
    /// with the same errors in the same order: every entry's own errors first, then the
    /// first object field, then the first repeated name or title. Offsets need no check:
    /// each field starts where the entry before it ends, and the end is bounded here. The
    /// names and `str` titles, borrowed from the tape as they are read, go through the set
    /// of names at the end, one after the other: a set's lookups, each a likely cache miss,
    /// then overlap, where between the other work of each field they stalled it.
    fn record_from_descr<'t>(descr: Value<'t, '_>, depth: usize) -> Result<DType> {
        let mut fields = Vec::with_capacity(descr.len());
        let mut names: Vec<&'t str> = Vec::with_capacity(descr.len());
        // Where the titles are among the names.
        let mut titles: Vec<usize> = Vec::new();
        let mut object: Option<usize> = None;
        let mut offset = 0usize;
        for entry in descr.items() {
            let bad = |reason: &str| Error::dtype(entry.repr(), reason.to_string());
            if !matches!(entry.kind(), Kind::Tuple | Kind::List) || !matches!(entry.len(), 2 | 3) {
                return Err(bad("a field must be a (name, type) or (name, type, shape) tuple"));
            }
            let mut parts = entry.items();
            let (Some(name_lit), Some(fmt)) = (parts.next(), parts.next()) else {
                return Err(bad("a field must be a (name, type) or (name, type, shape) tuple"));
            };
            let mut dtype = match fmt.kind() {
                // A type string, as almost every field has: what `from_descr_at` does with
                // it, without the call and its result moved through memory.
                Kind::Str(s) if depth < MAX_DTYPE_DEPTH => DType::Scalar(match Scalar::parse_common(s) {
                    Some(scalar) => scalar,
                    None => Scalar::parse_any(s)?,
                }),
                _ => Self::from_descr_at(fmt, depth + 1)?,
            };
            if let Some(s) = parts.next() {
                sized_base(&dtype, entry)?;
                dtype = DType::subarray(dtype, parse_subarray_shape(s)?)?;
            }
            let (title, name) = match name_lit.kind() {
                Kind::Str(n) => (None, n),
                Kind::Tuple if name_lit.len() == 2 => {
                    let mut pair = name_lit.items();
                    match (pair.next(), pair.next().map(Value::kind)) {
                        (Some(t), Some(Kind::Str(n))) => (Some(t), n),
                        _ => return Err(bad("field names must be strings")),
                    }
                }
                _ => return Err(bad("field names must be strings (or a (title, name) pair)")),
            };
            let size = dtype.itemsize();
            let is_pad = matches!(name_lit.kind(), Kind::Str(n) if n.is_empty())
                && match &dtype {
                    DType::Scalar(s) => matches!(s.ty(), ScalarType::Void(_)),
                    DType::SubArray(_) => true,
                    DType::Record(_) => false,
                };
            if !is_pad {
                if object.is_none() && dtype.has_object() {
                    object = Some(fields.len());
                }
                names.push(name);
                if let Some(Kind::Str(t)) = title.map(Value::kind) {
                    titles.push(names.len());
                    names.push(t);
                }
                // A field of no title and a scalar type, as most are, is written from its
                // parts, not moved over as values made before: those were stored a part at
                // a time, and a move reads them back in wider loads, which wait until the
                // stores are done (behind the last field's writes to memory not yet cached).
                let title = title.filter(|t| t.kind() != Kind::None);
                match dtype {
                    DType::Scalar(scalar) if title.is_none() => {
                        let (ty, order) = (scalar.ty, scalar.order);
                        push_with(&mut fields, || Field {
                            name: name.to_string(),
                            title: None,
                            dtype: DType::Scalar(Scalar { ty, order }),
                            offset,
                        })
                    }
                    dtype => push_with(&mut fields, || Field {
                        name: name.to_string(),
                        title: title.map(Value::to_literal),
                        dtype,
                        offset,
                    }),
                }
            }
            offset = offset
                .checked_add(size)
                .filter(|&o| o <= MAX_ITEMSIZE)
                .ok_or_else(|| bad("record size in bytes must fit into a C int"))?;
        }
        if let Some(f) = object.and_then(|i| fields.get(i)) {
            return Err(object_field(&f.name, &f.dtype));
        }
        if let Some((i, text)) = NameSet::first_repeat(names) {
            let what = if titles.binary_search(&i).is_ok() { "title" } else { "name" };
            return Err(Error::dtype(
                Literal::Str(text.to_string()).repr(),
                format!("field {what} already used as a name or title"),
            ));
        }
        Ok(DType::Record(Record { fields, itemsize: offset }))
    }

    /// The `descr` value NumPy writes for this dtype (`dtype.descr` for records,
    /// `dtype.str` otherwise): gaps between fields become `('', '|Vn')` entries.
    pub fn to_descr(&self) -> Literal {
        match self {
            DType::Scalar(s) => Literal::Str(s.type_str()),
            DType::SubArray(a) => Literal::Tuple(vec![a.base.to_descr(), shape_literal(&a.shape)]),
            DType::Record(r) => Literal::List(
                Entries::of(r)
                    .map(|entry| match entry {
                        Entry::Padding(n) => {
                            Literal::Tuple(vec![Literal::Str(String::new()), Literal::Str(format!("|V{n}"))])
                        }
                        Entry::Field(f) => {
                            let name = match &f.title {
                                Some(t) => Literal::Tuple(vec![t.clone(), Literal::Str(f.name.clone())]),
                                None => Literal::Str(f.name.clone()),
                            };
                            Literal::Tuple(match &f.dtype {
                                DType::SubArray(a) => vec![name, a.base.to_descr(), shape_literal(&a.shape)],
                                other => vec![name, other.to_descr()],
                            })
                        }
                    })
                    .collect(),
            ),
        }
    }

    /// The descr as NumPy prints it in a header, e.g. `'<f8'` or `[('a', '<i4')]`: the
    /// `repr` of [`DType::to_descr`], written in one pass.
    pub fn descr(&self) -> String {
        let fields = self.as_record().map_or(0, |r| r.fields.len());
        let mut out = String::with_capacity(16 + fields.saturating_mul(32));
        self.write_descr(&mut out);
        out
    }

    /// Writes [`DType::descr`] to `out`: the text of [`DType::to_descr`]'s `repr`, without
    /// making the literal.
    pub(crate) fn write_descr(&self, out: &mut String) {
        match self {
            DType::Scalar(s) => {
                // A type string has no quote, backslash nor other character to escape.
                out.push('\'');
                s.write_type_str(out);
                out.push('\'');
            }
            DType::SubArray(a) => {
                out.push('(');
                a.write_descr_items(out);
                out.push(')');
            }
            DType::Record(r) => {
                out.push('[');
                for (i, entry) in Entries::of(r).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    match entry {
                        Entry::Padding(n) => {
                            out.push_str("('', '|V");
                            push_decimal(n as u64, out);
                            out.push_str("')");
                        }
                        Entry::Field(f) => {
                            out.push('(');
                            match &f.title {
                                Some(title) => {
                                    out.push('(');
                                    title.write_repr(out);
                                    out.push_str(", ");
                                    repr::write_str(&f.name, out);
                                    out.push(')');
                                }
                                None => repr::write_str(&f.name, out),
                            }
                            out.push_str(", ");
                            match &f.dtype {
                                DType::SubArray(a) => a.write_descr_items(out),
                                other => other.write_descr(out),
                            }
                            out.push(')');
                        }
                    }
                }
                out.push(']');
            }
        }
    }
}

/// One entry of a record's descr: a field, or padding (`('', '|Vn')`) for bytes no field
/// covers.
enum Entry<'r> {
    Padding(usize),
    Field(&'r Field),
}

/// A record's descr entries in order, as NumPy's `dtype.descr` lists them: the fields, a
/// padding entry before each that starts past the end of the one before it, and one after
/// the last for the rest of the itemsize. What both [`DType::to_descr`] and
/// [`DType::write_descr`] write, each in its form.
struct Entries<'r> {
    fields: std::slice::Iter<'r, Field>,
    itemsize: usize,
    /// The end of the entries so far.
    end: usize,
    /// A field whose padding came first.
    after_padding: Option<&'r Field>,
}

impl<'r> Entries<'r> {
    fn of(record: &'r Record) -> Entries<'r> {
        Entries { fields: record.fields.iter(), itemsize: record.itemsize, end: 0, after_padding: None }
    }
}

impl<'r> Iterator for Entries<'r> {
    type Item = Entry<'r>;

    fn next(&mut self) -> Option<Entry<'r>> {
        let field = match self.after_padding.take() {
            Some(f) => f,
            None => match self.fields.next() {
                Some(f) if f.offset > self.end => {
                    let gap = f.offset - self.end;
                    self.end = f.offset;
                    self.after_padding = Some(f);
                    return Some(Entry::Padding(gap));
                }
                Some(f) => f,
                None if self.itemsize > self.end => {
                    let gap = self.itemsize - self.end;
                    self.end = self.itemsize;
                    return Some(Entry::Padding(gap));
                }
                None => return None,
            },
        };
        self.end += field.dtype.itemsize();
        Some(Entry::Field(field))
    }
}

impl SubArray {
    /// Writes the base's descr and the shape, `'<f8', (2, 3)`: what a subarray's descr
    /// tuple, and a field of this type after its name, hold.
    fn write_descr_items(&self, out: &mut String) {
        self.base.write_descr(out);
        out.push_str(", (");
        for (i, &d) in self.shape.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            push_decimal(d as u64, out);
        }
        if self.shape.len() == 1 {
            out.push(',');
        }
        out.push(')');
    }
}

/// Pushes the field `make` makes, written in place in `fields`' spare room: a `push` of a
/// field made first (a `push` may call to grow) makes it on the stack and copies it over,
/// and that copy read back as 16-byte loads what was just stored as 8-byte ones, a stall
/// per field.
#[inline(always)]
fn push_with(fields: &mut Vec<Field>, make: impl FnOnce() -> Field) {
    if fields.len() == fields.capacity() {
        fields.reserve(1);
    }
    let len = fields.len();
    if let Some(slot) = fields.spare_capacity_mut().first_mut() {
        slot.write(make());
        // SAFETY:
        // - `len + 1` is within the capacity: the slot just written is at `len`;
        // - the elements up to `len + 1` are initialized: those below `len` were, the
        //   one at `len` was just written.
        unsafe { fields.set_len(len + 1) };
    }
}

/// NumPy's rule for a `(type, shape)` tuple (a subarray, or a field with a shape): a type
/// of no size that is not a record (`'|V0'`, `'S'`, `('<f8', (0,))`) has no "generic size"
/// to repeat, and `np.dtype` refuses it ("invalid itemsize in generic type tuple"), even
/// with shape `()`; a record of no fields is fine.
fn sized_base(base: &DType, tuple: Value<'_, '_>) -> Result<()> {
    if base.itemsize() == 0 && base.as_record().is_none() {
        return Err(Error::dtype(
            tuple.repr(),
            "invalid itemsize in generic type tuple: a (type, shape) needs a type with a size",
        ));
    }
    Ok(())
}

fn shape_literal(shape: &[usize]) -> Literal {
    Literal::Tuple(shape.iter().map(|&d| Literal::Int(d as i128)).collect())
}

fn parse_subarray_shape(lit: Value<'_, '_>) -> Result<Vec<usize>> {
    let bad = || Error::dtype(lit.repr(), "invalid shape in fixed-type tuple");
    let dim = |l: Value<'_, '_>| match l.kind() {
        Kind::Int(n) if n >= 0 && n <= MAX_ITEMSIZE as i128 => Ok(n as usize),
        _ => Err(bad()),
    };
    match lit.kind() {
        Kind::Int(_) => Ok(vec![dim(lit)?]),
        Kind::Tuple | Kind::List if lit.len() <= crate::shape::MAX_DIMS => lit.items().map(dim).collect(),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{ByteOrder, DateUnit, TimeUnit};
    use crate::error::ErrorKind;

    fn dt(s: &str) -> DType {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn common_type_strings_read_as_the_rest() {
        let (mut common, mut strings) = (0, 0);
        for order in "<>|=x".chars() {
            for kind in "fiucbSUVMmO?ax".chars() {
                for size in "0123456789x".chars() {
                    let s = format!("{order}{kind}{size}");
                    strings += 1;
                    if let Some(scalar) = Scalar::parse_common(&s) {
                        common += 1;
                        assert_eq!(Ok(scalar), Scalar::parse_any(&s).map_err(|e| e.to_string()), "{s}");
                    }
                    assert_eq!(Scalar::parse(&s).ok(), Scalar::parse_any(&s).ok(), "{s}");
                }
            }
        }
        // 4 orders by f2/4/8, i and u 1/2/4/8, c8, b1 and S, U, V of 0 to 9.
        assert_eq!((common, strings), (4 * (3 + 4 + 4 + 1 + 1 + 30), 5 * 14 * 11));
        assert_eq!(Scalar::parse_common("<b1"), Some(Scalar::new(ScalarType::Bool, ByteOrder::NotApplicable)));
        assert_eq!(Scalar::parse_common(">V4"), Some(Scalar::new(ScalarType::Void(4), ByteOrder::NotApplicable)));
        assert_eq!(Scalar::parse_common("<f16"), None);
    }

    #[test]
    fn record_errors_come_in_numpy_order() {
        let error = |s: &str| s.parse::<DType>().unwrap_err();
        // A repeated name, then an object field: the object field is the error, as
        // `Record::new` checks objects first.
        let e = error("[('a', '<f8'), ('a', '<i4'), ('o', '|O')]");
        assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{e}");
        assert!(e.to_string().contains("field 'o' holds Python objects"), "{e}");
        // A repeated name, then a bad entry: the entry's own error.
        let e = error("[('a', '<f8'), ('a', '<i4'), ('b', '<f3')]");
        assert!(e.to_string().contains("'<f3'") && e.to_string().contains("unsupported size"), "{e}");
        let e = error("[('a', '<f8'), ('a', '<i4'), 7]");
        assert!(e.to_string().contains("a field must be a (name, type)"), "{e}");
        // The first repeat, name or title, in order.
        let e = error("[('a', '<f8'), (('b', 'c'), '<i4'), ('c', '<i4'), ('a', '<i2')]");
        assert!(e.to_string().contains("'c': field name already used as a name or title"), "{e}");
        let e = error("[(('t', 'a'), '<f8'), (('t', 'b'), '<i4'), ('a', '<i2')]");
        assert!(e.to_string().contains("'t': field title already used as a name or title"), "{e}");
        let e = error("[(('a', 'a'), '<f8')]");
        assert!(e.to_string().contains("'a': field title already used"), "{e}");
        // Padding entries are no names; empty names of real fields are.
        assert_eq!(dt("[('', '|V2'), ('a', '<i2'), ('', '|V4')]").itemsize(), 8);
        let e = error("[('', '<f8'), ('', '<i2')]");
        assert!(e.to_string().contains("'': field name already used"), "{e}");
        // Each the error `Record::new` gives the same fields.
        let fields = vec![
            Field::new("a", DType::native(ScalarType::Int(4)), 0),
            Field::new("a", DType::native(ScalarType::Int(4)), 4),
        ];
        assert_eq!(Record::new(fields, 8).unwrap_err().to_string(), error("[('a', '<i4'), ('a', '<i4')]").to_string());
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn many_titles_fit_the_name_set() {
        let titled: Vec<String> = (0..3000).map(|i| format!("(('Title {i}', 'f{i}'), '<f8')")).collect();
        let text = format!("[{}]", titled.join(", "));
        let d = dt(&text);
        assert_eq!(d.descr(), text);
        assert_eq!(
            d.as_record().map(|r| r.fields()[2999].title.clone()),
            Some(Some(Literal::Str("Title 2999".into())))
        );
        let e = format!("[{}, ('Title 17', '<i4')]", titled.join(", ")).parse::<DType>().unwrap_err();
        assert!(e.to_string().contains("'Title 17': field name already used"), "{e}");
        // One title, after many names.
        let mut late: Vec<String> = (0..3000).map(|i| format!("('f{i}', '<f8')")).collect();
        late.push("(('T', 'g'), '<i4')".into());
        assert_eq!(dt(&format!("[{}]", late.join(", "))).itemsize(), 3000 * 8 + 4);
        late.push("(('f1234', 'h'), '<i4')".into());
        let e = format!("[{}]", late.join(", ")).parse::<DType>().unwrap_err();
        assert!(e.to_string().contains("'f1234': field title already used"), "{e}");
    }

    #[test]
    fn descr_is_the_repr_of_to_descr() {
        let mut dtypes: Vec<DType> = [
            "'<f8'",
            "'|b1'",
            "'<M8[25s]'",
            "'>m8'",
            "'<M8[D]'",
            "'|O'",
            "'|S0'",
            "'<U0'",
            "'|V12'",
            "'<c32'",
            "'>u8'",
            "('<f8', (2, 3))",
            "(('<f8', (2,)), (3,))",
            "('<i2', (0,))",
            "[('a', '|i1'), ('', '|V7'), ('b', [('c', '<i8'), ('', '|V7')]), ('e', '<i2', (3,)), ('', '|V2')]",
            "[('', '|V2'), ('a', '<i2'), ('', '|V4')]",
            "[((1.5, 'a'), '<i4'), ((b'x\\x00', 'b'), '<U3'), ((7, 'c'), '|u1'), (((1, 'x'), 'd'), '<f4')]",
            "[(('Title \\'q\\'', 'e'), '<f8'), (('t', 'v'), ('>f4', (2, 2)), (3,))]",
            "[(\"it's\", '<f8'), ('a\\\\b', '<f8'), ('é', '<f8'), ('\\n\\x7f', '<f8'), ('\\u200b\\U0001f600', '<f8')]",
            "[('nested', [('x', '<f8'), ('y', [('z', '>i2'), ('w', '<U2')], (2,))], (2, 1)), ('when', '>M8[7ms]')]",
            "[]",
        ]
        .iter()
        .map(|s| dt(s))
        .collect();
        dtypes.push(DType::Scalar(Scalar::new(
            ScalarType::TimeDelta(DateUnit { unit: TimeUnit::Years, multiple: 0 }),
            ByteOrder::Big,
        )));
        dtypes.push(DType::Record(Record::new(vec![Field::new("a", dt("'<f8'"), 3)], 16).unwrap()));
        for d in &dtypes {
            assert_eq!(d.descr(), d.to_descr().repr(), "{d:?}");
            assert_eq!(d.descr().parse::<DType>().ok().as_ref(), Some(d), "{d:?}");
        }
        assert_eq!(dtypes[2].descr(), "'<M8[25s]'");
        assert_eq!(dtypes[17].descr(), r#"[(("Title 'q'", 'e'), '<f8'), (('t', 'v'), ('>f4', (2, 2)), (3,))]"#);
        assert_eq!(dtypes[dtypes.len() - 1].descr(), "[('', '|V3'), ('a', '<f8'), ('', '|V5')]");
    }
}
