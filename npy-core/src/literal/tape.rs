//! The tape [`parse_tape`](super::parse_tape) writes: a literal as a flat list of nodes,
//! and [`Value`], the view through which the header codec and the descr interpreter read
//! it. The list is one allocation for the whole literal (no `Vec` per tuple), strings
//! without escapes are borrowed from the text (no `String` per token), and a
//! [`Literal`] tree is made of a value only when asked (`Value::to_literal`: what
//! `literal::parse` returns, and the text of error messages).

use super::Literal;

/// A parsed literal as a flat list of [`Node`]s in source order: a container comes before
/// its items and counts the nodes inside it, so a value and its items are slices of the
/// list (read them through [`Tape::root`] and [`Value`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Tape<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    /// The strings that had escapes or were concatenated, which nodes name by index.
    pub(super) owned: Owned,
}

/// The decoded strings and bytes of a [`Tape`].
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Owned {
    pub(super) strs: Vec<String>,
    pub(super) bytes: Vec<Vec<u8>>,
}

/// One node of a [`Tape`]: a scalar value, or the head of a container, whose items follow.
/// Plain data (`Copy`, nothing to drop), so that the parser writes it straight into the
/// tape: a node holding a `Cow` went through a copy on the stack whose reload stalled
/// (two 8-byte stores read back as one 16-byte load), the largest cost of a parse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Node<'a> {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    /// A `str` without escapes, borrowed from the text.
    Str(&'a str),
    /// A `str` that had escapes or was concatenated: `Owned::strs[i]`.
    OwnedStr(usize),
    /// A `bytes`, borrowed as `Str` is.
    Bytes(&'a [u8]),
    /// `Owned::bytes[i]`.
    OwnedBytes(usize),
    Tuple(Span),
    List(Span),
    /// A dict: its items are its keys and values, alternating.
    Dict(Span),
}

/// How much of the tape a container holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    /// Items (a dict's entries: key and value count as one).
    pub(super) items: usize,
    /// Nodes after the head that belong to it: its items and theirs.
    pub(super) nodes: usize,
}

impl Node<'_> {
    /// Nodes after this one that belong to it.
    fn inner_len(&self) -> usize {
        match self {
            Node::Tuple(span) | Node::List(span) | Node::Dict(span) => span.nodes,
            _ => 0,
        }
    }
}

/// What a [`Value`] is: a scalar with its text, or the kind of a container (whose items
/// are [`Value::items`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind<'t> {
    None,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(&'t str),
    Bytes(&'t [u8]),
    Tuple,
    List,
    Dict,
}

/// The value of an empty tape (none is ever returned by the parser).
static NONE: Node<'static> = Node::None;
/// The decoded strings of a tape that has none.
static NOTHING_OWNED: Owned = Owned { strs: Vec::new(), bytes: Vec::new() };

impl<'a> Tape<'a> {
    /// The literal.
    pub(crate) fn root(&self) -> Value<'_, 'a> {
        value(&self.nodes, &self.owned).unwrap_or(Value { node: &NONE, inner: &[], owned: &NOTHING_OWNED })
    }

    /// The tape of a [`Literal`] tree, strings borrowed from it. Built without recursion,
    /// so a literal nested however deep is no danger here.
    pub(crate) fn of(literal: &'a Literal) -> Tape<'a> {
        /// A container's items still to write.
        enum Open<'a> {
            Items(std::slice::Iter<'a, Literal>),
            /// A dict's entries, and the value of the entry whose key was written last.
            Entries(std::slice::Iter<'a, (Literal, Literal)>, Option<&'a Literal>),
        }
        let mut nodes = Vec::new();
        let mut open: Vec<(usize, Open<'a>)> = Vec::new();
        let mut next = Some(literal);
        loop {
            if let Some(lit) = next.take() {
                let at = nodes.len();
                let span = |items: usize| Span { items, nodes: 0 };
                let (node, items) = match lit {
                    Literal::None => (Node::None, None),
                    Literal::Bool(b) => (Node::Bool(*b), None),
                    Literal::Int(i) => (Node::Int(*i), None),
                    Literal::Float(x) => (Node::Float(*x), None),
                    Literal::Str(s) => (Node::Str(s), None),
                    Literal::Bytes(b) => (Node::Bytes(b), None),
                    Literal::Tuple(items) => (Node::Tuple(span(items.len())), Some(Open::Items(items.iter()))),
                    Literal::List(items) => (Node::List(span(items.len())), Some(Open::Items(items.iter()))),
                    Literal::Dict(entries) => {
                        (Node::Dict(span(entries.len())), Some(Open::Entries(entries.iter(), None)))
                    }
                };
                nodes.push(node);
                open.extend(items.map(|items| (at, items)));
            }
            let Some((at, items)) = open.last_mut() else { break };
            next = match items {
                Open::Items(it) => it.next(),
                Open::Entries(it, value) => value.take().or_else(|| {
                    it.next().map(|(k, v)| {
                        *value = Some(v);
                        k
                    })
                }),
            };
            if next.is_none() {
                let at = *at;
                open.pop();
                let inner = nodes.len() - at - 1;
                if let Some(Node::Tuple(span) | Node::List(span) | Node::Dict(span)) = nodes.get_mut(at) {
                    span.nodes = inner;
                }
            }
        }
        Tape { nodes, owned: Owned::default() }
    }
}

/// The first value of `nodes` (its head and the nodes inside it), if they hold it.
pub(super) fn value<'t, 'a>(nodes: &'t [Node<'a>], owned: &'t Owned) -> Option<Value<'t, 'a>> {
    let (node, rest) = nodes.split_first()?;
    let inner = rest.get(..node.inner_len())?;
    Some(Value { node, inner, owned })
}

/// One value of a [`Tape`]: its node and, for a container, the nodes of its items.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Value<'t, 'a> {
    node: &'t Node<'a>,
    inner: &'t [Node<'a>],
    owned: &'t Owned,
}

impl<'t, 'a: 't> Value<'t, 'a> {
    /// What the value is (see [`Value::items`] for a container's items).
    pub(crate) fn kind(self) -> Kind<'t> {
        match *self.node {
            Node::None => Kind::None,
            Node::Bool(b) => Kind::Bool(b),
            Node::Int(i) => Kind::Int(i),
            Node::Float(x) => Kind::Float(x),
            Node::Str(s) => Kind::Str(s),
            Node::OwnedStr(i) => Kind::Str(self.owned.strs.get(i).map_or("", String::as_str)),
            Node::Bytes(b) => Kind::Bytes(b),
            Node::OwnedBytes(i) => Kind::Bytes(self.owned.bytes.get(i).map_or(&[], Vec::as_slice)),
            Node::Tuple(_) => Kind::Tuple,
            Node::List(_) => Kind::List,
            Node::Dict(_) => Kind::Dict,
        }
    }

    /// A container's items in order (a dict's keys and values alternating); none for a
    /// scalar.
    pub(crate) fn items(self) -> Items<'t, 'a> {
        Items { rest: self.inner, owned: self.owned }
    }

    /// A dict's entries; none for anything else.
    pub(crate) fn entries(self) -> impl Iterator<Item = (Value<'t, 'a>, Value<'t, 'a>)> {
        let mut items = self.items();
        let dict = matches!(self.node, Node::Dict(_));
        std::iter::from_fn(move || if dict { Some((items.next()?, items.next()?)) } else { None })
    }

    /// A container's number of items (a dict's entries); 0 for a scalar.
    pub(crate) fn len(self) -> usize {
        match self.node {
            Node::Tuple(span) | Node::List(span) | Node::Dict(span) => span.items,
            _ => 0,
        }
    }

    /// The text of a `str`.
    pub(crate) fn as_str(self) -> Option<&'t str> {
        match self.kind() {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a [`Literal`] tree.
    pub(crate) fn to_literal(self) -> Literal {
        match self.kind() {
            Kind::None => Literal::None,
            Kind::Bool(b) => Literal::Bool(b),
            Kind::Int(i) => Literal::Int(i),
            Kind::Float(x) => Literal::Float(x),
            Kind::Str(s) => Literal::Str(s.to_string()),
            Kind::Bytes(b) => Literal::Bytes(b.to_vec()),
            Kind::Tuple => Literal::Tuple(self.items().map(Value::to_literal).collect()),
            Kind::List => Literal::List(self.items().map(Value::to_literal).collect()),
            Kind::Dict => Literal::Dict(self.entries().map(|(k, v)| (k.to_literal(), v.to_literal())).collect()),
        }
    }

    /// Python's `repr()` of the value, as [`Literal::repr`] writes it.
    pub(crate) fn repr(self) -> String {
        self.to_literal().repr()
    }

    /// How many containers are nested in the value (0 for a scalar).
    pub(super) fn nesting(self) -> usize {
        match self.node {
            Node::Tuple(_) | Node::List(_) | Node::Dict(_) => self.items().map(Value::nesting).max().unwrap_or(0) + 1,
            _ => 0,
        }
    }

    /// The unhashable type inside a would-be dict key, if any (Python raises `TypeError`).
    pub(super) fn unhashable(self) -> Option<&'static str> {
        match self.node {
            Node::List(_) => Some("list"),
            Node::Dict(_) => Some("dict"),
            Node::Tuple(_) => self.items().find_map(Value::unhashable),
            _ => None,
        }
    }
}

/// The items of a container [`Value`], in order.
#[derive(Debug, Clone)]
pub(crate) struct Items<'t, 'a> {
    rest: &'t [Node<'a>],
    owned: &'t Owned,
}

impl<'t, 'a> Iterator for Items<'t, 'a> {
    type Item = Value<'t, 'a>;

    fn next(&mut self) -> Option<Value<'t, 'a>> {
        let item = value(self.rest, self.owned);
        self.rest = match item {
            Some(v) => self.rest.get(1 + v.inner.len()..).unwrap_or(&[]),
            None => &[],
        };
        item
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::literal::{parse, parse_tape, ParseOptions};

    fn p(text: &str) -> Literal {
        parse(text).unwrap_or_else(|e| panic!("parse({text:?}) failed: {e}"))
    }

    #[test]
    fn tape_borrows_plain_strings_and_counts_nodes() {
        let text = "[('a', '<f8'), (('t', 'b'), '>i4', (2, 3)), ('c\\n', b'x', [((5)), 'd' 'e'])]";
        let tape = parse_tape(text, ParseOptions::default()).unwrap();
        // 1 list; 3 + 8 + 6 nodes for its tuples (`((5))` is the int 5, no tuple).
        assert_eq!(tape.nodes.len(), 18);
        let root = tape.root();
        assert_eq!(root.len(), 3);
        assert_eq!(root.to_literal(), p(text));
        // Strings without escapes point into the text; escaped and concatenated ones are owned.
        let range = text.as_bytes().as_ptr_range();
        let borrowed: Vec<&[u8]> = tape
            .nodes
            .iter()
            .filter_map(|node| match node {
                Node::Str(v) => Some(v.as_bytes()),
                Node::Bytes(v) => Some(*v),
                _ => None,
            })
            .collect();
        assert!(borrowed.iter().all(|v| range.contains(&v.as_ptr())));
        assert_eq!(borrowed, [&b"a"[..], b"<f8", b"t", b"b", b">i4", b"x"]);
        assert_eq!(tape.owned.strs, ["c\n", "de"]);
        assert!(tape.nodes.contains(&Node::OwnedStr(1)));
        // Each item skips the nodes of the one before it.
        let reprs: Vec<String> = root.items().map(Value::repr).collect();
        assert_eq!(reprs, ["('a', '<f8')", "(('t', 'b'), '>i4', (2, 3))", "('c\\n', b'x', [5, 'de'])"]);
        assert_eq!(root.items().nth(1).map(|v| v.items().map(Value::len).collect::<Vec<_>>()), Some(vec![2, 0, 2]));
        let dict = parse_tape("{'a': (1,), 'b': [], 'c': 'x'}", ParseOptions::default()).unwrap();
        let keys: Vec<_> = dict.root().entries().map(|(k, v)| (k.as_str(), v.len())).collect();
        assert_eq!(keys, [(Some("a"), 1), (Some("b"), 0), (Some("c"), 0)]);
        assert_eq!(tape.root().entries().count(), 0);
    }

    #[test]
    fn tape_of_a_literal_gives_it_back() {
        for text in
            ["{'descr': [('x', '<f8', (2,))], (b'k', 0.5): {}, 3: None}", "[]", "((),)", "'s'", "-7", "[[[[1]]], {}]"]
        {
            let lit = p(text);
            assert_eq!(Tape::of(&lit).root().to_literal(), lit, "{text}");
            assert_eq!(Tape::of(&lit), parse_tape(text, ParseOptions::default()).unwrap(), "{text}");
        }
        // Deeper than any parse allows: written without recursion.
        let mut deep = Literal::Int(1);
        for _ in 0..2_000 {
            deep = Literal::List(vec![deep]);
        }
        let tape = Tape::of(&deep);
        assert_eq!(tape.nodes.len(), 2_001);
        assert_eq!((tape.root().len(), tape.nodes.first().map(Node::inner_len)), (1, Some(2_000)));
    }
}
