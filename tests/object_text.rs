//! `repr()` and `str()` of the values object arrays hold, against NumPy: each fixture's
//! elements as NumPy 2.4.6 (Python 3.11) printed them after `np.load(.., allow_pickle=True)`.

use std::path::Path;

use npy_core::object::Object;
use npy_core::prelude::*;

#[rustfmt::skip]
const FIXTURES: &[(&str, &[(&str, &str)])] = &[
    // np.load('tests/data/object/ragged.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("ragged", &[
        (r"array([0, 1, 2])", r"[0 1 2]"),
        (r"array([0, 1, 2, 3, 4])", r"[0 1 2 3 4]"),
        (r"array([], dtype=int64)", r"[]"),
    ]),
    // np.load('tests/data/object/ragged_kinds.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("ragged_kinds", &[
        (r"array([ 1.5, -2. ], dtype=float32)", r"[ 1.5 -2. ]"),
        (r"array(['ab', 'c'], dtype='<U2')", r"['ab' 'c']"),
        (r"array([b'x', b'yz'], dtype='|S2')", r"[b'x' b'yz']"),
        (r"array([(1, 2.5)], dtype=[('a', '<i4'), ('b', '<f8')])", r"[(1, 2.5)]"),
        (r"array([[0., 1., 2.],
       [3., 4., 5.]])", r"[[0. 1. 2.]
 [3. 4. 5.]]"),
        (r"array(['2020-01-02',        'NaT'], dtype='datetime64[D]')", r"['2020-01-02'        'NaT']"),
        (r"array([3, 4], dtype='timedelta64[ms]')", r"[3 4]"),
        (r"array(7, dtype=uint16)", r"7"),
        (r"array([ True, False])", r"[ True False]"),
        (r"array([1.+2.j], dtype=complex64)", r"[1.+2.j]"),
        (r"array([], shape=(2, 0), dtype=float64)", r"[]"),
        (r"array([1.], dtype=float16)", r"[1.]"),
        (r"array([[0],
       [2]], dtype=int16)", r"[[0]
 [2]]"),
    ]),
    // np.load('tests/data/object/nested_objects.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("nested_objects", &[
        (r"array(['in', None, array([1, 'deep'], dtype=object)], dtype=object)", r"['in' None array([1, 'deep'], dtype=object)]"),
        (r"array([['f0', 'f1'],
       [2, 3]], dtype=object)", r"[['f0' 'f1']
 [2 3]]"),
    ]),
    // np.load('tests/data/object/dict_of_arrays.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("dict_of_arrays", &[
        (r"{'w': array([[ 0.,  1.,  2.,  3.],
       [ 4.,  5.,  6.,  7.],
       [ 8.,  9., 10., 11.]]), 'b': array([0., 0., 0., 0.], dtype=float32), 'name': 'layer1', 'layers': [array([1., 1.]), (array([0, 1]),)]}", r"{'w': array([[ 0.,  1.,  2.,  3.],
       [ 4.,  5.,  6.,  7.],
       [ 8.,  9., 10., 11.]]), 'b': array([0., 0., 0., 0.], dtype=float32), 'name': 'layer1', 'layers': [array([1., 1.]), (array([0, 1]),)]}"),
    ]),
    // np.load('tests/data/object/datetimes.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("datetimes", &[
        (r"datetime.datetime(2020, 1, 2, 3, 4, 5, 6)", r"2020-01-02 03:04:05.000006"),
        (r"datetime.datetime(2020, 1, 2, 0, 0, tzinfo=datetime.timezone.utc)", r"2020-01-02 00:00:00+00:00"),
        (r"datetime.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone(datetime.timedelta(days=-1, seconds=68400), 'EST'))", r"1999-12-31 23:59:59.999999-05:00"),
        (r"datetime.datetime(2021, 11, 7, 1, 30, fold=1)", r"2021-11-07 01:30:00"),
        (r"datetime.date(2020, 2, 29)", r"2020-02-29"),
        (r"datetime.time(1, 2, 3, 4)", r"01:02:03.000004"),
        (r"datetime.time(23, 59, tzinfo=datetime.timezone.utc)", r"23:59:00+00:00"),
        (r"datetime.timedelta(days=-1, seconds=5, microseconds=7)", r"-1 day, 0:00:05.000007"),
        (r"datetime.timedelta(0)", r"0:00:00"),
        (r"datetime.timezone(datetime.timedelta(seconds=19800))", r"UTC+05:30"),
        (r"datetime.timezone.utc", r"UTC"),
        (r"datetime.timezone(datetime.timedelta(days=-1, seconds=68400), 'EST')", r"EST"),
    ]),
    // np.load('tests/data/object/stdlib.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("stdlib", &[
        (r"Decimal('1.50')", r"1.50"),
        (r"Decimal('-Infinity')", r"-Infinity"),
        (r"Decimal('NaN')", r"NaN"),
        (r"Decimal('1E+999999')", r"1E+999999"),
        (r"Fraction(1, 3)", r"1/3"),
        (r"Fraction(-1180591620717411303424, 3)", r"-1180591620717411303424/3"),
        (r"UUID('00000000-0000-0000-0000-000000000005')", r"00000000-0000-0000-0000-000000000005"),
        (r"UUID('ffffffff-ffff-ffff-ffff-ffffffffffff')", r"ffffffff-ffff-ffff-ffff-ffffffffffff"),
        (r"bytearray(b'ab\x00')", r"bytearray(b'ab\x00')"),
        (r"bytearray(b'')", r"bytearray(b'')"),
        (r"{1, 2, 3}", r"{1, 2, 3}"),
        (r"set()", r"set()"),
        (r"frozenset({4})", r"frozenset({4})"),
        (r"frozenset()", r"frozenset()"),
        (r"OrderedDict([('a', 1), ('b', [2])])", r"OrderedDict([('a', 1), ('b', [2])])"),
        (r"OrderedDict()", r"OrderedDict()"),
        (r"Counter({'x': 2, 'y': 1})", r"Counter({'x': 2, 'y': 1})"),
        (r"Counter()", r"Counter()"),
        (r"PurePosixPath('/a/b')", r"/a/b"),
        (r"PosixPath('rel/p')", r"rel/p"),
        (r"PureWindowsPath('c:/x/y')", r"c:\x\y"),
        (r"range(1, 10, 2)", r"range(1, 10, 2)"),
        (r"range(0, 5)", r"range(0, 5)"),
        (r"range(-1180591620717411303424, 0)", r"range(-1180591620717411303424, 0)"),
        (r"slice(1, None, 2)", r"slice(1, None, 2)"),
        (r"slice(None, None, None)", r"slice(None, None, None)"),
        (r"slice('a', [1], 2.5)", r"slice('a', [1], 2.5)"),
        (r"<class 'range'>", r"<class 'range'>"),
        (r"{frozenset({1}): (2,)}", r"{frozenset({1}): (2,)}"),
    ]),
    // np.load('tests/data/object/numpy_scalars_beyond.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("numpy_scalars_beyond", &[
        (r"np.datetime64('2020-01-02')", r"2020-01-02"),
        (r"np.datetime64('NaT','generic')", r"NaT"),
        (r"np.datetime64('1970-01-01T00:00:00.000000001')", r"1970-01-01T00:00:00.000000001"),
        (r"np.timedelta64(3,'s')", r"3 seconds"),
        (r"np.timedelta64('NaT')", r"NaT"),
        (r"np.void((1, 2.5), dtype=[('a', '<i4'), ('b', '<f8')])", r"(1, 2.5)"),
    ]),
    // np.load('tests/data/object/ragged_proto2.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("ragged_proto2", &[
        (r"array([0., 1., 2.])", r"[0. 1. 2.]"),
        (r"array(['py2'], dtype='<U3')", r"['py2']"),
    ]),
    // np.load('tests/data/object/ragged_proto5.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("ragged_proto5", &[
        (r"array([0., 1., 2.])", r"[0. 1. 2.]"),
        (r"{8, 7}", r"{8, 7}"),
        (r"bytearray(b'z')", r"bytearray(b'z')"),
    ]),
    // np.load('tests/data/object/shared_arrays.npy', allow_pickle=True): repr() and str() of each element (C order)
    ("shared_arrays", &[
        (r"array([0, 1, 2, 3])", r"[0 1 2 3]"),
        (r"array([0, 1, 2, 3])", r"[0 1 2 3]"),
        (r"[array([0, 1, 2, 3])]", r"[array([0, 1, 2, 3])]"),
    ]),
];

#[test]
fn object_values_print_as_python_prints_them() {
    let mut wrong = Vec::new();
    for (name, want) in FIXTURES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/object").join(format!("{name}.npy"));
        let array = Array::<Object>::read_npy(&path).unwrap();
        let items = array.as_slice();
        assert_eq!(items.len(), want.len(), "{name}");
        let storage = |c: usize| {
            // The fixtures' 2-d object array is in Fortran order: C index (i, j) is stored at i + rows * j.
            match (array.fortran_order(), array.shape()) {
                (true, [rows, cols]) => c / cols + rows * (c % cols),
                _ => c,
            }
        };
        for (c, (repr, str)) in want.iter().enumerate() {
            let item = &items[storage(c)];
            if item.repr() != *repr || item.str() != *str {
                wrong.push(format!("{name}[{c}]: repr {:?} str {:?}, want {repr:?} {str:?}", item.repr(), item.str()));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Zones, deques and defaultdicts (issue 67): `repr()` and `str()` as Python 3.11 printed
/// them after `np.load('tests/data/object/zones_collections.npy', allow_pickle=True)`.
/// `str()` of a datetime or time in a `ZoneInfo` ends in the zone's UTC offset at that
/// instant, which needs the zone database: npy-core does not read it and writes the text
/// without an offset (the first four elements; Python's text is given for the record).
#[rustfmt::skip]
const ZONES_COLLECTIONS: &[(&str, &str)] = &[
    (r"datetime.datetime(2024, 3, 1, 12, 0, tzinfo=zoneinfo.ZoneInfo(key='Europe/Paris'))", r"2024-03-01 12:00:00+01:00"),
    (r"datetime.datetime(2024, 7, 1, 12, 0, 5, 6, tzinfo=zoneinfo.ZoneInfo(key='Europe/Paris'))", r"2024-07-01 12:00:05.000006+02:00"),
    (r"datetime.time(23, 59, tzinfo=zoneinfo.ZoneInfo(key='UTC'))", r"23:59:00+00:00"),
    (r"datetime.datetime(2021, 11, 7, 1, 30, fold=1, tzinfo=zoneinfo.ZoneInfo(key='America/New_York'))", r"2021-11-07 01:30:00-05:00"),
    (r"zoneinfo.ZoneInfo(key='Etc/GMT+5')", r"Etc/GMT+5"),
    (r"zoneinfo.ZoneInfo(key='Europe/Paris')", r"Europe/Paris"),
    (r"deque([1, 'a', [2]])", r"deque([1, 'a', [2]])"),
    (r"deque([])", r"deque([])"),
    (r"deque([], maxlen=0)", r"deque([], maxlen=0)"),
    (r"deque([0, 1, 2], maxlen=5)", r"deque([0, 1, 2], maxlen=5)"),
    (r"deque([7])", r"deque([7])"),
    (r"defaultdict(<class 'list'>, {1: [2]})", r"defaultdict(<class 'list'>, {1: [2]})"),
    (r"defaultdict(None, {})", r"defaultdict(None, {})"),
    (r"defaultdict(None, {'k': 1})", r"defaultdict(None, {'k': 1})"),
    (r"defaultdict(<class 'int'>, {'a': 1, 'b': defaultdict(<class 'set'>, {})})", r"defaultdict(<class 'int'>, {'a': 1, 'b': defaultdict(<class 'set'>, {})})"),
    (r"defaultdict(<class 'bytearray'>, {})", r"defaultdict(<class 'bytearray'>, {})"),
];

#[test]
fn zones_deques_and_defaultdicts_print_as_python_prints_them() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/object/zones_collections.npy");
    let items = Vec::<Object>::read_npy(path).unwrap();
    assert_eq!(items.len(), ZONES_COLLECTIONS.len());
    for (i, (item, (repr, str))) in items.iter().zip(ZONES_COLLECTIONS).enumerate() {
        assert_eq!(item.repr(), *repr, "element {i}");
        if i >= 4 {
            assert_eq!(item.str(), *str, "element {i}");
        } else {
            // Python's text without its UTC offset.
            let offset = str.rfind(['+', '-']).unwrap();
            assert_eq!(item.str(), str[..offset], "element {i}");
        }
    }
}
