//! `save()` of a `numpy.dtype` as CPython pickles NumPy's `dtype.__reduce__()`, and of a
//! dict of plain values and dtypes (a Dask stack's `info`).
//!
//! A dtype is `numpy.dtype(str, False, True)` then `BUILD` with its state (see the decoder's
//! `decode/dtype.rs`). What NumPy leaves to object identity is followed too: NumPy's
//! builtin dtypes (native or no byte order, fixed size: `'<f8'`, `'|b1'`, `'|O'`...) are
//! one object each, so a second use is a memo `GET`; so are CPython's one-character
//! strings (byte orders, one-letter names); a field's name in `names` is the key in
//! `fields`, and a titled field's `(dtype, offset, title)` is one tuple under both keys.
//! The dtype written is the one `np.load` makes of a header: records as
//! `descr_to_dtype` builds them (alignment 1, no `align=True` flag).

use super::{
    Encoder, Saved, BATCH, BUILD, EMPTY_DICT, MARK, NEWFALSE, NEWTRUE, NONE, PROTO, REDUCE, SETITEM, SETITEMS, STOP,
};
use crate::dtype::{ByteOrder, DType, Record, Scalar, ScalarType};
use crate::error::{Error, Result};
use crate::object::pickle::Item;

/// NumPy's `NPY_NEEDS_PYAPI`, set on every record.
const NEEDS_PYAPI: i64 = 0x10;
/// NumPy's `NPY_FROM_FIELDS`: the flags a record or subarray takes from its fields.
const FROM_FIELDS: i64 = 0x1b;

impl Encoder {
    /// `save()` of one dtype.
    pub(super) fn save_dtype(&mut self, dtype: &DType) -> Saved {
        self.boundary();
        let builtin = match dtype {
            DType::Scalar(s) if builtin(*s) => Some(s.type_str()),
            _ => None,
        };
        if let Some(&i) = builtin.as_ref().and_then(|key| self.dtypes.get(key)) {
            self.get(i);
            return Ok(());
        }
        self.save_global("numpy", "dtype");
        self.save_tuple(3, |e| {
            e.save_str(&reduced_descr(dtype));
            e.save_op(NEWFALSE);
            e.save_op(NEWTRUE);
            Ok(())
        })?;
        self.op(REDUCE);
        let index = self.memoize();
        if let Some(key) = builtin {
            self.dtypes.insert(key, index);
        }
        let (elsize, alignment, flags) = numbers(dtype);
        let date_unit = match dtype {
            DType::Scalar(s) => match s.ty() {
                ScalarType::DateTime(u) | ScalarType::TimeDelta(u) => Some(u),
                _ => None,
            },
            _ => None,
        };
        self.save_tuple(if date_unit.is_some() { 9 } else { 8 }, |e| {
            e.save_int(if date_unit.is_some() { 4 } else { 3 });
            let endian = match dtype {
                DType::Scalar(s) => s.order(),
                _ => ByteOrder::NotApplicable,
            };
            e.save_char(endian.as_char());
            match dtype {
                DType::SubArray(a) => e.save_tuple(2, |e| {
                    e.save_dtype(a.base())?;
                    e.save_shape(a.shape())
                })?,
                _ => e.save_op(NONE),
            }
            match dtype {
                DType::Record(r) => e.save_fields(r)?,
                _ => {
                    e.save_op(NONE);
                    e.save_op(NONE);
                }
            }
            e.save_int(elsize);
            e.save_int(alignment);
            e.save_int(flags);
            if let Some(unit) = date_unit {
                e.save_tuple(2, |e| {
                    e.save_op(NONE);
                    let code = match unit.unit.code() {
                        "" => "generic",
                        code => code,
                    };
                    e.save_tuple(4, |e| {
                        e.save_bytes(code.as_bytes());
                        for n in [i64::from(unit.multiple), 1, 1] {
                            e.save_int(n);
                        }
                        Ok(())
                    })
                })?;
            }
            Ok(())
        })?;
        self.op(BUILD);
        Ok(())
    }

    /// A record's `names` tuple and `fields` dict.
    fn save_fields(&mut self, record: &Record) -> Saved {
        let fields = record.fields();
        let mut names = Vec::with_capacity(fields.len());
        self.save_tuple(fields.len(), |e| {
            for f in fields {
                names.push(e.save_name_str(&f.name));
            }
            Ok(())
        })?;
        self.boundary();
        self.op(EMPTY_DICT);
        self.memoize();
        let entries: usize = fields.iter().map(|f| if f.title.is_some() { 2 } else { 1 }).sum();
        let entry = |e: &mut Encoder, i: usize| -> Saved {
            let f = &fields[i];
            e.boundary();
            e.get(names[i]);
            let title = f.title.as_ref();
            let mut title_index = None;
            e.save_tuple(if title.is_some() { 3 } else { 2 }, |e| {
                e.save_dtype(&f.dtype)?;
                e.save_int(f.offset as i64);
                if let Some(t) = title {
                    title_index = Some(e.save_literal(t));
                }
                Ok(())
            })?;
            if let Some(t) = title_index {
                // The title is a key too, for the same tuple (the memo entry just made).
                let tuple = e.memo - 1;
                e.boundary();
                e.get(t);
                e.boundary();
                e.get(tuple);
            }
            Ok(())
        };
        if entries == 1 {
            entry(self, 0)?;
            self.op(SETITEM);
        } else if entries > 0 {
            // `batch_dict_exact` counts items (a title is one more), BATCH to a SETITEMS.
            self.op(MARK);
            let mut in_batch = 0;
            for (i, field) in fields.iter().enumerate() {
                entry(self, i)?;
                in_batch += if field.title.is_some() { 2 } else { 1 };
                if in_batch >= BATCH {
                    self.op(SETITEMS);
                    self.op(MARK);
                    in_batch = 0;
                }
            }
            self.op(SETITEMS);
        }
        Ok(())
    }

    /// A str that CPython may share: one-character strings are one object each.
    fn save_char(&mut self, c: char) {
        let mut buf = [0; 4];
        self.save_name_str(c.encode_utf8(&mut buf));
    }

    /// A str, memoised; one-character strings fetched after their first use. Its memo index.
    pub(super) fn save_name_str(&mut self, s: &str) -> u32 {
        self.boundary();
        let mut chars = s.chars();
        let one = match (chars.next(), chars.next()) {
            (Some(c), None) if u32::from(c) < 256 => Some(c),
            _ => None,
        };
        if let Some(&i) = one.and_then(|c| self.chars.get(&c)) {
            self.get(i);
            return i;
        }
        let i = self.str_unsaved(s);
        if let Some(c) = one {
            self.chars.insert(c, i);
        }
        i
    }

    /// A field title (a str as NumPy writes them; other literals as their values). Its
    /// memo index.
    fn save_literal(&mut self, title: &crate::literal::Literal) -> u32 {
        use crate::literal::Literal;
        match title {
            Literal::Str(s) => self.save_name_str(s),
            Literal::Bytes(b) => {
                self.save_bytes(b);
                self.memo - 1
            }
            other => {
                // Numbers are not memoised; a title is a str in every dtype np.load makes.
                self.save_name_str(&other.repr())
            }
        }
    }

    pub(super) fn save_shape(&mut self, shape: &[usize]) -> Saved {
        self.save_tuple(shape.len(), |e| {
            shape.iter().for_each(|&d| e.save_int(d as i64));
            Ok(())
        })
    }
}

/// Whether NumPy has one object for this dtype (`np.dtype('<f8') is np.dtype('<f8')`).
fn builtin(s: Scalar) -> bool {
    let fixed = matches!(
        s.ty(),
        ScalarType::Bool
            | ScalarType::Int(_)
            | ScalarType::UInt(_)
            | ScalarType::Float(_)
            | ScalarType::Complex(_)
            | ScalarType::Object
    );
    fixed && (s.order() == ByteOrder::NotApplicable || s.is_native())
}

/// The descr a dtype is reduced from: the type without byte order (`'f8'`, `'U5'`, `'M8'`,
/// `'O8'`), `'V<size>'` for records and subarrays.
fn reduced_descr(dtype: &DType) -> String {
    let DType::Scalar(s) = dtype else { return format!("V{}", dtype.itemsize()) };
    match s.ty() {
        ScalarType::Object => "O8".to_string(),
        ScalarType::DateTime(_) => "M8".to_string(),
        ScalarType::TimeDelta(_) => "m8".to_string(),
        ScalarType::Bool => "b1".to_string(),
        _ => s.type_str()[1..].to_string(),
    }
}

/// A dtype's `(elsize, alignment, flags)` in its state.
fn numbers(dtype: &DType) -> (i64, i64, i64) {
    match dtype {
        DType::Scalar(s) => match s.ty() {
            ScalarType::Object => (-1, -1, 63),
            ScalarType::Unicode(n) => (4 * n as i64, 4, 8),
            ScalarType::Bytes(n) | ScalarType::Void(n) => (n as i64, 1, 0),
            _ => (-1, -1, 0),
        },
        DType::Record(r) => {
            let flags = r.fields().iter().fold(NEEDS_PYAPI, |acc, f| acc | (numbers(&f.dtype).2 & FROM_FIELDS));
            (r.itemsize() as i64, 1, flags)
        }
        DType::SubArray(a) => (dtype.itemsize() as i64, alignment(a.base()), numbers(a.base()).2 & FROM_FIELDS),
    }
}

/// NumPy's alignment of a dtype on x86-64 (a subarray's is its base's).
fn alignment(dtype: &DType) -> i64 {
    match dtype {
        DType::Scalar(s) => match s.ty() {
            ScalarType::Unicode(_) => 4,
            ScalarType::Bytes(_) | ScalarType::Void(_) | ScalarType::Bool => 1,
            ScalarType::Complex(n) => i64::from(n / 2).min(16),
            ScalarType::Float(16) => 16,
            ty => ty.itemsize() as i64,
        },
        DType::Record(_) => 1,
        DType::SubArray(a) => alignment(a.base()),
    }
}

/// The pickle Python's `pickle.dumps(d)` (protocol 4) writes for a dict of `str` keys and
/// plain values or dtypes, such as Dask's `{'chunks': ..., 'dtype': ..., 'axis': ...}`.
///
/// # Errors
/// [`crate::ErrorKind::Usage`] for a value that cannot be written (see
/// [`encode_array`](super::encode_array)).
pub(crate) fn encode_dict(entries: &[(&str, Item)]) -> Result<Vec<u8>> {
    let mut e = Encoder::default();
    e.write(&[PROTO, 4]);
    e.framing = true;
    e.boundary();
    e.op(EMPTY_DICT);
    e.memoize();
    let pair = |e: &mut Encoder, key: &str, value: &Item| -> std::result::Result<(), String> {
        e.save_value_str(key);
        match value {
            Item::Object(o) => e.object(o, 1),
            Item::Dtype(d) => e.save_dtype(d),
        }
    };
    let written: std::result::Result<(), String> = (|| {
        match entries {
            [] => {}
            [(k, v)] => {
                pair(&mut e, k, v)?;
                e.op(SETITEM);
            }
            _ => {
                for batch in entries.chunks(BATCH) {
                    e.op(MARK);
                    for (k, v) in batch {
                        pair(&mut e, k, v)?;
                    }
                    e.op(SETITEMS);
                }
            }
        }
        Ok(())
    })();
    written.map_err(Error::usage)?;
    e.op(STOP);
    e.commit_frame();
    Ok(e.out)
}
