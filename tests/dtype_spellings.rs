//! Every spelling of a scalar descr is read as NumPy reads it: `tests/data/dtype_spellings.json`
//! (made by NumPy: `cargo xtask golden`) lists, for each one-letter code and kind, with and
//! without a byte order, a size and a datetime unit, the dtype NumPy's `descr_to_dtype`
//! gives (as `dtype_to_descr` writes it back) or that it refuses the spelling.

use npy_core::literal::Literal;
use npy_core::DType;

/// NumPy 2's variable-width `StringDType` (`'T'`): NumPy reads the spelling, but a `.npy`
/// file holds such arrays only as pickled objects (`'|O'`), so npy refuses it with a reason.
fn is_string_dtype(spelling: &str) -> bool {
    spelling.trim_start_matches(['<', '>', '|', '=']) == "T"
}

/// Codes whose size is the platform's C type (`long`, `intp`, `long double`): the fixture
/// is made on 64-bit Linux, where they are 8, 8 and 16 bytes.
fn platform_sized(spelling: &str) -> bool {
    spelling.trim_start_matches(['<', '>', '|', '=']).starts_with(['l', 'L', 'p', 'P', 'n', 'N', 'g', 'G'])
}

#[test]
fn every_scalar_spelling_reads_as_numpy_reads_it() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dtype_spellings.json");
    let text = std::fs::read_to_string(path).unwrap();
    let cases: Vec<(String, Option<String>)> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() > 2000, "{} spellings", cases.len());
    let here_as_there = cfg!(all(target_os = "linux", target_pointer_width = "64"));
    let (mut accepted, mut refused, mut problems) = (0, 0, Vec::new());
    for (spelling, numpy) in &cases {
        if platform_sized(spelling) && !here_as_there {
            continue;
        }
        let ours = DType::from_descr(&Literal::Str(spelling.clone()));
        match (numpy, &ours) {
            (Some(want), Ok(got)) if got.descr() == *want => accepted += 1,
            (None, Err(_)) => refused += 1,
            (Some(_), Err(e)) if is_string_dtype(spelling) => {
                assert!(e.to_string().contains("StringDType"), "{spelling}: {e}");
                refused += 1;
            }
            _ => problems.push(format!(
                "{spelling:?}: numpy {numpy:?}, npy {:?}",
                ours.as_ref().map(DType::descr).map_err(ToString::to_string)
            )),
        }
    }
    assert!(problems.is_empty(), "{} spellings read otherwise than NumPy:\n{}", problems.len(), problems.join("\n"));
    // The cases the fixture is for, by name.
    let read = |s: &str| DType::from_descr(&Literal::Str(s.to_string())).map(|d| d.descr());
    assert_eq!(read(">i").unwrap(), "'>i4'");
    assert_eq!(read("f").unwrap(), "'<f4'");
    assert_eq!(read("a5").unwrap(), "'|S5'");
    assert!(read(">m[us]").is_err() && read("M[D]").is_err());
    assert_eq!(read(">m8[us]").unwrap(), "'>m8[us]'");
    assert!(accepted > 400 && refused > 1500, "{accepted} accepted, {refused} refused");
}
