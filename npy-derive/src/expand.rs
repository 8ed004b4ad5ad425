//! Emits the `unsafe impl NpyRecord` for a checked [`Container`].
//!
//! Layout numbers are never computed here: offsets and sizes are emitted as
//! `offset_of!`/`size_of`/`<F as NpyRecord>::ITEMSIZE` expressions for rustc to evaluate, and
//! the assumptions the dtype relies on are pinned with `const _: () = assert!(..)`.
//!
//! Everything is wrapped in `const _: () = { .. };` and named by absolute paths (`::core::..`
//! or `<crate>::__private::..`), so the output compiles under `#![no_implicit_prelude]` and
//! next to any user item names. Locals start with `__`.
//!
//! # Why the emitted `unsafe impl` keeps `NpyRecord`'s safety contract
//! Structs:
//! - `native_dtype()` lists every stored field `f: F` as `F::native_dtype()` at
//!   `offset_of!(Self, f)`, with itemsize `size_of::<Self>()`. `F`'s own impl guarantees that
//!   `F::native_dtype()` describes `F`'s memory exactly, so the record describes `Self`'s
//!   memory exactly; bytes no stored field covers are padding or skipped fields.
//! - Bytes that hold a valid value of every stored field type (each `F::check` is called on
//!   the field's bytes by `check`, and `F::NEEDS_CHECK` is or-ed into ours) are a valid
//!   `Self` once every skipped field has been written, which `fill_skipped` does with
//!   `Default::default()` (recursing into stored fields that have skipped fields of their
//!   own). In a `#[repr(packed)]` struct, whose fields may be unaligned, skipped fields are
//!   written with `write_unaligned`, and a stored field whose type has skipped fields is a
//!   const-evaluation error, so no unaligned place reaches another `fill_skipped`.
//! - `BULK` is a hint (npy-core checks layouts itself); it is true only when every stored
//!   field is `BULK`, in native order and at its written offset, and the fields' sizes sum
//!   to `size_of::<Self>()`.
//! - `ITEMSIZE` is the itemsize passed to `record(..)` by `dtype()`, so it is
//!   `dtype().itemsize()`; `record` panics rather than build an invalid dtype, and the
//!   explicit `offset`/`itemsize` attributes are checked at compile time by const asserts.
//!
//! Fieldless enums with an integer repr: the repr integer's dtype describes the enum's
//! memory (pinned by `assert!(size_of::<Enum>() == size_of::<Int>())`), and `check` accepts
//! exactly the discriminants, so checked bytes are a valid enum value.
//!
//! The unsafe blocks in `fill_skipped` rely on its own contract: `element` is valid for
//! writes and aligned, so `addr_of_mut!((*element).field)` is a valid place of the field's
//! type (aligned, but in a packed struct, where it is written unaligned), written without
//! reading or dropping the uninitialized old value.
//!
//! These paragraphs are the `// SAFETY:` comments of the emitted `unsafe` (`quote!` drops
//! comments). Clippy does not lint code expanded from another crate's macro, so the output
//! passes `clippy::undocumented_unsafe_blocks` without an `allow`.

use std::collections::HashSet;

use proc_macro2::{Literal, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned as _;

use crate::internals::ast::{Container, Data, Field, Variant};
use crate::internals::attr::Endian;
use crate::internals::{check, Ctxt};

/// Parses, checks and expands one `#[derive(NpyRecord)]` input.
pub(crate) fn derive(input: &syn::DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    let Some(cont) = Container::from_ast(&cx, input) else {
        return Err(cx.check().err().unwrap_or_else(|| syn::Error::new(Span::call_site(), "unsupported input")));
    };
    check::check(&cx, &cont);
    cx.check()?;

    let krate = cont.attrs.krate.as_ref().map_or_else(|| quote!(::npy_core), |k| k.value.to_token_stream());
    let p = quote!(#krate::__private);
    let body = match &cont.data {
        Data::Struct(fields) => expand_struct(&cont, fields, &p),
        Data::Enum(variants) => expand_enum(&cont, variants, &p),
    };
    let element = cont.attrs.pyo3.as_ref().map(|_| expand_element(&cont));
    Ok(quote! {
        const _: () = {
            #body
            #element
        };
    })
}

/// `#[npy(pyo3)]`: rust-numpy's `Element` through `npy_pyo3::__private`, whose
/// `element_dtype` gives NumPy `native_dtype()`: the type's memory as a dtype. Sound because
/// that dtype describes the memory exactly (`NpyRecord`'s contract), `assert_element` refuses
/// at compile time types with skipped fields or values that need a check (chars, enums:
/// bytes NumPy writes could be invalid), and `Copy` (asked by `clone_ref`'s `*self`) makes
/// `IS_COPY` true: a bitwise copy is a clone.
fn expand_element(cont: &Container<'_>) -> TokenStream {
    let ident = cont.ident;
    let e = quote!(::npy_pyo3::__private);
    let mut generics = cont.generics.clone();
    let (_, ty_generics, _) = cont.generics.split_for_impl();
    let ty = quote!(#ident #ty_generics);
    generics.make_where_clause().predicates.push(syn::parse_quote!(#ty: ::core::marker::Copy));
    let (impl_generics, _, where_clause) = generics.split_for_impl();
    // Checked where `cargo check` sees it for a plain type; a generic type's is checked when
    // `get_dtype` is instantiated (a post-monomorphization error).
    let free_assert = cont.generics.params.is_empty().then(|| quote!(const _: () = #e::assert_element::<#ty>();));
    quote! {
        #free_assert

        #[automatically_derived]
        unsafe impl #impl_generics #e::Element for #ty #where_clause {
            const IS_COPY: ::core::primitive::bool = true;

            fn get_dtype(__py: #e::Python<'_>) -> #e::Bound<'_, #e::PyArrayDescr> {
                const { #e::assert_element::<Self>() };
                #e::element_dtype::<Self>(__py)
            }

            fn clone_ref(&self, _: #e::Python<'_>) -> Self {
                *self
            }
        }
    }
}

/// `ByteOrder::..` for an endian attribute.
fn byte_order(p: &TokenStream, endian: Endian) -> TokenStream {
    match endian {
        Endian::Big => quote!(#p::ByteOrder::Big),
        Endian::Little => quote!(#p::ByteOrder::Little),
        Endian::Native => quote!(#p::ByteOrder::NATIVE),
    }
}

/// A const expression: whether scalars in `endian` order are stored as the machine holds
/// them.
fn is_native(endian: Endian) -> TokenStream {
    match endian {
        Endian::Big => quote!(::core::cfg!(target_endian = "big")),
        Endian::Little => quote!(::core::cfg!(target_endian = "little")),
        Endian::Native => quote!(true),
    }
}

/// An unsuffixed `usize` literal.
fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// The span of the first token, where an error about an attribute is shown.
fn first_span(tokens: &TokenStream) -> Span {
    tokens.clone().into_iter().next().map_or_else(Span::call_site, |t| t.span())
}

/// True when `tokens` name one of `params` (the container's type and const parameters).
/// Over-approximates (`other::T` counts), which only trades a const assertion for a where
/// clause.
fn mentions(tokens: TokenStream, params: &HashSet<String>) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => params.contains(&i.to_string()),
        TokenTree::Group(g) => mentions(g.stream(), params),
        _ => false,
    })
}

/// What every piece of a struct's expansion needs.
struct Gen<'a> {
    p: &'a TokenStream,
    /// The container's type and const parameter names.
    params: HashSet<String>,
}

impl Gen<'_> {
    fn is_generic(&self, field: &Field<'_>) -> bool {
        mentions(field.ty.to_token_stream(), &self.params)
    }

    /// `<F as NpyRecord>`, spanned at the field's type so that a missing impl is reported
    /// at the field.
    fn record(&self, field: &Field<'_>) -> TokenStream {
        let (p, ty) = (self.p, field.ty);
        quote_spanned!(ty.span()=> <#ty as #p::NpyRecord>)
    }
}

fn expand_struct(cont: &Container<'_>, fields: &[Field<'_>], p: &TokenStream) -> TokenStream {
    let ident = cont.ident;
    let type_name = ident.to_string();
    let params: HashSet<String> = cont
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            syn::GenericParam::Type(t) => Some(t.ident.to_string()),
            syn::GenericParam::Const(c) => Some(c.ident.to_string()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    let is_generic_container = !params.is_empty();
    let g = Gen { p, params };
    let stored: Vec<&Field<'_>> = fields.iter().filter(|f| f.is_stored()).collect();
    let skipped: Vec<&Field<'_>> = fields.iter().filter(|f| !f.is_stored()).collect();

    // Bounds, as serde: a where clause per field type that involves a parameter. Every
    // other field type is used as `<F as NpyRecord>` spanned at the field, so a type that
    // does not implement it is reported once, at the field, with the trait's
    // `#[diagnostic::on_unimplemented]` message.
    let mut generics = cont.generics.clone();
    let predicates = &mut generics.make_where_clause().predicates;
    for param in cont.generics.type_params() {
        let t = &param.ident;
        predicates.push(syn::parse_quote!(#t: 'static));
    }
    for field in fields.iter().filter(|f| g.is_generic(f)) {
        let ty = field.ty;
        let bound = if field.is_stored() { quote!(#p::NpyRecord) } else { quote!(::core::default::Default) };
        predicates.push(syn::parse_quote_spanned!(ty.span()=> #ty: #bound));
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();

    // Layout of the written dtype.
    let mut layout_asserts = Vec::new();
    let mut offset_lets = Vec::new();
    let (offsets, itemsize): (Vec<TokenStream>, TokenStream) = if cont.attrs.align.is_some() {
        let offsets = stored.iter().map(|f| {
            let member = &f.member;
            quote!(#p::offset_of!(Self, #member))
        });
        (offsets.collect(), quote!(#p::size_of::<Self>()))
    } else {
        // `run` holds the terms whose sum is where the next field starts.
        let mut run: Vec<TokenStream> = Vec::new();
        let mut offsets = Vec::new();
        for (i, field) in stored.iter().enumerate() {
            let local = format_ident!("__offset{}", i);
            let value = match (&field.attrs.offset, i) {
                (Some(explicit), _) => {
                    let n = lit(explicit.value);
                    if !run.is_empty() {
                        let msg = format!(
                            "npy: field `{}` (offset = {}) overlaps the field before it; offsets must increase \
                             and leave room for each field's ITEMSIZE",
                            field.member.to_token_stream(),
                            explicit.value
                        );
                        layout_asserts.push((first_span(&explicit.tokens), quote!(#(#run)+* <= #n), msg));
                    }
                    run = vec![quote!(#n)];
                    quote!(#n)
                }
                (None, 0) => quote!(0),
                (None, _) => {
                    let prev_local = format_ident!("__offset{}", i - 1);
                    let prev = g.record(stored[i - 1]);
                    quote!(#prev_local + #prev::ITEMSIZE)
                }
            };
            offset_lets.push(quote!(let #local: ::core::primitive::usize = #value;));
            offsets.push(quote!(#local));
            let record = g.record(field);
            run.push(quote!(#record::ITEMSIZE));
        }
        let end = if run.is_empty() { quote!(0) } else { quote!(#(#run)+*) };
        let itemsize = match &cont.attrs.itemsize {
            Some(attr) => {
                let n = lit(attr.value);
                let msg = format!("npy: itemsize = {} is smaller than the fields, which end past it", attr.value);
                layout_asserts.push((first_span(&attr.tokens), quote!(#end <= #n), msg));
                quote!(#n)
            }
            None => end,
        };
        (offsets, itemsize)
    };
    // Whether each stored field is stored as the machine holds it (its byte order).
    // One-byte fields have no byte order (`flags: u8` under `endian = "big"`).
    let natives: Vec<TokenStream> = stored
        .iter()
        .map(|f| match (&f.attrs.endian, &cont.attrs.endian) {
            (Some(e), _) | (None, Some(e)) => {
                let (native, record) = (is_native(e.value), g.record(f));
                quote!((#native || #record::ITEMSIZE <= 1))
            }
            (None, None) => quote!(true),
        })
        .collect();
    // The written offsets as const expressions: the `let`s of `dtype()` (which name no
    // parameter but field types), each offset a local of them, for `BULK` and the `packed`
    // assertions. One block holds them all, so the code stays linear in the fields.
    let offsets_block = |body: TokenStream| -> TokenStream {
        let lets = offset_lets.iter().map(|l| quote!(#[allow(unused_variables)] #l));
        quote!({ #(#lets)* #body })
    };
    // `all(conds)`: whether every one of the const `bool`s holds, as a loop over an array
    // (a chain of `&&` as deep as the fields overflows rustc's stack for big records).
    let all = |conds: Vec<TokenStream>| -> TokenStream {
        if conds.is_empty() {
            return quote!(true);
        }
        let n = lit(conds.len());
        quote!({
            let __npy_conds: [::core::primitive::bool; #n] = [#(#conds),*];
            let mut __npy_i = 0;
            while __npy_i < #n && __npy_conds[__npy_i] {
                __npy_i += 1;
            }
            __npy_i == #n
        })
    };
    // The sum of the stored fields' ITEMSIZEs, as a loop over an array.
    let sum_of_sizes = if stored.is_empty() {
        quote!(0)
    } else {
        let sizes = stored.iter().map(|f| {
            let record = g.record(f);
            quote!(#record::ITEMSIZE)
        });
        let n = lit(stored.len());
        quote!({
            let __npy_sizes: [::core::primitive::usize; #n] = [#(#sizes),*];
            let (mut __npy_i, mut __npy_sum) = (0, 0);
            while __npy_i < #n {
                __npy_sum += __npy_sizes[__npy_i];
                __npy_i += 1;
            }
            __npy_sum
        })
    };
    let packed_repr = cont.attrs.repr.packed.is_some();
    // Free consts cannot name `Self`: the container's own name is its type when it has no
    // parameters (generic containers check in the impl, where `Self` is).
    let self_ty = if is_generic_container { quote!(Self) } else { quote!(#ident) };
    for field in stored.iter().filter(|_| packed_repr) {
        // Unaligned places cannot be handed to the field type's `fill_skipped`.
        let record = g.record(field);
        let msg = format!(
            "npy: field `{}` of the #[repr(packed)] struct {type_name} has skipped fields of its own, which \
             cannot be filled in place in a packed struct: store them, or do not pack {type_name}",
            field.member.to_token_stream()
        );
        layout_asserts.push((field.ty.span(), quote!(!#record::HAS_SKIPPED), msg));
    }
    // Assertions that name the written offsets: one block of statements after the offsets'
    // `let`s.
    let mut offset_asserts = Vec::new();
    if let Some(packed) = &cont.attrs.packed {
        let span = first_span(&packed.tokens);
        for (i, field) in stored.iter().enumerate() {
            let (member, record) = (&field.member, g.record(field));
            let name = member.to_token_stream().to_string();
            let msg = format!(
                "npy: #[npy(packed)]: the memory of field `{name}` of {type_name} is not its written layout: \
                 declare its type #[repr(C, packed)] too (and #[npy(packed)] checks it)"
            );
            layout_asserts.push((field.ty.span(), quote!(#record::BULK), msg));
            let native = &natives[i];
            let msg = format!(
                "npy: #[npy(packed)]: field `{name}` of {type_name} is written in the other byte order than \
                 the machine's, so its memory is not its written bytes"
            );
            layout_asserts.push((span, native.clone(), msg));
            let written = &offsets[i];
            let msg = format!(
                "npy: #[npy(packed)]: field `{name}` of {type_name} is not where NumPy's packed layout puts it \
                 (an `offset` leaves a gap)"
            );
            let cond = quote!(#p::offset_of!(#self_ty, #member) == #written);
            offset_asserts.push(quote_spanned!(span=> ::core::assert!(#cond, #msg);));
        }
        let msg = format!(
            "npy: #[npy(packed)]: the memory of {type_name} holds bytes its dtype does not (padding inside a \
             field's type, skipped fields, or a gap that `itemsize` leaves after the last field)"
        );
        layout_asserts.push((span, quote!((#sum_of_sizes) == #p::size_of::<#self_ty>()), msg));
    }
    // BULK: every stored field bulk, where it is written, in native order, and together
    // every byte of `Self`.
    let bulk = {
        let fields = stored.iter().enumerate().map(|(i, f)| {
            let (member, record, native, written) = (&f.member, g.record(f), &natives[i], &offsets[i]);
            quote!(#record::BULK && #native && #p::offset_of!(Self, #member) == #written)
        });
        let all_fields = all(fields.collect());
        offsets_block(quote!((#sum_of_sizes) == #p::size_of::<Self>() && #all_fields))
    };

    // Free consts cannot name the container's parameters: a generic container checks its
    // layout where ITEMSIZE is evaluated instead (every use of the impl evaluates it).
    let mut asserts: Vec<TokenStream> =
        layout_asserts.iter().map(|(span, cond, msg)| quote_spanned!(*span=> ::core::assert!(#cond, #msg);)).collect();
    if !offset_asserts.is_empty() {
        let block = offsets_block(quote!(#(#offset_asserts)*));
        asserts.push(quote!(#block;));
    }
    let asserts = asserts.into_iter();
    let (free_asserts, itemsize) = if is_generic_container {
        (Vec::new(), quote!({ #(#asserts)* #itemsize }))
    } else {
        (asserts.map(|a| quote!(const _: () = #a)).collect(), itemsize)
    };

    let n = lit(stored.len());
    let field_vec = |fields: Vec<TokenStream>| quote!(<#p::Vec<#p::Field> as ::core::convert::From<[#p::Field; #n]>>::from([#(#fields),*]));

    // dtype(): the written layout.
    let dtype_fields = stored.iter().zip(&offsets).map(|(field, offset)| {
        let name = &field.name;
        let record = g.record(field);
        let base = quote!(#record::dtype());
        let dtype = match (&field.attrs.endian, &cont.attrs.endian) {
            (Some(e), _) => {
                let order = byte_order(p, e.value);
                quote!(#base.with_byte_order(#order))
            }
            (None, Some(e)) => {
                let order = byte_order(p, e.value);
                quote!(#p::container_byte_order(#base, #order))
            }
            (None, None) => base,
        };
        let title = match &field.attrs.title {
            Some(t) => {
                let t = &t.value;
                quote!(::core::option::Option::Some(#p::Literal::Str(::core::convert::From::from(#t))))
            }
            None => quote!(::core::option::Option::None),
        };
        quote!(#p::Field { name: ::core::convert::From::from(#name), title: #title, dtype: #dtype, offset: #offset })
    });
    let dtype_vec = field_vec(dtype_fields.collect());

    // native_dtype(): the memory layout.
    let native_fields = stored.iter().map(|field| {
        let (name, member) = (&field.name, &field.member);
        let record = g.record(field);
        quote! {
            #p::Field {
                name: ::core::convert::From::from(#name),
                title: ::core::option::Option::None,
                dtype: #record::native_dtype(),
                offset: #p::offset_of!(Self, #member),
            }
        }
    });
    let native_vec = field_vec(native_fields.collect());

    // check(): each stored field that needs it, on its own bytes.
    let needs_check = stored.iter().map(|f| {
        let record = g.record(f);
        quote!(#record::NEEDS_CHECK)
    });
    let checks = stored.iter().map(|field| {
        let (name, member, ty) = (&field.name, &field.member, field.ty);
        let record = g.record(field);
        quote! {
            if #record::NEEDS_CHECK {
                let __start = #p::offset_of!(Self, #member);
                match __element.get(__start..__start + #p::size_of::<#ty>()) {
                    ::core::option::Option::Some(__bytes) => {
                        if let ::core::result::Result::Err(__reason) = #record::check(__bytes) {
                            return ::core::result::Result::Err(#p::format!("field '{}': {}", #name, __reason));
                        }
                    }
                    ::core::option::Option::None => {
                        return ::core::result::Result::Err(#p::format!("field '{}' lies outside the element", #name));
                    }
                }
            }
        }
    });

    // fill_skipped(): Default for skipped fields, recursion into stored ones.
    let has_skipped = if skipped.is_empty() {
        let nested = stored.iter().map(|f| {
            let record = g.record(f);
            quote!(#record::HAS_SKIPPED)
        });
        quote!(false #(|| #nested)*)
    } else {
        quote!(true)
    };
    let fills = fields.iter().map(|field| {
        let (member, ty) = (&field.member, field.ty);
        let place = quote!(#p::addr_of_mut!((*__element).#member));
        if packed_repr {
            // A packed struct's fields may be unaligned: skipped ones are written
            // unaligned; stored ones have no skipped fields (asserted above).
            if field.is_stored() {
                return TokenStream::new();
            }
            let default = quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default());
            return quote!(unsafe { #place.write_unaligned(#default) };);
        }
        if field.is_stored() {
            let record = g.record(field);
            quote! {
                if #record::HAS_SKIPPED {
                    unsafe { #record::fill_skipped(#place) };
                }
            }
        } else {
            let default = quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default());
            quote!(unsafe { #place.write(#default) };)
        }
    });

    quote! {
        #(#free_asserts)*

        #[automatically_derived]
        unsafe impl #impl_generics #p::NpyRecord for #ident #ty_generics #where_clause {
            const ITEMSIZE: ::core::primitive::usize = #itemsize;

            fn dtype() -> #p::DType {
                #(#offset_lets)*
                #p::record(#dtype_vec, <Self as #p::NpyRecord>::ITEMSIZE)
            }

            fn native_dtype() -> #p::DType {
                #p::native_record(#native_vec, #p::size_of::<Self>())
            }

            const NEEDS_CHECK: ::core::primitive::bool = false #(|| #needs_check)*;

            fn check(__element: &[::core::primitive::u8]) -> ::core::result::Result<(), #p::String> {
                if __element.len() != #p::size_of::<Self>() {
                    return ::core::result::Result::Err(#p::format!(
                        "a {} element is {} bytes, not {}",
                        #type_name,
                        #p::size_of::<Self>(),
                        __element.len(),
                    ));
                }
                #(#checks)*
                ::core::result::Result::Ok(())
            }

            const HAS_SKIPPED: ::core::primitive::bool = #has_skipped;

            const BULK: ::core::primitive::bool = #bulk;

            unsafe fn fill_skipped(__element: *mut Self) {
                #(#fills)*
            }
        }
    }
}

fn expand_enum(cont: &Container<'_>, variants: &[Variant<'_>], p: &TokenStream) -> TokenStream {
    let ident = cont.ident;
    let type_name = ident.to_string();
    // `check` has made sure there is one.
    let Some(int) = &cont.attrs.repr.int else { return TokenStream::new() };
    let int = quote!(::core::primitive::#int);
    let dtype = match &cont.attrs.endian {
        Some(e) => {
            let order = byte_order(p, e.value);
            quote!(<#int as #p::NpyRecord>::dtype().with_byte_order(#order))
        }
        None => quote!(<#int as #p::NpyRecord>::dtype()),
    };
    let enum_bulk = cont.attrs.endian.as_ref().map_or_else(|| quote!(true), |e| is_native(e.value));
    let n = lit(variants.len());
    let discriminants = variants.iter().map(|v| {
        let variant = v.ident;
        quote!(#ident::#variant as #int)
    });
    let size_msg = format!("npy: {type_name} must have the size of its repr");
    quote! {
        const _: () = ::core::assert!(#p::size_of::<#ident>() == #p::size_of::<#int>(), #size_msg);

        #[automatically_derived]
        unsafe impl #p::NpyRecord for #ident {
            const ITEMSIZE: ::core::primitive::usize = <#int as #p::NpyRecord>::ITEMSIZE;

            fn dtype() -> #p::DType {
                #dtype
            }

            fn native_dtype() -> #p::DType {
                <#int as #p::NpyRecord>::native_dtype()
            }

            const NEEDS_CHECK: ::core::primitive::bool = true;

            const BULK: ::core::primitive::bool = #enum_bulk;

            fn check(__element: &[::core::primitive::u8]) -> ::core::result::Result<(), #p::String> {
                const __DISCRIMINANTS: [#int; #n] = [#(#discriminants),*];
                let __bytes = match <[::core::primitive::u8; #p::size_of::<#int>()] as ::core::convert::TryFrom<
                    &[::core::primitive::u8],
                >>::try_from(__element)
                {
                    ::core::result::Result::Ok(__bytes) => __bytes,
                    ::core::result::Result::Err(_) => {
                        return ::core::result::Result::Err(#p::format!(
                            "a {} element is {} bytes, not {}",
                            #type_name,
                            #p::size_of::<#int>(),
                            __element.len(),
                        ));
                    }
                };
                let __value = #int::from_ne_bytes(__bytes);
                if __DISCRIMINANTS.contains(&__value) {
                    ::core::result::Result::Ok(())
                } else {
                    ::core::result::Result::Err(#p::format!("value {} is not a discriminant of {}", __value, #type_name))
                }
            }
        }
    }
}
