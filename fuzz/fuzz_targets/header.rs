//! The header codec on arbitrary bytes: the first byte picks the version, the rest is
//! the header text given to `Header::parse` and, decoded as that version decodes it, to
//! `literal::parse`.
//!
//! Checked beyond "never panics": a literal that parses prints (`repr`) to text that
//! parses back to it, and a header that parses encodes (when it fits the version) to
//! bytes that parse back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use npy_core::header::{Header, Version};
use npy_core::literal::{self, ParseOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, text)) = data.split_first() else { return };
    let version = [Version::V1_0, Version::V2_0, Version::V3_0][usize::from(pick % 3)];

    let decoded: String = match version {
        Version::V3_0 => String::from_utf8_lossy(text).into_owned(),
        _ => text.iter().map(|&b| char::from(b)).collect(),
    };
    let mut opts = ParseOptions::new();
    opts.allow_long_suffix(pick & 0x80 != 0).max_depth(64);
    if let Ok(lit) = literal::parse_with(&decoded, &opts) {
        // A top-level bare tuple (`1, 2`) prints with parentheses: one level deeper.
        let again = *ParseOptions::new().max_depth(65);
        let repr = lit.repr();
        match literal::parse_with(&repr, &again) {
            Ok(back) => assert_eq!(back, lit, "repr {repr:?} of a parsed literal parses to another value"),
            Err(e) => panic!("repr {repr:?} of a parsed literal does not parse: {e}"),
        }
    }

    if let Ok(header) = Header::parse(version, text) {
        if let Ok((v, bytes)) = header.encode(Some(version)) {
            assert_eq!(v, version);
            let body = &bytes[version.preamble_len()..];
            match Header::parse(version, body) {
                Ok(back) => assert_eq!(back, header, "encoded header parses to another header"),
                Err(e) => panic!("encoded header {:?} does not parse: {e}", String::from_utf8_lossy(body)),
            }
        }
    }
});
