//! `#[npy(..)]` and `#[repr(..)]` attributes, parsed into plain values.
//!
//! Nothing here returns an error: unknown, malformed and duplicate attributes are recorded
//! in the [`Ctxt`] at their span and otherwise ignored, so that every mistake in the input
//! is reported in one compilation. Rules that involve more than one attribute (`skip` with
//! `rename`, `align` without `#[repr(C)]`, ...) are in [`super::check`].

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::meta::ParseNestedMeta;
use syn::{Ident, LitInt, LitStr, Token};

use super::Ctxt;

/// The attribute's name, as the user writes it inside `#[npy(..)]`.
const NPY: &str = "npy";

/// Container keys, for the "unknown attribute" message.
const CONTAINER_KEYS: &str = "`align`, `crate`, `endian`, `itemsize`, `packed` or `pyo3`";
/// Field keys, for the "unknown attribute" message.
const FIELD_KEYS: &str = "`endian`, `offset`, `rename`, `skip` or `title`";

/// A value together with the tokens it was written as (`endian = "big"`), so that errors
/// about it point at the attribute.
pub(crate) struct Spanned<T> {
    pub(crate) tokens: TokenStream,
    pub(crate) value: T,
}

impl<T> ToTokens for Spanned<T> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.tokens.to_tokens(tokens);
    }
}

/// One attribute that may be given at most once.
struct Attr<'c, T> {
    cx: &'c Ctxt,
    name: &'static str,
    value: Option<Spanned<T>>,
}

impl<'c, T> Attr<'c, T> {
    fn none(cx: &'c Ctxt, name: &'static str) -> Self {
        Attr { cx, name, value: None }
    }

    /// Sets the value, or reports a duplicate at the second occurrence.
    fn set(&mut self, tokens: TokenStream, value: T) {
        if self.value.is_some() {
            self.cx.error_spanned_by(tokens, format!("duplicate npy attribute `{}`", self.name));
        } else {
            self.value = Some(Spanned { tokens, value });
        }
    }

    fn get(self) -> Option<Spanned<T>> {
        self.value
    }
}

/// `#[npy(endian = "..")]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Endian {
    /// `"big"`: `>`.
    Big,
    /// `"little"`: `<`.
    Little,
    /// `"native"`: the order of the machine that writes the file.
    Native,
}

/// What the derive needs to know of `#[repr(..)]`.
#[derive(Default)]
pub(crate) struct Repr {
    /// `#[repr(C)]`.
    pub(crate) c: bool,
    /// The tokens of `packed` or `packed(N)`, if present.
    pub(crate) packed: Option<TokenStream>,
    /// `N` of `packed(N)`; 1 for a plain `packed`.
    pub(crate) packed_to: Option<u64>,
    /// An integer representation (`u8`, `i32`, ...), for enums.
    pub(crate) int: Option<Ident>,
}

/// The integer types an enum's `#[repr(..)]` may name: those that implement `NpyRecord`.
pub(crate) const INT_REPRS: [&str; 10] = ["u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize"];

/// Attributes of the struct or enum.
pub(crate) struct Container {
    /// `#[npy(align)]`: NumPy's `align=True` layout, taken from `#[repr(C)]`.
    pub(crate) align: Option<Spanned<()>>,
    /// `#[npy(endian = "..")]`: byte order of every field that does not set its own.
    pub(crate) endian: Option<Spanned<Endian>>,
    /// `#[npy(crate = "..")]`: the path to `npy_core`.
    pub(crate) krate: Option<Spanned<syn::Path>>,
    /// `#[npy(itemsize = N)]`: total bytes of a packed record.
    pub(crate) itemsize: Option<Spanned<usize>>,
    /// `#[npy(packed)]`: the struct's memory must be NumPy's packed layout (checked at
    /// compile time).
    pub(crate) packed: Option<Spanned<()>>,
    /// `#[npy(pyo3)]`: also a NumPy element in memory, rust-numpy's `Element` (crate
    /// `npy-pyo3`).
    pub(crate) pyo3: Option<Spanned<()>>,
    /// `#[repr(..)]`.
    pub(crate) repr: Repr,
}

impl Container {
    /// Parses the `#[npy(..)]` and `#[repr(..)]` attributes of the input.
    pub(crate) fn from_ast(cx: &Ctxt, input: &syn::DeriveInput) -> Self {
        let mut align = Attr::none(cx, "align");
        let mut endian = Attr::none(cx, "endian");
        let mut krate = Attr::none(cx, "crate");
        let mut itemsize = Attr::none(cx, "itemsize");
        let mut packed = Attr::none(cx, "packed");
        let mut pyo3 = Attr::none(cx, "pyo3");
        let mut repr = Repr::default();

        for attr in &input.attrs {
            if attr.path().is_ident("repr") {
                parse_repr(attr, &mut repr);
                continue;
            }
            if !attr.path().is_ident(NPY) {
                continue;
            }
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("align") {
                    align.set(path.to_token_stream(), ());
                } else if path.is_ident("packed") {
                    packed.set(path.to_token_stream(), ());
                } else if path.is_ident("pyo3") {
                    pyo3.set(path.to_token_stream(), ());
                } else if path.is_ident("endian") {
                    if let Some((tokens, value)) = parse_endian(cx, &meta)? {
                        endian.set(tokens, value);
                    }
                } else if path.is_ident("crate") {
                    let lit: LitStr = meta.value()?.parse()?;
                    match lit.parse::<syn::Path>() {
                        Ok(p) => krate.set(quote!(#path = #lit), p),
                        Err(_) => cx.error_spanned_by(
                            &lit,
                            format!("expected a path such as \"::npy_core\", found {:?}", lit.value()),
                        ),
                    }
                } else if path.is_ident("itemsize") {
                    let lit: LitInt = meta.value()?.parse()?;
                    match lit.base10_parse::<usize>() {
                        Ok(n) => itemsize.set(quote!(#path = #lit), n),
                        Err(e) => cx.syn_error(e),
                    }
                } else {
                    unknown(cx, &meta, "container", CONTAINER_KEYS)?;
                }
                Ok(())
            });
            if let Err(err) = result {
                cx.syn_error(err);
            }
        }

        Container {
            align: align.get(),
            endian: endian.get(),
            krate: krate.get(),
            itemsize: itemsize.get(),
            packed: packed.get(),
            pyo3: pyo3.get(),
            repr,
        }
    }
}

/// Attributes of one field.
pub(crate) struct Field {
    /// `#[npy(rename = "..")]`: the NumPy field name.
    pub(crate) rename: Option<Spanned<String>>,
    /// `#[npy(skip)]`: not stored; `Default::default()` after a read.
    pub(crate) skip: Option<Spanned<()>>,
    /// `#[npy(endian = "..")]`: byte order of the whole field, nested records included.
    pub(crate) endian: Option<Spanned<Endian>>,
    /// `#[npy(title = "..")]`: NumPy's field title.
    pub(crate) title: Option<Spanned<String>>,
    /// `#[npy(offset = N)]`: explicit byte offset in a packed record.
    pub(crate) offset: Option<Spanned<usize>>,
}

impl Field {
    /// Parses the `#[npy(..)]` attributes of a field.
    pub(crate) fn from_ast(cx: &Ctxt, field: &syn::Field) -> Self {
        let mut rename = Attr::none(cx, "rename");
        let mut skip = Attr::none(cx, "skip");
        let mut endian = Attr::none(cx, "endian");
        let mut title = Attr::none(cx, "title");
        let mut offset = Attr::none(cx, "offset");

        for attr in field.attrs.iter().filter(|a| a.path().is_ident(NPY)) {
            let result = attr.parse_nested_meta(|meta| {
                let path = &meta.path;
                if path.is_ident("rename") {
                    let lit: LitStr = meta.value()?.parse()?;
                    if lit.value().is_empty() {
                        cx.error_spanned_by(
                            &lit,
                            "a field name cannot be empty: NumPy reads unnamed fields as padding",
                        );
                    } else {
                        rename.set(quote!(#path = #lit), lit.value());
                    }
                } else if path.is_ident("skip") {
                    skip.set(path.to_token_stream(), ());
                } else if path.is_ident("endian") {
                    if let Some((tokens, value)) = parse_endian(cx, &meta)? {
                        endian.set(tokens, value);
                    }
                } else if path.is_ident("title") {
                    let lit: LitStr = meta.value()?.parse()?;
                    title.set(quote!(#path = #lit), lit.value());
                } else if path.is_ident("offset") {
                    let lit: LitInt = meta.value()?.parse()?;
                    match lit.base10_parse::<usize>() {
                        Ok(n) => offset.set(quote!(#path = #lit), n),
                        Err(e) => cx.syn_error(e),
                    }
                } else {
                    unknown(cx, &meta, "field", FIELD_KEYS)?;
                }
                Ok(())
            });
            if let Err(err) = result {
                cx.syn_error(err);
            }
        }

        Field { rename: rename.get(), skip: skip.get(), endian: endian.get(), title: title.get(), offset: offset.get() }
    }
}

/// Reports every `#[npy(..)]` on an enum variant: variants take no attributes.
pub(crate) fn reject_variant_attrs(cx: &Ctxt, variant: &syn::Variant) {
    for attr in variant.attrs.iter().filter(|a| a.path().is_ident(NPY)) {
        cx.error_spanned_by(attr, "enum variants take no npy attributes; the enum is stored as its integer repr");
    }
}

/// `endian = ".."`; a bad value is recorded and gives `None`.
fn parse_endian(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<(TokenStream, Endian)>> {
    let path = &meta.path;
    let lit: LitStr = meta.value()?.parse()?;
    let value = match lit.value().as_str() {
        "big" => Endian::Big,
        "little" => Endian::Little,
        "native" => Endian::Native,
        other => {
            cx.error_spanned_by(&lit, format!("unknown endian {other:?}; expected \"big\", \"little\" or \"native\""));
            return Ok(None);
        }
    };
    Ok(Some((quote!(#path = #lit), value)))
}

/// Records an unknown key and skips its value (`= ..` or `(..)`), so that the keys after it
/// are still parsed.
fn unknown(cx: &Ctxt, meta: &ParseNestedMeta<'_>, what: &str, expected: &str) -> syn::Result<()> {
    let key = meta.path.to_token_stream().to_string().replace(' ', "");
    cx.error_spanned_by(&meta.path, format!("unknown npy {what} attribute `{key}`; expected {expected}"));
    skip_value(meta)
}

fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// Records what the derive needs of `#[repr(..)]`; anything else (and malformed reprs, which
/// rustc reports) is skipped.
fn parse_repr(attr: &syn::Attribute, repr: &mut Repr) {
    let _ = attr.parse_nested_meta(|meta| {
        let path = &meta.path;
        if path.is_ident("C") {
            repr.c = true;
        } else if path.is_ident("packed") {
            repr.packed = Some(attr.to_token_stream());
            repr.packed_to = Some(1);
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                repr.packed_to = content.parse::<LitInt>().ok().and_then(|n| n.base10_parse().ok());
                return Ok(());
            }
        } else if let Some(ident) = path.get_ident().filter(|i| INT_REPRS.contains(&i.to_string().as_str())) {
            repr.int = Some(ident.clone());
        }
        skip_value(&meta)
    });
}
