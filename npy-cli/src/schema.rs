//! `npy schema FILE [--rust]`: a file's dtype as a readable tree, or as Rust source — one
//! `#[derive(NpyRecord)]` struct per record — that reads the file and writes it back.
//!
//! The generator is a pure function of the header ([`tree`], [`rust_source`]); `run` only
//! opens the file (or `.npz` member) and prints.

use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use npy_core::dtype::{ByteOrder, DType, Record, ScalarType, TimeUnit};
use npy_core::header::{shape_repr, Header, DEFAULT_MAX_HEADER_SIZE};
use npy_core::literal::Literal;
use npy_core::npz::{self, Reader};
use npy_core::{ErrorKind, Result};

use crate::read_args::ReadArgs;

/// Show a file's dtype as a tree (fields, offsets, types); with --rust, as Rust structs
/// with #[derive(NpyRecord)] that read the file and write it back.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The .npy or .npz file.
    file: PathBuf,
    /// Print Rust source: one #[derive(NpyRecord)] struct per record.
    #[arg(long)]
    rust: bool,
    /// Name of the top-level struct (default: the file stem or member name in CamelCase).
    #[arg(long, value_name = "NAME", requires = "rust")]
    name: Option<String>,
    /// The .npz member to describe (default: all members; with --rust, the only one).
    #[arg(long, value_name = "NAME")]
    member: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
}

/// Prints the schema of the file (or of members of an `.npz`).
pub fn run(args: &Args) -> Result<()> {
    let (file, opts) = (args.file.as_path(), &args.read.options());
    if let Some(name) = &args.name {
        if !is_plain_ident(name) {
            return Err(usage(format!("--name {name:?} is not a Rust identifier")));
        }
        if TAKEN_TYPE_NAMES.contains(&name.as_str()) {
            return Err(usage(format!("--name {name}: the generated code uses that name for something else")));
        }
    }
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let label = file.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut targets: Vec<(String, Option<String>, Header)> = Vec::new(); // (file label, member, header)
    if npz::is_npz(file)? {
        let mut reader = Reader::from_path_with(file, npy_core::npz::ReaderOptions::new().read_options(opts))?;
        let mut npy_members = Vec::new();
        for m in reader.members().to_vec() {
            if reader.is_npy(&m.name)? {
                npy_members.push(m);
            }
        }
        let chosen: Vec<_> = match &args.member {
            Some(want) => {
                let m = npz::MemberInfo::find(&npy_members, want).ok_or_else(|| {
                    let names: Vec<&str> = npy_members.iter().map(|m| m.name.as_str()).collect();
                    usage(format!("the archive has no .npy member {want:?} (it has {names:?})")).reading(file)
                })?;
                vec![m.clone()]
            }
            None if args.rust && npy_members.len() != 1 => {
                let names: Vec<&str> = npy_members.iter().map(|m| m.name.as_str()).collect();
                return Err(usage(format!(
                    "the archive has {} .npy members {names:?}: choose one with --member",
                    npy_members.len()
                ))
                .reading(file));
            }
            None => npy_members,
        };
        for m in chosen {
            let header = reader.npy(&m.name)?.header().clone();
            targets.push((label.clone(), Some(m.name), header));
        }
    } else {
        if let Some(member) = &args.member {
            return Err(usage(format!("--member {member:?} applies to .npz archives only")).reading(file));
        }
        let header = npy_core::NpyReader::from_path_with(file, opts)?.header().clone();
        targets.push((label, None, header));
    }
    let mut text = String::new();
    for (i, (label, member, header)) in targets.iter().enumerate() {
        if args.rust {
            let name = args.name.clone().unwrap_or_else(|| default_top_name(member.as_deref().unwrap_or(&stem)));
            text.push_str(&rust_source(header, &name, label, member.as_deref())?);
        } else {
            if i > 0 {
                text.push('\n');
            }
            if let Some(m) = member {
                let _ = writeln!(text, "member:   {}", display_name(m));
            }
            text.push_str(&tree(header));
        }
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn usage(reason: String) -> npy_core::Error {
    ErrorKind::Usage { reason }.into()
}

// ---------------------------------------------------------------------------------------
// Packing arithmetic shared by the tree and the generator.

/// Size and alignment of `dtype` laid out as a C struct (`#[repr(C)]`) of Rust types:
/// scalars aligned to their size (complex to half, `U` to 4, `S`/`V`/`b1` to 1), arrays to
/// their element, records field by field in order, their size rounded up to their alignment.
fn c_layout(dtype: &DType) -> (usize, usize) {
    match dtype {
        DType::Scalar(s) => {
            let align = match s.ty() {
                ScalarType::Bool | ScalarType::Bytes(_) | ScalarType::Void(_) => 1,
                ScalarType::Int(n) | ScalarType::UInt(n) | ScalarType::Float(n) => n as usize,
                ScalarType::Complex(n) => n as usize / 2,
                ScalarType::DateTime(_) | ScalarType::TimeDelta(_) | ScalarType::Object => 8,
                ScalarType::Unicode(_) => 4,
            };
            (s.itemsize(), align)
        }
        DType::SubArray(a) => {
            let (size, align) = c_layout(a.flat_base());
            (size * a.flat_shape().iter().product::<usize>(), align)
        }
        DType::Record(r) => {
            let (_, size, align) = c_offsets(r);
            (size, align)
        }
    }
}

/// The C layout of a record's fields in order: their offsets, the size and the alignment.
fn c_offsets(r: &Record) -> (Vec<usize>, usize, usize) {
    let mut offsets = Vec::with_capacity(r.fields().len());
    let (mut end, mut max_align) = (0usize, 1usize);
    for f in r.fields() {
        let (size, align) = c_layout(&f.dtype);
        end = end.next_multiple_of(align);
        offsets.push(end);
        end += size;
        max_align = max_align.max(align);
    }
    (offsets, end.next_multiple_of(max_align), max_align)
}

/// How a record's fields sit in its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Packing {
    /// Back to back, no padding (NumPy's default).
    Packed,
    /// As a C struct of the fields (NumPy's `align=True`).
    Aligned,
    /// Anything else: explicit offsets and itemsize.
    Explicit,
}

fn layout(r: &Record) -> Packing {
    let mut end = 0;
    let packed = r.fields().iter().all(|f| {
        let ok = f.offset == end;
        end = f.offset + f.dtype.itemsize();
        ok
    }) && r.itemsize() == end;
    if packed {
        return Packing::Packed;
    }
    let (offsets, size, _) = c_offsets(r);
    if size == r.itemsize() && r.fields().iter().zip(&offsets).all(|(f, &o)| f.offset == o) {
        Packing::Aligned
    } else {
        Packing::Explicit
    }
}

// ---------------------------------------------------------------------------------------
// The tree.

/// The dtype of `header` as an indented tree: one line per field with its offset (within
/// its record), type string and a plain description; padding shown where it is.
pub fn tree(header: &Header) -> String {
    let mut out = String::new();
    let order = if header.fortran_order { "Fortran order" } else { "C order" };
    let _ = writeln!(out, "shape:    {} ({order})", shape_repr(&header.shape));
    let _ = writeln!(out, "itemsize: {} bytes", header.dtype.itemsize());
    match &header.dtype {
        DType::Record(r) => {
            let _ = writeln!(out, "dtype:    record, {}", record_summary(r));
            let mut rows = Vec::new();
            tree_rows(r, 1, &mut rows);
            let width = rows.iter().map(|(indent, name, ..)| 2 * indent + name.chars().count()).max().unwrap_or(0);
            let width = width.min(48);
            let off_width = rows.iter().map(|(_, _, off, ..)| off.len()).max().unwrap_or(0);
            let ty_width = rows.iter().map(|(_, _, _, ty, _)| ty.chars().count()).max().unwrap_or(0).min(24);
            for (indent, name, off, ty, what) in rows {
                let pad = width.saturating_sub(2 * indent + name.chars().count());
                let line = format!(
                    "{:indent$}{name}{:pad$}  {off:<off_width$}  {ty:<ty_width$}  {what}",
                    "",
                    "",
                    indent = 2 * indent
                );
                let _ = writeln!(out, "{}", line.trim_end());
            }
        }
        other => {
            let _ = writeln!(out, "dtype:    {}  {}", other.descr(), describe(other));
        }
    }
    out
}

/// `(indent, name, "@offset", type, description)`
type Row = (usize, String, String, String, String);

fn record_summary(r: &Record) -> String {
    let n = r.fields().len();
    let layout = match layout(r) {
        Packing::Packed => "packed",
        Packing::Aligned => "aligned (C layout)",
        Packing::Explicit => "explicit offsets",
    };
    format!("{} bytes, {n} field{}, {layout}", r.itemsize(), if n == 1 { "" } else { "s" })
}

fn tree_rows(r: &Record, indent: usize, rows: &mut Vec<Row>) {
    let mut end = 0;
    let pad = |rows: &mut Vec<Row>, at: usize, len: usize| {
        rows.push((indent, "(padding)".into(), format!("@{at}"), String::new(), format!("{len} bytes")));
    };
    for f in r.fields() {
        if f.offset > end {
            pad(rows, end, f.offset - end);
        }
        end = f.offset + f.dtype.itemsize();
        let mut what = describe(&f.dtype);
        if let Some(t) = &f.title {
            what = format!("{what}; title {}", t.repr());
        }
        let (ty, nested) = match &f.dtype {
            DType::Scalar(s) => (s.type_str(), None),
            DType::SubArray(a) => match a.flat_base() {
                DType::Record(inner) => (format!("record {}", shape_repr(&a.flat_shape())), Some(inner)),
                base => (format!("{} {}", base.descr().trim_matches('\''), shape_repr(&a.flat_shape())), None),
            },
            DType::Record(inner) => ("record".to_string(), Some(inner)),
        };
        rows.push((indent, display_name(&f.name), format!("@{}", f.offset), ty, what));
        if let Some(inner) = nested {
            tree_rows(inner, indent + 1, rows);
        }
    }
    if r.itemsize() > end {
        pad(rows, end, r.itemsize() - end);
    }
}

/// A field name as is when it prints plainly, else as Python would quote it.
fn display_name(name: &str) -> String {
    let plain = !name.is_empty() && name.chars().all(|c| !c.is_whitespace() && !c.is_control() && c != '\'');
    if plain {
        name.to_string()
    } else {
        Literal::Str(name.to_string()).repr()
    }
}

/// A plain description: `float64, big-endian`, `24 bytes, 3 fields, packed`, ...
fn describe(dtype: &DType) -> String {
    match dtype {
        DType::Record(r) => record_summary(r),
        DType::SubArray(a) => {
            let base = match a.flat_base() {
                DType::Record(r) => format!("records of {} bytes", r.itemsize()),
                other => describe(other),
            };
            format!("{} × {base} = {} bytes", shape_repr(&a.flat_shape()), dtype.itemsize())
        }
        DType::Scalar(s) => {
            let what = match s.ty() {
                ScalarType::Bool => "bool".to_string(),
                ScalarType::Int(n) => format!("int{}", 8 * n as usize),
                ScalarType::UInt(n) => format!("uint{}", 8 * n as usize),
                ScalarType::Float(16) => "long double (x86 80-bit in 16 bytes)".to_string(),
                ScalarType::Float(n) => format!("float{}", 8 * n as usize),
                ScalarType::Complex(32) => "complex long double".to_string(),
                ScalarType::Complex(n) => format!("complex{}", 8 * n as usize),
                ScalarType::DateTime(u) => format!("datetime64{}", unit_suffix(u.unit, u.multiple)),
                ScalarType::TimeDelta(u) => format!("timedelta64{}", unit_suffix(u.unit, u.multiple)),
                ScalarType::Bytes(n) => format!("bytes, up to {n}"),
                ScalarType::Unicode(n) => format!("str of up to {n} UCS-4 chars"),
                ScalarType::Void(n) => format!("raw bytes, {n}"),
                ScalarType::Object => "Python objects (pickled)".to_string(),
            };
            match s.order() {
                ByteOrder::Little => format!("{what}, little-endian"),
                ByteOrder::Big => format!("{what}, big-endian"),
                ByteOrder::NotApplicable => what,
            }
        }
    }
}

fn unit_suffix(unit: TimeUnit, multiple: u32) -> String {
    match (unit, multiple) {
        (TimeUnit::Generic, _) => " (generic unit)".to_string(),
        (u, 1) => format!("[{}]", u.code()),
        (u, n) => format!("[{n}{}]", u.code()),
    }
}

// ---------------------------------------------------------------------------------------
// Rust source.

/// Rust source that reads a file of this header: `use` lines and one
/// `#[derive(NpyRecord)]` struct per record (the top one named `name`), or, for a
/// non-record dtype, a comment naming the element type. `file` (and `member`, for an
/// `.npz`) name the source in the opening comment.
///
/// # Errors
/// [`ErrorKind::UnsupportedDtype`] when no derived struct can read the dtype: long double
/// (`f16`, `c32`) fields, datetimes whose unit has a multiple other than 1.
pub fn rust_source(header: &Header, name: &str, file: &str, member: Option<&str>) -> Result<String> {
    let mut out = String::new();
    let source = match member {
        Some(m) => format!("{}, member {}", one_line(file), rust_str(m)),
        None => one_line(file),
    };
    let shape = shape_repr(&header.shape);
    let order = if header.fortran_order { ", Fortran order" } else { "" };
    let rec = match &header.dtype {
        DType::Record(r) => r,
        other => {
            let mut gen = Gen::default();
            let ty = gen.field_type(other, "", "the elements")?;
            let _ =
                writeln!(out, "// {source}: shape {shape}{order}, elements {} ({}).", other.descr(), describe(other));
            let _ = write!(out, "// Only records need structs: read it with `{}`", read_call(header, &ty.text, member));
            match gen.imports().as_slice() {
                [] => out.push_str(
                    ".
",
                ),
                uses => {
                    let _ = writeln!(out, "\n// (`{}`).", uses.join(" "));
                }
            }
            return Ok(out);
        }
    };
    let mut gen = Gen::default();
    gen.reserve_names(name);
    gen.record(rec, Some(name), "", "")?;
    let _ = writeln!(
        out,
        "// Generated by `npy schema --rust` from {source}: shape {shape}{order}, records of {} bytes.",
        rec.itemsize()
    );
    if c_layout(&header.dtype).0 == 0 && header.element_count().is_ok_and(|n| n > 0) {
        out.push_str("// The struct has no bytes: npy-core reads no elements of a zero-sized type, so only an\n");
        out.push_str("// empty array of it reads; read the file itself with DynArray.\n");
    } else {
        let _ = writeln!(out, "// Read it with `{}`.", read_call(header, name, member));
    }
    let features: Vec<&str> = [(gen.half, "\"half\""), (gen.complex, "\"num-complex\"")]
        .into_iter()
        .filter_map(|(used, f)| used.then_some(f))
        .collect();
    if !features.is_empty() {
        let (s, deps) =
            if features.len() > 1 { ("s", "those crates as dependencies") } else { ("", "that crate as a dependency") };
        let _ = writeln!(out, "// Needs npy-core's feature{s} {} (and {deps}).", features.join(" and "));
    }
    for line in gen.imports() {
        let _ = writeln!(out, "{line}");
    }
    for s in &gen.structs {
        out.push('\n');
        s.emit(&mut out);
    }
    Ok(out)
}

/// The call that reads the file (or member) as `ty`.
fn read_call(header: &Header, ty: &str, member: Option<&str>) -> String {
    let one_d = header.shape.len() == 1;
    // The dict is most of the header; the preamble and padding are under 1000 bytes.
    let dict_len = header.dict_text().len();
    let limit = (dict_len + 1000 > DEFAULT_MAX_HEADER_SIZE).then(|| (dict_len + 1000).next_multiple_of(1000));
    match (member, limit) {
        (None, None) if one_d => format!("Vec::<{ty}>::read_npy(path)"),
        (None, None) => format!("Array::<{ty}>::read_npy(path)"),
        (None, Some(n)) => {
            format!("Array::<{ty}>::read_npy_with(path, npy_core::ReadOptions::new().max_header_size({n}))")
        }
        (Some(m), limit) => {
            let open = match limit {
                None => "npy_core::npz::Reader::from_path(path)?".to_string(),
                Some(n) => format!(
                    "npy_core::npz::Reader::from_path_with(path, npy_core::npz::ReaderOptions::new().read_options(npy_core::ReadOptions::new().max_header_size({n})))?"
                ),
            };
            let read = if one_d { format!("Vec<{ty}>") } else { format!("Array<{ty}>") };
            format!("{open}.read::<{read}>({})", rust_str(m))
        }
    }
}

/// `s` on one line: control characters escaped, everything else as is.
fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// Names a struct may not take: what the generated code imports or the prelude holds.
const TAKEN_TYPE_NAMES: &[&str] = &[
    "Self",
    "Bytes",
    "Ucs4",
    "Void",
    "DateTime64",
    "TimeDelta64",
    "Complex",
    "NpyRecord",
    "Array",
    "DynArray",
    "ReadNpy",
    "WriteNpy",
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "Vec",
    "String",
    "Box",
    "ToString",
    "ToOwned",
    "Clone",
    "Copy",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Iterator",
    "IntoIterator",
    "Extend",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "From",
    "Into",
    "TryFrom",
    "TryInto",
    "FromIterator",
    "AsRef",
    "AsMut",
    "Default",
    "Eq",
    "PartialEq",
    "Ord",
    "PartialOrd",
    "Debug",
    "Hash",
];

/// Rust keywords (strict, reserved, and `gen` of edition 2024): never a field name.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super",
    "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box",
    "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

#[derive(Debug, Default)]
struct Gen {
    structs: Vec<StructOut>,
    /// Records already given a struct (identical nested records share one).
    seen: Vec<(Record, usize)>,
    type_names: HashSet<String>,
    types_used: BTreeSet<&'static str>,
    half: bool,
    complex: bool,
}

#[derive(Debug, Default)]
struct StructOut {
    name: String,
    /// Contents of the container `#[npy(..)]`.
    npy: Vec<String>,
    repr_c: bool,
    allow_non_snake: bool,
    fields: Vec<FieldOut>,
    /// Structs used by this one's fields.
    uses: Vec<usize>,
}

#[derive(Debug, Default)]
struct FieldOut {
    comments: Vec<String>,
    npy: Vec<String>,
    ident: String,
    ty: String,
}

/// A field's Rust type.
#[derive(Debug)]
struct Ty {
    text: String,
    /// Byte order of its multi-byte scalars (none for records and one-byte types).
    order: Option<ByteOrder>,
    /// The generated struct it holds, if any.
    nested: Option<usize>,
}

impl StructOut {
    fn emit(&self, out: &mut String) {
        out.push_str("#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]\n");
        if !self.npy.is_empty() {
            let _ = writeln!(out, "#[npy({})]", self.npy.join(", "));
        }
        if self.repr_c {
            out.push_str("#[repr(C)]\n");
        }
        if self.allow_non_snake {
            out.push_str("#[allow(non_snake_case)]\n");
        }
        if self.fields.is_empty() {
            let _ = writeln!(out, "pub struct {} {{}}", self.name);
            return;
        }
        let _ = writeln!(out, "pub struct {} {{", self.name);
        for f in &self.fields {
            for c in &f.comments {
                let _ = writeln!(out, "    // {c}");
            }
            if !f.npy.is_empty() {
                let _ = writeln!(out, "    #[npy({})]", f.npy.join(", "));
            }
            let _ = writeln!(out, "    pub {}: {},", f.ident, f.ty);
        }
        out.push_str("}\n");
    }
}

impl Gen {
    /// The `use` lines the generated code needs, in rustfmt's order.
    fn imports(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.half {
            lines.push("use half::f16;".to_string());
        }
        if !self.structs.is_empty() {
            lines.push("use npy_core::prelude::*;".to_string());
        }
        // Within braces rustfmt puts modules (lower case) before types.
        let mut types: Vec<&str> = self.types_used.iter().copied().collect();
        types.sort_by_key(|s| (s.starts_with(char::is_uppercase), *s));
        match types.as_slice() {
            [] => {}
            [one] => lines.push(format!("use npy_core::types::{one};")),
            many => lines.push(format!("use npy_core::types::{{{}}};", many.join(", "))),
        }
        if self.complex {
            lines.push("use num_complex::Complex;".to_string());
        }
        lines
    }

    fn reserve_names(&mut self, top: &str) {
        self.type_names.extend(TAKEN_TYPE_NAMES.iter().map(|s| s.to_string()));
        self.type_names.insert(top.to_string());
    }

    /// A struct name not used yet, from `hint` (CamelCase), with 2, 3, ... appended if needed.
    fn fresh_type_name(&mut self, hint: &str) -> String {
        let base = type_name_from(hint);
        let mut name = base.clone();
        let mut n = 2;
        while self.type_names.contains(&name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.type_names.insert(name.clone());
        name
    }

    /// The struct for `rec` (generated now unless an identical record has one), and its index.
    /// `name` is given for the top record; nested ones are named from `hint`.
    fn record(&mut self, rec: &Record, name: Option<&str>, hint: &str, path: &str) -> Result<usize> {
        if name.is_none() {
            if let Some((_, i)) = self.seen.iter().find(|(r, _)| r == rec) {
                return Ok(*i);
            }
        }
        let name = match name {
            Some(n) => n.to_string(),
            None => self.fresh_type_name(hint),
        };
        let index = self.structs.len();
        self.structs.push(StructOut { name, ..StructOut::default() });
        self.seen.push((rec.clone(), index));

        let idents = field_idents(rec);
        let mut fields = Vec::with_capacity(rec.fields().len());
        let mut tys = Vec::with_capacity(rec.fields().len());
        for (f, ident) in rec.fields().iter().zip(&idents) {
            let field_path = if path.is_empty() { f.name.clone() } else { format!("{path}.{}", f.name) };
            let ty = self.field_type(&f.dtype, ident.trim_end_matches('_'), &field_path)?;
            let mut out = FieldOut { ident: ident.clone(), ty: ty.text.clone(), ..FieldOut::default() };
            if *ident != f.name {
                out.npy.push(format!("rename = {}", rust_str(&f.name)));
            }
            match &f.title {
                None => {}
                Some(Literal::Str(t)) => out.npy.push(format!("title = {}", rust_str(t))),
                Some(other) => out.comments.push(format!(
                    "NumPy title {} is not a str: a derived struct reads this field but writes it without the title",
                    one_line(&other.repr())
                )),
            }
            if let DType::SubArray(a) = &f.dtype {
                if matches!(a.base(), DType::SubArray(_)) {
                    out.comments.push(format!(
                        "the file nests subarrays ({}); this array is written as one shape {}",
                        one_line(&f.dtype.descr()),
                        shape_repr(&a.flat_shape())
                    ));
                }
            }
            fields.push(out);
            tys.push(ty);
        }

        // Byte order: on the struct when every multi-byte scalar is foreign, else per field.
        let foreign = ByteOrder::NATIVE.swapped();
        let orders: Vec<ByteOrder> = tys.iter().filter_map(|t| t.order).collect();
        let all_foreign = !orders.is_empty() && orders.iter().all(|&o| o == foreign);
        let mut npy = Vec::new();
        if all_foreign {
            npy.push(format!("endian = \"{}\"", endian_name(foreign)));
        } else {
            for (field, ty) in fields.iter_mut().zip(&tys) {
                if ty.order == Some(foreign) {
                    field.npy.push(format!("endian = \"{}\"", endian_name(foreign)));
                }
            }
        }

        // Packing: packed as is, aligned as a C struct, or explicit offsets and itemsize.
        let layout = layout(rec);
        let mut repr_c = false;
        match layout {
            Packing::Packed => {}
            Packing::Aligned => {
                npy.insert(0, "align".to_string());
                repr_c = true;
            }
            Packing::Explicit => {
                let mut end = 0;
                for (field, f) in fields.iter_mut().zip(rec.fields()) {
                    if f.offset != end {
                        field.npy.push(format!("offset = {}", f.offset));
                    }
                    end = f.offset + f.dtype.itemsize();
                }
                if rec.itemsize() != end {
                    npy.push(format!("itemsize = {}", rec.itemsize()));
                }
            }
        }
        let uses: Vec<usize> = tys.iter().filter_map(|t| t.nested).collect();
        let allow_non_snake = idents.iter().any(|i| !is_snake_case(i));
        let s = &mut self.structs[index];
        s.npy = npy;
        s.allow_non_snake = allow_non_snake;
        s.fields = fields;
        s.uses = uses;
        if repr_c {
            // An aligned struct's offsets come from rustc: the structs it holds need a
            // predictable (C) layout too, all the way down.
            self.mark_repr_c(index);
        }
        Ok(index)
    }

    fn mark_repr_c(&mut self, index: usize) {
        if self.structs[index].repr_c {
            return;
        }
        self.structs[index].repr_c = true;
        for i in self.structs[index].uses.clone() {
            self.mark_repr_c(i);
        }
    }

    /// The Rust type of a field of dtype `dtype`; `hint` names a nested struct, `path` the
    /// field in errors.
    fn field_type(&mut self, dtype: &DType, hint: &str, path: &str) -> Result<Ty> {
        match dtype {
            DType::Record(r) => {
                let i = self.record(r, None, hint, path)?;
                Ok(Ty { text: self.structs[i].name.clone(), order: None, nested: Some(i) })
            }
            DType::SubArray(a) => {
                let mut ty = self.field_type(a.flat_base(), hint, path)?;
                for d in a.flat_shape().iter().rev() {
                    ty.text = format!("[{}; {d}]", ty.text);
                }
                Ok(ty)
            }
            DType::Scalar(s) => {
                let unsupported = |reason: String| -> npy_core::Error {
                    ErrorKind::UnsupportedDtype { descr: format!("{} (field '{path}')", s.type_str()), reason }.into()
                };
                let text = match s.ty() {
                    ScalarType::Bool => "bool".to_string(),
                    ScalarType::Int(n) => format!("i{}", 8 * n as usize),
                    ScalarType::UInt(n) => format!("u{}", 8 * n as usize),
                    ScalarType::Float(2) => {
                        self.half = true;
                        "f16".to_string()
                    }
                    ScalarType::Float(n @ (4 | 8)) => format!("f{}", 8 * n as usize),
                    ScalarType::Complex(n @ (8 | 16)) => {
                        self.complex = true;
                        format!("Complex<f{}>", 4 * n as usize)
                    }
                    ScalarType::Float(_) | ScalarType::Complex(_) => {
                        return Err(unsupported(
                            "long double has no Rust type, so no derived struct can read this file \
                             (npy copy and DynArray handle it as raw bytes)"
                                .to_string(),
                        ))
                    }
                    ScalarType::DateTime(u) | ScalarType::TimeDelta(u) => {
                        let Some(unit) = unit_type(u.unit).filter(|_| u.multiple == 1) else {
                            return Err(unsupported(format!(
                                "DateTime64/TimeDelta64 take units with multiple 1, not {}{}",
                                u.multiple,
                                u.unit.code()
                            )));
                        };
                        let kind = if matches!(s.ty(), ScalarType::DateTime(_)) { "DateTime64" } else { "TimeDelta64" };
                        self.types_used.insert(kind);
                        self.types_used.insert("unit");
                        format!("{kind}<unit::{unit}>")
                    }
                    ScalarType::Bytes(n) => {
                        self.types_used.insert("Bytes");
                        format!("Bytes<{n}>")
                    }
                    ScalarType::Unicode(n) => {
                        self.types_used.insert("Ucs4");
                        format!("Ucs4<{n}>")
                    }
                    ScalarType::Void(n) => {
                        self.types_used.insert("Void");
                        format!("Void<{n}>")
                    }
                    ScalarType::Object => {
                        return Err(unsupported(
                            "object arrays are read as npy_core::object::Object, not records".into(),
                        ))
                    }
                };
                let order = Some(s.order()).filter(|o| *o != ByteOrder::NotApplicable);
                Ok(Ty { text, order, nested: None })
            }
        }
    }
}

fn endian_name(order: ByteOrder) -> &'static str {
    match order {
        ByteOrder::Big => "big",
        _ => "little",
    }
}

/// The marker type of `npy_core::types::unit` for a unit.
fn unit_type(unit: TimeUnit) -> Option<&'static str> {
    Some(match unit {
        TimeUnit::Generic => "Generic",
        TimeUnit::Years => "Years",
        TimeUnit::Months => "Months",
        TimeUnit::Weeks => "Weeks",
        TimeUnit::Days => "Days",
        TimeUnit::Hours => "Hours",
        TimeUnit::Minutes => "Minutes",
        TimeUnit::Seconds => "Seconds",
        TimeUnit::Milliseconds => "Millis",
        TimeUnit::Microseconds => "Micros",
        TimeUnit::Nanoseconds => "Nanos",
        TimeUnit::Picoseconds => "Picos",
        TimeUnit::Femtoseconds => "Femtos",
        TimeUnit::Attoseconds => "Attos",
    })
}

/// A Rust string literal for `s` (`{:?}` escapes exactly as Rust source needs).
fn rust_str(s: &str) -> String {
    format!("{s:?}")
}

// ---------------------------------------------------------------------------------------
// Names.

/// A plain (non-raw) Rust identifier: ASCII, not a keyword, not `_`.
fn is_plain_ident(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else { return false };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && s != "_"
        && !KEYWORDS.contains(&s)
}

/// rustc's `non_snake_case` test.
fn is_snake_case(ident: &str) -> bool {
    let mut allow_underscore = true;
    ident.trim_matches('_').chars().all(|c| {
        let ok = match c {
            '_' => allow_underscore,
            c => !c.is_uppercase(),
        };
        allow_underscore = c != '_';
        ok
    })
}

/// Each field's Rust name: its NumPy name when that is a plain identifier, else an ASCII
/// snake_case rendering of it (`it's` → `it_s`, `café` → `cafe`, `type` → `type_`,
/// `温度` → `field_0`), made unique within the struct.
fn field_idents(rec: &Record) -> Vec<String> {
    let mut used: HashSet<String> =
        rec.fields().iter().filter(|f| is_plain_ident(&f.name)).map(|f| f.name.clone()).collect();
    rec.fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if is_plain_ident(&f.name) {
                return f.name.clone();
            }
            let base = snake_from(&f.name, i);
            let sep = if base.ends_with('_') { "" } else { "_" };
            let mut ident = base.clone();
            let mut n = 2;
            while used.contains(&ident) {
                ident = format!("{base}{sep}{n}");
                n += 1;
            }
            used.insert(ident.clone());
            ident
        })
        .collect()
}

/// ASCII snake_case from any name; `field_{index}` when nothing ASCII is left.
fn snake_from(name: &str, index: usize) -> String {
    let mut s = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' | '0'..='9' => s.push(c),
            _ => match fold_latin(c) {
                Some(t) => s.push_str(t),
                None => s.push('_'),
            },
        }
    }
    let mut out = String::with_capacity(s.len());
    for part in s.split('_').filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(part);
    }
    if out.is_empty() {
        return format!("field_{index}");
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "f_");
    }
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Latin-1 letters without their accents.
fn fold_latin(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => "a",
        'æ' => "ae",
        'ç' => "c",
        'è' | 'é' | 'ê' | 'ë' => "e",
        'ì' | 'í' | 'î' | 'ï' => "i",
        'ð' => "d",
        'ñ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' => "o",
        'ù' | 'ú' | 'û' | 'ü' => "u",
        'ý' | 'ÿ' => "y",
        'ß' => "ss",
        'þ' => "th",
        _ => return None,
    })
}

/// The top struct's default name: the file stem (or member name) in CamelCase; `Record`
/// when that has nothing ASCII to build on.
fn default_top_name(stem: &str) -> String {
    if !stem.chars().any(|c| c.is_ascii_alphanumeric()) {
        return "Record".to_string();
    }
    let name = type_name_from(stem);
    if TAKEN_TYPE_NAMES.contains(&name.as_str()) {
        format!("{name}Record")
    } else {
        name
    }
}

/// A CamelCase type name from any name (`receiver` → `Receiver`, `traces_be` →
/// `TracesBe`); `Record` in front when it would not start with a letter.
fn type_name_from(name: &str) -> String {
    let snake = snake_from(name, 0);
    let snake = snake.strip_prefix("f_").filter(|_| !name.starts_with("f_")).unwrap_or(&snake);
    let mut out = String::new();
    for part in snake.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert_str(0, "Record");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(descr: &str, shape: &[usize]) -> Header {
        Header::new(descr.parse().unwrap(), shape.to_vec())
    }

    fn rust(descr: &str) -> String {
        rust_source(&header(descr, &[3]), "Rec", "t.npy", None).unwrap_or_else(|e| panic!("{descr}: {e}"))
    }

    #[test]
    fn names_become_identifiers() {
        let r = "[(\"it's\", '<i2'), ('type', '<i2'), ('café', '<i2'), ('温度', '<i2'), ('it_s', '<i2'), ('1st', '|u1'), ('be_U2', '<i2')]"
            .parse::<DType>()
            .unwrap();
        assert_eq!(
            field_idents(r.as_record().unwrap()),
            ["it_s_2", "type_", "cafe", "field_3", "it_s", "f_1st", "be_U2"]
        );
        assert_eq!(type_name_from("traces_be_aligned"), "TracesBeAligned");
        assert_eq!(type_name_from("3x4_F"), "Record3x4F");
        assert_eq!(type_name_from("l1"), "L1");
        assert_eq!(default_top_name("bytes"), "BytesRecord");
        assert_eq!(default_top_name("温度"), "Record");
        assert!(is_snake_case("le_i4") && !is_snake_case("be_U2") && !is_snake_case("a__b"));
    }

    #[test]
    fn packed_aligned_and_explicit_layouts() {
        let packed = rust("[('a', '<i4'), ('b', '>f8')]");
        assert!(
            packed.contains("pub struct Rec {\n    pub a: i32,\n    #[npy(endian = \"big\")]\n    pub b: f64,\n}"),
            "{packed}"
        );
        let aligned = rust("[('a', '|u1'), ('', '|V7'), ('b', '<f8'), ('c', '<i2'), ('', '|V6')]");
        assert!(aligned.contains("#[npy(align)]\n#[repr(C)]\npub struct Rec {"), "{aligned}");
        let explicit =
            rust("[('', '|V4'), ('a', '<i4'), ('', '|V8'), ('b', '<f8'), ('', '|V1'), ('c', '|u1'), ('', '|V6')]");
        assert!(explicit.contains("#[npy(itemsize = 32)]"), "{explicit}");
        assert!(explicit.contains("#[npy(offset = 4)]\n    pub a: i32,"), "{explicit}");
        assert!(explicit.contains("#[npy(offset = 25)]\n    pub c: u8,"), "{explicit}");
    }

    #[test]
    fn nested_records_arrays_and_byte_order() {
        let src = rust(
            "[('id', '<u2'), ('pts', [('x', '>f4'), ('y', '>i2')], (2,)), ('m', '>i2', (2, 3)), ('q', [('x', '>f4'), ('y', '>i2')])]",
        );
        assert!(src.contains("pub pts: [Pts; 2],"), "{src}");
        assert!(src.contains("#[npy(endian = \"big\")]\n    pub m: [[i16; 3]; 2],"), "{src}");
        assert!(src.contains("pub q: Pts,"), "{src}");
        assert!(src.contains("#[npy(endian = \"big\")]\npub struct Pts {"), "{src}");
    }

    #[test]
    fn types_titles_and_renames() {
        let src = rust("[(('Trace id', 'tid'), '<i4'), ('say \"hi\"', '<M8[ns]'), ('h', '<f2'), ('c', '<c16'), ('s', '|S3'), ('u', '<U2'), ('v', '|V3')]");
        for want in [
            "#[npy(title = \"Trace id\")]\n    pub tid: i32,",
            "#[npy(rename = \"say \\\"hi\\\"\")]\n    pub say_hi: DateTime64<unit::Nanos>,",
            "pub h: f16,",
            "pub c: Complex<f64>,",
            "pub s: Bytes<3>,",
            "pub u: Ucs4<2>,",
            "pub v: Void<3>,",
            "use npy_core::types::{unit, Bytes, DateTime64, Ucs4, Void};",
            "use half::f16;",
            "use num_complex::Complex;",
        ] {
            assert!(src.contains(want), "missing {want:?} in\n{src}");
        }
    }

    #[test]
    fn unsupported_types_are_errors() {
        for descr in ["[('x', '<f16'), ('n', '<i4')]", "[('t', '<M8[25s]')]", "'<c32'"] {
            let e = rust_source(&header(descr, &[1]), "Rec", "t.npy", None).unwrap_err();
            assert!(matches!(e.kind(), ErrorKind::UnsupportedDtype { .. }), "{descr}: {e}");
        }
        let s = rust_source(&header("'<f8'", &[2, 2]), "Rec", "t.npy", None).unwrap();
        assert!(s.contains("Array::<f64>::read_npy"), "{s}");
    }

    #[test]
    fn tree_shows_offsets_padding_and_nesting() {
        let t = tree(&header("[('a', '|i1'), ('', '|V7'), ('b', [('c', '<i8'), ('d', '|u1'), ('', '|V7')]), ('e', '<i2', (3,)), ('', '|V2')]", &[4]));
        for want in [
            "dtype:    record, 32 bytes, 3 fields, aligned (C layout)",
            "(padding)",
            "  c ",
            "@8",
            "i2 (3,)",
            "int64, little-endian",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
    }
}
