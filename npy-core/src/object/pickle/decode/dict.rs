//! A pickled dict of plain values and dtypes, such as the `info` file of a Dask npy stack
//! (`{'chunks': ..., 'dtype': numpy.dtype(...), 'axis': ...}`): the same restricted
//! machine, ending on a dict instead of an array.

use std::io::Read;

use super::{Kind, Machine, PickleInput, Settings, Stream, Value};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::object::Object;

/// A value of a decoded dict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// A plain value.
    Object(Object),
    /// A `numpy.dtype`, in the one dtype model.
    Dtype(DType),
}

/// Decodes a pickle of a dict with `str` keys whose values are plain values or dtypes,
/// from `reader` whose first byte is at file offset `base`; `whole` and `settings` as for
/// [`decode`](super::decode). Entries keep the pickle's order.
///
/// # Errors
/// [`crate::ErrorKind::Pickle`] for anything else (a global other than NumPy's dtype
/// reconstruction, a call, an opcode outside plain values), or a truncated or malformed
/// pickle, or one over the budget; [`crate::ErrorKind::Io`] from the reader.
pub(crate) fn decode_dict<R: Read>(
    reader: R,
    base: u64,
    whole: Option<u64>,
    settings: Settings,
) -> Result<Vec<(String, Item)>> {
    let mut machine = Machine::new(Stream(reader), base, whole, settings);
    machine.budget.raisable = false;
    let stop = machine.run(&mut |_| true)?;
    let entries = machine.finish_dict(stop)?;
    machine.end()?;
    Ok(entries)
}

impl<R: PickleInput> Machine<R> {
    fn finish_dict(&mut self, at: u64) -> Result<Vec<(String, Item)>> {
        if !self.marks.is_empty() {
            return Err(self.err(at, "STOP inside a MARK"));
        }
        let dict = match self.stack[..] {
            [v] => v,
            _ => {
                return Err(
                    self.err(at, format!("STOP with {} values on the stack (one dict expected)", self.stack.len()))
                )
            }
        };
        let (Value::Node(index), Some(Kind::Dict(entries))) = (dict, self.kind(dict)) else {
            return Err(self.err(at, format!("the pickle holds a {}, not a dict", self.type_name(dict))));
        };
        let len = entries.len();
        let refs = self.refs(dict, None, at)?;
        let mut out = Vec::with_capacity(len);
        for i in 0..len {
            let (key, value) = (self.item(index as usize, 2 * i), self.item(index as usize, 2 * i + 1));
            let Some(key) = self.str_text(key) else {
                return Err(self.err(at, format!("a dict key that is a {}, not a str", self.type_name(key))));
            };
            let key = key.to_string();
            let item = match self.kind(value) {
                Some(Kind::Dtype(_)) => Item::Dtype(self.copy_built(value, at)?),
                _ => Item::Object(self.object(value, 1, false, &refs).map_err(|e| match e.into_kind() {
                    crate::error::ErrorKind::Pickle { offset, reason } => {
                        Error::pickle(offset, format!("the value of {}: {reason}", super::quote(&key)))
                    }
                    other => other.into(),
                })?),
            };
            out.push((key, item));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Settings;
    use super::*;
    use crate::dtype::{ByteOrder, DateUnit, Scalar, ScalarType, TimeUnit};

    fn dict(p: &[u8]) -> Result<Vec<(String, Item)>> {
        decode_dict(p, 0, Some(p.len() as u64), Settings::default())
    }

    fn unhex(h: &str) -> Vec<u8> {
        (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap()).collect()
    }

    /// `pickle.dumps({'chunks': ((2, 3), (4,)), 'dtype': D, 'axis': 0})` by Python 3.11
    /// and NumPy 2.4.6, with the `repr` of `np.lib.format.dtype_to_descr(D)`.
    pub(in crate::object::pickle) const INFOS: &[(&str, &str)] = &[
        // np.load of np.save(np.zeros(1, '<f8'))
        ("'<f8'", "80049561000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02663894898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '>i2'))
        ("'>i2'", "80049561000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02693294898887945294284b038c013e944e4e4e4affffffff4affffffff4b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '<U5'))
        ("'<U5'", "8004955b000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02553594898887945294284b038c013c944e4e4e4b144b044b087494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '|S3'))
        ("'|S3'", "8004955b000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02533394898887945294284b038c017c944e4e4e4b034b014b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '|b1'))
        ("'|b1'", "80049561000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02623194898887945294284b038c017c944e4e4e4affffffff4affffffff4b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '<M8[ms]'))
        ("'<M8[ms]'", "80049572000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c024d3894898887945294284b048c013c944e4e4e4affffffff4affffffff4b004e2843026d73944b014b014b01749486947494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '>m8[10s]'))
        ("'>m8[10s]'", "80049571000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c026d3894898887945294284b048c013e944e4e4e4affffffff4affffffff4b004e28430173944b0a4b014b01749486947494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '<M8'))
        ("'<M8'", "80049577000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c024d3894898887945294284b048c013c944e4e4e4affffffff4affffffff4b004e28430767656e65726963944b014b014b01749486947494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, '<c16'))
        ("'<c16'", "80049562000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0363313694898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, 'V7'))
        ("'|V7'", "8004955b000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02563794898887945294284b038c017c944e4e4e4b074b014b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, [('a','<i4'),('','|V4'),('b','>f8',(2,)),('c',[('d','|u1'),('e','<f8')]),('f','<f8')]))
        ("[('a', '<i4'), ('f1', '|V4'), ('b', '>f8', (2,)), ('c', [('d', '|u1'), ('e', '<f8')]), ('f', '<f8')]", "800495a2010000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356343194898887945294284b038c017c944e288c0161948c026631948c0162948c0163948c01669474947d9428680d68088c02693494898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494624b008694680e68088c02563494898887945294284b03680c4e4e4e4b044b014b007494624b048694680f68088c0356313694898887945294284b03680c68088c02663894898887945294284b038c013e944e4e4e4affffffff4affffffff4b007494624b02859486944e4e4b104b084b007494624b088694681068088c02563994898887945294284b03680c4e8c0164948c01659486947d9428682e68088c02753194898887945294284b03680c4e4e4e4affffffff4affffffff4b007494624b008694682f68088c02663894898887945294284b0368174e4e4e4affffffff4affffffff4b007494624b018694754b094b014b107494624b188694681168394b218694754b294b014b107494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, [('x','<f8'),('y','<f8')]))
        ("[('x', '<f8'), ('y', '<f8')]", "8004959c000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356313694898887945294284b038c017c944e8c0178948c01799486947d9428680d68088c02663894898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494624b008694680e68134b088694754b104b014b107494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, [(('t','a'),'<i4'),('b','<U2')]))
        ("[(('t', 'a'), '<i4'), ('b', '<U2')]", "800495c0000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356313294898887945294284b038c017c944e8c0161948c01629486947d9428680d68088c02693494898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494624b008c017494879468166817680e68088c02553294898887945294284b0368144e4e4e4b084b044b087494624b048694754b0c4b014b187494628c0461786973944b00752e"),
        // np.dtype([('a','i1'),('b','>i8',(2,))], align=True)
        ("[('a', '|i1'), ('', '|V7'), ('b', '>i8', (2,))]", "800495e2000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356323494898887945294284b038c017c944e8c0161948c01629486947d9428680d68088c02693194898887945294284b03680c4e4e4e4affffffff4affffffff4b007494624b008694680e68088c0356313694898887945294284b03680c68088c02693894898887945294284b038c013e944e4e4e4affffffff4affffffff4b007494624b02859486944e4e4b104b084b007494624b088694754b184b084b907494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, []))
        ("[]", "8004955c000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c02563094898887945294284b038c017c944e297d944b004b014b107494628c0461786973944b00752e"),
        // np.dtype(('<f8',(2,)))
        ("", "80049587000000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356313694898887945294284b038c017c9468088c02663894898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494624b02859486944e4e4b104b084b007494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, [('a','>f8'),('b','>f8'),('c','<U2'),('d','<U2'),('e','<M8[ms]'),('f','<M8[ms]'),('g','|b1'),('h','|b1'),('i','|V3'),('j','|V3'),('k','|S2'),('l','|S2'),('m','<c8'),('n','<f2'),('o','<f16'),('p','<c32')]))
        ("[('a', '>f8'), ('b', '>f8'), ('c', '<U2'), ('d', '<U2'), ('e', '<M8[ms]'), ('f', '<M8[ms]'), ('g', '|b1'), ('h', '|b1'), ('i', '|V3'), ('j', '|V3'), ('k', '|S2'), ('l', '|S2'), ('m', '<c8'), ('n', '<f2'), ('o', '<f16'), ('p', '<c32')]", "80049524030000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c045631313894898887945294284b038c017c944e288c0161948c0162948c0163948c0164948c0165948c0166948c0167948c0168948c0169948c016a948c016b948c016c948c016d948c016e948c016f948c01709474947d9428680d68088c02663894898887945294284b038c013e944e4e4e4affffffff4affffffff4b007494624b008694680e68088c02663894898887945294284b0368224e4e4e4affffffff4affffffff4b007494624b088694680f68088c02553294898887945294284b038c013c944e4e4e4b084b044b087494624b108694681068088c02553294898887945294284b03682d4e4e4e4b084b044b087494624b188694681168088c024d3894898887945294284b04682d4e4e4e4affffffff4affffffff4b004e2843026d73944b014b014b01749486947494624b208694681268088c024d3894898887945294284b04682d4e4e4e4affffffff4affffffff4b004e2843026d73944b014b014b01749486947494624b288694681368088c02623194898887945294284b03680c4e4e4e4affffffff4affffffff4b007494624b308694681468474b318694681568088c02563394898887945294284b03680c4e4e4e4b034b014b007494624b328694681668088c02563394898887945294284b03680c4e4e4e4b034b014b007494624b358694681768088c02533294898887945294284b03680c4e4e4e4b024b014b007494624b388694681868088c02533294898887945294284b03680c4e4e4e4b024b014b007494624b3a8694681968088c02633894898887945294284b03682d4e4e4e4affffffff4affffffff4b007494624b3c8694681a68088c02663294898887945294284b03682d4e4e4e4affffffff4affffffff4b007494624b448694681b68088c0366313694898887945294284b03682d4e4e4e4affffffff4affffffff4b007494624b468694681c68088c0363333294898887945294284b03682d4e4e4e4affffffff4affffffff4b007494624b568694754b764b014b187494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, [('p',[('x','<f8')]),('q',[('x','<f8')]),('pp',[('xx','<i2')]),('qq',[('xx','<i2')]),('r','<U2',(2,)),('s',[('t','<i1')],(2,))]))
        ("[('p', [('x', '<f8')]), ('q', [('x', '<f8')]), ('pp', [('xx', '<i2')]), ('qq', [('xx', '<i2')]), ('r', '<U2', (2,)), ('s', [('t', '|i1')], (2,))]", "8004954d020000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356333894898887945294284b038c017c944e288c0170948c0171948c027070948c027171948c0172948c01739474947d9428680d68088c02563894898887945294284b03680c4e8c01789485947d94681868088c02663894898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494624b008694734b084b014b107494624b008694680e68088c02563894898887945294284b03680c4e681885947d946818681d4b008694734b084b014b107494624b088694680f68088c02563294898887945294284b03680c4e8c0278789485947d94682e68088c02693294898887945294284b03681e4e4e4e4affffffff4affffffff4b007494624b008694734b024b014b107494624b108694681068088c02563294898887945294284b03680c4e8c0278789485947d94683b68334b008694734b024b014b107494624b128694681168088c0356313694898887945294284b03680c68088c02553294898887945294284b03681e4e4e4e4b084b044b087494624b02859486944e4e4b104b044b087494624b148694681268088c02563294898887945294284b03680c68088c02563194898887945294284b03680c4e8c01749485947d94685268088c02693194898887945294284b03680c4e4e4e4affffffff4affffffff4b007494624b008694734b014b014b107494624b02859486944e4e4b024b014b107494624b248694754b264b014b187494628c0461786973944b00752e"),
        // np.load of np.save(np.zeros(1, [('trace_id','<i4'),('receiver',[('x','<f4'),('y','<f4'),('z','<f4')]),('samples','<f4',(16,)),('flag','|b1'),('', '|V3')]))
        ("[('trace_id', '<i4'), ('receiver', [('x', '<f4'), ('y', '<f4'), ('z', '<f4')]), ('samples', '<f4', (16,)), ('flag', '|b1'), ('f4', '|V3')]", "800495a2010000000000007d94288c066368756e6b73944b024b0386944b04859486948c056474797065948c056e756d7079948c0564747970659493948c0356383494898887945294284b038c017c944e288c0874726163655f6964948c087265636569766572948c0773616d706c6573948c04666c6167948c0266349474947d9428680d68088c02693494898887945294284b038c013c944e4e4e4affffffff4affffffff4b007494624b008694680e68088c0356313294898887945294284b03680c4e8c0178948c0179948c017a9487947d9428681d68088c02663494898887945294284b0368174e4e4e4affffffff4affffffff4b007494624b008694681e68244b048694681f68244b088694754b0c4b014b107494624b048694680f68088c0356363494898887945294284b03680c68244b10859486944e4e4b404b044b007494624b108694681068088c02623194898887945294284b03680c4e4e4e4affffffff4affffffff4b007494624b508694681168088c02563394898887945294284b03680c4e4e4e4b034b014b007494624b518694754b544b014b107494628c0461786973944b00752e"),
    ];

    /// The index in [`INFOS`] of the dtype made with `align=True`.
    const ALIGNED: usize = 13;

    /// The dtype of an info pickle, whose other entries are checked.
    fn info(hex: &str) -> DType {
        let entries = dict(&unhex(hex)).unwrap_or_else(|e| panic!("{e}"));
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["chunks", "dtype", "axis"]);
        let chunks = Object::Tuple(vec![
            Object::Tuple(vec![Object::Int(2), Object::Int(3)]),
            Object::Tuple(vec![Object::Int(4)]),
        ]);
        assert_eq!(entries[0].1, Item::Object(chunks));
        assert_eq!(entries[2].1, Item::Object(Object::Int(0)));
        match &entries[1].1 {
            Item::Dtype(d) => d.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dtypes_as_numpy_pickles_them() {
        for &(descr, hex) in INFOS {
            let dtype = info(hex);
            if descr.is_empty() {
                let f8 = DType::Scalar(Scalar::new(ScalarType::Float(8), ByteOrder::Little));
                assert_eq!(dtype, DType::subarray(f8, vec![2]).unwrap());
            } else {
                assert_eq!(dtype.descr(), descr);
            }
        }
    }

    #[test]
    fn dtypes_encode_as_python_pickles_them() {
        for (i, &(descr, hex)) in INFOS.iter().enumerate() {
            if i == ALIGNED {
                // Its state's alignment and flags say `align=True`, which neither a
                // header nor the model keeps: ours is the dtype `np.load` makes.
                continue;
            }
            let p = unhex(hex);
            let entries = dict(&p).unwrap();
            let entries: Vec<(&str, Item)> = entries.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let ours = crate::object::pickle::encode_dict(&entries).unwrap();
            if ours != p {
                let at = ours.iter().zip(&p).position(|(a, b)| a != b).unwrap_or(ours.len().min(p.len()));
                panic!("{descr}: differs at byte {at}\nours   {}\npython {hex}", hex_of(&ours));
            }
        }
    }

    fn hex_of(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn units_titles_and_shared_parts() {
        let ms = info(INFOS[5].1);
        let unit = DateUnit { unit: TimeUnit::Milliseconds, multiple: 1 };
        assert_eq!(ms, DType::Scalar(Scalar::new(ScalarType::DateTime(unit), ByteOrder::Little)));
        let td = info(INFOS[6].1);
        let unit = DateUnit { unit: TimeUnit::Seconds, multiple: 10 };
        assert_eq!(td, DType::Scalar(Scalar::new(ScalarType::TimeDelta(unit), ByteOrder::Big)));
        let titled = info(INFOS[12].1);
        let fields = titled.as_record().unwrap().fields();
        assert_eq!(fields[0].title, Some(crate::literal::Literal::Str("t".into())));
        assert_eq!(fields[1].offset, 4);
    }

    /// A protocol 2 pickle of `{'dtype': <what `value` pushes>}`.
    fn wrapped(value: &[u8]) -> Vec<u8> {
        let mut p = b"\x80\x02}U\x05dtype".to_vec();
        p.extend_from_slice(value);
        p.extend_from_slice(b"s.");
        p
    }

    /// `numpy.dtype(descr)` with a plain state (memo 0 holds the global).
    fn plain(descr: &str, elsize: i32) -> Vec<u8> {
        let mut p = b"cnumpy\ndtype\nq\x00U".to_vec();
        p.push(descr.len() as u8);
        p.extend_from_slice(descr.as_bytes());
        p.extend_from_slice(b"\x89\x88\x87R(K\x03U\x01|NNNJ");
        p.extend_from_slice(&elsize.to_le_bytes());
        p.extend_from_slice(b"K\x01K\x00tb");
        p
    }

    #[test]
    fn hostile_info_pickles_are_refused() {
        let refused = |p: &[u8], expected: &str| {
            let e = dict(p).unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        };
        // What dask#12578 is about: `pickle.load` of an info file runs what it names.
        refused(&wrapped(b"cposix\nsystem\n(U\x04trueR"), "global 'posix.system' is not allowed");
        refused(&wrapped(b"cbuiltins\neval\n(U\x011R"), "global 'builtins.eval' is not allowed");
        refused(&wrapped(b"cnumpy\ndtype\n(U\x02f8\x89\x88cos\nsystem\n"), "global 'os.system' is not allowed");
        // numpy.dtype reconstructions NumPy never writes.
        refused(&wrapped(b"cnumpy\ndtype\n(U\x02f9\x89\x88tR"), "numpy.dtype('f9')");
        refused(&wrapped(b"cnumpy\ndtype\n(U\x02f8\x89\x88tR(K\x03U\x01<tb"), "a numpy.dtype state other than");
        refused(&wrapped(&plain("V4", 3)), "a numpy.dtype of 4 bytes whose state says 3");
        refused(&wrapped(b"cnumpy\ndtype\n(U\x02f8\x89\x88tRN\x85R"), "REDUCE calling a numpy.dtype is not allowed");
        // Not a dict of str keys; trailing bytes; a truncated pickle.
        refused(b"\x80\x02]q\x00.", "the pickle holds a list, not a dict");
        refused(b"\x80\x02}K\x01K\x02s.", "a dict key that is a int, not a str");
        refused(b"\x80\x02}.x", "bytes follow the pickle's STOP");
        refused(&unhex(INFOS[0].1)[..60], "ends before its STOP");
        // A dtype whose fields are a memoised dtype twice, `levels` times over (`V0` keeps
        // the sizes at 0): 2^levels fields if copied.
        let doubling = |levels: usize| {
            let mut p = b"\x80\x02}U\x05dtype".to_vec();
            p.extend_from_slice(&plain("V0", 0));
            p.extend_from_slice(b"q\x01");
            for _ in 0..levels {
                p.extend_from_slice(b"h\x00U\x02V0\x89\x88\x87R(K\x03U\x01|N(U\x01aU\x01bt}(U\x01ah\x01K\x00\x86U\x01bh\x01K\x00\x86uK\x00K\x01K\x10tbq\x01");
            }
            p.extend_from_slice(b"s.");
            p
        };
        // 40 levels: refused by depth or memory, in little time; 24 levels under the
        // default budget: memory, and no advice to raise it (both make 128 MiB of copies
        // first: minutes under Miri).
        if cfg!(not(miri)) {
            let e = dict(&doubling(40)).unwrap_err().to_string();
            assert!(e.contains("memory") || e.contains("nested deeper than 32"), "{e}");
            let e = dict(&doubling(24)).unwrap_err().to_string();
            assert!(e.contains("far more than a Dask info takes") && !e.contains("raise"), "{e}");
        }
        // 30 levels with a fixed budget: memory, not depth.
        let e = decode_dict(&doubling(30)[..], 0, None, Settings::limit(1 << 20)).unwrap_err().to_string();
        assert!(e.contains("memory allowed"), "{e}");
        // A dtype used in its own fields before its BUILD.
        let mut p = b"\x80\x02}U\x05dtype".to_vec();
        p.extend_from_slice(b"cnumpy\ndtype\nq\x00h\x00U\x02V8\x89\x88\x87Rq\x01(K\x03U\x01|N(U\x01at}U\x01ah\x01K\x00\x86sK\x08K\x01K\x10tbs.");
        refused(&p, "a numpy.dtype used before its BUILD");
    }
}
