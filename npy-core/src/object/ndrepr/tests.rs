//! Each expected text was printed by NumPy 2.4.6's `repr()` of the Python expression in
//! the comment above it; the bytes are that array's `tobytes()`.

use super::*;
use crate::header::Header;

fn array(descr: &str, shape: &[usize], hex: &str) -> DynArray {
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let dtype: DType = descr.parse().unwrap();
    DynArray::new(Header::new(dtype, shape.to_vec()), bytes).unwrap()
}

fn of_f64(shape: &[usize], values: impl IntoIterator<Item = f64>) -> DynArray {
    let bytes: Vec<u8> = values.into_iter().flat_map(f64::to_le_bytes).collect();
    DynArray::new(Header::new("<f8".parse().unwrap(), shape.to_vec()), bytes).unwrap()
}

fn of_i64(shape: &[usize], values: impl IntoIterator<Item = i64>) -> DynArray {
    let bytes: Vec<u8> = values.into_iter().flat_map(i64::to_le_bytes).collect();
    DynArray::new(Header::new("<i8".parse().unwrap(), shape.to_vec()), bytes).unwrap()
}

fn repr_of(a: DynArray) -> String {
    Object::Array(Box::new(a)).repr()
}

#[rustfmt::skip]
const CASES: &[(&str, &[usize], &str, &str)] = &[
    // np.array([0, 1.5])
    (r"'<f8'", &[2], "0000000000000000000000000000f83f", r"array([0. , 1.5])"),
    // np.array([0.1, 0.25, 1e-3])
    (r"'<f8'", &[3], "9a9999999999b93f000000000000d03ffca9f1d24d62503f", r"array([0.1  , 0.25 , 0.001])"),
    // np.array([0.1 + 0.2, 1.5])
    (r"'<f8'", &[2], "343333333333d33f000000000000f83f", r"array([0.3, 1.5])"),
    // np.array([0.001953125, 1])
    (r"'<f8'", &[2], "000000000000603f000000000000f03f", r"array([0.00195312, 1.        ])"),
    // np.array([1e-5, 1.5e-5])
    (r"'<f8'", &[2], "f168e388b5f8e43e691d554d1075ef3e", r"array([1.0e-05, 1.5e-05])"),
    // np.array([1.125e-5, 1e-5])
    (r"'<f8'", &[2], "0fd6ff39cc97e73ef168e388b5f8e43e", r"array([1.125e-05, 1.000e-05])"),
    // np.array([1e8, 1.0])
    (r"'<f8'", &[2], "0000000084d79741000000000000f03f", r"array([1.e+08, 1.e+00])"),
    // np.array([123456789.0, 1.0])
    (r"'<f8'", &[2], "00000054346f9d41000000000000f03f", r"array([1.23456789e+08, 1.00000000e+00])"),
    // np.array([1e20, 1, -2.5])
    (r"'<f8'", &[3], "408cb5781daf1544000000000000f03f00000000000004c0", r"array([ 1.0e+20,  1.0e+00, -2.5e+00])"),
    // np.array([1e-300, 1e300])
    (r"'<f8'", &[2], "59f3f8c21f6ea5019c7500883ce4377e", r"array([1.e-300, 1.e+300])"),
    // np.array([-0.0, 1])
    (r"'<f8'", &[2], "0000000000000080000000000000f03f", r"array([-0.,  1.])"),
    // np.array([np.nan, 1.0])
    (r"'<f8'", &[2], "000000000000f87f000000000000f03f", r"array([nan,  1.])"),
    // np.array([np.inf, -np.inf])
    (r"'<f8'", &[2], "000000000000f07f000000000000f0ff", r"array([ inf, -inf])"),
    // np.array([np.nan])
    (r"'<f8'", &[1], "000000000000f87f", r"array([nan])"),
    // np.array([-np.inf, 1.5, np.nan])
    (r"'<f8'", &[3], "000000000000f0ff000000000000f83f000000000000f87f", r"array([-inf,  1.5,  nan])"),
    // np.array([1e-5, np.nan, -np.inf])
    (r"'<f8'", &[3], "f168e388b5f8e43e000000000000f87f000000000000f0ff", r"array([1.e-05,    nan,   -inf])"),
    // np.arange(30) * 1.5
    (r"'<f8'", &[30], "0000000000000000000000000000f83f0000000000000840000000000000124000000000000018400000000000001e400000000000002240000000000000254000000000000028400000000000002b400000000000002e4000000000008030400000000000003240000000000080334000000000000035400000000000803640000000000000384000000000008039400000000000003b400000000000803c400000000000003e400000000000803f400000000000804040000000000040414000000000000042400000000000c042400000000000804340000000000040444000000000000045400000000000c04540", r"array([ 0. ,  1.5,  3. ,  4.5,  6. ,  7.5,  9. , 10.5, 12. , 13.5, 15. ,
       16.5, 18. , 19.5, 21. , 22.5, 24. , 25.5, 27. , 28.5, 30. , 31.5,
       33. , 34.5, 36. , 37.5, 39. , 40.5, 42. , 43.5])"),
    // np.array([1, 2], dtype=np.float32) / 3
    (r"'<f4'", &[2], "abaaaa3eabaa2a3f", r"array([0.33333334, 0.6666667 ], dtype=float32)"),
    // np.array([1e6, 1], dtype=np.float32)
    (r"'<f4'", &[2], "002474490000803f", r"array([1.e+06, 1.e+00], dtype=float32)"),
    // np.array([1, 2.5], dtype=np.float16) / np.float16(1.1)
    (r"'<f2'", &[2], "463b8c40", r"array([0.909, 2.273], dtype=float16)"),
    // np.array([1.5], dtype='>f8')
    (r"'>f8'", &[1], "3ff8000000000000", r"array([1.5], dtype='>f8')"),
    // np.arange(3, dtype=np.longdouble) / 3
    (r"'<f16'", &[3], "00000000000000000000000000000000abaaaaaaaaaaaaaafd3f000000000000abaaaaaaaaaaaaaafe3f000000000000", r"array([0.        , 0.33333333, 0.66666667], dtype=float128)"),
    // np.array([np.longdouble(1) / 3, np.longdouble('1e4000')]): beyond f64, still scientific
    (r"'<f16'", &[2], "abaaaaaaaaaaaaaafd3f000000000000618c55fe2383bad1e673000000000000", r"array([3.33333333e-0001, 1.00000000e+4000], dtype=float128)"),
    (r"'<f16'", &[1], "618c55fe2383bad1e673000000000000", r"array([1.e+4000], dtype=float128)"),
    // np.array([1 + 2j, 3.5 - 1j])
    (r"'<c16'", &[2], "000000000000f03f00000000000000400000000000000c40000000000000f0bf", r"array([1. +2.j, 3.5-1.j])"),
    // np.array([1 + 0j])
    (r"'<c16'", &[1], "000000000000f03f0000000000000000", r"array([1.+0.j])"),
    // np.array([np.nan + 1j, -np.inf - 2.5j])
    (r"'<c16'", &[2], "000000000000f87f000000000000f03f000000000000f0ff00000000000004c0", r"array([ nan+1.j , -inf-2.5j])"),
    // np.array([1e-7 + 1j], dtype=np.complex64)
    (r"'<c8'", &[1], "95bfd6330000803f", r"array([1.e-07+1.j], dtype=complex64)"),
    // np.array([-1, 100])
    (r"'<i8'", &[2], "ffffffffffffffff6400000000000000", r"array([ -1, 100])"),
    // np.array([[1, 2], [3, 4]])
    (r"'<i8'", &[2, 2], "0100000000000000020000000000000003000000000000000400000000000000", r"array([[1, 2],
       [3, 4]])"),
    // np.arange(24).reshape(2, 3, 4)
    (r"'<i8'", &[2, 3, 4], "00000000000000000100000000000000020000000000000003000000000000000400000000000000050000000000000006000000000000000700000000000000080000000000000009000000000000000a000000000000000b000000000000000c000000000000000d000000000000000e000000000000000f0000000000000010000000000000001100000000000000120000000000000013000000000000001400000000000000150000000000000016000000000000001700000000000000", r"array([[[ 0,  1,  2,  3],
        [ 4,  5,  6,  7],
        [ 8,  9, 10, 11]],

       [[12, 13, 14, 15],
        [16, 17, 18, 19],
        [20, 21, 22, 23]]])"),
    // np.array([1, 2], dtype=np.uint8)
    (r"'|u1'", &[2], "0102", r"array([1, 2], dtype=uint8)"),
    // np.array([1, 2], dtype='>i4')
    (r"'>i4'", &[2], "0000000100000002", r"array([1, 2], dtype='>i4')"),
    // np.array(5)
    (r"'<i8'", &[], "0500000000000000", r"array(5)"),
    // np.array(2.5)
    (r"'<f8'", &[], "0000000000000440", r"array(2.5)"),
    // np.array(True)
    (r"'|b1'", &[], "01", r"array(True)"),
    // np.array([True, False])
    (r"'|b1'", &[2], "0100", r"array([ True, False])"),
    // np.array([[True], [True]])
    (r"'|b1'", &[2, 1], "0101", r"array([[ True],
       [ True]])"),
    // np.array(['a', 'bc'])
    (r"'<U2'", &[2], "61000000000000006200000063000000", r"array(['a', 'bc'], dtype='<U2')"),
    // np.array(["it's", 'é'])
    (r"'<U4'", &[2], "69000000740000002700000073000000e9000000000000000000000000000000", r#"array(["it's", 'é'], dtype='<U4')"#),
    // np.array([['a']], dtype='>U2')
    (r"'>U2'", &[1, 1], "0000006100000000", r"array([['a']], dtype='>U2')"),
    // np.array([b'a', b'\x00b'])
    (r"'|S2'", &[2], "61000062", r"array([b'a', b'\x00b'], dtype='|S2')"),
    // np.array(['2020-01-02', 'NaT'], dtype='M8[D]')
    (r"'<M8[D]'", &[2], "57470000000000000000000000000080", r"array(['2020-01-02',        'NaT'], dtype='datetime64[D]')"),
    // np.array(['2020-01-02T03:04:05', '1969-12-31T23:59:59'], dtype='M8[s]')
    (r"'<M8[s]'", &[2], "a55d0d5e00000000ffffffffffffffff", r"array(['2020-01-02T03:04:05', '1969-12-31T23:59:59'],
      dtype='datetime64[s]')"),
    // np.array(['NaT'], dtype='M8[ns]')
    (r"'<M8[ns]'", &[1], "0000000000000080", r"array(['NaT'], dtype='datetime64[ns]')"),
    // np.array([1, 'NaT'], dtype='m8[s]')
    (r"'<m8[s]'", &[2], "01000000000000000000000000000080", r"array([    1, 'NaT'], dtype='timedelta64[s]')"),
    // np.array([1, -200], dtype='m8[s]')
    (r"'<m8[s]'", &[2], "010000000000000038ffffffffffffff", r"array([   1, -200], dtype='timedelta64[s]')"),
    // np.array([3], dtype='m8')
    (r"'<m8'", &[1], "0300000000000000", r"array([3], dtype=timedelta64)"),
    // np.array(np.datetime64('2020-01-01'))
    (r"'<M8[D]'", &[], "5647000000000000", r"array('2020-01-01', dtype='datetime64[D]')"),
    // np.zeros(2, dtype='V3')
    (r"'|V3'", &[2], "000000000000", r"array([b'\x00\x00\x00', b'\x00\x00\x00'], dtype='|V3')"),
    // np.array([(1, 2.0), (3, 4.5)], dtype=[('a', '<i4'), ('b', '<f8')])
    (r"[('a', '<i4'), ('b', '<f8')]", &[2], "010000000000000000000040030000000000000000001240", r"array([(1, 2. ), (3, 4.5)], dtype=[('a', '<i4'), ('b', '<f8')])"),
    // np.array([(1, True)], dtype=[('a', '<i2'), ('b', '?')])
    (r"[('a', '<i2'), ('b', '|b1')]", &[1], "010001", r"array([(1,  True)], dtype=[('a', '<i2'), ('b', '?')])"),
    // np.zeros(2, dtype=[('a', '<i4', (2,)), ('s', '<U3')])
    (r"[('a', '<i4', (2,)), ('s', '<U3')]", &[2], "00000000000000000000000000000000000000000000000000000000000000000000000000000000", r"array([([0, 0], ''), ([0, 0], '')],
      dtype=[('a', '<i4', (2,)), ('s', '<U3')])"),
    // np.array([([1.5, 2.0], 'x')], dtype=[('a', '<f8', (2,)), ('s', '<U3')])
    (r"[('a', '<f8', (2,)), ('s', '<U3')]", &[1], "000000000000f83f0000000000000040780000000000000000000000", r"array([([1.5, 2. ], 'x')], dtype=[('a', '<f8', (2,)), ('s', '<U3')])"),
    // np.zeros((0, 3))
    (r"'<f8'", &[0, 3], "", r"array([], shape=(0, 3), dtype=float64)"),
    // np.array([], dtype=np.int32)
    (r"'<i4'", &[0], "", r"array([], dtype=int32)"),
    // np.array([])
    (r"'<f8'", &[0], "", r"array([], dtype=float64)"),
    // np.array([], dtype='<U1')
    (r"'<U1'", &[0], "", r"array([], dtype='<U1')"),
    // np.zeros((2, 0), dtype=np.int8)
    (r"'|i1'", &[2, 0], "", r"array([], shape=(2, 0), dtype=int8)"),
    // np.arange(60, dtype=np.int16).reshape(3, 20) * 100
    (r"'<i2'", &[3, 20], "00006400c8002c019001f4015802bc0220038403e8034c04b00414057805dc054006a40608076c07d00734089808fc086009c409280a8c0af00a540bb80b1c0c800ce40c480dac0d100e740ed80e3c0fa00f04106810cc1030119411f8115c12c01224138813ec135014b41418157c15e0154416a8160c17", r"array([[   0,  100,  200,  300,  400,  500,  600,  700,  800,  900, 1000,
        1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900],
       [2000, 2100, 2200, 2300, 2400, 2500, 2600, 2700, 2800, 2900, 3000,
        3100, 3200, 3300, 3400, 3500, 3600, 3700, 3800, 3900],
       [4000, 4100, 4200, 4300, 4400, 4500, 4600, 4700, 4800, 4900, 5000,
        5100, 5200, 5300, 5400, 5500, 5600, 5700, 5800, 5900]],
      dtype=int16)"),
    // np.linspace(0, 1, 12).reshape(3, 4)
    (r"'<f8'", &[3, 4], "000000000000000046175d74d145b73f46175d74d145c73f74d145175d74d13f46175d74d145d73f185d74d14517dd3f74d145175d74e13f5d74d145175de43f46175d74d145e73f2fbae8a28b2eea3f185d74d14517ed3f000000000000f03f", r"array([[0.        , 0.09090909, 0.18181818, 0.27272727],
       [0.36363636, 0.45454545, 0.54545455, 0.63636364],
       [0.72727273, 0.81818182, 0.90909091, 1.        ]])"),
    // np.array(['x' * 40, 'y' * 40])
    (r"'<U40'", &[2], "7800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000078000000780000007800000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000790000007900000079000000", r"array(['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
       'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'], dtype='<U40')"),
    // np.array([1.5, 2.5], dtype=np.float32).reshape(2, 1, 1)
    (r"'<f4'", &[2, 1, 1], "0000c03f00002040", r"array([[[1.5]],

       [[2.5]]], dtype=float32)"),
];

#[test]
fn arrays_match_numpy() {
    for &(descr, shape, hex, want) in CASES {
        assert_eq!(repr_of(array(descr, shape, hex)), want, "{descr} {shape:?}");
    }
}

#[test]
fn scientific_digits_past_the_shortest_are_the_values_own() {
    // np.array([-5399.5605, 583382.38, -1290893.2], dtype=np.float32): 583382.38 is
    // 5.833824e+05 alone, 5.8338238e+05 beside values of 8 digits.
    let want = "array([-5.3995605e+03,  5.8338238e+05, -1.2908932e+06], dtype=float32)";
    assert_eq!(repr_of(array("'<f4'", &[3], "7cbca8c5666d0e496a949dc9")), want);
    // np.array([63.22, 218.9, 1533.0], dtype=np.float16)
    assert_eq!(
        repr_of(array("'<f2'", &[3], "e753d75afd65")),
        "array([6.322e+01, 2.189e+02, 1.533e+03], dtype=float16)"
    );
}

#[test]
fn long_arrays_are_summarised_as_numpy_does() {
    // np.arange(2000)
    let want = "array([   0,    1,    2, ..., 1997, 1998, 1999], shape=(2000,))";
    assert_eq!(repr_of(of_i64(&[2000], 0..2000)), want);
    // np.arange(1001)
    let want = "array([   0,    1,    2, ...,  998,  999, 1000], shape=(1001,))";
    assert_eq!(repr_of(of_i64(&[1001], 0..1001)), want);
    // np.arange(1000): not summarised
    assert!(repr_of(of_i64(&[1000], 0..1000)).ends_with(" 997, 998, 999])"));
    // np.arange(2000.).reshape(2, 1000)
    let want = "array([[0.000e+00, 1.000e+00, 2.000e+00, ..., 9.970e+02, 9.980e+02,
        9.990e+02],
       [1.000e+03, 1.001e+03, 1.002e+03, ..., 1.997e+03, 1.998e+03,
        1.999e+03]], shape=(2, 1000))";
    assert_eq!(repr_of(of_f64(&[2, 1000], (0..2000).map(f64::from))), want);
    // np.ones((2, 2000))
    let want = "array([[1., 1., 1., ..., 1., 1., 1.],
       [1., 1., 1., ..., 1., 1., 1.]], shape=(2, 2000))";
    assert_eq!(repr_of(of_f64(&[2, 2000], std::iter::repeat_n(1.0, 4000))), want);
    // np.arange(8000).reshape(20, 20, 20)
    let want = "array([[[   0,    1,    2, ...,   17,   18,   19],
        [  20,   21,   22, ...,   37,   38,   39],
        [  40,   41,   42, ...,   57,   58,   59],
        ...,
        [ 340,  341,  342, ...,  357,  358,  359],
        [ 360,  361,  362, ...,  377,  378,  379],
        [ 380,  381,  382, ...,  397,  398,  399]],

       [[ 400,  401,  402, ...,  417,  418,  419],
        [ 420,  421,  422, ...,  437,  438,  439],
        [ 440,  441,  442, ...,  457,  458,  459],
        ...,
        [ 740,  741,  742, ...,  757,  758,  759],
        [ 760,  761,  762, ...,  777,  778,  779],
        [ 780,  781,  782, ...,  797,  798,  799]],

       [[ 800,  801,  802, ...,  817,  818,  819],
        [ 820,  821,  822, ...,  837,  838,  839],
        [ 840,  841,  842, ...,  857,  858,  859],
        ...,
        [1140, 1141, 1142, ..., 1157, 1158, 1159],
        [1160, 1161, 1162, ..., 1177, 1178, 1179],
        [1180, 1181, 1182, ..., 1197, 1198, 1199]],

       ...,

       [[6800, 6801, 6802, ..., 6817, 6818, 6819],
        [6820, 6821, 6822, ..., 6837, 6838, 6839],
        [6840, 6841, 6842, ..., 6857, 6858, 6859],
        ...,
        [7140, 7141, 7142, ..., 7157, 7158, 7159],
        [7160, 7161, 7162, ..., 7177, 7178, 7179],
        [7180, 7181, 7182, ..., 7197, 7198, 7199]],

       [[7200, 7201, 7202, ..., 7217, 7218, 7219],
        [7220, 7221, 7222, ..., 7237, 7238, 7239],
        [7240, 7241, 7242, ..., 7257, 7258, 7259],
        ...,
        [7540, 7541, 7542, ..., 7557, 7558, 7559],
        [7560, 7561, 7562, ..., 7577, 7578, 7579],
        [7580, 7581, 7582, ..., 7597, 7598, 7599]],

       [[7600, 7601, 7602, ..., 7617, 7618, 7619],
        [7620, 7621, 7622, ..., 7637, 7638, 7639],
        [7640, 7641, 7642, ..., 7657, 7658, 7659],
        ...,
        [7940, 7941, 7942, ..., 7957, 7958, 7959],
        [7960, 7961, 7962, ..., 7977, 7978, 7979],
        [7980, 7981, 7982, ..., 7997, 7998, 7999]]], shape=(20, 20, 20))";
    assert_eq!(repr_of(of_i64(&[20, 20, 20], 0..8000)), want);
}

#[test]
fn fortran_order_is_shown_in_c_order() {
    // np.asfortranarray(np.array([[1, 2], [3, 4]]))
    let bytes: Vec<u8> = [1i64, 3, 2, 4].into_iter().flat_map(i64::to_le_bytes).collect();
    let header = Header { dtype: "<i8".parse().unwrap(), fortran_order: true, shape: vec![2, 2] };
    let a = DynArray::new(header, bytes).unwrap();
    assert_eq!(repr_of(a), "array([[1, 2],\n       [3, 4]])");
}

#[test]
fn scalars_match_numpy() {
    let cases = [
        // np.datetime64('2020-01-02')
        ("'<M8[D]'", hex_i64(18_263), "np.datetime64('2020-01-02')"),
        // np.datetime64('2020-01-02T03')
        ("'<M8[h]'", hex_i64(438_315), "np.datetime64('2020-01-02T03','h')"),
        // np.datetime64('2020-01-02T03:04')
        ("'<M8[m]'", hex_i64(26_298_904), "np.datetime64('2020-01-02T03:04')"),
        // np.datetime64('2020-01-02', '2D')
        ("'<M8[2D]'", hex_i64(9131), "np.datetime64('2020-01-01','2D')"),
        // np.datetime64('NaT')
        ("'<M8'", hex_i64(i64::MIN), "np.datetime64('NaT','generic')"),
        // np.datetime64('NaT', 'D')
        ("'<M8[D]'", hex_i64(i64::MIN), "np.datetime64('NaT','D')"),
        // np.timedelta64(3, 's')
        ("'<m8[s]'", hex_i64(3), "np.timedelta64(3,'s')"),
        // np.timedelta64(3, '2s')
        ("'<m8[2s]'", hex_i64(3), "np.timedelta64(3,'2s')"),
        // np.timedelta64(3)
        ("'<m8'", hex_i64(3), "np.timedelta64(3)"),
        // np.timedelta64('NaT', 's')
        ("'<m8[s]'", hex_i64(i64::MIN), "np.timedelta64('NaT','s')"),
        // np.timedelta64('NaT')
        ("'<m8'", hex_i64(i64::MIN), "np.timedelta64('NaT')"),
        // np.longdouble('1.5')
        ("'<f16'", "00000000000000c0ff3f000000000000".to_string(), "np.longdouble('1.5')"),
        // np.clongdouble(1.5+2j)
        ("'<c32'", "00000000000000c0ff3f000000000000".to_string() + "00000000000000800040000000000000", "np.clongdouble('1.5+2j')"),
        // np.void(b'\x01\x02')
        ("'|V2'", "0102".to_string(), r"np.void(b'\x01\x02')"),
        // np.array([(1, 2.0)], dtype=[('a', '<i4'), ('b', '<f8')])[0]
        ("[('a', '<i4'), ('b', '<f8')]", "01000000".to_string() + &hex_f64(2.0), "np.void((1, 2.0), dtype=[('a', '<i4'), ('b', '<f8')])"),
        // np.array([(1,)], dtype=[('a', '<i4')])[0]
        ("[('a', '<i4')]", "01000000".to_string(), "np.void((1,), dtype=[('a', '<i4')])"),
        // np.array([(1, 2.5, 'x', True, [1, 2])], dtype=[('a', '<i4'), ('b', '<f4'), ('c', '<U2'), ('d', '?'), ('e', '<f8', (2,))])[0]
        (
            "[('a', '<i4'), ('b', '<f4'), ('c', '<U2'), ('d', '|b1'), ('e', '<f8', (2,))]",
            "01000000".to_string() + "00002040" + "7800000000000000" + "01" + &hex_f64(1.0) + &hex_f64(2.0),
            "np.void((1, 2.5, 'x', True, [1.0, 2.0]), dtype=[('a', '<i4'), ('b', '<f4'), ('c', '<U2'), ('d', '?'), ('e', '<f8', (2,))])",
        ),
    ];
    for (descr, hex, want) in cases {
        let a = array(descr, &[], &hex);
        assert_eq!(Object::Scalar(Box::new(a)).repr(), want, "{descr}");
    }
}

fn hex_i64(x: i64) -> String {
    x.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_f64(x: f64) -> String {
    x.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn object_arrays_match_numpy() {
    let ragged = Array::from_shape_vec(
        vec![2],
        vec![Object::Array(Box::new(of_i64(&[3], 0..3))), Object::Array(Box::new(of_i64(&[5], 0..5)))],
    )
    .unwrap();
    // np.array([np.arange(3), np.arange(5)], dtype=object)
    let want = "array([array([0, 1, 2]), array([0, 1, 2, 3, 4])], dtype=object)";
    assert_eq!(Object::ObjectArray(Box::new(ragged)).repr(), want);
    let items = vec![Object::List(vec![1.into()]), Object::from("a"), Object::None];
    // np.array([[1], 'a', None], dtype=object)
    let want = "array([list([1]), 'a', None], dtype=object)";
    let a = Array::from_shape_vec(vec![3], items).unwrap();
    assert_eq!(Object::ObjectArray(Box::new(a)).repr(), want);
    // a = np.empty(2, dtype=object); a[0] = np.arange(4.).reshape(2, 2); a[1] = np.arange(3)
    let a = Array::from_shape_vec(
        vec![2],
        vec![
            Object::Array(Box::new(of_f64(&[2, 2], [0.0, 1.0, 2.0, 3.0]))),
            Object::Array(Box::new(of_i64(&[3], 0..3))),
        ],
    )
    .unwrap();
    let want = "array([array([[0., 1.],
              [2., 3.]]), array([0, 1, 2])], dtype=object)";
    assert_eq!(Object::ObjectArray(Box::new(a)).repr(), want);
    // np.empty((0, 2), dtype=object)
    let a = Array::from_shape_vec(vec![0, 2], vec![]).unwrap();
    assert_eq!(Object::ObjectArray(Box::new(a)).repr(), "array([], shape=(0, 2), dtype=object)");
    // np.array([None] * 1001, dtype=object)
    let a = Array::from_shape_vec(vec![1001], vec![Object::None; 1001]).unwrap();
    assert_eq!(
        Object::ObjectArray(Box::new(a)).repr(),
        "array([None, None, None, ..., None, None, None],\n      shape=(1001,), dtype=object)"
    );
}

#[test]
fn str_matches_numpy() {
    let str_of = |a: DynArray| Object::Array(Box::new(a)).str();
    // str(np.arange(3))
    assert_eq!(str_of(of_i64(&[3], 0..3)), "[0 1 2]");
    // str(np.array([[1., 2.], [3., 4.5]]))
    assert_eq!(str_of(of_f64(&[2, 2], [1.0, 2.0, 3.0, 4.5])), "[[1.  2. ]\n [3.  4.5]]");
    // str(np.arange(2000))
    assert_eq!(str_of(of_i64(&[2000], 0..2000)), "[   0    1    2 ... 1997 1998 1999]");
    // str(np.arange(30) * 1.5)
    let want = "[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5
 21.  22.5 24.  25.5 27.  28.5 30.  31.5 33.  34.5 36.  37.5 39.  40.5
 42.  43.5]";
    assert_eq!(str_of(of_f64(&[30], (0..30).map(|i| f64::from(i) * 1.5))), want);
    // str(np.arange(24).reshape(2, 3, 4))
    let want =
        "[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]";
    assert_eq!(str_of(of_i64(&[2, 3, 4], 0..24)), want);
    // str(np.array([], dtype=np.int8))
    assert_eq!(str_of(array("'|i1'", &[0], "")), "[]");
    // str(np.array(['a', 'b']))
    assert_eq!(str_of(array("'<U1'", &[2], "6100000062000000")), "['a' 'b']");
    // str(np.array(np.datetime64('2020-01-02')))
    assert_eq!(Object::Scalar(Box::new(array("'<M8[D]'", &[], &hex_i64(18_263)))).str(), "2020-01-02");
    // str(np.array([(1, 2.0)], dtype=[('a', '<i4'), ('b', '<f8')])[0])
    let record = array("[('a', '<i4'), ('b', '<f8')]", &[], &("01000000".to_string() + &hex_f64(2.0)));
    assert_eq!(Object::Scalar(Box::new(record)).str(), "(1, 2.0)");
    // str(np.array([np.arange(3), np.arange(5)], dtype=object))
    let ragged = Array::from_shape_vec(
        vec![2],
        vec![Object::Array(Box::new(of_i64(&[3], 0..3))), Object::Array(Box::new(of_i64(&[5], 0..5)))],
    )
    .unwrap();
    assert_eq!(Object::ObjectArray(Box::new(ragged)).str(), "[array([0, 1, 2]) array([0, 1, 2, 3, 4])]");
}
