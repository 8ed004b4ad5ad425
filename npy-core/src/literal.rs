//! Python literals: the strict subset that `.npy` header writers emit, parsed and printed
//! exactly as Python's `ast.literal_eval` and `repr` do.
//!
//! Pure functions over `&str`, no I/O.
//!
//! The parser writes a tape (`Tape`, in `literal/tape.rs`): the literal's nodes in
//! source order, a container before its items, each container counting the nodes inside
//! it, and each string without escapes borrowed from the text. A parse allocates that one
//! growing buffer, not a `String` per token nor a `Vec` per tuple; [`parse`] turns the
//! tape into a [`Literal`] tree, while the header codec and the descr interpreter
//! (`dtype`) read the tape itself (`Value`) and keep only what their model keeps. Strings
//! are scanned a word (8 bytes) at a time, and a record field as NumPy writes it,
//! `('name', 'type')`, is read in one go; any other text takes the general path, so the
//! values and errors are the same.

use std::borrow::Cow;
use std::fmt;

use crate::repr;

mod tape;

use tape::{value, Node, Owned, Span};
pub(crate) use tape::{Kind, Tape, Value};

/// A Python literal value, as found in `.npy` headers.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `None`
    None,
    /// `True` / `False`
    Bool(bool),
    /// A decimal integer (arbitrary text sizes beyond `i128` are an error).
    Int(i128),
    /// A finite float, e.g. a field title `1.5`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `bytes` literal, e.g. a field title `b'bt'`.
    Bytes(Vec<u8>),
    /// A tuple `(a, b)`; `(a,)` has one element.
    Tuple(Vec<Literal>),
    /// A list `[a, b]`.
    List(Vec<Literal>),
    /// A dict `{k: v}` in source order (duplicates are kept; the caller decides).
    Dict(Vec<(Literal, Literal)>),
}

/// Options of [`parse_with`]. Every setting has a documented default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    allow_long_suffix: bool,
    max_depth: usize,
}

impl ParseOptions {
    /// Default options: no `L` suffix, nesting up to 64 deep.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether Python 2's `L` suffix on integers (`2L`) is accepted, as NumPy does for
    /// 1.0/2.0 headers. Default: `false`.
    pub fn allow_long_suffix(&mut self, allow: bool) -> &mut Self {
        self.allow_long_suffix = allow;
        self
    }

    /// Deepest nesting of containers accepted; deeper input is an error, not a stack
    /// overflow. Default: 64.
    pub fn max_depth(&mut self, depth: usize) -> &mut Self {
        self.max_depth = depth;
        self
    }
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { allow_long_suffix: false, max_depth: 64 }
    }
}

/// A parse error: byte offset into the parsed text and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiteralError {
    /// Byte offset in the text given to [`parse`].
    pub offset: usize,
    /// Lower-case description quoting the offending text.
    pub reason: String,
}

impl fmt::Display for LiteralError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.reason, self.offset)
    }
}

impl std::error::Error for LiteralError {}

/// Parses exactly one Python literal, as `ast.literal_eval` does for the subset that
/// `.npy` headers use.
///
/// Accepted: dicts, tuples, lists, `str` and `bytes` literals (all quote styles and
/// prefixes except f-strings and triple quotes, with Python's escapes and adjacent
/// literal concatenation), decimal integers fitting `i128`, decimal floats, optional unary
/// `-`/`+` on numbers, `True`, `False` and `None`. Whitespace (spaces, tabs, form feeds,
/// newlines) may surround the value and separate its tokens; as in Python, newlines
/// between tokens are only allowed inside brackets. As `ast.literal_eval('1, 2')` does, a
/// top-level comma makes a tuple without parentheses.
///
/// Differences from `ast.literal_eval`, all on the strict side except the first: leading
/// and trailing whitespace is always accepted (Python rejects some indentation);
/// comments, sets, complex numbers, hexadecimal/octal/binary and underscore integers,
/// `\N{...}` and surrogate escapes, and floats overflowing to infinity are errors; dict
/// duplicates are kept in order instead of the last one winning.
///
/// Nesting is limited by [`ParseOptions::max_depth`], which is checked before recursing,
/// so hostile input cannot overflow the stack (keep the limit modest: each level uses a
/// few stack frames).
///
/// # Errors
///
/// Returns a [`LiteralError`] with the byte offset of the offending token and a short
/// lower-case reason for anything that is not exactly one literal of the subset: names
/// (`inf`, `dtype`), calls, operators, comments, sets, hexadecimal or underscore integers,
/// integers beyond `i128`, floats that overflow to infinity, bad escapes, unterminated or
/// triple-quoted strings, mixed `bytes`/`str` concatenation, unhashable dict keys,
/// nesting deeper than `max_depth`, and trailing text after the value.
///
/// # Examples
///
/// ```
/// use npy_core::literal::{parse, parse_with, Literal, ParseOptions};
///
/// let v = parse("{'descr': '<f8', 'shape': (3,), }  \n").unwrap();
/// assert_eq!(
///     v,
///     Literal::Dict(vec![
///         (Literal::Str("descr".into()), Literal::Str("<f8".into())),
///         (Literal::Str("shape".into()), Literal::Tuple(vec![Literal::Int(3)])),
///     ])
/// );
///
/// let err = parse("{'descr', '<f8'}").unwrap_err();
/// assert_eq!(err.offset, 8);
/// assert!(err.reason.starts_with("expected ':' after dict key"));
///
/// assert_eq!(parse_with("(2L,)", ParseOptions::new().allow_long_suffix(true)).unwrap(), Literal::Tuple(vec![Literal::Int(2)]));
/// ```
pub fn parse(text: &str) -> Result<Literal, LiteralError> {
    parse_with(text, &ParseOptions::default())
}

/// [`parse`] with the given options (the `L` suffix, the nesting limit).
///
/// # Errors
/// As [`parse`].
pub fn parse_with(text: &str, options: &ParseOptions) -> Result<Literal, LiteralError> {
    Ok(parse_tape(text, *options)?.root().to_literal())
}

/// Parses exactly one Python literal into a [`Tape`]: what [`parse`] accepts and refuses,
/// with the same errors, without building a [`Literal`] tree.
pub(crate) fn parse_tape(text: &str, opts: ParseOptions) -> Result<Tape<'_>, LiteralError> {
    if let Some(i) = text.find('\0') {
        return Err(LiteralError { offset: i, reason: "null byte in text".to_string() });
    }
    let mut p =
        Parser { text, pos: 0, opts, brackets: 0, nodes: Vec::with_capacity(text.len() / 8), owned: Owned::default() };
    p.skip_ws(true);
    p.parse_value(0)?;
    p.skip_ws(false);
    if p.peek() == Some(b',') {
        p.parse_bare_tuple()?;
    }
    p.skip_ws(true);
    if p.pos < text.len() {
        let reason = if p.peek() == Some(b'#') {
            "comments are not supported".to_string()
        } else {
            format!("unexpected {} after the value", p.found(p.pos))
        };
        return Err(p.err(p.pos, reason));
    }
    Ok(Tape { nodes: p.nodes, owned: p.owned })
}

impl Literal {
    /// Returns the text Python 3's `repr()` gives for this value.
    ///
    /// Strings use CPython's quote choice and escapes (non-printable characters as `\xhh`,
    /// `\uhhhh` or `\Uhhhhhhhh`), floats the shortest round-trip digits in Python's
    /// layout (`1.0`, `1e-05`, `1e+16`), and containers Python's `, ` and `: ` separators.
    /// For every value [`parse`] returns, parsing the repr gives the value back.
    ///
    /// # Examples
    ///
    /// ```
    /// use npy_core::literal::{parse, Literal, ParseOptions};
    ///
    /// let v = Literal::Dict(vec![
    ///     (Literal::Str("it's".into()), Literal::Float(1e-5)),
    ///     (Literal::Bytes(b"\x00a".to_vec()), Literal::Tuple(vec![Literal::Int(3)])),
    /// ]);
    /// assert_eq!(v.repr(), r#"{"it's": 1e-05, b'\x00a': (3,)}"#);
    /// assert_eq!(v.to_string(), v.repr());
    /// assert_eq!(parse(&v.repr()).unwrap(), v);
    /// ```
    pub fn repr(&self) -> String {
        let mut out = String::new();
        self.write_repr(&mut out);
        out
    }

    /// Writes [`Literal::repr`] to `out`.
    pub(crate) fn write_repr(&self, out: &mut String) {
        match self {
            Literal::None => out.push_str("None"),
            Literal::Bool(true) => out.push_str("True"),
            Literal::Bool(false) => out.push_str("False"),
            Literal::Int(i) => out.push_str(&i.to_string()),
            Literal::Float(x) => repr::write_float(*x, out),
            Literal::Str(s) => repr::write_str(s, out),
            Literal::Bytes(b) => repr::write_bytes(b, out),
            Literal::Tuple(items) => repr::write_tuple(items, Literal::write_repr, out),
            Literal::List(items) => repr::write_list(items, Literal::write_repr, out),
            Literal::Dict(entries) => repr::write_dict(entries, Literal::write_repr, out),
        }
    }
}

impl fmt::Display for Literal {
    /// Writes [`Literal::repr`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

/// Quotes text for an error message: Python's quote choice, control and non-printable
/// characters escaped, backslashes kept as they are.
fn quote(s: &str) -> String {
    let mut out = String::new();
    repr::write_str_keeping_backslashes(s, &mut out);
    out
}

/// Index of the first backslash, line break or quote `q` in `bytes`: where a string's plain
/// run stops. Eight bytes at a time (a string's bytes are most of a header's), each word
/// tested for the four bytes at once: a byte of `word ^ splat(b)` is zero where `word` holds
/// `b`, and `(x - 0x01..) & !x & 0x80..` flags a word's zero bytes, exactly up to the first
/// (a borrow can flag a byte only past a zero one), so the lowest flag is the first stop.
fn string_stop(bytes: &[u8], q: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zeros = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let (words, tail) = bytes.as_chunks::<8>();
    for (i, word) in words.iter().enumerate() {
        let w = u64::from_le_bytes(*word);
        let stops = zeros(w ^ (ONES * u64::from(b'\\')))
            | zeros(w ^ (ONES * u64::from(b'\n')))
            | zeros(w ^ (ONES * u64::from(b'\r')))
            | zeros(w ^ (ONES * u64::from(q)));
        if stops != 0 {
            return Some(i * 8 + (stops.trailing_zeros() / 8) as usize);
        }
    }
    let at = words.len() * 8;
    tail.iter().position(|&b| matches!(b, b'\\' | b'\n' | b'\r') || b == q).map(|i| at + i)
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

fn is_delimiter(c: char) -> bool {
    matches!(c, ',' | ':' | '(' | ')' | '[' | ']' | '{' | '}')
}

/// A string literal's value while it is being decoded.
enum Buf {
    Str(String),
    Bytes(Vec<u8>),
}

impl Buf {
    /// Pushes a character (ASCII only for bytes; the caller checks).
    fn push(&mut self, c: char) {
        match self {
            Buf::Str(s) => s.push(c),
            Buf::Bytes(b) => {
                let mut tmp = [0u8; 4];
                b.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
            }
        }
    }

    /// Pushes the value of an octal or `\x` escape; `false` if it is no character.
    fn push_code(&mut self, v: u32) -> bool {
        match self {
            Buf::Str(s) => match char::from_u32(v) {
                Some(c) => {
                    s.push(c);
                    true
                }
                None => false,
            },
            Buf::Bytes(b) => {
                // Python keeps the low 8 bits of octal escapes above \377.
                b.push((v & 0xff) as u8);
                true
            }
        }
    }

    fn into_piece<'a>(self) -> Piece<'a> {
        match self {
            Buf::Str(s) => Piece::Str(Cow::Owned(s)),
            Buf::Bytes(b) => Piece::Bytes(Cow::Owned(b)),
        }
    }
}

/// A string literal's value once read: borrowed from the text when it had no escapes.
enum Piece<'a> {
    Str(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
}

/// Longest snippet quoted in an error message, in characters.
const SNIPPET_CHARS: usize = 24;

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    opts: ParseOptions,
    /// Brackets open at `pos`; newlines between tokens are allowed only inside them.
    brackets: usize,
    /// The tape written so far.
    nodes: Vec<Node<'a>>,
    /// Its decoded strings.
    owned: Owned,
}

impl<'a> Parser<'a> {
    fn err(&self, offset: usize, reason: impl Into<String>) -> LiteralError {
        LiteralError { offset, reason: reason.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.byte_at(self.pos)
    }

    fn byte_at(&self, i: usize) -> Option<u8> {
        self.text.as_bytes().get(i).copied()
    }

    fn rest_at(&self, i: usize) -> &str {
        self.text.get(i..).unwrap_or("")
    }

    fn char_at(&self, i: usize) -> Option<char> {
        self.rest_at(i).chars().next()
    }

    /// The token at `pos`, quoted, or "end of text".
    fn found(&self, pos: usize) -> String {
        let rest = self.rest_at(pos);
        let mut end = 0;
        for (n, (i, c)) in rest.char_indices().enumerate() {
            if n == 0 && is_delimiter(c) {
                end = c.len_utf8();
                break;
            }
            if c.is_whitespace() || is_delimiter(c) {
                break;
            }
            if n == SNIPPET_CHARS {
                return format!("{}...", quote(rest.get(..i).unwrap_or("")));
            }
            end = i + c.len_utf8();
        }
        if end == 0 {
            match rest.chars().next() {
                None => "end of text".to_string(),
                Some(c) => quote(&c.to_string()),
            }
        } else {
            quote(rest.get(..end).unwrap_or(""))
        }
    }

    /// Skips spaces, tabs, form feeds and backslash-newline continuations, and newlines
    /// too when `newlines` (inside brackets, or around the whole value).
    fn skip_ws(&mut self, newlines: bool) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\x0c') => self.pos += 1,
                Some(b'\n' | b'\r') if newlines => self.pos += 1,
                Some(b'\\') => match (self.byte_at(self.pos + 1), self.byte_at(self.pos + 2)) {
                    (Some(b'\r'), Some(b'\n')) => self.pos += 3,
                    (Some(b'\n' | b'\r'), _) => self.pos += 2,
                    _ => return,
                },
                _ => return,
            }
        }
    }

    fn check_depth(&self, depth: usize) -> Result<(), LiteralError> {
        if depth >= self.opts.max_depth {
            Err(self.err(self.pos, format!("nesting deeper than {}", self.opts.max_depth)))
        } else {
            Ok(())
        }
    }

    /// Parses one value at `self.pos` (no leading whitespace) onto the tape; `depth`
    /// containers are open.
    fn parse_value(&mut self, depth: usize) -> Result<(), LiteralError> {
        let start = self.pos;
        let node = match self.peek() {
            None => return Err(self.err(start, "expected a value, found end of text")),
            Some(b'{') => return self.parse_dict(depth),
            Some(b'[') => return self.parse_list(depth),
            Some(b'(') if self.string_pair(depth) => return Ok(()),
            Some(b'(') => return self.parse_paren(depth),
            Some(q @ (b'\'' | b'"')) => match self.plain_string(start + 1, q, false) {
                // The common case, read here: a string without escapes that a delimiter
                // follows, so no other string is concatenated to it. Its node is made in
                // place (a node returned through the stack costs more than the string).
                Some(text) if matches!(self.peek(), None | Some(b',' | b')' | b']' | b'}' | b':')) => {
                    self.nodes.push(Node::Str(text));
                    return Ok(());
                }
                _ => {
                    self.pos = start;
                    let piece = self.parse_strings()?;
                    self.piece_node(piece)
                }
            },
            Some(b'-' | b'+') => self.parse_signed(depth)?,
            Some(b'0'..=b'9') => self.parse_number(false)?,
            Some(b'.') if self.byte_at(start + 1).is_some_and(|b| b.is_ascii_digit()) => self.parse_number(false)?,
            Some(b'#') => return Err(self.err(start, "comments are not supported")),
            Some(b',' | b':' | b')' | b']' | b'}') => {
                return Err(self.err(start, format!("expected a value, found {}", self.found(start))))
            }
            Some(_) => match self.char_at(start) {
                Some(c) if is_ident_start(c) => self.parse_name()?,
                Some(c) => return Err(self.err(start, format!("unexpected character {}", quote(&c.to_string())))),
                None => return Err(self.err(start, "expected a value, found end of text")),
            },
        };
        self.nodes.push(node);
        Ok(())
    }

    /// Reads the tuple at `self.pos` in one go when it is a record field as NumPy writes
    /// it, `('name', 'type')`: two strings without escapes, a quote right after the
    /// parenthesis, `, ` between them and `)` right after. Its three nodes are what
    /// [`Parser::parse_paren`] writes for it. `false`, with nothing read, for any other
    /// text (or at the depth limit), which `parse_paren` then reads, errors and all.
    #[inline]
    fn string_pair(&mut self, depth: usize) -> bool {
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let pair = || {
            if depth >= self.opts.max_depth {
                return None;
            }
            let q = *bytes.get(start + 1).filter(|&&q| q == b'\'' || q == b'"')?;
            let first = self.plain_string_at(start + 2, q, false)?;
            let comma = start + 2 + first.len() + 1;
            if bytes.get(comma..comma + 2) != Some(b", ") {
                return None;
            }
            let q = *bytes.get(comma + 2).filter(|&&q| q == b'\'' || q == b'"')?;
            let second = self.plain_string_at(comma + 3, q, false)?;
            let close = comma + 3 + second.len() + 1;
            (bytes.get(close) == Some(&b')')).then_some((first, second, close + 1))
        };
        let Some((first, second, end)) = pair() else { return false };
        self.pos = end;
        self.nodes.extend_from_slice(&[Node::Tuple(Span { items: 2, nodes: 2 }), Node::Str(first), Node::Str(second)]);
        true
    }

    /// The node of a string: itself when borrowed, else its index among the decoded ones.
    fn piece_node(&mut self, piece: Piece<'a>) -> Node<'a> {
        match piece {
            Piece::Str(Cow::Borrowed(s)) => Node::Str(s),
            Piece::Bytes(Cow::Borrowed(b)) => Node::Bytes(b),
            Piece::Str(Cow::Owned(s)) => {
                self.owned.strs.push(s);
                Node::OwnedStr(self.owned.strs.len() - 1)
            }
            Piece::Bytes(Cow::Owned(b)) => {
                self.owned.bytes.push(b);
                Node::OwnedBytes(self.owned.bytes.len() - 1)
            }
        }
    }

    /// Sets the span of the container whose head is at `at`, once its `items` are written.
    fn close(&mut self, at: usize, items: usize) {
        let nodes = self.nodes.len() - at - 1;
        if let Some(Node::Tuple(span) | Node::List(span) | Node::Dict(span)) = self.nodes.get_mut(at) {
            *span = Span { items, nodes };
        }
    }

    /// End of the identifier starting at `pos`.
    fn ident_end(&self, pos: usize) -> usize {
        // ASCII a byte at a time; from the first other character on, char by char.
        let ascii = self.text.as_bytes().get(pos..).unwrap_or(&[]);
        let len = ascii.iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'_')).unwrap_or(ascii.len());
        let end = pos + len;
        if self.byte_at(end).is_some_and(|b| !b.is_ascii()) {
            let rest = self.rest_at(end);
            return end + rest.find(|c: char| !is_ident_continue(c)).unwrap_or(rest.len());
        }
        end
    }

    fn parse_name(&mut self) -> Result<Node<'a>, LiteralError> {
        let start = self.pos;
        let end = self.ident_end(start);
        if matches!(self.byte_at(end), Some(b'\'' | b'"')) {
            let piece = self.parse_strings()?;
            return Ok(self.piece_node(piece));
        }
        let name = self.text.get(start..end).unwrap_or("");
        let value = match name {
            "True" => Node::Bool(true),
            "False" => Node::Bool(false),
            "None" => Node::None,
            _ => return Err(self.err(start, format!("name {} is not a literal", quote(name)))),
        };
        self.pos = end;
        Ok(value)
    }

    /// Whether a string literal (with or without prefix) starts at `self.pos`.
    fn at_string_start(&self) -> bool {
        match self.peek() {
            Some(b'\'' | b'"') => true,
            _ => {
                let end = self.ident_end(self.pos);
                end > self.pos && matches!(self.byte_at(end), Some(b'\'' | b'"'))
            }
        }
    }

    /// Parses one or more adjacent string literals and concatenates them.
    fn parse_strings(&mut self) -> Result<Piece<'a>, LiteralError> {
        let mut acc = self.parse_one_string()?;
        loop {
            // A delimiter right after the string (the common case) starts no other string.
            if matches!(self.peek(), None | Some(b',' | b')' | b']' | b'}' | b':')) {
                return Ok(acc);
            }
            self.skip_ws(self.brackets > 0);
            if !self.at_string_start() {
                return Ok(acc);
            }
            let start = self.pos;
            let next = self.parse_one_string()?;
            match (&mut acc, next) {
                (Piece::Str(a), Piece::Str(b)) => a.to_mut().push_str(&b),
                (Piece::Bytes(a), Piece::Bytes(b)) => a.to_mut().extend_from_slice(&b),
                _ => return Err(self.err(start, "cannot mix bytes and str literals")),
            }
        }
    }

    /// Parses one string literal, prefix included, at `self.pos`.
    fn parse_one_string(&mut self) -> Result<Piece<'a>, LiteralError> {
        let start = self.pos;
        if let Some(q @ (b'\'' | b'"')) = self.peek() {
            if let Some(text) = self.plain_string(start + 1, q, false) {
                return Ok(Piece::Str(Cow::Borrowed(text)));
            }
        }
        let prefix_end = self.ident_end(start);
        let prefix = self.text.get(start..prefix_end).unwrap_or("");
        let fstring = || self.err(start, "f-strings are not supported");
        let invalid = || self.err(start, format!("invalid string prefix {}", quote(prefix)));
        let (raw, bytes) = match prefix.as_bytes() {
            [] => (false, false),
            [p] => match p.to_ascii_lowercase() {
                b'u' => (false, false),
                b'r' => (true, false),
                b'b' => (false, true),
                b'f' => return Err(fstring()),
                _ => return Err(invalid()),
            },
            [p, q] => match (p.to_ascii_lowercase(), q.to_ascii_lowercase()) {
                (b'b', b'r') | (b'r', b'b') => (true, true),
                (b'f', b'r') | (b'r', b'f') => return Err(fstring()),
                _ => return Err(invalid()),
            },
            _ => return Err(invalid()),
        };
        let open = prefix_end;
        let q = match self.byte_at(open) {
            Some(q @ (b'\'' | b'"')) => q,
            _ => return Err(self.err(open, format!("expected a string, found {}", self.found(open)))),
        };
        if self.byte_at(open + 1) == Some(q) && self.byte_at(open + 2) == Some(q) {
            return Err(self.err(start, "triple-quoted strings are not supported"));
        }
        if let Some(text) = self.plain_string(open + 1, q, bytes) {
            return Ok(if bytes {
                Piece::Bytes(Cow::Borrowed(text.as_bytes()))
            } else {
                Piece::Str(Cow::Borrowed(text))
            });
        }
        let q = char::from(q);
        self.pos = open + 1;
        let mut buf = if bytes { Buf::Bytes(Vec::new()) } else { Buf::Str(String::new()) };
        let unterminated = |p: &Self| p.err(start, "unterminated string");
        loop {
            let cpos = self.pos;
            let Some(c) = self.char_at(cpos) else {
                return Err(unterminated(self));
            };
            self.pos += c.len_utf8();
            match c {
                '\n' | '\r' => return Err(unterminated(self)),
                _ if c == q => return Ok(buf.into_piece()),
                '\\' => self.parse_escape(start, cpos, raw, &mut buf)?,
                _ => {
                    self.check_bytes_char(bytes, cpos, c)?;
                    buf.push(c);
                }
            }
        }
    }

    /// The text of the string that starts at `body` and ends at the next quote `q`, when
    /// it has no backslash and no line break (and, for `bytes`, only ASCII): the common
    /// case, which needs no decoding. `None` otherwise, when the string is decoded
    /// character by character (and its errors found).
    #[inline]
    fn plain_string(&mut self, body: usize, q: u8, bytes: bool) -> Option<&'a str> {
        let text = self.plain_string_at(body, q, bytes)?;
        self.pos = body + text.len() + 1;
        Some(text)
    }

    /// [`Parser::plain_string`] without moving `self.pos`.
    #[inline]
    fn plain_string_at(&self, body: usize, q: u8, bytes: bool) -> Option<&'a str> {
        let rest = self.text.as_bytes().get(body..)?;
        let len = string_stop(rest, q)?;
        // Not a backslash nor a line break, nor a third quote (`'''` starts a triple-quoted
        // string, an error).
        if rest.get(len) != Some(&q) || (len == 0 && rest.get(1) == Some(&q)) {
            return None;
        }
        // `q` is ASCII, so `body + len` is a character boundary.
        let text: &'a str = self.text.get(body..body + len)?;
        if bytes && !text.is_ascii() {
            return None;
        }
        Some(text)
    }

    fn check_bytes_char(&self, bytes: bool, pos: usize, c: char) -> Result<(), LiteralError> {
        if bytes && !c.is_ascii() {
            Err(self
                .err(pos, format!("bytes can only contain ascii literal characters, found {}", quote(&c.to_string()))))
        } else {
            Ok(())
        }
    }

    /// Reads exactly `n` hex digits at `self.pos`.
    fn hex_digits(&mut self, n: usize) -> Option<u32> {
        let digits = self.text.get(self.pos..self.pos + n)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let v = u32::from_str_radix(digits, 16).ok()?;
        self.pos += n;
        Some(v)
    }

    /// Decodes the escape whose backslash is at `bpos` (`self.pos` is just after it) in
    /// the string literal starting at `start`.
    fn parse_escape(&mut self, start: usize, bpos: usize, raw: bool, buf: &mut Buf) -> Result<(), LiteralError> {
        let bytes = matches!(buf, Buf::Bytes(_));
        let Some(e) = self.char_at(self.pos) else {
            return Err(self.err(start, "unterminated string"));
        };
        let epos = self.pos;
        self.pos += e.len_utf8();
        if raw {
            // The backslash stays and protects the next character, newlines included.
            buf.push('\\');
            if e == '\r' {
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
                buf.push('\n');
            } else {
                self.check_bytes_char(bytes, epos, e)?;
                buf.push(e);
            }
            return Ok(());
        }
        match e {
            '\n' => {}
            '\r' => {
                if self.peek() == Some(b'\n') {
                    self.pos += 1;
                }
            }
            '\\' | '\'' | '"' => buf.push(e),
            'n' => buf.push('\n'),
            't' => buf.push('\t'),
            'r' => buf.push('\r'),
            'a' => buf.push('\x07'),
            'b' => buf.push('\x08'),
            'f' => buf.push('\x0c'),
            'v' => buf.push('\x0b'),
            '0'..='7' => {
                let mut v = u32::from(e) - u32::from('0');
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                if !buf.push_code(v) {
                    return Err(self.err(bpos, "invalid octal escape"));
                }
            }
            'x' => match self.hex_digits(2) {
                Some(v) if buf.push_code(v) => {}
                _ => return Err(self.err(bpos, "truncated \\xhh escape")),
            },
            'u' | 'U' if !bytes => {
                let (n, what) = if e == 'u' { (4, "\\uxxxx") } else { (8, "\\Uxxxxxxxx") };
                let Some(v) = self.hex_digits(n) else {
                    return Err(self.err(bpos, format!("truncated {what} escape")));
                };
                let escape = self.text.get(bpos..self.pos).unwrap_or("");
                if v > 0x10ffff {
                    return Err(self.err(bpos, format!("illegal unicode character {}", quote(escape))));
                }
                match char::from_u32(v) {
                    Some(c) => buf.push(c),
                    None => return Err(self.err(bpos, format!("surrogate escape {} is not supported", quote(escape)))),
                }
            }
            'N' if !bytes => return Err(self.err(bpos, "\\N{...} escapes are not supported")),
            _ => {
                // Unknown escapes keep the backslash, as Python does.
                self.check_bytes_char(bytes, epos, e)?;
                buf.push('\\');
                buf.push(e);
            }
        }
        Ok(())
    }

    /// Parses `-x` / `+x` where `x` is a number, possibly parenthesized.
    fn parse_signed(&mut self, depth: usize) -> Result<Node<'a>, LiteralError> {
        let negative = self.peek() == Some(b'-');
        self.pos += 1;
        self.skip_ws(self.brackets > 0);
        self.parse_signed_operand(depth, negative)
    }

    fn parse_signed_operand(&mut self, depth: usize, negative: bool) -> Result<Node<'a>, LiteralError> {
        let start = self.pos;
        match self.peek() {
            Some(b'0'..=b'9') => self.parse_number(negative),
            Some(b'.') if self.byte_at(start + 1).is_some_and(|b| b.is_ascii_digit()) => self.parse_number(negative),
            Some(b'(') => {
                self.check_depth(depth)?;
                self.pos += 1;
                self.brackets += 1;
                self.skip_ws(true);
                let v = self.parse_signed_operand(depth + 1, negative)?;
                self.skip_ws(true);
                self.brackets -= 1;
                if self.peek() != Some(b')') {
                    return Err(
                        self.err(self.pos, format!("expected ')' after the number, found {}", self.found(self.pos)))
                    );
                }
                self.pos += 1;
                Ok(v)
            }
            _ => {
                let sign = if negative { '-' } else { '+' };
                Err(self.err(start, format!("expected a number after '{sign}', found {}", self.found(start))))
            }
        }
    }

    /// Parses a decimal int or float token at `self.pos`, negated if `negative`.
    fn parse_number(&mut self, negative: bool) -> Result<Node<'a>, LiteralError> {
        let start = self.pos;
        let at = |i: usize| self.byte_at(i);
        let digit_run = |mut i: usize, underscore: &mut bool| {
            while let Some(c) = at(i) {
                if c == b'_' {
                    *underscore = true;
                } else if !c.is_ascii_digit() {
                    break;
                }
                i += 1;
            }
            i
        };
        if at(start) == Some(b'0') && matches!(at(start + 1), Some(b'x' | b'X' | b'o' | b'O' | b'b' | b'B')) {
            return Err(
                self.err(start, format!("hexadecimal/underscore integers are not supported: {}", self.found(start)))
            );
        }
        let mut underscore = false;
        let mut is_float = false;
        let mut i = digit_run(start, &mut underscore);
        let int_end = i;
        if at(i) == Some(b'.') {
            is_float = true;
            i = digit_run(i + 1, &mut underscore);
        }
        if matches!(at(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(at(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if !at(j).is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.err(start, format!("invalid decimal literal {}", self.found(start))));
            }
            is_float = true;
            i = digit_run(j, &mut underscore);
        }
        if matches!(at(i), Some(b'j' | b'J')) {
            return Err(self.err(start, format!("complex numbers are not supported: {}", self.found(start))));
        }
        let mut long_suffix_end = i;
        if !is_float && matches!(at(i), Some(b'l' | b'L')) {
            if !self.opts.allow_long_suffix {
                return Err(self.err(start, format!("long integer suffix is not allowed: {}", self.found(start))));
            }
            long_suffix_end = i + 1;
        }
        if self.char_at(long_suffix_end).is_some_and(is_ident_continue) {
            return Err(self.err(start, format!("invalid decimal literal {}", self.found(start))));
        }
        if underscore {
            return Err(
                self.err(start, format!("hexadecimal/underscore integers are not supported: {}", self.found(start)))
            );
        }
        let token = self.text.get(start..i).unwrap_or("");
        self.pos = long_suffix_end;
        if is_float {
            let v: f64 =
                token.parse().map_err(|_| self.err(start, format!("invalid float literal {}", quote(token))))?;
            if !v.is_finite() {
                return Err(self.err(start, format!("float literal out of range: {}", quote(token))));
            }
            return Ok(Node::Float(if negative { -v } else { v }));
        }
        let digits = self.text.get(start..int_end).unwrap_or("");
        if digits.len() > 1 && digits.starts_with('0') && digits.bytes().any(|b| b != b'0') {
            return Err(self.err(
                start,
                format!("leading zeros in decimal integer literals are not permitted: {}", self.found(start)),
            ));
        }
        let too_large = |p: &Self| p.err(start, format!("integer too large: {}", p.found(start)));
        let mut magnitude: u128 = 0;
        for d in digits.bytes() {
            magnitude = magnitude
                .checked_mul(10)
                .and_then(|m| m.checked_add(u128::from(d - b'0')))
                .ok_or_else(|| too_large(self))?;
        }
        let value = if negative { 0i128.checked_sub_unsigned(magnitude) } else { i128::try_from(magnitude).ok() };
        value.map(Node::Int).ok_or_else(|| too_large(self))
    }

    /// Parses the rest of a top-level tuple without parentheses, `1, 2` (`self.pos` is at
    /// the first comma, the first item is the tape so far); as in Python, it ends at a
    /// newline.
    fn parse_bare_tuple(&mut self) -> Result<(), LiteralError> {
        let comma = self.pos;
        if value(&self.nodes, &self.owned).map_or(0, Value::nesting) >= self.opts.max_depth {
            return Err(self.err(comma, format!("nesting deeper than {}", self.opts.max_depth)));
        }
        self.nodes.insert(0, Node::Tuple(Span::default()));
        let mut items = 1;
        while self.peek() == Some(b',') {
            self.pos += 1;
            self.skip_ws(false);
            if matches!(self.peek(), None | Some(b'\n' | b'\r')) {
                break;
            }
            self.parse_value(1)?;
            items += 1;
            self.skip_ws(false);
        }
        self.close(0, items);
        Ok(())
    }

    fn parse_list(&mut self, depth: usize) -> Result<(), LiteralError> {
        self.check_depth(depth)?;
        self.pos += 1;
        self.brackets += 1;
        let at = self.nodes.len();
        self.nodes.push(Node::List(Span::default()));
        let result = self.parse_list_inner(depth, at);
        self.brackets -= 1;
        result
    }

    fn parse_list_inner(&mut self, depth: usize, at: usize) -> Result<(), LiteralError> {
        let mut items = 0;
        loop {
            self.skip_ws(true);
            if self.peek() == Some(b']') {
                self.pos += 1;
                self.close(at, items);
                return Ok(());
            }
            self.parse_value(depth + 1)?;
            items += 1;
            self.skip_ws(true);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.close(at, items);
                    return Ok(());
                }
                _ => {
                    return Err(self
                        .err(self.pos, format!("expected ',' or ']' after list item, found {}", self.found(self.pos))))
                }
            }
        }
    }

    /// Parses `()`, `(x)` (just `x`), `(x,)` and `(x, y, ...)`.
    fn parse_paren(&mut self, depth: usize) -> Result<(), LiteralError> {
        self.check_depth(depth)?;
        self.pos += 1;
        self.brackets += 1;
        let at = self.nodes.len();
        self.nodes.push(Node::Tuple(Span::default()));
        let result = self.parse_paren_inner(depth, at);
        self.brackets -= 1;
        result
    }

    fn parse_paren_inner(&mut self, depth: usize, at: usize) -> Result<(), LiteralError> {
        self.skip_ws(true);
        if self.peek() == Some(b')') {
            self.pos += 1;
            self.close(at, 0);
            return Ok(());
        }
        self.parse_value(depth + 1)?;
        let mut items = 1;
        let mut seen_comma = false;
        loop {
            self.skip_ws(true);
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    seen_comma = true;
                }
                Some(b')') => {
                    self.pos += 1;
                    if seen_comma {
                        self.close(at, items);
                    } else {
                        // `(x)` is `x`: the head goes, `x`'s nodes move up by one (spans
                        // count nodes, so they stay true).
                        self.nodes.remove(at);
                    }
                    return Ok(());
                }
                _ => {
                    return Err(self.err(
                        self.pos,
                        format!("expected ',' or ')' after tuple item, found {}", self.found(self.pos)),
                    ))
                }
            }
            self.skip_ws(true);
            if self.peek() == Some(b')') {
                self.pos += 1;
                self.close(at, items);
                return Ok(());
            }
            self.parse_value(depth + 1)?;
            items += 1;
        }
    }

    fn parse_dict(&mut self, depth: usize) -> Result<(), LiteralError> {
        self.check_depth(depth)?;
        self.pos += 1;
        self.brackets += 1;
        let at = self.nodes.len();
        self.nodes.push(Node::Dict(Span::default()));
        let result = self.parse_dict_inner(depth, at);
        self.brackets -= 1;
        result
    }

    fn parse_dict_inner(&mut self, depth: usize, at: usize) -> Result<(), LiteralError> {
        let mut entries = 0;
        loop {
            self.skip_ws(true);
            if self.peek() == Some(b'}') {
                self.pos += 1;
                self.close(at, entries);
                return Ok(());
            }
            let key_pos = self.pos;
            let key_at = self.nodes.len();
            self.parse_value(depth + 1)?;
            let key = self.nodes.get(key_at..).and_then(|nodes| value(nodes, &self.owned));
            if let Some(kind) = key.and_then(Value::unhashable) {
                return Err(self.err(key_pos, format!("unhashable dict key ({kind})")));
            }
            self.skip_ws(true);
            if self.peek() != Some(b':') {
                return Err(self.err(self.pos, format!("expected ':' after dict key, found {}", self.found(self.pos))));
            }
            self.pos += 1;
            self.skip_ws(true);
            self.parse_value(depth + 1)?;
            entries += 1;
            self.skip_ws(true);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.close(at, entries);
                    return Ok(());
                }
                _ => {
                    return Err(self.err(
                        self.pos,
                        format!("expected ',' or '}}' after dict value, found {}", self.found(self.pos)),
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Literal {
        match parse(text) {
            Ok(v) => v,
            Err(e) => panic!("parse({text:?}) failed: {e}"),
        }
    }

    fn e(text: &str) -> LiteralError {
        match parse(text) {
            Ok(v) => panic!("parse({text:?}) should fail, got {v:?}"),
            Err(e) => e,
        }
    }

    /// Asserts that `text` fails with a reason containing `reason`.
    fn fails(text: &str, reason: &str) {
        let err = e(text);
        assert!(err.reason.contains(reason), "parse({text:?}): {:?} lacks {reason:?}", err.reason);
    }

    /// Asserts that `text` fails at `offset` with a reason starting with `reason`.
    fn fails_at(text: &str, offset: usize, reason: &str) {
        let err = e(text);
        assert_eq!(err.offset, offset, "offset of parse({text:?}): {err:?}");
        assert!(err.reason.starts_with(reason), "parse({text:?}): {:?} lacks {reason:?}", err.reason);
    }

    fn s(v: &str) -> Literal {
        Literal::Str(v.to_string())
    }

    fn b(v: &[u8]) -> Literal {
        Literal::Bytes(v.to_vec())
    }

    fn i(v: i128) -> Literal {
        Literal::Int(v)
    }

    fn f(v: f64) -> Literal {
        Literal::Float(v)
    }

    fn long() -> ParseOptions {
        ParseOptions { allow_long_suffix: true, ..ParseOptions::default() }
    }

    #[test]
    fn npy_header() {
        let mut text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }".to_string();
        text.push_str(&" ".repeat(67));
        text.push('\n');
        assert_eq!(
            p(&text),
            Literal::Dict(vec![
                (s("descr"), s("<f8")),
                (s("fortran_order"), Literal::Bool(false)),
                (s("shape"), Literal::Tuple(vec![i(3), i(4)])),
            ])
        );
        // Python 3: repr of the parsed dict.
        assert_eq!(p(&text).repr(), "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}");
    }

    #[test]
    fn long_suffix() {
        let t = Literal::Tuple(vec![i(2), i(3)]);
        assert_eq!(parse_with("(2L, 3L)", &long()), Ok(t.clone()));
        assert_eq!(parse_with("(2l, 3)", &long()), Ok(t));
        assert_eq!(parse_with("-7L", &long()), Ok(i(-7)));
        fails_at("(2L, 3L)", 1, "long integer suffix is not allowed: '2L'");
        // Only directly after the digits of an integer.
        assert!(parse_with("2 L", &long()).is_err());
        assert!(parse_with("1.5L", &long()).is_err());
        assert!(parse_with("2LL", &long()).is_err());
        assert!(parse_with("2Lx", &long()).is_err());
    }

    #[test]
    fn scalars() {
        assert_eq!(p("True"), Literal::Bool(true));
        assert_eq!(p("False"), Literal::Bool(false));
        assert_eq!(p("None"), Literal::None);
        assert_eq!(p("0"), i(0));
        assert_eq!(p("00"), i(0));
        assert_eq!(p("-0"), i(0));
        assert_eq!(p("42"), i(42));
        assert_eq!(p("-5"), i(-5));
        assert_eq!(p("+5"), i(5));
        assert_eq!(p("- 5"), i(-5));
        assert_eq!(p("-\t5"), i(-5));
        assert_eq!(p("-(5)"), i(-5));
        assert_eq!(p("-( ( 5 ) )"), i(-5));
        assert_eq!(p("(-5)"), i(-5));
        assert_eq!(p("(- 5)"), i(-5));
        assert_eq!(p("[-\n5]"), Literal::List(vec![i(-5)]));
    }

    #[test]
    fn int_limits() {
        assert_eq!(p("170141183460469231731687303715884105727"), i(i128::MAX));
        assert_eq!(p("-170141183460469231731687303715884105728"), i(i128::MIN));
        fails_at("170141183460469231731687303715884105728", 0, "integer too large");
        fails_at("-170141183460469231731687303715884105729", 1, "integer too large");
        fails("340282366920938463463374607431768211456", "integer too large");
        let huge = "9".repeat(5000);
        let start = std::time::Instant::now();
        let err = e(&huge);
        // Not under Miri, which interprets far slower than the second allowed.
        assert!(cfg!(miri) || start.elapsed() < std::time::Duration::from_secs(1));
        assert!(err.reason.starts_with("integer too large"), "{err:?}");
        assert!(err.reason.len() < 80, "quoted text is truncated: {err:?}");
        let err = e(&format!("[1, -{huge}]"));
        assert_eq!(err.offset, 5);
        // A long float is fine.
        // Python 3: float('1' * 5000 + '.5e-4999') == 1.1111111111111112.
        let ones = "1".repeat(5000);
        assert_eq!(p(&format!("{ones}.5e-4999")), f(1.1111111111111112));
    }

    #[test]
    fn int_errors() {
        fails_at("007", 0, "leading zeros in decimal integer literals are not permitted: '007'");
        fails_at("[1, 0x1f]", 4, "hexadecimal/underscore integers are not supported: '0x1f'");
        fails("0o17", "hexadecimal/underscore integers are not supported");
        fails("0B101", "hexadecimal/underscore integers are not supported");
        fails("1_000", "hexadecimal/underscore integers are not supported: '1_000'");
        fails("1_0.5", "hexadecimal/underscore integers are not supported");
        fails_at("1j", 0, "complex numbers are not supported");
        fails_at("1abc", 0, "invalid decimal literal '1abc'");
        fails("1e", "invalid decimal literal");
        fails("1e+", "invalid decimal literal");
        fails_at("--5", 1, "expected a number after '-', found '-5'");
        fails("-True", "expected a number after '-'");
        fails("-'a'", "expected a number after '-'");
        fails("-(-5)", "expected a number after '-'");
        fails("-(5,)", "expected ')' after the number");
        fails_at("-", 1, "expected a number after '-', found end of text");
        // At top level a newline ends the expression, as in Python.
        fails("- \n5", "expected a number after '-'");
        fails("1+2", "unexpected '+2' after the value");
    }

    #[test]
    fn floats() {
        assert_eq!(p("1.5"), f(1.5));
        assert_eq!(p("-0.25"), f(-0.25));
        assert_eq!(p("1e-05"), f(1e-5));
        assert_eq!(p("1."), f(1.0));
        assert_eq!(p(".5"), f(0.5));
        assert_eq!(p("-.5"), f(-0.5));
        assert_eq!(p("2E10"), f(2e10));
        assert_eq!(p("1.e5"), f(1e5));
        assert_eq!(p("1E+05"), f(1e5));
        assert_eq!(p("007.5"), f(7.5));
        assert_eq!(p("00e5"), f(0.0));
        assert_eq!(p("1e-400"), f(0.0));
        let neg_zero = p("-0.0");
        assert!(matches!(neg_zero, Literal::Float(x) if x == 0.0 && x.is_sign_negative()));
        fails_at("[1e400]", 1, "float literal out of range: '1e400'");
        fails_at("inf", 0, "name 'inf' is not a literal");
        fails("nan", "name 'nan' is not a literal");
        fails("-inf", "expected a number after '-', found 'inf'");
        fails_at("1.5.3", 3, "unexpected '.3' after the value");
        fails_at("...", 0, "unexpected character '.'");
    }

    #[test]
    fn float_repr() {
        // Expected strings printed by python3 (3.11) `repr(x)`.
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (0.1, "0.1"),
            (1e-05, "1e-05"),
            (0.0001, "0.0001"),
            (0.00012345, "0.00012345"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.0, "1234567890123456.0"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (1.5e16, "1.5e+16"),
            (1e100, "1e+100"),
            (1e-100, "1e-100"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (100.0, "100.0"),
            (123.456, "123.456"),
            (1e22, "1e+22"),
            (9007199254740993.0, "9007199254740992.0"),
            // Exact ties between two shortest candidates: Python rounds half to even.
            (1569294233281013.2, "1569294233281013.2"),
            (938455441553488.2, "938455441553488.2"),
            (-930028800847448.2, "-930028800847448.2"),
            (-1e-07, "-1e-07"),
            (0.5e-4, "5e-05"),
            (3e-5, "3e-05"),
            (1e-4, "0.0001"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ];
        for &(x, want) in cases {
            assert_eq!(f(x).repr(), want, "repr of {x:e}");
            if x.is_finite() {
                assert_eq!(p(want), f(x), "parse of {want}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn float_repr_round_trips() {
        // xorshift over bit patterns: every finite float's repr parses back to itself.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state);
            if x.is_finite() {
                let text = f(x).repr();
                match parse(&text) {
                    Ok(Literal::Float(y)) => assert_eq!(y.to_bits(), x.to_bits(), "{text}"),
                    other => panic!("{text}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn containers() {
        assert_eq!(p("()"), Literal::Tuple(vec![]));
        assert_eq!(p("( )"), Literal::Tuple(vec![]));
        assert_eq!(p("(1,)"), Literal::Tuple(vec![i(1)]));
        assert_eq!(p("(1, 2)"), Literal::Tuple(vec![i(1), i(2)]));
        assert_eq!(p("(1, 2,)"), Literal::Tuple(vec![i(1), i(2)]));
        assert_eq!(p("(5)"), i(5));
        assert_eq!(p("((5))"), i(5));
        assert_eq!(p("((5,))"), Literal::Tuple(vec![i(5)]));
        assert_eq!(p("[]"), Literal::List(vec![]));
        assert_eq!(p("[ 1 , [2] ,]"), Literal::List(vec![i(1), Literal::List(vec![i(2)])]));
        assert_eq!(p("{}"), Literal::Dict(vec![]));
        assert_eq!(p("{1: 2, 3: 4,}"), Literal::Dict(vec![(i(1), i(2)), (i(3), i(4))]));
        assert_eq!(p("{(1, 'a'): None}"), Literal::Dict(vec![(Literal::Tuple(vec![i(1), s("a")]), Literal::None)]));
        // Duplicate keys are kept in order; the caller decides.
        assert_eq!(p("{'a': 1, 'a': 2}"), Literal::Dict(vec![(s("a"), i(1)), (s("a"), i(2))]));
        // Newlines are fine inside brackets.
        assert_eq!(p("{\n'a'\n:\n[1,\n2]\n}"), Literal::Dict(vec![(s("a"), Literal::List(vec![i(1), i(2)]))]));
        assert_eq!(p("[1,\\\n2]"), Literal::List(vec![i(1), i(2)]));
        // A top-level tuple without parentheses, as `ast.literal_eval('1, 2')`.
        assert_eq!(p("1, 2"), Literal::Tuple(vec![i(1), i(2)]));
        assert_eq!(p("'a',  \n"), Literal::Tuple(vec![s("a")]));
        fails("1,\n2", "unexpected '2' after the value");
    }

    #[test]
    fn container_errors() {
        fails_at("{'descr' 1}", 9, "expected ':' after dict key, found '1'");
        fails_at("{'descr', '<f8'}", 8, "expected ':' after dict key, found ','");
        fails_at("{'descr': '<f8' 'shape': 1}", 23, "expected ',' or '}' after dict value, found ':'");
        fails_at("{1, 2}", 2, "expected ':' after dict key, found ','");
        fails_at("[1 2]", 3, "expected ',' or ']' after list item, found '2'");
        fails_at("(1 2)", 3, "expected ',' or ')' after tuple item, found '2'");
        fails_at("(,)", 1, "expected a value, found ','");
        fails_at("[,]", 1, "expected a value, found ','");
        fails_at("(1,,)", 3, "expected a value, found ','");
        fails_at("{,}", 1, "expected a value, found ','");
        fails_at("[1, 2", 5, "expected ',' or ']' after list item, found end of text");
        fails_at("{'a': ", 6, "expected a value, found end of text");
        fails_at("{[1]: 2}", 1, "unhashable dict key (list)");
        fails("{(1, {}): 2}", "unhashable dict key (dict)");
        fails_at("{**a}", 1, "unexpected character '*'");
        fails("[1)", "expected ',' or ']'");
        fails_at("]", 0, "expected a value, found ']'");
    }

    #[test]
    fn depth_limit() {
        let deep = "[".repeat(100_000);
        fails_at(&deep, 64, "nesting deeper than 64");
        let deep = "(".repeat(100_000);
        fails_at(&deep, 64, "nesting deeper than 64");
        let deep = format!("-{}", "(".repeat(100_000));
        fails_at(&deep, 65, "nesting deeper than 64");
        let deep = "{1: ".repeat(100_000);
        fails("{1: ".repeat(100_000).as_str(), "nesting deeper than 64");
        assert_eq!(e(&deep).offset, 64 * 4);
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert!(parse(&ok).is_ok());
        let too_deep = format!("{}{}", "[".repeat(65), "]".repeat(65));
        fails_at(&too_deep, 64, "nesting deeper than 64");
        let opts = ParseOptions { max_depth: 2, ..ParseOptions::default() };
        assert!(parse_with("[(1,)]", &opts).is_ok());
        assert_eq!(parse_with("[((1,),)]", &opts).unwrap_err().reason, "nesting deeper than 2");
        assert_eq!(parse_with("[1], [2]", &opts).map(|v| v.repr()), Ok("([1], [2])".to_string()));
        assert!(parse_with("[[1]], 2", &opts).is_err());
        let flat = ParseOptions { max_depth: 0, ..ParseOptions::default() };
        assert_eq!(parse_with("'x'", &flat), Ok(s("x")));
        assert_eq!(parse_with("()", &flat).unwrap_err().reason, "nesting deeper than 0");
        assert!(parse_with("(5)", &flat).is_err());
    }

    #[test]
    fn strings() {
        assert_eq!(p("'abc'"), s("abc"));
        assert_eq!(p("\"abc\""), s("abc"));
        assert_eq!(p("''"), s(""));
        assert_eq!(p(r#"'\\ \' \" \n \t \r \a \b \f \v'"#), s("\\ ' \" \n \t \r \x07 \x08 \x0c \x0b"));
        assert_eq!(p(r"'\0\7\101\1011\777\08'"), s("\0\x07AA1\u{1ff}\08"));
        assert_eq!(p(r"'\x41\xe9\u00e9\u6e29\U0001F600'"), s("A\u{e9}\u{e9}\u{6e29}\u{1f600}"));
        assert_eq!(p("'a\\\nb'"), s("ab"));
        assert_eq!(p("'a\\\r\nb'"), s("ab"));
        assert_eq!(p(r"'\q\8\ '"), s("\\q\\8\\ "));
        assert_eq!(p("'tab\there'"), s("tab\there"));
        assert_eq!(p("'温度'"), s("温度"));
        assert_eq!(p("u'x'"), s("x"));
        assert_eq!(p("U'x'"), s("x"));
        assert_eq!(p(r"r'\n\''"), s("\\n\\'"));
        assert_eq!(p(r"R'\x'"), s("\\x"));
        assert_eq!(p("r'a\\\nb'"), s("a\\\nb"));
    }

    #[test]
    fn bytes() {
        assert_eq!(p("b'abc'"), b(b"abc"));
        assert_eq!(p("B\"\""), b(b""));
        assert_eq!(p(r"b'\x00\xff\101\777\400\n'"), b(b"\x00\xffA\xff\x00\n"));
        assert_eq!(p(r"b'\u1234\U00012345\N{DASH}'"), b(b"\\u1234\\U00012345\\N{DASH}"));
        for prefix in ["rb", "br", "Rb", "bR", "RB", "BR", "rB", "Br"] {
            assert_eq!(p(&format!("{prefix}'\\x'")), b(b"\\x"), "{prefix}");
        }
        fails_at("b'caf\u{e9}'", 5, "bytes can only contain ascii literal characters, found '\u{e9}'");
        fails("rb'\u{e9}'", "bytes can only contain ascii literal characters");
        fails("b'\\\u{e9}'", "bytes can only contain ascii literal characters");
    }

    #[test]
    fn concatenation() {
        assert_eq!(p("'a' 'b'"), s("ab"));
        assert_eq!(p("'a''b'"), s("ab"));
        assert_eq!(p("'a'''"), s("a"));
        assert_eq!(p("u'a' r'\\b' \"c\""), s("a\\bc"));
        assert_eq!(p("b'a' B'b'"), b(b"ab"));
        assert_eq!(p("('a'\n'b')"), s("ab"));
        assert_eq!(p("['a' 'b', 'c']"), Literal::List(vec![s("ab"), s("c")]));
        fails_at("'a' b'b'", 4, "cannot mix bytes and str literals");
        fails_at("b'a' 'b'", 5, "cannot mix bytes and str literals");
        // At top level a newline ends the expression, as in Python.
        fails_at("'a'\n'b'", 4, "unexpected \"'b'\" after the value");
    }

    #[test]
    fn string_errors() {
        fails_at("'abc", 0, "unterminated string");
        fails_at("[1, 'a\nb']", 4, "unterminated string");
        fails_at("'a\rb'", 0, "unterminated string");
        fails_at("'\\'", 0, "unterminated string");
        fails_at("r'\\'", 0, "unterminated string");
        fails_at("'a\\", 0, "unterminated string");
        fails_at("'''abc'''", 0, "triple-quoted strings are not supported");
        fails_at("x = \"\"\"a\"\"\"", 0, "name 'x' is not a literal");
        fails_at("\"\"\"a\"\"\"", 0, "triple-quoted strings are not supported");
        fails_at("''''", 0, "triple-quoted strings are not supported");
        fails_at("'ab\\N{DASH}'", 3, "\\N{...} escapes are not supported");
        fails_at("'a\\x4'", 2, "truncated \\xhh escape");
        fails("'\\xg0'", "truncated \\xhh escape");
        fails("'\\u12'", "truncated \\uxxxx escape");
        fails("'\\U1234567'", "truncated \\Uxxxxxxxx escape");
        fails_at("'\\U00110000'", 1, "illegal unicode character '\\U00110000'");
        fails_at("'\\ud800'", 1, "surrogate escape '\\ud800' is not supported");
        fails_at("f'x'", 0, "f-strings are not supported");
        fails("Rf'x'", "f-strings are not supported");
        fails_at("ur'x'", 0, "invalid string prefix 'ur'");
        fails("bu'x'", "invalid string prefix 'bu'");
        fails_at("'a' x'b'", 4, "invalid string prefix 'x'");
        fails_at("'a\0'", 2, "null byte in text");
    }

    #[test]
    fn other_errors() {
        fails_at("", 0, "expected a value, found end of text");
        fails_at("  \n ", 4, "expected a value, found end of text");
        fails_at("foo", 0, "name 'foo' is not a literal");
        fails_at("dtype('f8')", 0, "name 'dtype' is not a literal");
        fails_at("{'a': lambda: 1}", 6, "name 'lambda' is not a literal");
        fails_at("{'a': 1} x", 9, "unexpected 'x' after the value");
        fails_at("1 2", 2, "unexpected '2' after the value");
        fails_at("(1)(2)", 3, "unexpected '(' after the value");
        fails_at("1 # comment", 2, "comments are not supported");
        fails_at("# comment\n1", 0, "comments are not supported");
        fails_at("@", 0, "unexpected character '@'");
        fails_at("[1, \u{a0}2]", 4, "unexpected character '\\xa0'");
        fails_at("[1, \u{6e29}]", 4, "name '\u{6e29}' is not a literal");
        fails_at("1\x0b", 1, "unexpected '\\x0b' after the value");
        fails("{1, 2}", "expected ':' after dict key");
        fails("...", "unexpected character '.'");
        fails("not True", "name 'not' is not a literal");
        fails("True or False", "unexpected 'or' after the value");
        fails("set()", "name 'set' is not a literal");
        fails_at("'a'[0]", 3, "unexpected '[' after the value");
    }

    #[test]
    fn whitespace() {
        assert_eq!(p(" \t\n 1 \t\n "), i(1));
        assert_eq!(p("\x0c1\r\n"), i(1));
        assert_eq!(p("[ 1 ,\t2 ]"), Literal::List(vec![i(1), i(2)]));
        assert_eq!(p("-\\\n5"), i(-5));
    }

    #[test]
    fn str_repr() {
        // Expected strings printed by python3 (3.11) `repr(s)`.
        let cases: &[(&str, &str)] = &[
            ("nbsp\u{a0}", r"'nbsp\xa0'"),
            ("温度", "'温度'"),
            ("it's", r#""it's""#),
            ("both'\"", r#"'both\'"'"#),
            ("dq\"", r#"'dq"'"#),
            ("back\\slash", r"'back\\slash'"),
            ("tab\tnl\nlf\rcr", r"'tab\tnl\nlf\rcr'"),
            ("\0\x01\x1f\x7f", r"'\x00\x01\x1f\x7f'"),
            ("\u{80}\u{9f}\u{ad}", r"'\x80\x9f\xad'"),
            ("\u{2028}\u{2029}", r"'\u2028\u2029'"),
            ("\u{200b}\u{feff}", r"'\u200b\ufeff'"),
            ("\u{e000}", r"'\ue000'"),
            ("\u{10ffff}", r"'\U0010ffff'"),
            ("\u{1f600}", "'\u{1f600}'"),
            ("\u{378}", r"'\u0378'"),
            ("\u{3000} ", r"'\u3000 '"),
            ("\u{e9}", "'\u{e9}'"),
            ("\u{ff}\u{100}", "'\u{ff}\u{100}'"),
            ("\u{e0001}", r"'\U000e0001'"),
            ("", "''"),
            ("'", r#""'""#),
            ("\"", r#"'"'"#),
            ("\\", r"'\\'"),
            ("a'b\"c\\", r#"'a\'b"c\\'"#),
        ];
        for &(v, want) in cases {
            assert_eq!(s(v).repr(), want, "repr of {v:?}");
            assert_eq!(p(want), s(v), "parse of {want}");
        }
    }

    #[test]
    fn bytes_repr() {
        // Expected strings printed by python3 (3.11) `repr(b)`.
        let cases: &[(&[u8], &str)] = &[
            (b"", "b''"),
            (b"'", r#"b"'""#),
            (b"\"", r#"b'"'"#),
            (b"a'b\"", r#"b'a\'b"'"#),
            (b"\x00\x7f\x80\xff", r"b'\x00\x7f\x80\xff'"),
            (b"\t\n\r", r"b'\t\n\r'"),
            (b"\\", r"b'\\'"),
            (b"abc", "b'abc'"),
        ];
        for &(v, want) in cases {
            assert_eq!(b(v).repr(), want, "repr of {v:?}");
            assert_eq!(p(want), b(v), "parse of {want}");
        }
    }

    #[test]
    fn container_repr() {
        // Python 3: repr([(1,), (), [], {}, (1, 2), None, True, b'x', 1.0]).
        let v = Literal::List(vec![
            Literal::Tuple(vec![i(1)]),
            Literal::Tuple(vec![]),
            Literal::List(vec![]),
            Literal::Dict(vec![]),
            Literal::Tuple(vec![i(1), i(2)]),
            Literal::None,
            Literal::Bool(true),
            b(b"x"),
            f(1.0),
        ]);
        assert_eq!(v.repr(), "[(1,), (), [], {}, (1, 2), None, True, b'x', 1.0]");
        assert_eq!(v.to_string(), v.repr());
        let d = Literal::Dict(vec![(s("a"), i(-1)), (i(2), Literal::Bool(false))]);
        assert_eq!(d.repr(), "{'a': -1, 2: False}");
        assert_eq!(format!("{d}"), "{'a': -1, 2: False}");
        assert_eq!(i(i128::MIN).repr(), "-170141183460469231731687303715884105728");
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn round_trips() {
        let values = vec![
            Literal::None,
            Literal::Bool(false),
            i(0),
            i(-7),
            i(i128::MAX),
            i(i128::MIN),
            f(-0.0),
            f(1e-5),
            f(1e16),
            f(123.456),
            s(""),
            s("it's \"quoted\" \\ \n\t\r\0\x7f"),
            s("\u{a0}\u{ad}\u{2028}\u{e000}\u{10ffff}温度\u{1f600}"),
            b(&(0..=255).collect::<Vec<u8>>()),
            Literal::Tuple(vec![]),
            Literal::Tuple(vec![i(1)]),
            Literal::List(vec![Literal::Tuple(vec![s("a"), Literal::List(vec![])])]),
            Literal::Dict(vec![
                (s("descr"), Literal::List(vec![Literal::Tuple(vec![s("x"), s("<f8"), Literal::Tuple(vec![i(2)])])])),
                (Literal::Tuple(vec![b(b"k"), f(0.5)]), Literal::Dict(vec![])),
            ]),
        ];
        for v in values {
            assert_eq!(p(&v.repr()), v, "{}", v.repr());
        }
        // Every printable/non-printable code point below U+3000 round-trips too.
        let all: String = (0..0x3000u32).filter_map(char::from_u32).collect();
        assert_eq!(p(&s(&all).repr()), s(&all));
    }

    #[test]
    fn error_display() {
        let err = e("{'a' 1}");
        assert_eq!(err.to_string(), "expected ':' after dict key, found '1' (at byte 5)");
    }

    #[test]
    fn string_stop_finds_the_first_stop_in_any_word() {
        // Every stop byte at every place of texts longer than a word, other bytes around it
        // (a `0x01` right after a stop, the byte a borrow can flag, and non-ASCII).
        let naive = |b: &[u8], q: u8| b.iter().position(|&c| matches!(c, b'\\' | b'\n' | b'\r') || c == q);
        for q in [b'\'', b'"'] {
            for len in 0..20 {
                for at in 0..=len {
                    for stop in [b'\\', b'\n', b'\r', b'\'', b'"'] {
                        let mut text: Vec<u8> = (0..len).map(|i| [b'a', 0x01, 0xc3, 0x7f, b' '][i % 5]).collect();
                        if at < len {
                            text[at] = stop;
                            if at + 1 < len {
                                text[at + 1] = 0x01;
                            }
                        }
                        assert_eq!(string_stop(&text, q), naive(&text, q), "{text:?} {q}");
                        if at + 2 < len {
                            text[at + 2] = q;
                            assert_eq!(string_stop(&text, q), naive(&text, q), "{text:?} {q}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn string_pairs_read_in_one_go_give_the_general_tape() {
        // Read whole: the same tape as the general path gives the spaced spelling.
        let spaced =
            |t: &str| t.replace("('", "( '").replace("(\"", "( \"").replace("')", "' )").replace("\")", "\" )");
        for text in [
            "('a', '<f8')",
            "[('a', '<f8'), (\"it's\", \"b\"), ('', '|V4'), ('x y', 'é')]",
            "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
        ] {
            let fast = parse_tape(text, ParseOptions::default()).unwrap();
            let general = spaced(text);
            assert_ne!(general, text);
            assert_eq!(fast, parse_tape(&general, ParseOptions::default()).unwrap(), "{text}");
        }
        // Not a plain pair: read by the general path, its values and errors as ever.
        assert_eq!(p("('a', 'b', 'c')"), Literal::Tuple(vec![s("a"), s("b"), s("c")]));
        assert_eq!(p("('a', 'b' 'c')"), Literal::Tuple(vec![s("a"), s("bc")]));
        assert_eq!(p("('a\\n', 'b')"), Literal::Tuple(vec![s("a\n"), s("b")]));
        assert_eq!(p("('a', 'b',)"), Literal::Tuple(vec![s("a"), s("b")]));
        assert_eq!(p("('a', b'b')"), Literal::Tuple(vec![s("a"), b(b"b")]));
        fails_at("('''a', 'b')", 1, "triple-quoted strings are not supported");
        fails_at("('a', 'b'", 9, "expected ',' or ')' after tuple item");
        fails_at("('a', 'b']", 9, "expected ',' or ')' after tuple item");
        fails_at("('a', 'b", 6, "unterminated string");
        // The depth limit holds for pairs too.
        let one = ParseOptions { allow_long_suffix: false, max_depth: 1 };
        let err = parse_with("[('a', 'b')]", &one).unwrap_err();
        assert_eq!((err.offset, err.reason.as_str()), (1, "nesting deeper than 1"));
        assert_eq!(parse_with("('a', 'b')", &one).unwrap(), Literal::Tuple(vec![s("a"), s("b")]));
    }

    #[test]
    #[cfg_attr(miri, ignore = "safe code only, and minutes under Miri")]
    fn never_panics() {
        // Random soup of tricky fragments: parsing must return, never panic, and any value
        // it returns must survive a repr round trip.
        let frags = [
            "'",
            "\"",
            "\\",
            "a",
            "b",
            "r",
            "u",
            "f",
            "x",
            "N",
            "U",
            "0",
            "7",
            "9",
            "\n",
            "\r",
            " ",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ",",
            ":",
            "-",
            "+",
            ".",
            "e",
            "L",
            "_",
            "j",
            "#",
            "\u{e9}",
            "\u{6e29}",
            "\u{1f600}",
            "'a'",
            "b'x'",
            "\\x4",
            "\\u00e9",
            "\\U0001F600",
            "True",
            "None",
            "1e5",
            "00",
            "0x",
            "\t",
            "\\\n",
        ];
        let mut state: u64 = 12345;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..50_000 {
            let n = next() % 9;
            let mut text = String::new();
            for _ in 0..n {
                let k = usize::try_from(next() % frags.len() as u64).unwrap_or(0);
                text.push_str(frags.get(k).copied().unwrap_or(""));
            }
            for opts in [ParseOptions::default(), long()] {
                match parse_with(&text, &opts) {
                    Ok(v) => assert_eq!(p(&v.repr()), v, "{text:?}"),
                    Err(err) => {
                        assert!(err.offset <= text.len(), "{text:?}: {err:?}");
                        assert!(text.is_char_boundary(err.offset), "{text:?}: {err:?}");
                        assert!(!err.reason.is_empty());
                    }
                }
            }
        }
    }
}
