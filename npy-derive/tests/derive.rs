//! What `#[derive(NpyRecord)]` writes and reads.
//!
//! Every expected descr was printed by NumPy 2.4 (`numpy.lib.format.dtype_to_descr`) for the
//! dtype named next to it, on a little-endian machine (native fields show `<`).

use npy_core::prelude::*;
use npy_core::types::Bytes;
use npy_core::ErrorKind;

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq, Default)]
struct Receiver {
    x: f64,
    y: f64,
    z: f32,
}

/// `np.dtype([('trace_id', '<i4'), ('receiver', receiver), ..., ('samples', '<f4', (64,))])`
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Trace {
    trace_id: i32,
    receiver: Receiver,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: [f32; 64],
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq, Default)]
#[npy(align)]
#[repr(C)]
struct ReceiverC {
    x: f64,
    y: f64,
    z: f32,
}

/// The same fields with `align=True` (the nested dtype aligned too).
#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(align)]
#[repr(C)]
struct TraceC {
    trace_id: i32,
    receiver: ReceiverC,
    t0: f64,
    dt: f32,
    flags: u8,
    samples: [f32; 64],
}

const TRACE: &str = "[('trace_id', '<i4'), ('receiver', [('x', '<f8'), ('y', '<f8'), ('z', '<f4')]), \
     ('t0', '<f8'), ('dt', '<f4'), ('flags', '|u1'), ('samples', '<f4', (64,))]";
const TRACE_ALIGNED: &str = "[('trace_id', '<i4'), ('', '|V4'), ('receiver', [('x', '<f8'), ('y', '<f8'), \
     ('z', '<f4'), ('', '|V4')]), ('t0', '<f8'), ('dt', '<f4'), ('flags', '|u1'), ('', '|V3'), \
     ('samples', '<f4', (64,))]";

fn trace(i: i32) -> Trace {
    let mut samples = [0f32; 64];
    for (k, s) in samples.iter_mut().enumerate() {
        *s = i as f32 * 100.0 + k as f32 * 0.25;
    }
    Trace {
        trace_id: i,
        receiver: Receiver { x: 1.5 * i as f64, y: -2.0, z: 0.125 },
        t0: 1e9 + i as f64,
        dt: 0.002,
        flags: (i % 256) as u8,
        samples,
    }
}

fn aligned(t: &Trace) -> TraceC {
    let r = t.receiver;
    TraceC {
        trace_id: t.trace_id,
        receiver: ReceiverC { x: r.x, y: r.y, z: r.z },
        t0: t.t0,
        dt: t.dt,
        flags: t.flags,
        samples: t.samples,
    }
}

/// The data part of a written file: its last `n * itemsize` bytes.
fn data(file: &[u8], len: usize) -> &[u8] {
    &file[file.len() - len..]
}

#[test]
fn packed_layout_is_numpys_default() {
    assert_eq!(Trace::dtype().descr(), TRACE);
    assert_eq!(Trace::ITEMSIZE, 4 + 20 + 8 + 4 + 1 + 256);
    assert_eq!(Receiver::dtype().descr(), "[('x', '<f8'), ('y', '<f8'), ('z', '<f4')]");
}

#[test]
fn align_is_numpys_align_true() {
    assert_eq!(TraceC::dtype().descr(), TRACE_ALIGNED);
    assert_eq!(TraceC::ITEMSIZE, std::mem::size_of::<TraceC>());
    assert_eq!(ReceiverC::ITEMSIZE, 24);
    // np.dtype([('a', 'u1'), ('b', '<i8'), ('c', 'u1')], align=True)
    #[derive(NpyRecord)]
    #[npy(align)]
    #[repr(C)]
    struct Padded {
        a: u8,
        b: i64,
        c: u8,
    }
    assert_eq!(Padded::dtype().descr(), "[('a', '|u1'), ('', '|V7'), ('b', '<i8'), ('c', '|u1'), ('', '|V7')]");
}

#[test]
fn struct_endian_leaves_nested_records_alone() {
    // np.dtype([('a', '>i4'), ('b', '>f8'), ('c', 'u1'), ('r', receiver), ('s', '>u2', (2,))])
    #[derive(NpyRecord, Debug, PartialEq)]
    #[npy(endian = "big")]
    struct Be {
        a: i32,
        b: f64,
        c: u8,
        r: Receiver,
        s: [u16; 2],
    }
    assert_eq!(
        Be::dtype().descr(),
        "[('a', '>i4'), ('b', '>f8'), ('c', '|u1'), ('r', [('x', '<f8'), ('y', '<f8'), ('z', '<f4')]), \
         ('s', '>u2', (2,))]"
    );
    let v = vec![Be { a: 0x0102_0304, b: 1.0, c: 7, r: Receiver { x: 1.0, y: 2.0, z: 3.0 }, s: [0x0a0b, 0x0c0d] }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    let bytes = data(&file, Be::ITEMSIZE);
    assert_eq!(&bytes[..4], [1, 2, 3, 4]);
    assert_eq!(&bytes[4..12], 1.0f64.to_be_bytes());
    assert_eq!(&bytes[13..21], 1.0f64.to_le_bytes());
    assert_eq!(&bytes[33..], [0x0a, 0x0b, 0x0c, 0x0d]);
    assert_eq!(Vec::<Be>::read_npy_from(&file[..]).unwrap(), v);
}

#[test]
fn field_endian_applies_to_the_whole_field() {
    // np.dtype([('a', '>u4'), ('b', '<u4'), ('c', '<f8'), ('r', receiver.newbyteorder('>'))])
    #[derive(NpyRecord, Debug, PartialEq)]
    #[npy(endian = "little")]
    struct Mixed {
        #[npy(endian = "big")]
        a: u32,
        b: u32,
        #[npy(endian = "native")]
        c: f64,
        #[npy(endian = "big")]
        r: Receiver,
    }
    assert_eq!(
        Mixed::dtype().descr(),
        "[('a', '>u4'), ('b', '<u4'), ('c', '<f8'), ('r', [('x', '>f8'), ('y', '>f8'), ('z', '>f4')])]"
    );
    let v = vec![Mixed { a: 1, b: 2, c: -0.5, r: Receiver { x: 4.0, y: 5.0, z: 6.0 } }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(&data(&file, 36)[..8], [0, 0, 0, 1, 2, 0, 0, 0]);
    assert_eq!(Vec::<Mixed>::read_npy_from(&file[..]).unwrap(), v);
}

#[test]
fn names_renames_and_titles() {
    // np.dtype({'names': ['tid', 'amp', 'plain'], 'formats': ['<i4', '<f4', 'u1'],
    //           'titles': ['Trace identifier', 'Amplitude (counts)', None]})
    #[derive(NpyRecord, Debug, PartialEq)]
    struct Titled {
        #[npy(title = "Trace identifier")]
        tid: i32,
        #[npy(title = "Amplitude (counts)", rename = "amp")]
        amplitude: f32,
        plain: u8,
    }
    assert_eq!(
        Titled::dtype().descr(),
        "[(('Trace identifier', 'tid'), '<i4'), (('Amplitude (counts)', 'amp'), '<f4'), ('plain', '|u1')]"
    );
    let v = vec![Titled { tid: 3, amplitude: 0.5, plain: 1 }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Titled>::read_npy_from(&file[..]).unwrap(), v);

    #[derive(NpyRecord)]
    struct Renamed {
        #[npy(rename = "x-pos")]
        x: f32,
        r#type: u8,
    }
    assert_eq!(Renamed::dtype().descr(), "[('x-pos', '<f4'), ('type', '|u1')]");

    #[derive(NpyRecord, Debug, PartialEq)]
    struct Pt(f32, #[npy(rename = "y")] f32, i8);
    assert_eq!(Pt::dtype().descr(), "[('f0', '<f4'), ('y', '<f4'), ('f2', '|i1')]");
    let file = [Pt(1.0, 2.0, -3)].write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Pt>::read_npy_from(&file[..]).unwrap(), [Pt(1.0, 2.0, -3)]);
}

#[test]
fn explicit_offsets_and_itemsize() {
    // np.dtype({'names': ['a', 'b', 'c'], 'formats': ['<i4', '<f8', 'u1'],
    //           'offsets': [4, 16, 25], 'itemsize': 32})
    #[derive(NpyRecord, Debug, PartialEq)]
    #[npy(itemsize = 32)]
    struct Sparse {
        #[npy(offset = 4)]
        a: i32,
        #[npy(offset = 16)]
        b: f64,
        #[npy(offset = 25)]
        c: u8,
    }
    assert_eq!(
        Sparse::dtype().descr(),
        "[('', '|V4'), ('a', '<i4'), ('', '|V8'), ('b', '<f8'), ('', '|V1'), ('c', '|u1'), ('', '|V6')]"
    );
    assert_eq!(Sparse::ITEMSIZE, 32);
    let v = vec![Sparse { a: -1, b: 2.5, c: 9 }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    let bytes = data(&file, 32);
    assert_eq!(&bytes[..4], [0; 4], "gaps are written as zeros");
    assert_eq!(&bytes[4..8], (-1i32).to_le_bytes());
    assert_eq!(bytes[25], 9);
    assert_eq!(Vec::<Sparse>::read_npy_from(&file[..]).unwrap(), v);

    // Later fields continue from an explicit offset.
    #[derive(NpyRecord)]
    struct Continued {
        a: u8,
        #[npy(offset = 8)]
        b: u16,
        c: u32,
    }
    assert_eq!(Continued::dtype().descr(), "[('a', '|u1'), ('', '|V7'), ('b', '<u2'), ('c', '<u4')]");
    assert_eq!(Continued::ITEMSIZE, 14);
}

#[test]
fn array_fields_are_subarrays() {
    // np.dtype([('m23', '<i2', (2, 3)), ('tags', 'S4', (2,))])
    #[derive(NpyRecord, Debug, PartialEq)]
    struct Grid {
        m23: [[i16; 3]; 2],
        tags: [Bytes<4>; 2],
    }
    assert_eq!(Grid::dtype().descr(), "[('m23', '<i2', (2, 3)), ('tags', '|S4', (2,))]");
    let v =
        vec![Grid { m23: [[1, 2, 3], [4, 5, 6]], tags: [Bytes::new(b"ab").unwrap(), Bytes::new(b"cdef").unwrap()] }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Grid>::read_npy_from(&file[..]).unwrap(), v);
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Kind {
    Shot = 1,
    Receiver = 5,
    Noise,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
#[npy(endian = "big")]
#[repr(i16)]
enum Level {
    Low = -2,
    High = 0x0102,
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct Event {
    id: u32,
    kind: Kind,
    level: Level,
    history: [Kind; 2],
}

#[derive(NpyRecord, Debug, Clone, Copy, PartialEq)]
struct RawEvent {
    id: u32,
    kind: u8,
    level: i16,
    history: [u8; 2],
}

#[test]
fn enums_are_their_integer_repr() {
    assert_eq!(Kind::dtype().descr(), "'|u1'");
    assert_eq!(Level::dtype().descr(), "'>i2'");
    assert_eq!(Level::native_dtype().descr(), "'<i2'");
    const _: () = assert!(Kind::NEEDS_CHECK && Event::NEEDS_CHECK && !RawEvent::NEEDS_CHECK);
    assert_eq!(Event::dtype().descr(), "[('id', '<u4'), ('kind', '|u1'), ('level', '>i2'), ('history', '|u1', (2,))]");
    assert_eq!(Kind::check(&[6]), Ok(()));
    assert_eq!(Kind::check(&[9]), Err("value 9 is not a discriminant of Kind".to_string()));
    assert_eq!(Level::check(&(-2i16).to_ne_bytes()), Ok(()));
    assert_eq!(Level::check(&3i16.to_ne_bytes()), Err("value 3 is not a discriminant of Level".to_string()));
    assert!(Level::check(&[0]).is_err());

    let v = vec![
        Event { id: 1, kind: Kind::Noise, level: Level::High, history: [Kind::Shot, Kind::Receiver] },
        Event { id: 2, kind: Kind::Shot, level: Level::Low, history: [Kind::Noise, Kind::Noise] },
    ];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(&data(&file, 2 * 9)[5..7], [0x01, 0x02], "a big-endian i16");
    assert_eq!(Vec::<Event>::read_npy_from(&file[..]).unwrap(), v);
    let levels = vec![Level::High, Level::Low];
    let file = levels.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Level>::read_npy_from(&file[..]).unwrap(), levels);
}

#[test]
fn invalid_discriminants_are_invalid_values() {
    let raw = [
        RawEvent { id: 1, kind: 1, level: -2, history: [1, 5] },
        RawEvent { id: 2, kind: 9, level: -2, history: [1, 5] },
    ];
    let file = raw.write_npy_to(Vec::new()).unwrap();
    let e = Vec::<Event>::read_npy_from(&file[..]).unwrap_err();
    let ErrorKind::InvalidValue { index, reason } = e.kind() else { panic!("{e}") };
    assert_eq!((*index, reason.as_str()), (1, "field 'kind': value 9 is not a discriminant of Kind"));

    let raw = [RawEvent { id: 1, kind: 1, level: -2, history: [1, 7] }];
    let file = raw.write_npy_to(Vec::new()).unwrap();
    let e = Vec::<Event>::read_npy_from(&file[..]).unwrap_err();
    let ErrorKind::InvalidValue { index: 0, reason } = e.kind() else { panic!("{e}") };
    assert_eq!(reason, "field 'history': [1]: value 7 is not a discriminant of Kind");

    let file = [4u8].write_npy_to(Vec::new()).unwrap();
    let e = Vec::<Kind>::read_npy_from(&file[..]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::InvalidValue { index: 0, .. }), "{e}");
}

#[test]
fn traces_round_trip() {
    let v: Vec<Trace> = (0..300).map(trace).collect();
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert!(std::str::from_utf8(&file[10..file.len() - 300 * Trace::ITEMSIZE]).unwrap().contains(TRACE));
    assert_eq!(Vec::<Trace>::read_npy_from(&file[..]).unwrap(), v);

    let c: Vec<TraceC> = v.iter().map(aligned).collect();
    let file_c = c.write_npy_to(Vec::new()).unwrap();
    assert!(std::str::from_utf8(&file_c[10..file_c.len() - 300 * TraceC::ITEMSIZE]).unwrap().contains(TRACE_ALIGNED));
    assert_eq!(Vec::<TraceC>::read_npy_from(&file_c[..]).unwrap(), c);

    // Fields are matched by name, so either layout reads into the other.
    assert_eq!(Vec::<TraceC>::read_npy_from(&file[..]).unwrap(), c);
    assert_eq!(Vec::<Trace>::read_npy_from(&file_c[..]).unwrap(), v);
}

#[test]
fn missing_fields_are_named() {
    #[derive(NpyRecord)]
    struct Xy {
        x: f32,
        y: f32,
    }
    #[derive(NpyRecord, Debug)]
    struct Xyz {
        x: f32,
        y: f32,
        z: f32,
    }
    let file = [Xy { x: 1.0, y: 2.0 }].write_npy_to(Vec::new()).unwrap();
    let e = Vec::<Xyz>::read_npy_from(&file[..]).unwrap_err();
    let ErrorKind::DtypeMismatch { field, .. } = e.kind() else { panic!("{e}") };
    assert_eq!(field.as_deref(), Some("z"));
}

/// A skipped field type whose default is not all zeros, so that a read that forgot
/// `fill_skipped` shows.
#[derive(Debug, PartialEq)]
struct Tag(u32);

impl Default for Tag {
    fn default() -> Self {
        Tag(7)
    }
}

#[derive(NpyRecord, Debug, PartialEq)]
struct Labeled {
    value: f64,
    #[npy(skip)]
    label: String,
    #[npy(skip)]
    tag: Tag,
}

#[derive(NpyRecord, Debug, PartialEq)]
struct Station {
    id: u16,
    reading: Labeled,
    history: [Labeled; 2],
}

#[test]
fn skipped_fields_come_back_as_default() {
    assert_eq!(Labeled::dtype().descr(), "[('value', '<f8')]");
    assert_eq!(Labeled::native_dtype().itemsize(), std::mem::size_of::<Labeled>());
    const _: () = assert!(Labeled::HAS_SKIPPED && Station::HAS_SKIPPED && !Trace::HAS_SKIPPED);
    let l = |value: f64| Labeled { value, label: format!("reading {value}"), tag: Tag(1) };
    let v = [l(1.5), l(-3.0)];
    let file = v.write_npy_to(Vec::new()).unwrap();
    let back = Vec::<Labeled>::read_npy_from(&file[..]).unwrap();
    assert_eq!(back, [1.5, -3.0].map(|value| Labeled { value, label: String::new(), tag: Tag(7) }));

    let s = [Station { id: 4, reading: l(2.0), history: [l(0.5), l(0.25)] }];
    let file = s.write_npy_to(Vec::new()).unwrap();
    assert_eq!(
        Station::dtype().descr(),
        "[('id', '<u2'), ('reading', [('value', '<f8')]), ('history', [('value', '<f8')], (2,))]"
    );
    let back = Vec::<Station>::read_npy_from(&file[..]).unwrap();
    assert_eq!(back[0].reading, Labeled { value: 2.0, label: String::new(), tag: Tag(7) });
    assert_eq!(back[0].history[1], Labeled { value: 0.25, label: String::new(), tag: Tag(7) });
}

#[test]
fn generic_and_const_generic_structs() {
    #[derive(NpyRecord, Debug, PartialEq)]
    struct Pair<T> {
        a: T,
        b: T,
    }
    assert_eq!(Pair::<f32>::dtype().descr(), "[('a', '<f4'), ('b', '<f4')]");
    assert_eq!(Pair::<Kind>::dtype().descr(), "[('a', '|u1'), ('b', '|u1')]");
    const _: () = assert!(Pair::<Kind>::NEEDS_CHECK && !Pair::<u8>::NEEDS_CHECK);
    let v = vec![Pair { a: Receiver { x: 1.0, y: 2.0, z: 3.0 }, b: Receiver::default() }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Pair<Receiver>>::read_npy_from(&file[..]).unwrap(), v);

    #[derive(NpyRecord, Debug, PartialEq)]
    struct Window<const N: usize> {
        start: u64,
        samples: [f32; N],
    }
    assert_eq!(Window::<3>::dtype().descr(), "[('start', '<u8'), ('samples', '<f4', (3,))]");
    let v = vec![Window { start: 9, samples: [1.0, 2.0, 3.0, 4.0] }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Window<4>>::read_npy_from(&file[..]).unwrap(), v);

    #[derive(NpyRecord, Debug, PartialEq)]
    #[npy(itemsize = 16)]
    struct Slot<T, L>
    where
        T: Copy,
    {
        #[npy(offset = 8)]
        value: T,
        #[npy(skip)]
        label: L,
    }
    assert_eq!(Slot::<u32, String>::dtype().descr(), "[('', '|V8'), ('value', '<u4'), ('', '|V4')]");
    const _: () = assert!(Slot::<u32, String>::HAS_SKIPPED);
    let v = [Slot { value: 5u32, label: "x".to_string() }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Slot<u32, String>>::read_npy_from(&file[..]).unwrap(), [Slot { value: 5, label: String::new() }]);
}

#[test]
fn empty_records() {
    #[derive(NpyRecord)]
    struct Nothing;
    #[derive(NpyRecord)]
    struct Braces {}
    #[derive(NpyRecord)]
    #[npy(itemsize = 8)]
    struct Reserved();
    // np.dtype([]) and np.dtype({'names': [], 'formats': [], 'itemsize': 8})
    assert_eq!((Nothing::dtype().descr(), Nothing::ITEMSIZE), ("[]".to_string(), 0));
    assert_eq!(Braces::dtype().descr(), "[]");
    assert_eq!(Reserved::dtype().descr(), "[('', '|V8')]");
}

#[test]
fn zero_sized_fields_anywhere_in_memory() {
    #[derive(NpyRecord, Debug, PartialEq)]
    struct Zst {
        c: u8,
        b: u32,
        z: [u32; 0],
    }
    assert_eq!(Zst::dtype().descr(), "[('c', '|u1'), ('b', '<u4'), ('z', '<u4', (0,))]");
    let v = vec![Zst { c: 1, b: 2, z: [] }];
    let file = v.write_npy_to(Vec::new()).unwrap();
    assert_eq!(Vec::<Zst>::read_npy_from(&file[..]).unwrap(), v);
}

#[test]
fn checks_are_prefixed_with_the_field() {
    #[derive(NpyRecord, Debug)]
    struct Letter {
        n: u8,
        c: char,
    }
    #[derive(NpyRecord, Debug)]
    struct Outer {
        id: u8,
        inner: Letter,
    }
    const _: () = assert!(Outer::NEEDS_CHECK);
    let mut bad = vec![0u8; std::mem::size_of::<Outer>()];
    let at = std::mem::offset_of!(Outer, inner) + std::mem::offset_of!(Letter, c);
    bad[at..at + 4].copy_from_slice(&0xd800u32.to_ne_bytes());
    assert_eq!(Outer::check(&bad), Err("field 'inner': field 'c': code point 0xd800 is not a valid char".to_string()));
    assert_eq!(Outer::check(&bad[1..]), Err(format!("a Outer element is {} bytes, not {}", bad.len(), bad.len() - 1)));
}

/// `BULK`: memory that is the written bytes, field for field. Packed structs are, aligned
/// ones without padding are, padding, Rust's field order, another byte order or a
/// skipped field with memory are not.
#[test]
fn bulk_is_memory_equal_to_the_written_bytes() {
    #[derive(NpyRecord, Clone, Copy)]
    #[npy(packed)]
    #[repr(C, packed)]
    struct PackedReceiver {
        x: f64,
        z: f32,
    }
    #[derive(NpyRecord, Clone, Copy)]
    #[npy(packed)]
    #[repr(C, packed)]
    struct PackedTrace {
        id: i32,
        receiver: PackedReceiver,
        flags: u8,
        samples: [f32; 3],
    }
    #[derive(NpyRecord, Clone, Copy)]
    #[npy(align)]
    #[repr(C)]
    struct NoPadding {
        a: f64,
        b: [u32; 2],
    }
    #[derive(NpyRecord, Clone, Copy)]
    #[repr(C, packed)]
    #[npy(endian = "big")]
    struct BigPacked {
        a: u32,
    }
    #[derive(NpyRecord, Clone, Copy)]
    #[repr(C, packed(2))]
    struct PackedTwo {
        a: u8,
        b: u32,
    }
    #[derive(NpyRecord)]
    #[repr(C, packed)]
    struct SkipPacked {
        a: u8,
        #[npy(skip)]
        hits: u32,
    }
    const {
        assert!(PackedTrace::BULK && PackedReceiver::BULK && NoPadding::BULK);
        assert!(!Receiver::BULK && !ReceiverC::BULK && !Trace::BULK && !BigPacked::BULK && !PackedTwo::BULK);
        assert!(!SkipPacked::BULK && <[PackedTrace; 2]>::BULK && f64::BULK && Bytes::<3>::BULK);
    }
    assert_eq!(PackedTrace::dtype().descr(), PackedTrace::native_dtype().descr());
    assert_eq!(
        PackedTrace::dtype().descr(),
        "[('id', '<i4'), ('receiver', [('x', '<f8'), ('z', '<f4')]), ('flags', '|u1'), ('samples', '<f4', (3,))]"
    );
    assert_eq!(std::mem::size_of::<PackedTrace>(), PackedTrace::ITEMSIZE);
    // A packed(2) struct: written packed, its memory with a gap, so reads convert.
    assert_eq!(PackedTwo::dtype().descr(), "[('a', '|u1'), ('b', '<u4')]");
    assert_eq!(std::mem::size_of::<PackedTwo>(), 6);
    let two = [PackedTwo { a: 7, b: 0x0102_0304 }, PackedTwo { a: 9, b: 5 }];
    let back = Vec::<PackedTwo>::read_npy_from(&two.write_npy_to(Vec::new()).unwrap()[..]).unwrap();
    assert_eq!(back.iter().map(|r| ({ r.a }, { r.b })).collect::<Vec<_>>(), [(7, 0x0102_0304), (9, 5)]);
}

/// Records of a packed struct round-trip, values copied out of their unaligned fields; a
/// skipped field of a packed struct is its default after a read.
#[test]
fn packed_structs_round_trip_and_fill_skipped_fields() {
    #[derive(NpyRecord)]
    #[repr(C, packed)]
    struct Tagged {
        flag: u8,
        value: f64,
        #[npy(skip)]
        label: String,
    }
    let records: Vec<Tagged> =
        (0..5).map(|i| Tagged { flag: i as u8, value: f64::from(i) / 4.0, label: format!("r{i}") }).collect();
    assert_eq!(Tagged::dtype().descr(), "[('flag', '|u1'), ('value', '<f8')]");
    let file = records.write_npy_to(Vec::new()).unwrap();
    assert_eq!(file.len(), 128 + 5 * 9);
    let back = Vec::<Tagged>::read_npy_from(&file[..]).unwrap();
    let values: Vec<(u8, f64, String)> = back.into_iter().map(|r| ({ r.flag }, { r.value }, r.label)).collect();
    assert_eq!(values, (0..5).map(|i| (i as u8, f64::from(i) / 4.0, String::new())).collect::<Vec<_>>());
}

/// Tuple structs of 2^k fields of the given types, made by doubling the list `k` times.
macro_rules! wide_struct {
    ($(#[$attr:meta])* $name:ident [] $($t:ty),*) => {
        #[derive(NpyRecord, Clone, Copy)]
        $(#[$attr])*
        struct $name($($t),*);
    };
    ($(#[$attr:meta])* $name:ident [x $($k:tt)*] $($t:ty),*) => {
        wide_struct!($(#[$attr])* $name [$($k)*] $($t,)* $($t),*);
    };
}

/// Records of a thousand fields (NumPy writes such headers; the corpus has 2,000): the derive's layout
/// code stays linear in the fields, so rustc compiles it (a chain of `&&` or of offsets as
/// deep as the fields overflowed rustc's stack), and the consts still say the layout.
#[test]
fn records_of_thousands_of_fields_derive_and_round_trip() {
    wide_struct!(#[npy(packed)] #[repr(C, packed)] WidePacked [x x x x x x x x x] u8, f64);
    wide_struct!(WideAligned [x x x x x x x x x] u8, f64);
    wide_struct!(#[npy(align)] #[repr(C)] WideNoPadding [x x x x x x x x x x] f64);
    const {
        assert!(WidePacked::BULK && WideNoPadding::BULK && !WideAligned::BULK);
        assert!(WidePacked::ITEMSIZE == 512 * 9 && WideAligned::ITEMSIZE == 512 * 9);
        assert!(WideNoPadding::ITEMSIZE == 1024 * 8);
    }
    let npy_core::DType::Record(record) = WideAligned::dtype() else { panic!("not a record") };
    assert_eq!(record.fields().len(), 1024);
    assert_eq!(record.fields()[1023].offset, 511 * 9 + 1);
    assert_eq!(WideAligned::dtype().descr(), WidePacked::dtype().descr());
    // One file of two records, read into the packed struct (a bulk copy) and the aligned
    // one (converted field by field), written back byte for byte from both.
    let mut data: Vec<u8> = (0..2 * WidePacked::ITEMSIZE).map(|i| (i % 251) as u8).collect();
    data[2 * 4608 - 8..].copy_from_slice(&(-2.5f64).to_le_bytes());
    let header = npy_core::header::Header::new(WidePacked::dtype(), vec![2]);
    let file = npy_core::DynArray::new(header, data.clone()).unwrap().write_npy_to(Vec::new()).unwrap();
    let packed = Vec::<WidePacked>::read_npy_from(&file[..]).unwrap();
    let aligned = Vec::<WideAligned>::read_npy_from(&file[..]).unwrap();
    assert_eq!(
        ({ packed[1].0 }, { packed[1].1023 }, { packed[0].1 }),
        (data[4608], -2.5, f64::from_le_bytes(data[1..9].try_into().unwrap()))
    );
    assert_eq!((aligned[1].0, aligned[1].1023, aligned[0].1), ({ packed[1].0 }, -2.5, { packed[0].1 }));
    assert_eq!(packed.write_npy_to(Vec::new()).unwrap(), file);
    assert_eq!(aligned.write_npy_to(Vec::new()).unwrap(), file);
}
