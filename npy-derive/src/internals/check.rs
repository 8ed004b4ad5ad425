//! Rules the model must follow before anything is emitted. Each broken rule is recorded in
//! the [`Ctxt`] at the attribute or item at fault; checking goes on, so that all of them are
//! reported together.

use std::collections::HashMap;

use quote::ToTokens;

use super::ast::{Container, Data, Field};
use super::attr::Spanned;
use super::Ctxt;

/// Checks the whole container.
pub(crate) fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_packed(cx, cont);
    match &cont.data {
        Data::Struct(fields) => {
            check_lifetimes(cx, cont);
            check_align(cx, cont, fields);
            check_skip(cx, fields);
            check_names(cx, fields);
        }
        Data::Enum(_) => check_enum(cx, cont),
    }
}

/// `#[repr(packed)]` is NumPy's default layout in memory, so it cannot be `align`ed;
/// `#[npy(packed)]` promises that layout, which only `#[repr(C, packed)]` gives.
fn check_packed(cx: &Ctxt, cont: &Container<'_>) {
    let attrs = &cont.attrs;
    if let (Some(_), Some(align)) = (&attrs.repr.packed, &attrs.align) {
        cx.error_spanned_by(
            align,
            "`align` cannot be combined with #[repr(packed)]: NumPy's align=True layout is the C layout; \
             #[repr(C, packed)] is its default (packed) layout, written without `align`",
        );
    }
    let Some(packed) = &attrs.packed else { return };
    if matches!(cont.data, Data::Enum(_)) {
        cx.error_spanned_by(packed, "`packed` applies to structs only; an enum is stored as its integer repr");
    } else if !attrs.repr.c || attrs.repr.packed_to != Some(1) {
        cx.error_spanned_by(
            packed,
            "#[npy(packed)] needs #[repr(C, packed)] on the struct: NumPy's packed layout (fields back to back \
             in declaration order) is the memory of #[repr(C, packed)] structs only",
        );
    }
}

/// `NpyRecord: 'static`, and a record cannot borrow what it was read from.
fn check_lifetimes(cx: &Ctxt, cont: &Container<'_>) {
    for lt in cont.generics.lifetimes() {
        cx.error_spanned_by(
            lt,
            "NpyRecord types cannot have lifetime parameters: records are read from bytes and own their data",
        );
    }
}

/// `align` takes the layout from `#[repr(C)]`, which leaves no room for `offset`/`itemsize`.
fn check_align(cx: &Ctxt, cont: &Container<'_>, fields: &[Field<'_>]) {
    let Some(align) = &cont.attrs.align else { return };
    if !cont.attrs.repr.c {
        cx.error_spanned_by(
            align,
            "#[npy(align)] needs #[repr(C)] on the struct: NumPy's aligned layout is the C layout, \
             which Rust gives only to #[repr(C)] structs",
        );
    }
    if let Some(itemsize) = &cont.attrs.itemsize {
        cx.error_spanned_by(
            itemsize,
            "`itemsize` cannot be combined with `align`: an aligned record's size is size_of::<Self>()",
        );
    }
    for offset in fields.iter().filter_map(|f| f.attrs.offset.as_ref()) {
        cx.error_spanned_by(
            offset,
            "`offset` cannot be combined with #[npy(align)] on the struct: aligned records take \
             their offsets from #[repr(C)]",
        );
    }
}

/// A skipped field is not in the dtype, so no other field attribute means anything on it.
fn check_skip(cx: &Ctxt, fields: &[Field<'_>]) {
    for field in fields.iter().filter(|f| !f.is_stored()) {
        let a = &field.attrs;
        let others = [
            ("rename", a.rename.as_ref().map(|s| &s.tokens)),
            ("endian", a.endian.as_ref().map(|s| &s.tokens)),
            ("title", a.title.as_ref().map(|s| &s.tokens)),
            ("offset", a.offset.as_ref().map(|s| &s.tokens)),
        ];
        for (key, tokens) in others {
            if let Some(tokens) = tokens {
                cx.error_spanned_by(
                    tokens,
                    format!("`{key}` cannot be combined with `skip`: a skipped field is not stored"),
                );
            }
        }
    }
}

/// NumPy refuses a record in which a name or a title is used twice (names and titles share
/// one namespace).
fn check_names(cx: &Ctxt, fields: &[Field<'_>]) {
    let stored: Vec<&Field<'_>> = fields.iter().filter(|f| f.is_stored()).collect();
    let mut names: HashMap<&str, &Field<'_>> = HashMap::new();
    for field in &stored {
        match names.get(field.name.as_str()) {
            None => {
                names.insert(&field.name, field);
            }
            Some(first) => {
                // Point at the `rename` that caused the clash, whichever field has it.
                let at = match (&field.attrs.rename, &first.attrs.rename) {
                    (Some(r), _) | (None, Some(r)) => r.to_token_stream(),
                    (None, None) => field.member.to_token_stream(),
                };
                cx.error_spanned_by(
                    at,
                    format!(
                        "fields `{}` and `{}` both have the NumPy name {:?}; NumPy field names must be unique",
                        first.member.to_token_stream(),
                        field.member.to_token_stream(),
                        field.name
                    ),
                );
            }
        }
    }
    let mut titles: HashMap<&str, &Spanned<String>> = HashMap::new();
    for title in stored.iter().filter_map(|f| f.attrs.title.as_ref()) {
        if names.contains_key(title.value.as_str()) || titles.contains_key(title.value.as_str()) {
            cx.error_spanned_by(
                title,
                format!("title {:?} is already a field name or title; NumPy refuses that", title.value),
            );
        } else {
            titles.insert(&title.value, title);
        }
    }
}

/// A fieldless enum with an integer repr is stored as that integer.
fn check_enum(cx: &Ctxt, cont: &Container<'_>) {
    let Data::Enum(variants) = &cont.data else { return };
    if cont.attrs.repr.int.is_none() {
        cx.error_spanned_by(
            cont.ident,
            "NpyRecord for an enum needs an integer repr: add #[repr(u8)] (or u16, u32, u64, i8, i16, i32, i64)",
        );
    }
    if variants.is_empty() {
        cx.error_spanned_by(cont.ident, "NpyRecord cannot be derived for an enum without variants: it has no values");
    }
    for variant in variants {
        if !variant.original.fields.is_empty() {
            cx.error_spanned_by(
                &variant.original.fields,
                format!(
                    "variant `{}` holds data; NpyRecord enums must be fieldless (use a struct for data)",
                    variant.ident
                ),
            );
        }
    }
    if !cont.generics.params.is_empty() {
        cx.error_spanned_by(cont.generics, "NpyRecord enums cannot have generic parameters");
    }
    if let Some(align) = &cont.attrs.align {
        cx.error_spanned_by(align, "`align` applies to structs only; an enum is stored as its integer repr");
    }
    if let Some(itemsize) = &cont.attrs.itemsize {
        cx.error_spanned_by(itemsize, "`itemsize` applies to structs only; an enum is stored as its integer repr");
    }
    if let Some(pyo3) = &cont.attrs.pyo3 {
        cx.error_spanned_by(
            pyo3,
            "`pyo3` applies to structs only: NumPy could write a value that is no discriminant into an enum's memory",
        );
    }
}
