//! `npy schema --rust` against NumPy's reference corpus: for every record file (and every
//! record member of an `.npz`), the generated structs compile, read the file, and write it
//! back byte for byte.
//!
//! All the generated code goes into one scratch crate (one module per file) under the
//! target directory, built once with the cargo running the tests; its binary reads and
//! rewrites every file, and this test compares the results with the originals.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use npy_core::dtype::{ByteOrder, DType, Field, Record, ScalarType};
use npy_core::header::Header;
use npy_core::literal::Literal;
use npy_core::npz::Reader;
use npy_core::prelude::*;
use npy_core::{DynArray, ReadOptions};

use crate::support::corpus as shared_corpus;
use crate::support::text;

/// Files whose padding bytes hold junk: a derived struct writes zeros there, so only the
/// layout and the field bytes can match.
const JUNK_PADDING: &[&str] = &["struct/aligned_padding_junk.npy", "struct/offsets_gap_junk.npy"];

/// NumPy's corpus (see `support/corpus.rs`).
fn corpus() -> Option<PathBuf> {
    shared_corpus::corpus("corpus schema test")
}

fn options() -> ReadOptions {
    let mut opts = ReadOptions::new();
    opts.max_header_size(1 << 20);
    opts
}

/// What the rewrite through the generated struct must give.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// The original bytes.
    Exact,
    /// The same dtype and shape, and the same bytes in every field (padding is zeroed).
    SameFields,
    /// The same data bytes; the dtype without its titles (non-str titles cannot be spelled
    /// as an attribute, so a derived struct writes none).
    NoTitles,
    /// `npy schema --rust` refuses the dtype (long double), exit code 1.
    Unsupported,
    /// Records without field bytes: the code builds, but its struct is zero-sized, and
    /// npy-core reads no elements of a zero-sized type (a usage error naming it).
    ZeroSized,
}

#[derive(Debug)]
struct Case {
    rel: String,
    path: PathBuf,
    member: Option<String>,
    expect: Expect,
}

fn any_field(dtype: &DType, pred: &dyn Fn(&Field) -> bool) -> bool {
    match dtype {
        DType::Record(r) => r.fields().iter().any(|f| pred(f) || any_field(&f.dtype, pred)),
        DType::SubArray(a) => any_field(a.flat_base(), pred),
        DType::Scalar(_) => false,
    }
}

fn any_scalar(dtype: &DType, pred: &dyn Fn(ScalarType) -> bool) -> bool {
    match dtype {
        DType::Record(r) => r.fields().iter().any(|f| any_scalar(&f.dtype, pred)),
        DType::SubArray(a) => any_scalar(a.flat_base(), pred),
        DType::Scalar(s) => pred(s.ty()),
    }
}

fn expectation(rel: &str, header: &Header) -> Expect {
    let dtype = &header.dtype;
    let unsupported = |t: ScalarType| match t {
        ScalarType::Float(16) | ScalarType::Complex(32) => true,
        ScalarType::DateTime(u) | ScalarType::TimeDelta(u) => u.multiple != 1,
        _ => false,
    };
    if any_scalar(dtype, &unsupported) {
        Expect::Unsupported
    } else if any_field(dtype, &|f| f.title.as_ref().is_some_and(|t| !matches!(t, Literal::Str(_)))) {
        Expect::NoTitles
    } else if !field_mask(dtype).contains(&true) && header.element_count().unwrap() > 0 {
        Expect::ZeroSized
    } else if JUNK_PADDING.contains(&rel) {
        Expect::SameFields
    } else {
        Expect::Exact
    }
}

/// Every record file and record `.npz` member of the corpus, in path order.
fn record_cases(dir: &Path) -> Vec<Case> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let rel = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
        match path.extension().and_then(|e| e.to_str()) {
            Some("npy") => {
                let Ok(reader) = npy_core::NpyReader::from_path_with(&path, &options()) else { continue };
                let dtype = reader.header().dtype.clone();
                if dtype.as_record().is_some() {
                    let expect = expectation(&rel, reader.header());
                    cases.push(Case { rel, path, member: None, expect });
                }
            }
            Some("npz") => {
                let Ok(mut reader) =
                    Reader::from_path_with(&path, npy_core::npz::ReaderOptions::new().read_options(&options()))
                else {
                    continue;
                };
                for m in reader.members().to_vec() {
                    if !reader.is_npy(&m.name).unwrap_or(false) {
                        continue;
                    }
                    let Ok(npy) = reader.npy(&m.name) else { continue };
                    let dtype = npy.header().dtype.clone();
                    if dtype.as_record().is_some() {
                        let rel = format!("{rel}:{}", m.name);
                        let expect = expectation(&rel, npy.header());
                        cases.push(Case { rel, path: path.clone(), member: Some(m.name), expect });
                    }
                }
            }
            _ => {}
        }
    }
    cases
}

fn schema(case: &Case) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_npy"));
    cmd.arg("schema").arg(&case.path).args(["--rust", "--max-header-size", "1000000"]);
    if let Some(m) = &case.member {
        // Members also exercise --name.
        cmd.args(["--member", m, "--name", "MemberRecord"]);
    }
    cmd.output().expect("run npy")
}

/// The first struct of the generated code is the top-level one.
fn top_struct(code: &str) -> &str {
    let at = code.find("pub struct ").expect("a struct") + "pub struct ".len();
    let rest = &code[at..];
    &rest[..rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap()]
}

/// The scratch crate's source: one module per case, each with the generated code and a
/// `rewrite` that reads the file with it and writes it back.
fn scratch_main(modules: &[(usize, &Case, String)]) -> String {
    let mut src = String::from(
        "//! Generated by npy-cli/tests/npy/schema.rs: `npy schema --rust` output for the corpus.\n\
         #![deny(warnings)]\n\
         // Fields are only read through the derive.\n\
         #![allow(dead_code)]\n\n\
         type Rewrite = fn(&std::path::Path, Option<&str>) -> Result<Vec<u8>, npy_core::Error>;\n\n",
    );
    for (i, case, code) in modules {
        let top = top_struct(code);
        let _ = writeln!(src, "/// {}\nmod case_{i} {{", case.rel.escape_debug());
        for line in code.lines() {
            let _ = writeln!(src, "    {line}");
        }
        let _ = writeln!(
            src,
            r#"
    pub fn rewrite(path: &std::path::Path, member: Option<&str>) -> Result<Vec<u8>, npy_core::Error> {{
        let mut opts = npy_core::ReadOptions::new();
        opts.max_header_size(1 << 20);
        let array = match member {{
            None => npy_core::NpyReader::from_path_with(path, &opts)?.read::<npy_core::Array<{top}>>()?,
            Some(name) => {{
                let mut archive_opts = npy_core::npz::ReaderOptions::new();
                archive_opts.read_options(&opts);
                let mut archive = npy_core::npz::Reader::from_path_with(path, &archive_opts)?;
                archive.read::<npy_core::Array<{top}>>(name)?
            }}
        }};
        array.write_npy_to(Vec::new())
    }}
}}
"#
        );
    }
    src.push_str("const CASES: &[(usize, Rewrite)] = &[\n");
    for (i, ..) in modules {
        let _ = writeln!(src, "    ({i}, case_{i}::rewrite),");
    }
    src.push_str(
        r#"];

/// Usage: schema-check LIST OUT, LIST holding one `index\tpath\tmember` line per case.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let list = std::fs::read_to_string(&args[1]).unwrap();
    let out = std::path::Path::new(&args[2]);
    for line in list.lines() {
        let parts: Vec<&str> = line.split('\t').collect();
        let i: usize = parts[0].parse().unwrap();
        let member = Some(parts[2]).filter(|m| !m.is_empty());
        let rewrite = CASES.iter().find(|(k, _)| *k == i).unwrap().1;
        match rewrite(std::path::Path::new(parts[1]), member) {
            Ok(bytes) => {
                std::fs::write(out.join(format!("{i}.npy")), bytes).unwrap();
                println!("{i}\tok");
            }
            Err(e) => println!("{i}\terror: {e}"),
        }
    }
}
"#,
    );
    src
}

/// Writes `path` unless it already holds `contents` (an unchanged file keeps its mtime, so
/// cargo does not rebuild).
fn write_if_changed(path: &Path, contents: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(contents) {
        std::fs::write(path, contents).unwrap();
    }
}

/// Builds the scratch crate and returns its binary.
fn build_scratch(dir: &Path, main_rs: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let core = workspace.join("npy-core");
    let manifest = format!(
        "[package]\nname = \"schema-check\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [dependencies]\nnpy-core = {{ path = {:?}, features = [\"half\", \"num-complex\"] }}\n\
         half = \"2\"\nnum-complex = \"0.4\"\n\n[workspace]\n",
        core.to_str().unwrap()
    );
    write_if_changed(&dir.join("Cargo.toml"), &manifest);
    // The workspace's lock file: the same dependency versions, already downloaded.
    let lock = std::fs::read_to_string(workspace.join("Cargo.lock")).unwrap();
    if !dir.join("Cargo.lock").exists() {
        std::fs::write(dir.join("Cargo.lock"), lock).unwrap();
    }
    write_if_changed(&dir.join("src/main.rs"), main_rs);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // A target directory of its own: trybuild's (`target/tests/trybuild`, the ui tests')
    // checks with `--target` and `--cfg trybuild`, so building there reused 14 of these 45
    // units, the proc macros (48 s instead of 69 s, 2026-11-28), and would queue the three
    // tests on its lock.
    let target = dir.join("target");
    let out = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "the generated code does not build ({}):\n{}",
        dir.join("src/main.rs").display(),
        text(&out.stderr)
    );
    target.join("debug").join(format!("schema-check{}", std::env::consts::EXE_SUFFIX))
}

/// Marks the bytes of one element that belong to fields (not padding).
fn field_bytes(dtype: &DType, base: usize, mask: &mut [bool]) {
    match dtype {
        DType::Scalar(s) => mask[base..base + s.itemsize()].iter_mut().for_each(|b| *b = true),
        DType::SubArray(a) => {
            let size = a.base().itemsize();
            for k in 0..a.len() {
                field_bytes(a.base(), base + k * size, mask);
            }
        }
        DType::Record(r) => r.fields().iter().for_each(|f| field_bytes(&f.dtype, base + f.offset, mask)),
    }
}

/// Which bytes of one element belong to fields.
fn field_mask(dtype: &DType) -> Vec<bool> {
    let mut mask = vec![false; dtype.itemsize()];
    field_bytes(dtype, 0, &mut mask);
    mask
}

fn without_titles(dtype: &DType) -> DType {
    match dtype {
        DType::Record(r) => {
            let fields = r
                .fields()
                .iter()
                .map(|f| Field { title: None, dtype: without_titles(&f.dtype), ..f.clone() })
                .collect();
            DType::Record(Record::new(fields, r.itemsize()).unwrap())
        }
        DType::SubArray(a) => DType::subarray(without_titles(a.base()), a.shape().to_vec()).unwrap(),
        DType::Scalar(_) => dtype.clone(),
    }
}

/// The file (or member) bytes as they are.
fn original_bytes(case: &Case) -> Vec<u8> {
    match &case.member {
        None => std::fs::read(&case.path).unwrap(),
        Some(m) => {
            let mut r = Reader::from_path(&case.path).unwrap();
            r.read_raw(m).unwrap()
        }
    }
}

fn compare(case: &Case, ours: &[u8]) -> Result<(), String> {
    let theirs = original_bytes(case);
    if case.expect == Expect::Exact {
        return if ours == theirs { Ok(()) } else { Err("the rewrite differs from the file".into()) };
    }
    let read = |bytes: &[u8]| {
        npy_core::NpyReader::from_reader_with(bytes, &options())
            .and_then(|r| r.read::<DynArray>())
            .map_err(|e| e.to_string())
    };
    let (a, b): (DynArray, DynArray) = (read(ours)?, read(&theirs)?);
    if (a.shape(), a.fortran_order()) != (b.shape(), b.fortran_order()) {
        return Err(format!("shape {:?} written, {:?} read", a.shape(), b.shape()));
    }
    match case.expect {
        Expect::SameFields => {
            if a.dtype() != b.dtype() {
                return Err(format!("dtype {} written, {} read", a.dtype(), b.dtype()));
            }
            let size = b.dtype().itemsize();
            let mask = field_mask(b.dtype());
            let differs = a
                .data()
                .chunks(size.max(1))
                .zip(b.data().chunks(size.max(1)))
                .any(|(x, y)| x.iter().zip(y).zip(&mask).any(|((p, q), &m)| m && p != q));
            if differs || a.data().len() != b.data().len() {
                return Err("field bytes differ".into());
            }
        }
        Expect::NoTitles => {
            if a.dtype() != &without_titles(b.dtype()) {
                return Err(format!("dtype {} written, {} read", a.dtype(), b.dtype()));
            }
            if a.data() != b.data() {
                return Err("data bytes differ".into());
            }
        }
        Expect::Exact | Expect::Unsupported | Expect::ZeroSized => unreachable!(),
    }
    Ok(())
}

/// Dtypes the corpus lacks, written here: keywords and clashing names, shared and
/// differently ordered nested records, an aligned record holding a packed one, a record of
/// padding only, generic datetimes, zero-length fields, gaps with mixed byte order.
const SYNTHETIC: &[(&str, &str)] = &[
    ("keywords", "[('type', '<i4'), ('self', '<i2'), ('Self', '|u1'), ('_', '|u1'), ('1x', '|u1'), ('a b', '<f4'), ('a_b', '|i1')]"),
    ("shared_nested", "[('a', [('x', '<i4')]), ('b', [('x', '<i4')]), ('c', [('x', '>i4')])]"),
    ("aligned_holds_packed", "[('p', '|u1'), ('', '|V7'), ('q', [('x', '<f8'), ('y', '|u1')]), ('', '|V7'), ('r', '|u1'), ('', '|V7')]"),
    ("padding_only", "[('', '|V8')]"),
    ("times_and_strings", "[('t', '<M8'), ('d', '>m8[D]'), ('u', '>U3', (2,)), ('b', '|b1', (2, 2)), ('v', '|V3')]"),
    ("big_with_little_nested", "[('a', '>i4'), ('n', [('x', '<f8')]), ('s', '|S2')]"),
    ("titled_subarray_of_records", "[(('Title here', 'a'), '<i4'), ('b', [('c', '>i2')], (2, 3))]"),
    ("gaps_mixed_order", "[('', '|V2'), ('c', '>c8'), ('', '|V1'), ('h', '<f2'), ('', '|V3')]"),
    ("zero_length_fields", "[('a', '<i4', (0,)), ('b', '<f8'), ('e', [])]"),
];

/// Fills every field byte with a varied, valid value (bools 0/1, valid chars).
fn fill(dtype: &DType, at: usize, data: &mut [u8], k: &mut u8) {
    match dtype {
        DType::Scalar(s) => {
            match s.ty() {
                ScalarType::Bool => data[at] = *k % 2,
                ScalarType::Unicode(len) => {
                    for j in 0..len {
                        let c = 0x41 + (u32::from(*k) + j as u32) % 26;
                        let b = if s.order() == ByteOrder::Big { c.to_be_bytes() } else { c.to_le_bytes() };
                        data[at + 4 * j..at + 4 * j + 4].copy_from_slice(&b);
                    }
                }
                _ => (0..s.itemsize()).for_each(|j| data[at + j] = k.wrapping_add(j as u8 * 7) | 1),
            }
            *k = k.wrapping_add(37);
        }
        DType::SubArray(a) => (0..a.len()).for_each(|j| fill(a.base(), at + j * a.base().itemsize(), data, k)),
        DType::Record(r) => r.fields().iter().for_each(|f| fill(&f.dtype, at + f.offset, data, k)),
    }
}

fn synthetic_cases(dir: &Path) -> Vec<Case> {
    SYNTHETIC
        .iter()
        .map(|(name, descr)| {
            let dtype: DType = descr.parse().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (n, size) = (3, dtype.itemsize());
            let mut data = vec![0u8; n * size];
            let mut k = 1;
            (0..n).for_each(|i| fill(&dtype, i * size, &mut data, &mut k));
            let path = dir.join(format!("{name}.npy"));
            let header = Header::new(dtype, vec![n]);
            let rel = format!("synthetic/{name}.npy");
            let expect = expectation(&rel, &header);
            DynArray::new(header, data).unwrap().write_npy(&path).unwrap();
            Case { rel, path, member: None, expect }
        })
        .collect()
}

#[test]
fn generated_structs_read_and_rewrite_every_corpus_record_file() {
    let synthetic_dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    if let Some(dir) = corpus() {
        cases = record_cases(&dir);
        // The public corpus's record files: record/ and struct/ (and a few elsewhere), and
        // the record members of its archives.
        let count = |prefix: &str| cases.iter().filter(|c| c.rel.starts_with(prefix)).count();
        let names: Vec<&String> = cases.iter().map(|c| &c.rel).collect();
        assert!(count("record/") >= 9 && count("struct/") >= 23, "{names:#?}");
        assert!(cases.iter().any(|c| c.member.is_some()));
        assert!(cases.iter().any(|c| c.expect == Expect::Unsupported));
    }
    cases.extend(synthetic_cases(synthetic_dir.path()));

    let mut failures = Vec::new();
    let mut modules = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let out = schema(case);
        if case.expect == Expect::Unsupported {
            let err = text(&out.stderr);
            let clear =
                err.starts_with("error: unsupported dtype") && err.contains("long double") && err.lines().count() == 1;
            if out.status.code() != Some(1) || !out.stdout.is_empty() || !clear {
                failures.push(format!(
                    "{}: expected a one-line 'long double' error and exit 1, got {:?}: {err}",
                    case.rel, out.status
                ));
            }
            continue;
        }
        if !out.status.success() {
            failures.push(format!("{}: npy schema failed: {}", case.rel, text(&out.stderr)));
            continue;
        }
        modules.push((i, case, text(&out.stdout)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("schema-test");
    let binary = build_scratch(&scratch, &scratch_main(&modules));
    let out_dir = tempfile::tempdir().unwrap();
    let mut list = String::new();
    for (i, case, _) in &modules {
        let _ = writeln!(list, "{i}\t{}\t{}", case.path.display(), case.member.as_deref().unwrap_or(""));
    }
    let list_path = out_dir.path().join("cases.txt");
    std::fs::write(&list_path, list).unwrap();
    let run = Command::new(&binary).arg(&list_path).arg(out_dir.path()).output().expect("run schema-check");
    assert!(run.status.success(), "{}", text(&run.stderr));
    let results: BTreeMap<usize, String> = text(&run.stdout)
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(i, r)| (i.parse().unwrap(), r.to_string()))
        .collect();
    for (i, case, _) in &modules {
        let result = match results.get(i).map(String::as_str) {
            Some(err) if case.expect == Expect::ZeroSized => {
                if err.contains("zero-sized type") {
                    Ok(())
                } else {
                    Err(format!("expected npy-core's zero-sized type error, got {err}"))
                }
            }
            Some("ok") => compare(case, &std::fs::read(out_dir.path().join(format!("{i}.npy"))).unwrap()),
            Some(err) => Err(err.to_string()),
            None => Err("not run".to_string()),
        };
        if let Err(e) = result {
            failures.push(format!("{} ({:?}, module case_{i}): {e}", case.rel, case.expect));
        }
    }
    assert!(failures.is_empty(), "{} of {} failed:\n{}", failures.len(), modules.len(), failures.join("\n"));
    eprintln!(
        "{} record files (corpus and synthetic) read and rewritten through generated structs ({} exactly); {} refused",
        modules.len(),
        modules.iter().filter(|(_, c, _)| c.expect == Expect::Exact).count(),
        cases.len() - modules.len()
    );
}

#[test]
fn schema_tree_and_errors() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/record/trace_aligned.npy");
    let out = Command::new(env!("CARGO_BIN_EXE_npy")).arg("schema").arg(&fixture).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tree = text(&out.stdout);
    for want in ["aligned (C layout)", "receiver", "    x ", "(padding)", "@48", "<f4 (8,)"] {
        assert!(tree.contains(want), "missing {want:?} in\n{tree}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_npy"))
        .arg("schema")
        .arg(&fixture)
        .args(["--rust", "--name", "Trace"])
        .output()
        .unwrap();
    let code = text(&out.stdout);
    assert!(code.contains("#[npy(align)]\n#[repr(C)]\npub struct Trace {"), "{code}");
    for args in [vec!["--rust", "--name", "not an ident"], vec!["--member", "x"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_npy")).arg("schema").arg(&fixture).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: a usage error");
        let err = text(&out.stderr);
        assert!(err.starts_with("error:") && err.lines().count() == 1, "{args:?}: {err}");
    }
}
