//! Every scalar prints as NumPy's `str()` prints it: `tests/data/scalar_text.json` (made by
//! NumPy: `cargo xtask golden`) maps each descr to `[hex bytes, str()]` pairs: all 65,536
//! halves, thousands of `f4`/`f8` (random bit patterns, subnormals, powers of ten and the
//! positional/scientific thresholds with their neighbours, short decimals), long doubles
//! (random 80-bit patterns of every encoding, values from doubles and decimal text),
//! complex numbers, datetimes and timedeltas in every unit and some multiples up to the
//! counts where NumPy's arithmetic wraps, bytes, str and void. Each is decoded with
//! `scalar::decode` and printed with `Display`.

use std::collections::BTreeMap;

use npy_core::dtype::Scalar;
use npy_core::scalar;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn every_scalar_prints_as_numpy_prints_it() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/scalar_text.json");
    let text = std::fs::read_to_string(path).unwrap();
    let cases: BTreeMap<String, Vec<(String, String)>> = serde_json::from_str(&text).unwrap();
    let (mut checked, mut problems) = (0, Vec::new());
    for (descr, entries) in &cases {
        let s = Scalar::parse(descr).unwrap_or_else(|e| panic!("{descr}: {e}"));
        for (bytes, numpy) in entries {
            let ours = scalar::decode(s, &hex(bytes)).unwrap_or_else(|e| panic!("{descr} {bytes}: {e}")).to_string();
            if ours != *numpy {
                problems.push(format!("{descr} {bytes}: numpy {numpy:?}, npy {ours:?}"));
            }
            checked += 1;
        }
    }
    let shown = problems.iter().take(40).cloned().collect::<Vec<_>>().join("\n");
    assert!(problems.is_empty(), "{} of {checked} scalars print otherwise than NumPy:\n{shown}", problems.len());
    // The file covers what it says it does.
    assert_eq!(cases["<f2"].len(), 65536);
    assert!(cases["<f4"].len() > 3000 && cases["<f8"].len() > 3000 && cases["<f16"].len() > 2000);
    assert!(cases.keys().filter(|d| d.contains("M8[")).count() >= 23);
    assert_eq!(cases["|S1"].len(), 256);
}
