//! The encoder against CPython 3.11 and NumPy 2.4: each constant is the pickle `np.save`
//! wrote (the bytes after the header) for the object array its comment builds, with
//! `arr(*values)` an `np.empty(n, dtype=object)` given the values one by one (the
//! standard library's names imported from their modules).

use super::*;
use crate::array::{Array, DynArray};
use crate::dtype::{DType, ScalarType};
use crate::header::Header;
use crate::object::{Date, DateTime, PathFlavor, Time, TimeDelta, TimeZone, TzInfo};

// np.save of arr(datetime(2020, 1, 2, 3, 4, 5, 6), datetime(2020, 1, 2, tzinfo=timezone.utc), datetime(1999, 12,
// 31, 23, 59, tzinfo=timezone(timedelta(hours=-5), 'EST')), datetime(2020, 11, 1, 1, 30, fold=1), date(2020, 1,
// 2), time(1, 2, 3, 4), time(1, 2, tzinfo=timezone.utc, fold=1), timedelta(days=-1, seconds=5, microseconds=7),
// timezone.utc, timezone(timedelta(hours=5, minutes=30)))
const DATETIMES: &[u8] = b"\x80\x04\x95\x9a\x01\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_rec\
      onstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\
      \x87\x94R\x94(K\x01K\x0a\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\
      \x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\
      \x08datetime\x94\x8c\x08datetime\x94\x93\x94C\x0a\x07\xe4\x01\x02\x03\x04\x05\x00\x00\x06\
      \x94\x85\x94R\x94h\x15C\x0a\x07\xe4\x01\x02\x00\x00\x00\x00\x00\x00\x94h\x13\x8c\x08timezo\
      ne\x94\x93\x94h\x13\x8c\x09timedelta\x94\x93\x94K\x00K\x00K\x00\x87\x94R\x94\x85\x94R\x94\
      \x86\x94R\x94h\x15C\x0a\x07\xcf\x0c\x1f\x17;\x00\x00\x00\x00\x94h\x1bh\x1dJ\xff\xff\xff\
      \xffJ0\x0b\x01\x00K\x00\x87\x94R\x94\x8c\x03EST\x94\x86\x94R\x94\x86\x94R\x94h\x15C\x0a\
      \x07\xe4\x8b\x01\x01\x1e\x00\x00\x00\x00\x94\x85\x94R\x94h\x13\x8c\x04date\x94\x93\x94C\
      \x04\x07\xe4\x01\x02\x94\x85\x94R\x94h\x13\x8c\x04time\x94\x93\x94C\x06\x01\x02\x03\x00\
      \x00\x04\x94\x85\x94R\x94h5C\x06\x81\x02\x00\x00\x00\x00\x94h!\x86\x94R\x94h\x1dJ\xff\xff\
      \xff\xffK\x05K\x07\x87\x94R\x94h!h\x1bh\x1dK\x00MXMK\x00\x87\x94R\x94\x85\x94R\x94et\x94b.";

// np.save of arr(Decimal('1.50'), Decimal('NaN'), Decimal('-Infinity'), Fraction(1, 3), Fraction(-10**30, 7),
// UUID(int=5), UUID(int=2**127 + 1))
const NUMBERS: &[u8] = b"\x80\x04\x95>\x01\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_recons\
      truct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\
      \x94R\x94(K\x01K\x07\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\
      \x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\x07deci\
      mal\x94\x8c\x07Decimal\x94\x93\x94\x8c\x041.50\x94\x85\x94R\x94h\x15\x8c\x03NaN\x94\x85\
      \x94R\x94h\x15\x8c\x09-Infinity\x94\x85\x94R\x94\x8c\x09fractions\x94\x8c\x08Fraction\x94\
      \x93\x94K\x01K\x03\x86\x94R\x94h!\x8a\x0d\x00\x00\x00\xc0\x15\x12\x8b\xb9/c\xd3`\xf3K\x07\
      \x86\x94R\x94\x8c\x04uuid\x94\x8c\x04UUID\x94\x93\x94)\x81\x94}\x94\x8c\x03int\x94K\x05sbh\
      ()\x81\x94}\x94h+\x8a\x11\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\
      \x00sbet\x94b.";

// np.save of arr(bytearray(b'ab'), bytearray(), bytearray(b'x'), b'x', set(), {1, 2, 300}, frozenset(),
// frozenset({(5, 6)}), OrderedDict(), OrderedDict(a=1, b=[2]), OrderedDict(k=None), Counter({'a': 2}),
// PurePosixPath('collections'))
const CONTAINERS: &[u8] = b"\x80\x04\x95a\x01\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_recons\
      truct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\
      \x94R\x94(K\x01K\x0d\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\
      \x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\x08buil\
      tins\x94\x8c\x09bytearray\x94\x93\x94C\x02ab\x94\x85\x94R\x94h\x15)R\x94h\x15C\x01x\x94\
      \x85\x94R\x94C\x01x\x94\x8f\x94\x8f\x94(K\x01K\x02M,\x01\x90(\x91\x94(K\x05K\x06\x86\x94\
      \x91\x94\x8c\x0bcollections\x94\x8c\x0bOrderedDict\x94\x93\x94)R\x94h%)R\x94(\x8c\x01a\x94\
      K\x01\x8c\x01b\x94]\x94K\x02auh%)R\x94\x8c\x01k\x94Ns\x8c\x0bcollections\x94\x8c\x07Counte\
      r\x94\x93\x94}\x94h(K\x02s\x85\x94R\x94\x8c\x07pathlib\x94\x8c\x0dPurePosixPath\x94\x93\
      \x94h#\x85\x94R\x94et\x94b.";

// np.save of arr(Counter(), Counter({'a': 2, 'b': 1}), 'a')
const COUNTERS: &[u8] = b"\x80\x04\x95\xc2\x00\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_rec\
      onstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\
      \x87\x94R\x94(K\x01K\x03\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\
      \x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\
      \x0bcollections\x94\x8c\x07Counter\x94\x93\x94}\x94\x85\x94R\x94h\x15}\x94(\x8c\x01a\x94K\
      \x02\x8c\x01b\x94K\x01u\x85\x94R\x94h\x1aet\x94b.";

// np.save of arr(PurePosixPath('/a/bc'), PosixPath('bc/d'), PureWindowsPath('c:/x/bc'), PurePosixPath(),
// PurePosixPath('//srv/datetime'), PureWindowsPath('c:/y'), date(2000, 1, 1))
const PATHS: &[u8] = b"\x80\x04\x95>\x01\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_recons\
      truct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\
      \x94R\x94(K\x01K\x07\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\
      \x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\x07path\
      lib\x94\x8c\x0dPurePosixPath\x94\x93\x94\x8c\x01/\x94\x8c\x01a\x94\x8c\x02bc\x94\x87\x94R\
      \x94h\x13\x8c\x09PosixPath\x94\x93\x94h\x18\x8c\x01d\x94\x86\x94R\x94h\x13\x8c\x0fPureWind\
      owsPath\x94\x93\x94\x8c\x03c:\\\x94\x8c\x01x\x94h\x18\x87\x94R\x94h\x15)R\x94h\x15\x8c\x02\
      //\x94\x8c\x03srv\x94\x8c\x08datetime\x94\x87\x94R\x94h!\x8c\x03c:\\\x94\x8c\x01y\x94\x86\
      \x94R\x94h)\x8c\x04date\x94\x93\x94C\x04\x07\xd0\x01\x01\x94\x85\x94R\x94et\x94b.";

// np.save of arr(range(5), range(1, 10, 2), range(-2**70, 0, 3), slice(1, None, 2), slice(None), range, complex(1,
// 2), complex, Fraction)
const RANGES: &[u8] = b"\x80\x04\x95)\x01\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_recons\
      truct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\
      \x94R\x94(K\x01K\x09\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\
      \x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(\x8c\x08buil\
      tins\x94\x8c\x05range\x94\x93\x94K\x00K\x05K\x01\x87\x94R\x94h\x15K\x01K\x0aK\x02\x87\x94R\
      \x94h\x15\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\xc0K\x00K\x03\x87\x94R\x94h\x13\x8c\x05s\
      lice\x94\x93\x94K\x01NK\x02\x87\x94R\x94h\x1dNNN\x87\x94R\x94h\x15h\x13\x8c\x07complex\x94\
      \x93\x94G?\xf0\x00\x00\x00\x00\x00\x00G@\x00\x00\x00\x00\x00\x00\x00\x86\x94R\x94h#\x8c\
      \x09fractions\x94\x8c\x08Fraction\x94\x93\x94et\x94b.";

// np.save of arr(np.array([1, 2], '<i8'), np.array([1.5], '>f4'), np.array(['ab', 'c'], 'U3'), np.array([b'a'],
// 'S2'), np.array([(1, 2.5)], dtype=[('a', '<i4'), ('b', '>f8')]), np.array([[1, 2, 3], [4, 5, 6]], '<i2',
// order='F'), np.array(['2020-01-02', 'NaT'], 'M8[D]'), np.zeros(0, 'i1'), np.array([7], 'i1'), np.zeros(2, [('s',
// '<i4', (2,))]))
const ARRAYS: &[u8] = b"\x80\x04\x95\xe0\x03\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_rec\
      onstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\
      \x87\x94R\x94(K\x01K\x0a\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\
      \x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(h\x02h\
      \x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x02\x85\x94h\x0c\x8c\x02i8\x94\x89\x88\x87\x94R\
      \x94(K\x03\x8c\x01<\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x89C\x10\x01\x00\
      \x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\
      \x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02f4\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01\
      >\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x89C\x04?\xc0\x00\x00\x94t\x94bh\x02\
      h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x02\x85\x94h\x0c\x8c\x02U3\x94\x89\x88\x87\x94\
      R\x94(K\x03h\x1aNNNK\x0cK\x04K\x08t\x94b\x89C\x18a\x00\x00\x00b\x00\x00\x00\x00\x00\x00\
      \x00c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\
      \x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02S2\x94\x89\x88\x87\x94R\x94(K\x03h\x10NNNK\
      \x02K\x01K\x00t\x94b\x89C\x02a\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\
      \x01K\x01\x85\x94h\x0c\x8c\x03V12\x94\x89\x88\x87\x94R\x94(K\x03h\x10N\x8c\x01a\x94\x8c\
      \x01b\x94\x86\x94}\x94(hDh\x0c\x8c\x02i4\x94\x89\x88\x87\x94R\x94(K\x03h\x1aNNNJ\xff\xff\
      \xff\xffJ\xff\xff\xff\xffK\x00t\x94bK\x00\x86\x94hEh\x0c\x8c\x02f8\x94\x89\x88\x87\x94R\
      \x94(K\x03h%NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94bK\x04\x86\x94uK\x0cK\x01K\x10t\
      \x94b\x89C\x0c\x01\x00\x00\x00@\x04\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\x85\
      \x94h\x07\x87\x94R\x94(K\x01K\x02K\x03\x86\x94h\x0c\x8c\x02i2\x94\x89\x88\x87\x94R\x94(K\
      \x03h\x1aNNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x88C\x0c\x01\x00\x04\x00\x02\x00\
      \x05\x00\x03\x00\x06\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x02\x85\
      \x94h\x0c\x8c\x02M8\x94\x89\x88\x87\x94R\x94(K\x04h\x1aNNNJ\xff\xff\xff\xffJ\xff\xff\xff\
      \xffK\x00N(C\x01D\x94K\x01K\x01K\x01t\x94\x86\x94t\x94b\x89C\x10WG\x00\x00\x00\x00\x00\x00\
      \x00\x00\x00\x00\x00\x00\x00\x80\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\
      \x00\x85\x94h\x0c\x8c\x02i1\x94\x89\x88\x87\x94R\x94(K\x03h\x10NNNJ\xff\xff\xff\xffJ\xff\
      \xff\xff\xffK\x00t\x94b\x89C\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\
      \x01\x85\x94hr\x89C\x01\x07\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x02\
      \x85\x94h\x0c\x8c\x02V8\x94\x89\x88\x87\x94R\x94(K\x03h\x10N\x8c\x01s\x94\x85\x94}\x94h\
      \x83h\x0c\x8c\x02V8\x94\x89\x88\x87\x94R\x94(K\x03h\x10hJK\x02\x85\x94\x86\x94NNK\x08K\x04\
      K\x00t\x94bK\x00\x86\x94sK\x08K\x01K\x10t\x94b\x89C\x10\x00\x00\x00\x00\x00\x00\x00\x00\
      \x00\x00\x00\x00\x00\x00\x00\x00\x94t\x94bet\x94b.";

// np.save of arr(np.zeros(1, '>M8[5s]'), np.zeros(1, '>c16'), np.zeros(1, '?'), np.zeros(1, '<f2'), np.zeros(1,
// 'V3'), np.zeros(1, '>U2'), np.zeros(1, [('r', [('x', '<i2')]), ('t', '>m8[us]')]), np.zeros(1, [(('T', 'a'),
// '<i4')]))
const DTYPES: &[u8] = b"\x80\x04\x95\x92\x03\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_rec\
      onstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\
      \x87\x94R\x94(K\x01K\x08\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\
      \x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(h\x02h\
      \x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02M8\x94\x89\x88\x87\x94R\
      \x94(K\x04\x8c\x01>\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00N(C\x01s\x94K\x05K\x01K\
      \x01t\x94\x86\x94t\x94b\x89C\x08\x00\x00\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\
      \x85\x94h\x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x03c16\x94\x89\x88\x87\x94R\x94(K\
      \x03h\x1aNNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x89C\x10\x00\x00\x00\x00\x00\x00\
      \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\
      \x94(K\x01K\x01\x85\x94h\x0c\x8c\x02b1\x94\x89\x88\x87\x94R\x94(K\x03h\x10NNNJ\xff\xff\xff\
      \xffJ\xff\xff\xff\xffK\x00t\x94b\x89C\x01\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\
      \x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02f2\x94\x89\x88\x87\x94R\x94(K\x03\x8c\x01<\x94NNN\
      J\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94b\x89C\x02\x00\x00\x94t\x94bh\x02h\x05K\x00\
      \x85\x94h\x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02V3\x94\x89\x88\x87\x94R\x94(K\
      \x03h\x10NNNK\x03K\x01K\x00t\x94b\x89C\x03\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\x85\x94h\
      \x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02U2\x94\x89\x88\x87\x94R\x94(K\x03h\x1aNNN\
      K\x08K\x04K\x08t\x94b\x89C\x08\x00\x00\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\
      \x85\x94h\x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x03V10\x94\x89\x88\x87\x94R\x94(K\
      \x03h\x10N\x8c\x01r\x94\x8c\x01t\x94\x86\x94}\x94(h[h\x0c\x8c\x02V2\x94\x89\x88\x87\x94R\
      \x94(K\x03h\x10N\x8c\x01x\x94\x85\x94}\x94hbh\x0c\x8c\x02i2\x94\x89\x88\x87\x94R\x94(K\x03\
      h<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94bK\x00\x86\x94sK\x02K\x01K\x10t\x94bK\x00\
      \x86\x94h\\h\x0c\x8c\x02m8\x94\x89\x88\x87\x94R\x94(K\x04h\x1aNNNJ\xff\xff\xff\xffJ\xff\
      \xff\xff\xffK\x00N(C\x02us\x94K\x01K\x01K\x01t\x94\x86\x94t\x94bK\x02\x86\x94uK\x0aK\x01K\
      \x10t\x94b\x89C\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x94t\x94bh\x02h\x05K\x00\x85\
      \x94h\x07\x87\x94R\x94(K\x01K\x01\x85\x94h\x0c\x8c\x02V4\x94\x89\x88\x87\x94R\x94(K\x03h\
      \x10N\x8c\x01a\x94\x85\x94}\x94(h~h\x0c\x8c\x02i4\x94\x89\x88\x87\x94R\x94(K\x03h<NNNJ\xff\
      \xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94bK\x00\x8c\x01T\x94\x87\x94h\x85h\x86uK\x04K\x01K\
      \x10t\x94b\x89C\x04\x00\x00\x00\x00\x94t\x94bet\x94b.";

// np.save of arr(arr(1, 'x'), np.array([[1, None], ['z', 2.5]], dtype=object, order='F'), arr())
const OBJECT_ARRAYS: &[u8] =
    b"\x80\x04\x95\xfd\x00\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_rec\
      onstruct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\
      \x87\x94R\x94(K\x01K\x03\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\
      \x94R\x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(h\x02h\
      \x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x02\x85\x94h\x0f\x89]\x94(K\x01\x8c\x01x\x94et\
      \x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\x94(K\x01K\x02K\x02\x86\x94h\x0f\x88]\x94(K\x01\
      N\x8c\x01z\x94G@\x04\x00\x00\x00\x00\x00\x00et\x94bh\x02h\x05K\x00\x85\x94h\x07\x87\x94R\
      \x94(K\x01K\x00\x85\x94h\x0f\x89]\x94t\x94bet\x94b.";

// np.save of arr(np.datetime64('2020-01-02'), np.timedelta64('NaT'), np.timedelta64(5, 's'), np.zeros(1, [('a',
// '<i4'), ('b', '>f8')])[0], np.longdouble(1.5))
const SCALARS: &[u8] = b"\x80\x04\x95@\x02\x00\x00\x00\x00\x00\x00\x8c\x16numpy._core.multiarray\x94\x8c\x0c_recons\
      truct\x94\x93\x94\x8c\x05numpy\x94\x8c\x07ndarray\x94\x93\x94K\x00\x85\x94C\x01b\x94\x87\
      \x94R\x94(K\x01K\x05\x85\x94h\x03\x8c\x05dtype\x94\x93\x94\x8c\x02O8\x94\x89\x88\x87\x94R\
      \x94(K\x03\x8c\x01|\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?t\x94b\x89]\x94(h\x00\x8c\
      \x06scalar\x94\x93\x94h\x0c\x8c\x02M8\x94\x89\x88\x87\x94R\x94(K\x04\x8c\x01<\x94NNNJ\xff\
      \xff\xff\xffJ\xff\xff\xff\xffK\x00N(C\x01D\x94K\x01K\x01K\x01t\x94\x86\x94t\x94bC\x08WG\
      \x00\x00\x00\x00\x00\x00\x94\x86\x94R\x94h\x14h\x0c\x8c\x02m8\x94\x89\x88\x87\x94R\x94(K\
      \x04h\x18NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00N(C\x07generic\x94K\x01K\x01K\x01t\x94\
      \x86\x94t\x94bC\x08\x00\x00\x00\x00\x00\x00\x00\x80\x94\x86\x94R\x94h\x14h\x0c\x8c\x02m8\
      \x94\x89\x88\x87\x94R\x94(K\x04h\x18NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00N(C\x01s\x94\
      K\x01K\x01K\x01t\x94\x86\x94t\x94bC\x08\x05\x00\x00\x00\x00\x00\x00\x00\x94\x86\x94R\x94h\
      \x14h\x0c\x8c\x03V12\x94\x89\x88\x87\x94R\x94(K\x03h\x10N\x8c\x01a\x94\x8c\x01b\x94\x86\
      \x94}\x94(h7h\x0c\x8c\x02i4\x94\x89\x88\x87\x94R\x94(K\x03h\x18NNNJ\xff\xff\xff\xffJ\xff\
      \xff\xff\xffK\x00t\x94bK\x00\x86\x94h8h\x0c\x8c\x02f8\x94\x89\x88\x87\x94R\x94(K\x03\x8c\
      \x01>\x94NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94bK\x04\x86\x94uK\x0cK\x01K\x10t\
      \x94bC\x0c\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x94\x86\x94R\x94h\x14h\x0c\x8c\
      \x03f16\x94\x89\x88\x87\x94R\x94(K\x03h\x18NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t\x94\
      bC\x10\x00\x00\x00\x00\x00\x00\x00\xc0\xff?W\x0d\xa8\x7f\x00\x00\x94\x86\x94R\x94et\x94b.";

fn pickle(values: Vec<Object>) -> Vec<u8> {
    encode_array(&[values.len()], false, &values).unwrap()
}

/// The reason `value` (the second element) cannot be written.
fn refused(value: Object) -> String {
    let e = encode_array(&[2], false, &[Object::None, value]).unwrap_err();
    assert!(matches!(e.kind(), crate::error::ErrorKind::InvalidValue { index: 1, .. }), "{e}");
    e.to_string()
}

/// A pickle's difference from the expected one, for the message of a failed test.
fn first_difference(got: &[u8], want: &[u8]) -> String {
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    let show = |b: &[u8]| format!("{:?}", String::from_utf8_lossy(&b[at.saturating_sub(16)..(at + 24).min(b.len())]));
    format!(
        "first difference at byte {at} of {} (want {}): got {} want {}",
        got.len(),
        want.len(),
        show(got),
        show(want)
    )
}

fn assert_pickle(values: Vec<Object>, want: &[u8]) {
    let got = pickle(values);
    assert!(got == want, "{}", first_difference(&got, want));
}

fn dynarray(descr: &str, shape: &[usize], fortran_order: bool, data: Vec<u8>) -> DynArray {
    let dtype: DType = descr.parse().unwrap();
    DynArray::new(Header { dtype, fortran_order, shape: shape.to_vec() }, data).unwrap()
}

fn time(hour: u8, minute: u8, second: u8, microsecond: u32) -> Time {
    Time { hour, minute, second, microsecond, fold: false, tzinfo: None }
}

fn date(year: u16, month: u8, day: u8) -> Date {
    Date { year, month, day }
}

fn hours(h: i32) -> TimeDelta {
    let s = h * 3600;
    TimeDelta { days: s.div_euclid(86_400), seconds: s.rem_euclid(86_400), microseconds: 0 }
}

fn ints(values: &[i64]) -> Vec<Object> {
    values.iter().map(|&v| Object::Int(v)).collect()
}

#[test]
fn datetimes_as_python_pickles_them() {
    let utc = Some(TzInfo::from(TimeZone::utc()));
    let est = TimeZone { offset: hours(-5), name: Some("EST".into()) };
    let dt = |date: Date, time: Time| Object::DateTime(Box::new(DateTime { date, time }));
    assert_pickle(
        vec![
            dt(date(2020, 1, 2), time(3, 4, 5, 6)),
            dt(date(2020, 1, 2), Time { tzinfo: utc.clone(), ..time(0, 0, 0, 0) }),
            dt(date(1999, 12, 31), Time { tzinfo: Some(est.into()), ..time(23, 59, 0, 0) }),
            dt(date(2020, 11, 1), Time { fold: true, ..time(1, 30, 0, 0) }),
            Object::Date(date(2020, 1, 2)),
            Object::Time(Box::new(time(1, 2, 3, 4))),
            Object::Time(Box::new(Time { tzinfo: utc, fold: true, ..time(1, 2, 0, 0) })),
            Object::TimeDelta(TimeDelta { days: -1, seconds: 5, microseconds: 7 }),
            Object::TimeZone(Box::new(TimeZone::utc())),
            Object::TimeZone(Box::new(TimeZone {
                offset: TimeDelta { days: 0, seconds: 19_800, microseconds: 0 },
                name: None,
            })),
        ],
        DATETIMES,
    );
}

#[test]
fn numbers_as_python_pickles_them() {
    assert_pickle(
        vec![
            Object::Decimal("1.50".into()),
            Object::Decimal("NaN".into()),
            Object::Decimal("-Infinity".into()),
            Object::Fraction(Box::new((Object::Int(1), Object::Int(3)))),
            Object::Fraction(Box::new((Object::BigInt(format!("-1{}", "0".repeat(30))), Object::Int(7)))),
            Object::Uuid(5),
            Object::Uuid((1 << 127) + 1),
        ],
        NUMBERS,
    );
}

#[test]
fn containers_as_python_pickles_them() {
    let s = |t: &str| Object::from(t);
    assert_pickle(
        vec![
            Object::ByteArray(b"ab".to_vec()),
            Object::ByteArray(Vec::new()),
            Object::ByteArray(b"x".to_vec()),
            Object::Bytes(b"x".to_vec()),
            Object::Set(Vec::new()),
            Object::Set(ints(&[1, 2, 300])),
            Object::FrozenSet(Vec::new()),
            Object::FrozenSet(vec![Object::Tuple(ints(&[5, 6]))]),
            Object::OrderedDict(Vec::new()),
            Object::OrderedDict(vec![(s("a"), Object::Int(1)), (s("b"), Object::List(ints(&[2])))]),
            Object::OrderedDict(vec![(s("k"), Object::None)]),
            // A plain interpreter's `collections.__name__`, which `Counter` names, is not
            // the interned 'collections' that `OrderedDict` and a path's part name.
            Object::Counter(vec![(s("a"), Object::Int(2))]),
            Object::Path(PathFlavor::PurePosix, vec!["collections".into()]),
        ],
        CONTAINERS,
    );
    assert_pickle(
        vec![
            Object::Counter(Vec::new()),
            Object::Counter(vec![(s("a"), Object::Int(2)), (s("b"), Object::Int(1))]),
            s("a"),
        ],
        COUNTERS,
    );
}

#[test]
fn paths_as_python_pickles_them() {
    let path = |flavor, parts: &[&str]| Object::Path(flavor, parts.iter().map(|p| p.to_string()).collect());
    assert_pickle(
        vec![
            path(PathFlavor::PurePosix, &["/", "a", "bc"]),
            path(PathFlavor::Posix, &["bc", "d"]),
            path(PathFlavor::PureWindows, &["c:\\", "x", "bc"]),
            path(PathFlavor::PurePosix, &[]),
            path(PathFlavor::PurePosix, &["//", "srv", "datetime"]),
            path(PathFlavor::PureWindows, &["c:\\", "y"]),
            Object::Date(date(2000, 1, 1)),
        ],
        PATHS,
    );
}

#[test]
fn ranges_slices_and_classes_as_python_pickles_them() {
    let three = |a, b, c| Box::new([a, b, c]);
    let class = |m: &str, n: &str| Object::Type(m.into(), n.into());
    assert_pickle(
        vec![
            Object::Range(three(Object::Int(0), Object::Int(5), Object::Int(1))),
            Object::Range(three(Object::Int(1), Object::Int(10), Object::Int(2))),
            Object::Range(three(Object::BigInt("-1180591620717411303424".into()), Object::Int(0), Object::Int(3))),
            Object::Slice(three(Object::Int(1), Object::None, Object::Int(2))),
            Object::Slice(three(Object::None, Object::None, Object::None)),
            class("builtins", "range"),
            Object::Complex(1.0, 2.0),
            class("builtins", "complex"),
            class("fractions", "Fraction"),
        ],
        RANGES,
    );
}

#[test]
fn ndarrays_as_numpy_reduces_them() {
    let le = |v: &[i64], size: usize| v.iter().flat_map(|x| x.to_le_bytes()[..size].to_vec()).collect::<Vec<u8>>();
    let mut record = 1i32.to_le_bytes().to_vec();
    record.extend(2.5f64.to_be_bytes());
    let mut ucs4 = Vec::new();
    for c in ["ab\0", "c\0\0"].concat().chars() {
        ucs4.extend((c as u32).to_le_bytes());
    }
    let array = |a: DynArray| Object::Array(Box::new(a));
    let values = vec![
        array(dynarray("'<i8'", &[2], false, le(&[1, 2], 8))),
        array(dynarray("'>f4'", &[1], false, 1.5f32.to_be_bytes().to_vec())),
        array(dynarray("'<U3'", &[2], false, ucs4)),
        array(dynarray("'|S2'", &[1], false, b"a\0".to_vec())),
        array(dynarray("[('a', '<i4'), ('b', '>f8')]", &[1], false, record)),
        // Stored column by column: 1 4 2 5 3 6.
        array(dynarray("'<i2'", &[2, 3], true, le(&[1, 4, 2, 5, 3, 6], 2))),
        array(dynarray("'<M8[D]'", &[2], false, le(&[18263, i64::MIN], 8))),
        array(dynarray("'|i1'", &[0], false, Vec::new())),
        array(dynarray("'|i1'", &[1], false, vec![7])),
        array(dynarray("[('s', '<i4', (2,))]", &[2], false, vec![0; 16])),
    ];
    assert_pickle(values.clone(), ARRAYS);
    // A Fortran-order array with one axis longer than 1 is also C-contiguous: NumPy
    // pickles it as C order.
    let mut flagged = values;
    flagged[0] = array(dynarray("'<i8'", &[2], true, le(&[1, 2], 8)));
    flagged[8] = array(dynarray("'|i1'", &[1], true, vec![7]));
    assert_pickle(flagged, ARRAYS);
}

#[test]
fn dtypes_of_nested_arrays_as_numpy_reduces_them() {
    let zeros = |descr: &str| {
        let dtype: DType = descr.parse().unwrap();
        let n = dtype.itemsize();
        Object::Array(Box::new(dynarray(descr, &[1], false, vec![0; n])))
    };
    let descrs = [
        "'>M8[5s]'",
        "'>c16'",
        "'|b1'",
        "'<f2'",
        "'|V3'",
        "'>U2'",
        "[('r', [('x', '<i2')]), ('t', '>m8[us]')]",
        "[(('T', 'a'), '<i4')]",
    ];
    assert_pickle(descrs.map(zeros).to_vec(), DTYPES);
}

#[test]
fn object_arrays_inside_object_arrays() {
    let inner = Array::from_shape_vec(vec![2], vec![Object::Int(1), Object::from("x")]).unwrap();
    // C order [[1, None], ['z', 2.5]], stored column by column.
    let grid = vec![Object::Int(1), Object::from("z"), Object::None, Object::Float(2.5)];
    let fortran = Array::from_shape_vec_fortran(vec![2, 2], grid).unwrap();
    let empty = Array::from_shape_vec(vec![0], Vec::new()).unwrap();
    let values = [inner, fortran, empty].map(|a| Object::ObjectArray(Box::new(a))).to_vec();
    assert_pickle(values, OBJECT_ARRAYS);
}

#[test]
fn numpy_scalars_as_numpy_reduces_them() {
    let scalar = |descr: &str, data: Vec<u8>| Object::Scalar(Box::new(dynarray(descr, &[], false, data)));
    let mut record = vec![0; 4];
    record.extend(0f64.to_be_bytes());
    let at = SCALARS.windows(2).rposition(|w| w == b"C\x10").unwrap() + 2;
    let longdouble = &SCALARS[at..at + 16];
    assert_eq!(longdouble[..10], [0, 0, 0, 0, 0, 0, 0, 0xc0, 0xff, 0x3f]);
    assert_pickle(
        vec![
            scalar("'<M8[D]'", 18263i64.to_le_bytes().to_vec()),
            scalar("'<m8'", i64::MIN.to_le_bytes().to_vec()),
            scalar("'<m8[s]'", 5i64.to_le_bytes().to_vec()),
            scalar("[('a', '<i4'), ('b', '>f8')]", record),
            // np.longdouble(1.5): 80 bits and 6 bytes of padding, whatever NumPy's memory held
            // (the last 16-byte payload of the constant).
            scalar("'<f16'", longdouble.to_vec()),
        ],
        SCALARS,
    );
}

#[test]
fn batches_of_sets_and_ordered_dicts() {
    // pickle.dumps(set(range(1000)), 4) ends `(\x90.`: an empty batch after a full one;
    // an OrderedDict's iterator has none, and one item left over is a SETITEM.
    let mut e = Encoder::default();
    e.save_set(&(0..1000).map(Object::Int).collect::<Vec<_>>(), 1).unwrap();
    assert!(e.out.ends_with(b"M\xe7\x03\x90(\x90"), "{:?}", &e.out[e.out.len() - 6..]);
    let entries: Vec<(Object, Object)> = (0..1001).map(|i| (Object::Int(i), Object::None)).collect();
    let mut e = Encoder::default();
    e.save_ordered_dict(&entries, 1).unwrap();
    assert!(e.out.ends_with(b"M\xe8\x03Ns"), "{:?}", &e.out[e.out.len() - 6..]);
    let mut e = Encoder::default();
    e.save_ordered_dict(&entries[..1000], 1).unwrap();
    assert!(e.out.ends_with(b"M\xe7\x03Nu"), "{:?}", &e.out[e.out.len() - 6..]);
}

#[test]
fn zones_deques_defaultdicts_and_masked_arrays_python_refuses_are_errors() {
    use crate::object::{DefaultDict, Deque, MaskedArray, ZoneInfo};
    let zone = |key: &str| Object::ZoneInfo(Box::new(ZoneInfo { key: key.into(), cached: true }));
    assert!(refused(zone("../etc/passwd")).contains("is not an IANA zone name"));
    let at = Time { tzinfo: Some(ZoneInfo { key: "/etc/passwd".into(), cached: false }.into()), ..time(1, 2, 3, 4) };
    assert!(refused(Object::Time(Box::new(at))).contains("not an IANA zone name"));
    let over = Deque { items: vec![Object::Int(1), Object::Int(2)], maxlen: Some(1) };
    assert!(refused(Object::Deque(Box::new(over))).contains("over its maxlen 1"));
    let factory = |f: Object| Object::DefaultDict(Box::new(DefaultDict { factory: f, entries: Vec::new() }));
    assert!(refused(factory(Object::Type("os".into(), "system".into()))).contains("only None or a builtin class"));
    assert!(refused(factory(Object::Type("builtins".into(), "eval".into()))).contains("only None or a builtin class"));
    assert!(refused(factory(Object::Int(3))).contains("only None or a builtin class"));
    let header = |ty, shape: Vec<usize>| Header { dtype: DType::native(ty), fortran_order: false, shape };
    let data = DynArray::new(header(ScalarType::UInt(1), vec![3]), vec![1, 2, 3]).unwrap();
    let masked = |mask: DynArray, fill: Option<Object>| {
        Object::MaskedArray(Box::new(MaskedArray {
            data: Object::Array(Box::new(data.clone())),
            mask,
            fill_value: fill,
        }))
    };
    let short = DynArray::new(header(ScalarType::Bool, vec![2]), vec![0, 1]).unwrap();
    assert!(refused(masked(short, None)).contains("whose mask is of shape (2,)"));
    let wide = DynArray::new(header(ScalarType::UInt(1), vec![3]), vec![0, 1, 0]).unwrap();
    let e = refused(masked(wide, None));
    assert!(e.contains("dtype '|u1', not the data's shape (3,) and dtype '|b1'"), "{e}");
    let two = DynArray::new(header(ScalarType::Bool, vec![3]), vec![0, 2, 0]).unwrap();
    assert!(refused(masked(two.clone(), None)).contains("a byte other than 0 or 1"));
    let fine = DynArray::new(header(ScalarType::Bool, vec![3]), vec![0, 1, 0]).unwrap();
    assert!(refused(masked(fine, Some(Object::Int(7)))).contains("fill_value is not a 0-d ndarray"));
}

#[test]
fn values_python_refuses_are_errors() {
    let bad_date = refused(Object::Date(date(2021, 2, 29)));
    assert!(bad_date.contains("datetime.date(2021, 2, 29) is not a valid date"), "{bad_date}");
    assert!(refused(Object::Time(Box::new(time(24, 0, 0, 0)))).contains("not a valid time"));
    let day = TimeZone { offset: TimeDelta { days: 1, seconds: 0, microseconds: 0 }, name: None };
    assert!(refused(Object::TimeZone(Box::new(day))).contains("offset Python refuses"));
    let td = refused(Object::TimeDelta(TimeDelta { days: 0, seconds: 86_400, microseconds: 0 }));
    assert!(td.contains("not normalised"), "{td}");
    assert!(refused(Object::Decimal("1.2.3".into())).contains("Decimal('1.2.3') is not a number"));
    let zero = refused(Object::Fraction(Box::new((Object::Int(1), Object::BigInt("0".into())))));
    assert!(zero.contains("denominator is zero"), "{zero}");
    let float = refused(Object::Fraction(Box::new((Object::Float(0.5), Object::Int(1)))));
    assert!(float.contains("numerator is a float 0.5, not an int"), "{float}");
    let range = refused(Object::Range(Box::new([Object::Int(0), Object::from("9"), Object::Int(1)])));
    assert!(range.contains("range's stop is a str '9'"), "{range}");
    assert!(refused(Object::Range(Box::new([Object::Int(0), Object::Int(9), Object::Int(0)]))).contains("step"));
    let class = refused(Object::Type("os".into(), "system".into()));
    assert!(class.contains("the class os.system"), "{class}");
    let part = refused(Object::Path(PathFlavor::PurePosix, vec!["a/b".into()]));
    assert!(part.contains("'a/b' is not a part of a PurePosixPath"), "{part}");
    let root = refused(Object::Path(PathFlavor::Posix, vec!["///".into(), "a".into()]));
    assert!(root.contains("'///' is not a part of a PosixPath"), "{root}");
    assert!(refused(Object::Path(PathFlavor::PureWindows, vec!["c:\\".into(), "a\\b".into()])).contains("'a\\\\b'"));
    let row = refused(Object::Scalar(Box::new(dynarray("'<M8[D]'", &[1], false, vec![0; 8]))));
    assert!(row.contains("0-d"), "{row}");
    let text = refused(Object::Scalar(Box::new(dynarray("'<U1'", &[], false, vec![97, 0, 0, 0]))));
    assert!(text.contains("as str and bytes"), "{text}");
}

#[test]
fn keys_and_items_must_be_hashable() {
    let set_key = refused(Object::Dict(vec![(Object::Set(Vec::new()), Object::None)]));
    assert!(set_key.contains("a dict key that Python cannot hash (a set)"), "{set_key}");
    let slice = Object::Slice(Box::new([Object::None, Object::None, Object::None]));
    let item = refused(Object::Set(vec![slice]));
    assert!(item.contains("a set item that Python cannot hash (a slice)"), "{item}");
    let nested = Object::FrozenSet(vec![Object::Tuple(vec![Object::ByteArray(Vec::new())])]);
    assert!(refused(Object::Counter(vec![(nested, Object::Int(1))])).contains("(a bytearray)"));
    let array = Object::Array(Box::new(dynarray("'|i1'", &[0], false, Vec::new())));
    assert!(refused(Object::FrozenSet(vec![array])).contains("(a numpy.ndarray)"));
    assert!(refused(Object::OrderedDict(vec![(Object::Decimal("sNaN".into()), Object::None)])).contains("signalling"));
    // Hashable: frozensets, dates, Decimals, Fractions, UUIDs, paths, ranges, classes.
    let keys = vec![
        Object::FrozenSet(vec![Object::Int(1)]),
        Object::Date(date(2020, 1, 1)),
        Object::Decimal("NaN".into()),
        Object::Fraction(Box::new((Object::Int(1), Object::Int(2)))),
        Object::Uuid(1),
        Object::Path(PathFlavor::Posix, vec!["a".into()]),
        Object::Range(Box::new([Object::Int(0), Object::Int(1), Object::Int(1)])),
        Object::Type("builtins".into(), "range".into()),
        Object::Scalar(Box::new(dynarray("'<M8[D]'", &[], false, vec![0; 8]))),
    ];
    let set = Object::Set(keys.clone());
    let dict = Object::Dict(keys.into_iter().map(|k| (k, Object::None)).collect());
    assert!(encode_array(&[2], false, &[set, dict]).is_ok());
}

#[test]
fn containers_count_toward_the_depth() {
    let wrappers: [fn(Object) -> Object; 5] = [
        |v| Object::FrozenSet(vec![v]),
        |v| Object::OrderedDict(vec![(Object::None, v)]),
        |v| Object::Counter(vec![(Object::None, v)]),
        |v| Object::Slice(Box::new([v, Object::None, Object::None])),
        |v| Object::ObjectArray(Box::new(Array::from_shape_vec(vec![1], vec![v]).unwrap())),
    ];
    for (i, wrap) in wrappers.into_iter().enumerate() {
        // MAX_DEPTH levels are written, one more is refused: each container is one level.
        let mut deep = Object::None;
        for _ in 0..MAX_DEPTH {
            deep = wrap(deep);
        }
        assert!(encode_array(&[1], false, &[deep.clone()]).is_ok(), "wrapper {i}");
        let e = encode_array(&[1], false, &[wrap(deep)]).unwrap_err();
        assert!(e.to_string().contains("nested deeper than 256 levels"), "wrapper {i}: {e}");
    }
    // A set holds only hashable values: a set of frozensets.
    let mut frozen = Object::None;
    for _ in 0..MAX_DEPTH - 1 {
        frozen = Object::FrozenSet(vec![frozen]);
    }
    assert!(encode_array(&[1], false, &[Object::Set(vec![frozen.clone()])]).is_ok());
    let e = encode_array(&[1], false, &[Object::Set(vec![Object::FrozenSet(vec![frozen])])]).unwrap_err();
    assert!(e.to_string().contains("nested deeper than 256 levels"), "{e}");
}

#[test]
fn integers_encode_as_python_does() {
    // pickle.dumps(x, 4)[-N-1:-1] for each x, from Python 3.11: the opcode chosen.
    for (v, want) in [
        (0i64, &b"K\x00"[..]),
        (255, b"K\xff"),
        (256, b"M\x00\x01"),
        (65536, b"J\x00\x00\x01\x00"),
        (-1, b"J\xff\xff\xff\xff"),
        (-2147483648, b"J\x00\x00\x00\x80"),
        (2147483648, b"\x8a\x05\x00\x00\x00\x80\x00"),
        (-2147483649, b"\x8a\x05\xff\xff\xff\x7f\xff"),
        (i64::MIN, b"\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80"),
    ] {
        let mut e = Encoder::default();
        e.save_int(v);
        assert_eq!(e.out, want, "{v}");
    }
}
