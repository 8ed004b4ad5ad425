//! The derive input as the rest of the macro sees it: a container with its attributes, and
//! its stored and skipped fields (structs) or its variants (fieldless enums).

use syn::ext::IdentExt;
use syn::{Ident, Member, Type};

use super::{attr, Ctxt};

/// A struct or enum deriving `NpyRecord`.
pub(crate) struct Container<'a> {
    /// The type's name.
    pub(crate) ident: &'a Ident,
    /// `#[npy(..)]` and `#[repr(..)]` of the type.
    pub(crate) attrs: attr::Container,
    /// Fields or variants.
    pub(crate) data: Data<'a>,
    /// The type's generics, as written.
    pub(crate) generics: &'a syn::Generics,
}

/// What the type holds.
pub(crate) enum Data<'a> {
    /// A struct (named, tuple or unit) and its fields in declaration order.
    Struct(Vec<Field<'a>>),
    /// An enum and its variants.
    Enum(Vec<Variant<'a>>),
}

/// One field of a struct.
pub(crate) struct Field<'a> {
    /// How Rust names it: `x` or `0`.
    pub(crate) member: Member,
    /// How NumPy names it: the `rename`, else the identifier (`r#` removed), else `f0`,
    /// `f1`, ... for tuple fields, as NumPy names fields given without a name.
    pub(crate) name: String,
    /// `#[npy(..)]` of the field.
    pub(crate) attrs: attr::Field,
    /// The field's type.
    pub(crate) ty: &'a Type,
}

impl Field<'_> {
    /// True unless `#[npy(skip)]`.
    pub(crate) fn is_stored(&self) -> bool {
        self.attrs.skip.is_none()
    }
}

/// One variant of an enum.
pub(crate) struct Variant<'a> {
    /// The variant's name.
    pub(crate) ident: &'a Ident,
    /// The variant, for spans.
    pub(crate) original: &'a syn::Variant,
}

impl<'a> Container<'a> {
    /// Parses the input; `None` (with the error recorded) for a union.
    pub(crate) fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Option<Container<'a>> {
        let attrs = attr::Container::from_ast(cx, input);
        let data = match &input.data {
            syn::Data::Struct(s) => Data::Struct(fields(cx, &s.fields)),
            syn::Data::Enum(e) => Data::Enum(
                e.variants
                    .iter()
                    .map(|v| {
                        attr::reject_variant_attrs(cx, v);
                        Variant { ident: &v.ident, original: v }
                    })
                    .collect(),
            ),
            syn::Data::Union(u) => {
                cx.error_spanned_by(
                    u.union_token,
                    "NpyRecord cannot be derived for a union: NumPy has no overlapping fields; use a struct",
                );
                return None;
            }
        };
        Some(Container { ident: &input.ident, attrs, data, generics: &input.generics })
    }
}

fn fields<'a>(cx: &Ctxt, fields: &'a syn::Fields) -> Vec<Field<'a>> {
    fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let attrs = attr::Field::from_ast(cx, field);
            let (member, default_name) = match &field.ident {
                Some(ident) => (Member::Named(ident.clone()), ident.unraw().to_string()),
                None => (
                    Member::Unnamed(syn::Index { index: i as u32, span: proc_macro2::Span::call_site() }),
                    format!("f{i}"),
                ),
            };
            let name = attrs.rename.as_ref().map_or(default_name, |r| r.value.clone());
            Field { member, name, attrs, ty: &field.ty }
        })
        .collect()
}
