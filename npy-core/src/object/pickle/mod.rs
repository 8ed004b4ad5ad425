//! The restricted pickle codec of object arrays and of Dask stacks' `info`.
//!
//! [`decode()`] runs a pickle machine that knows only what NumPy writes for an object array
//! of plain values: the opcodes of values, containers and the memo, the globals of NumPy's
//! array reconstruction (`_reconstruct`, `ndarray`, `dtype`, `scalar`) and of Python's own
//! pickles of `complex` and of `bytes` under protocol 2 (`_codecs.encode`). Those globals
//! are never called: `REDUCE` and `BUILD` on them are interpreted here, and on anything
//! else they are an error. Values live in an arena and are referred to by index, so the
//! memo shares them at no cost while decoding; every buffer the machine grows (arena,
//! stack, marks, memo, a container's items) is charged against a memory budget before it
//! grows, and so is the final tree of [`Object`]s, built last (a memoised list put into a
//! list twice, repeatedly, cannot explode). Containers know their depth as they fill.
//! [`check`] runs the machine over bytes in memory without building values, for callers
//! whose own unpickler builds them: it keeps strs as spans of the input and of lists and
//! dicts only what a later opcode can read.
//! [`decode_dict`] runs the same machine to a dict of plain values and dtypes (any
//! `numpy.dtype`, rebuilt into the one dtype model), as a Dask stack's `info` is.
//!
//! [`Encoder`](encode::Encoder) writes what CPython's C pickler writes for an object
//! array under protocol 4 (what `np.save` uses): the same opcodes, memo and framing, every
//! value as its type's `__reduce_ex__(4)` gives it (the standard library's, NumPy's nested
//! arrays and scalars), what CPython keeps one of memoised once, so an array in which no
//! other Python object appears twice comes out byte for byte as `np.save` writes it; [`encode_dict`] likewise for such a dict, with NumPy's dtypes as `np.load`
//! makes them (`pickle.dumps` of Dask's `info`, byte for byte).
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | the opcodes and their names, shared by both directions |
//! | `decode.rs` | the machine's values, its opcode steps, [`check`] (no values built) |
//! | `decode/input.rs` | where the bytes come from (a reader, or memory: strs kept as spans) |
//! | `decode/fill.rs` | containers as opcodes fill them, and what a check keeps of them |
//! | `decode/budget.rs` | what each buffer costs the allocator, and the budget it is charged to |
//! | `decode/objects.rs` | the final [`Object`] tree: shared values copied, the others moved |
//! | `decode/reconstruct.rs` | the globals, and `REDUCE`/`BUILD` of NumPy's array reconstruction and its scalars |
//! | `decode/dtype.rs` | `numpy.dtype` and its state (records, subarrays, datetime units, titles) into a `DType` |
//! | `decode/dict.rs` | a dict of plain values and dtypes ([`decode_dict`]) |
//! | `decode/stdlib.rs` | the standard library's classes, their arguments checked, and the set, `NEWOBJ` (UUID) and `BYTEARRAY8` opcodes |
//! | `decode/text.rs` | `FLOAT` and `UNICODE` text as Python reads it, quoting for messages |
//! | `sparse.rs` | reading a pickle with its long bytes payloads left out, for [`check_sparse`] |
//! | `encode.rs` | the [`Encode`] trait, the pickler, [`encode_array`] |
//! | `encode/dtype.rs` | a `DType` as NumPy's `__reduce__` gives it, and [`encode_dict`] |
//! | `encode/stdlib.rs` | the standard library's values (datetimes, `Decimal`, sets, paths, classes...) as CPython reduces them |
//! | `encode/ndarray.rs` | ndarrays, object arrays and NumPy scalars inside an object array |
//! | `encode/tests.rs` | the encoder against the bytes `np.save` wrote |
//!
//! [`Object`]: super::Object

mod decode;
mod encode;
mod sparse;

pub(crate) use decode::{
    check, check_sparse, decode, decode_dict, mask_dtype, Decoded, Item, Settings, SparseChecked, GLOBALS,
};
#[cfg(not(target_family = "wasm"))]
pub(crate) use decode::{check_growing, Growing};
pub(crate) use encode::{encode_array, encode_dict, Encode};
pub(crate) use sparse::read_sparse;

// ---------------------------------------------------------------------------------------
// Opcodes (Python's `pickle` module names).

const MARK: u8 = b'(';
const STOP: u8 = b'.';
const POP: u8 = b'0';
const POP_MARK: u8 = b'1';
const FLOAT: u8 = b'F';
const INT: u8 = b'I';
const BININT: u8 = b'J';
const BININT1: u8 = b'K';
const LONG: u8 = b'L';
const BININT2: u8 = b'M';
const NONE: u8 = b'N';
const REDUCE: u8 = b'R';
const BINSTRING: u8 = b'T';
const SHORT_BINSTRING: u8 = b'U';
const UNICODE: u8 = b'V';
const BINUNICODE: u8 = b'X';
const APPEND: u8 = b'a';
const BUILD: u8 = b'b';
const GLOBAL: u8 = b'c';
const DICT: u8 = b'd';
const EMPTY_DICT: u8 = b'}';
const APPENDS: u8 = b'e';
const GET: u8 = b'g';
const BINGET: u8 = b'h';
const LONG_BINGET: u8 = b'j';
const LIST: u8 = b'l';
const EMPTY_LIST: u8 = b']';
const PUT: u8 = b'p';
const BINPUT: u8 = b'q';
const LONG_BINPUT: u8 = b'r';
const SETITEM: u8 = b's';
const TUPLE: u8 = b't';
const EMPTY_TUPLE: u8 = b')';
const SETITEMS: u8 = b'u';
const BINFLOAT: u8 = b'G';
const PROTO: u8 = 0x80;
const TUPLE1: u8 = 0x85;
const TUPLE2: u8 = 0x86;
const TUPLE3: u8 = 0x87;
const NEWTRUE: u8 = 0x88;
const NEWFALSE: u8 = 0x89;
const LONG1: u8 = 0x8a;
const LONG4: u8 = 0x8b;
const BINBYTES: u8 = b'B';
const SHORT_BINBYTES: u8 = b'C';
const SHORT_BINUNICODE: u8 = 0x8c;
const BINUNICODE8: u8 = 0x8d;
const BINBYTES8: u8 = 0x8e;
const STACK_GLOBAL: u8 = 0x93;
const MEMOIZE: u8 = 0x94;
const FRAME: u8 = 0x95;
const NEWOBJ: u8 = 0x81;
const EMPTY_SET: u8 = 0x8f;
const ADDITEMS: u8 = 0x90;
const FROZENSET: u8 = 0x91;
const BYTEARRAY8: u8 = 0x96;

/// Python's name of an opcode (all of protocol 0 to 5), for messages.
fn opcode_name(op: u8) -> Option<&'static str> {
    Some(match op {
        b'(' => "MARK",
        b'.' => "STOP",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        b'F' => "FLOAT",
        b'I' => "INT",
        b'J' => "BININT",
        b'K' => "BININT1",
        b'L' => "LONG",
        b'M' => "BININT2",
        b'N' => "NONE",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        b'R' => "REDUCE",
        b'S' => "STRING",
        b'T' => "BINSTRING",
        b'U' => "SHORT_BINSTRING",
        b'V' => "UNICODE",
        b'X' => "BINUNICODE",
        b'a' => "APPEND",
        b'b' => "BUILD",
        b'c' => "GLOBAL",
        b'd' => "DICT",
        b'}' => "EMPTY_DICT",
        b'e' => "APPENDS",
        b'g' => "GET",
        b'h' => "BINGET",
        b'i' => "INST",
        b'j' => "LONG_BINGET",
        b'l' => "LIST",
        b']' => "EMPTY_LIST",
        b'o' => "OBJ",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b's' => "SETITEM",
        b't' => "TUPLE",
        b')' => "EMPTY_TUPLE",
        b'u' => "SETITEMS",
        b'G' => "BINFLOAT",
        0x80 => "PROTO",
        0x81 => "NEWOBJ",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        0x88 => "NEWTRUE",
        0x89 => "NEWFALSE",
        0x8a => "LONG1",
        0x8b => "LONG4",
        b'B' => "BINBYTES",
        b'C' => "SHORT_BINBYTES",
        0x8c => "SHORT_BINUNICODE",
        0x8d => "BINUNICODE8",
        0x8e => "BINBYTES8",
        0x8f => "EMPTY_SET",
        0x90 => "ADDITEMS",
        0x91 => "FROZENSET",
        0x92 => "NEWOBJ_EX",
        0x93 => "STACK_GLOBAL",
        0x94 => "MEMOIZE",
        0x95 => "FRAME",
        0x96 => "BYTEARRAY8",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}
