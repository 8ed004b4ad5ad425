//! `cargo xtask tidy`: what review keeps catching, checked on the workspace's Rust sources:
//! every crate the root `Cargo.toml` lists as a workspace member (xtask included), and
//! the root package's `tests`, `benches` and `examples` and the `fuzz` targets (`target`
//! and hidden directories are skipped). In the spirit of rust-analyzer's tidy test: plain
//! text checks, std only, on sources split by a small lexer ([`crate::lex`]) into code and
//! comments (string and char literals blanked), so nothing inside a string or a comment
//! counts.
//!
//! 1. **`unsafe` is explained.** Every `unsafe` block and `unsafe impl` has a `// SAFETY:`
//!    comment: in the comment lines right above it, or above the start of its statement
//!    (at most [`STATEMENT_LINES`] lines up, not past the end of an earlier statement or
//!    block), or at the end of the line before it, or on its own line. Every `unsafe fn`
//!    and `unsafe trait` has a `# Safety` section in its doc comment, but for a method of
//!    a trait impl, whose contract is the trait's. Not checked in the `src` of a crate whose
//!    root forbids `unsafe_code` (check 4): the compiler keeps unsafe code out of those, so
//!    an `unsafe` there is a token in a code template (npy-derive's `quote!`).
//! 2. **No leftovers.** No `todo!`, `dbg!` or `unimplemented!` in code, tests included.
//! 3. **Files one can read in one go.** No file in a crate's `src` has more than
//!    [`MAX_CODE_LINES`] lines before its trailing `#[cfg(test)] mod` (its whole length if it
//!    has none; files named `tests.rs` or under a `tests` directory are test code).
//! 4. **Crates without unsafe say so.** The root (`src/lib.rs`, `src/main.rs`) of every
//!    crate with no `unsafe` block, impl, fn or trait in its `src` starts with
//!    `#![forbid(unsafe_code)]` among its inner attributes.
//! 5. **Layers, no circles.** In every crate, no two modules import each other, directly
//!    or through others, nor two modules of one folder (`npz/write.rs` and
//!    `npz/workers.rs`), and no module names an item the crate root defines
//!    ([`crate::layers`]).
//! 6. **`_with` takes the options.** In the non-test code of every crate's `src`, a `pub fn`
//!    with a parameter of an options type is named `…_with` and takes its options last,
//!    and one named `…_with` has such a parameter (see [`check_options_calls`] for what
//!    counts), so that `_with` means "with these options", and only that, across the
//!    workspace.
//! 7. **The unsafe count is true.** ARCHITECTURE.md's count of npy-core's `unsafe` blocks,
//!    `unsafe fn`s and `unsafe impl`s (its sentence "In npy-core (N `unsafe` blocks, M
//!    `unsafe fn`s and K `unsafe impl`s") is the count in npy-core's `src`.
//! 8. **Every program is provisioned.** A program a step, a test, a check script or the
//!    bench starts by name is one `xtask/src/provision.rs` lists ([`crate::launched`]).
//!
//! 9. **The map is true.** ARCHITECTURE.md's section of each crate names every module in
//!    it, and what it says happens in one place (npy-store's ranged reads in `Source`,
//!    npy-cli's errors printed by `report`, ...) happens nowhere else ([`crate::claims`]).
//!
//! Each problem is printed as `path:line: what is wrong`; any problem fails the command.

use std::fs;
use std::path::{Path, PathBuf};

use crate::lex::{code_lines, lex, tokens, Line, Token};
use crate::project::{self, Result};

/// The most lines of non-test code a file in a crate's `src` may have.
///
/// One concern should fit in one careful read. The largest file that is one concern, the
/// pure literal codec `literal.rs`, is about 1,050 lines of code; 1,100 leaves it room to
/// grow a little and flags a file that has started to hold a second concern.
pub const MAX_CODE_LINES: usize = 1100;

/// How many code lines above an `unsafe` its statement may start (`let x =` and a line
/// break, attributes) with the `// SAFETY:` comment above that.
pub const STATEMENT_LINES: usize = 3;

/// The directories (under the workspace root) whose `.rs` files are checked beside the
/// workspace members': the root package's targets, and the fuzz crate (outside the
/// workspace).
const OTHER_DIRS: &[&str] = &["tests", "benches", "examples", "fuzz"];

/// The files of a crate root, under its directory.
const ROOTS: &[&str] = &["src/lib.rs", "src/main.rs"];

/// Macros that must not be left in code.
const LEFTOVER_MACROS: &[&str] = &["todo", "dbg", "unimplemented"];

/// The suffix of an options type's name (`ReadOptions`, `ConvertOptions`, ...).
const OPTIONS_SUFFIX: &str = "Options";

/// Types taken as options beside those named `…Options`: npz's `Compression`, which
/// `npz::Writer::add_with` and its kin take as their options.
const OPTIONS_TYPES: &[&str] = &["Compression"];

/// One problem: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Line number, from 1.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

/// Runs every check on the workspace; fails if any finds a problem.
pub fn run() -> Result<()> {
    let root = project::root();
    let crates = project::members()?;
    let mut paths = Vec::new();
    for dir in crates.iter().map(String::as_str).chain(OTHER_DIRS.iter().copied()) {
        walk(&root.join(dir), &mut paths).map_err(|e| format!("cannot list {dir}: {e}"))?;
    }
    paths.sort();
    paths.dedup();
    let mut files: Vec<(String, Vec<Line>)> = Vec::new();
    for path in &paths {
        files.push((relative(&root, path), lex(&read(path)?)));
    }

    let mut problems: Vec<String> = Vec::new();
    let report = |problems: &mut Vec<String>, rel: &str, found: Vec<Problem>| {
        problems.extend(found.into_iter().map(|p| format!("{rel}:{}: {}", p.line, p.what)));
    };

    // Check 4 first: which crates' sources cannot hold unsafe code.
    let mut safe_src_dirs = Vec::new();
    for krate in &crates {
        let src = format!("{krate}/src/");
        let roots: Vec<&(String, Vec<Line>)> =
            files.iter().filter(|(rel, _)| ROOTS.iter().any(|r| *rel == format!("{krate}/{r}"))).collect();
        if roots.is_empty() {
            problems.push(format!("{krate}: no src/lib.rs or src/main.rs"));
            continue;
        }
        let forbidden: Vec<Vec<Problem>> = roots.iter().map(|(_, lines)| check_forbid_unsafe(lines)).collect();
        if forbidden.iter().all(Vec::is_empty) {
            safe_src_dirs.push(src);
        } else if !files.iter().any(|(rel, lines)| rel.starts_with(&src) && has_unsafe(lines)) {
            for ((rel, _), found) in roots.into_iter().zip(forbidden) {
                report(&mut problems, rel, found);
            }
        }
    }

    let mut capped = 0;
    for (rel, lines) in &files {
        if !safe_src_dirs.iter().any(|dir| rel.starts_with(dir.as_str())) {
            report(&mut problems, rel, check_unsafe(lines));
        }
        report(&mut problems, rel, check_leftovers(lines));
        let in_src = crates.iter().any(|krate| rel.starts_with(&format!("{krate}/src/")));
        if in_src && !is_test_file(rel) {
            report(&mut problems, rel, check_options_calls(lines));
            capped += 1;
            let n = code_lines(lines);
            if n > MAX_CODE_LINES {
                problems.push(format!(
                    "{rel}: {n} lines of non-test code, over the cap of {MAX_CODE_LINES} (split it along its seams)"
                ));
            }
        }
    }

    for krate in &crates {
        let src = format!("{krate}/src/");
        let crate_files: Vec<(String, Vec<Line>)> = files
            .iter()
            .filter_map(|(rel, lines)| Some((rel.strip_prefix(&src)?.to_string(), lines.clone())))
            .collect();
        problems.extend(crate::layers::check(krate, &crate_files));
    }

    let core: Vec<&[Line]> =
        files.iter().filter(|(rel, _)| rel.starts_with("npy-core/src/")).map(|(_, l)| l.as_slice()).collect();
    problems.extend(check_unsafe_count(&read(&root.join("ARCHITECTURE.md"))?, &core));
    problems.extend(crate::launched::check(&root)?);
    problems.extend(crate::claims::check(&root)?);

    for problem in &problems {
        println!("{problem}");
    }
    let summary = format!(
        "{} files checked ({capped} in the src of {} crates against the {MAX_CODE_LINES}-line cap)",
        files.len(),
        crates.len()
    );
    if problems.is_empty() {
        println!("tidy: {summary}, no problems");
        Ok(())
    } else {
        Err(format!("tidy: {} problems in {summary}", problems.len()))
    }
}

/// Collects the `.rs` files under `dir`, skipping `target` and hidden directories.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(&path, out)?;
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// `path` relative to `root`, with `/`.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Whether a file under a crate's `src` is all test code by its name.
fn is_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.contains("/tests/")
}

// ---------------------------------------------------------------------------------------
// The checks, each on a lexed file.

/// Check 1: `// SAFETY:` before `unsafe` blocks and impls, `# Safety` on `unsafe fn` and
/// `unsafe trait`.
pub fn check_unsafe(lines: &[Line]) -> Vec<Problem> {
    let toks = tokens(lines);
    let attrs = attribute_lines(lines, &toks);
    let mut problems = Vec::new();
    // For each open `{`: is it the body of a trait impl (`impl .. for ..`)?
    let mut blocks: Vec<bool> = Vec::new();
    // The tokens since the last `{`, `}` or `;` (outside brackets, not the one in
    // `[T; N]`): the head of what comes next.
    let mut head_start = 0;
    // Open `(` and `[`.
    let mut nested = 0usize;
    for (i, tok) in toks.iter().enumerate() {
        match tok.text {
            "(" | "[" => nested += 1,
            ")" | "]" => nested = nested.saturating_sub(1),
            "{" => {
                blocks.push(is_trait_impl_head(&toks[head_start..i]));
                head_start = i + 1;
            }
            "}" => {
                blocks.pop();
                head_start = i + 1;
            }
            ";" if nested == 0 => head_start = i + 1,
            "unsafe" => {
                let line = tok.line;
                match unsafe_kind(&toks[i + 1..]) {
                    Some(Unsafe::Block) if !has_safety_comment(lines, &attrs, line) => problems.push(Problem {
                        line: line + 1,
                        what: "unsafe block without a `// SAFETY:` comment before it".into(),
                    }),
                    Some(Unsafe::Impl) if !has_safety_comment(lines, &attrs, line) => problems.push(Problem {
                        line: line + 1,
                        what: "unsafe impl without a `// SAFETY:` comment before it".into(),
                    }),
                    Some(Unsafe::Fn) if blocks.last() != Some(&true) && !has_safety_doc(lines, &attrs, line) => {
                        problems.push(Problem {
                            line: line + 1,
                            what: "unsafe fn without a `# Safety` section in its doc comment".into(),
                        })
                    }
                    Some(Unsafe::Trait) if !has_safety_doc(lines, &attrs, line) => problems.push(Problem {
                        line: line + 1,
                        what: "unsafe trait without a `# Safety` section in its doc comment".into(),
                    }),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    problems
}

/// Whether `lines` hold unsafe code: an `unsafe` block, impl, fn or trait (in test code
/// too, which a crate's `forbid` covers as well).
fn has_unsafe(lines: &[Line]) -> bool {
    let toks = tokens(lines);
    toks.iter().enumerate().any(|(i, t)| t.text == "unsafe" && unsafe_kind(&toks[i + 1..]).is_some())
}

/// How many `unsafe` blocks, fns and impls `files` hold.
fn unsafe_counts(files: &[&[Line]]) -> [usize; 3] {
    let mut counts = [0; 3];
    for lines in files {
        let toks = tokens(lines);
        for (i, t) in toks.iter().enumerate() {
            match (t.text == "unsafe").then(|| unsafe_kind(&toks[i + 1..])).flatten() {
                Some(Unsafe::Block) => counts[0] += 1,
                Some(Unsafe::Fn) => counts[1] += 1,
                Some(Unsafe::Impl) => counts[2] += 1,
                _ => {}
            }
        }
    }
    counts
}

/// The phrases of ARCHITECTURE.md's unsafe count, each after its number.
const COUNTED: [&str; 3] = [" `unsafe` blocks", " `unsafe fn`s", " `unsafe impl`s"];

/// Check 7: `architecture`'s count of npy-core's unsafe code (`files`), against the code.
fn check_unsafe_count(architecture: &str, files: &[&[Line]]) -> Vec<String> {
    let Some(at) = architecture.find("In npy-core (") else {
        return vec![
            "ARCHITECTURE.md: no count of npy-core's unsafe code (\"In npy-core (N `unsafe` blocks, ...\")".into()
        ];
    };
    let said = &architecture[at..];
    let counts = unsafe_counts(files);
    let mut problems = Vec::new();
    for (phrase, count) in COUNTED.iter().zip(counts) {
        let number = said.find(phrase).and_then(|end| {
            let digits = said[..end].rsplit(|c: char| !c.is_ascii_digit()).next()?;
            digits.parse::<usize>().ok()
        });
        match number {
            Some(n) if n == count => {}
            Some(n) => problems.push(format!("ARCHITECTURE.md: says {n}{phrase} in npy-core; its src has {count}")),
            None => problems.push(format!("ARCHITECTURE.md: its unsafe count has no number of{phrase}")),
        }
    }
    problems
}

/// What an `unsafe` keyword starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unsafe {
    Block,
    Impl,
    Fn,
    Trait,
}

/// What the `unsafe` before `after` starts; `None` for what this check leaves alone
/// (`unsafe fn(..)` pointer types, `#[unsafe(..)]` attributes).
fn unsafe_kind(after: &[Token<'_>]) -> Option<Unsafe> {
    let mut rest = after.iter().map(|t| t.text);
    let mut next = rest.next()?;
    if next == "extern" {
        // `unsafe extern "C" fn` or an `unsafe extern "C" { .. }` block: skip the ABI.
        next = rest.find(|t| *t != "\"")?;
    }
    match next {
        "{" => Some(Unsafe::Block),
        "impl" => Some(Unsafe::Impl),
        "trait" | "auto" => Some(Unsafe::Trait),
        "fn" => (rest.next() != Some("(")).then_some(Unsafe::Fn),
        _ => None,
    }
}

/// Whether the tokens before a `{` open a trait impl: `impl .. for ..`.
fn is_trait_impl_head(head: &[Token<'_>]) -> bool {
    let mut rest = head.iter().skip_while(|t| t.text != "impl");
    rest.next().is_some() && rest.any(|t| t.text == "for")
}

/// Which lines hold attributes only (`#[..]` or `#![..]`, however many lines one spans).
fn attribute_lines(lines: &[Line], toks: &[Token<'_>]) -> Vec<bool> {
    let mut attr = vec![false; lines.len()];
    let mut i = 0;
    while i < toks.len() {
        let first_on_line = i == 0 || toks[i - 1].line != toks[i].line;
        let open = match (toks.get(i + 1).map(|t| t.text), toks.get(i + 2).map(|t| t.text)) {
            (Some("["), _) => Some(i + 1),
            (Some("!"), Some("[")) => Some(i + 2),
            _ => None,
        };
        if let (true, "#", Some(close)) = (first_on_line, toks[i].text, open.and_then(|o| matching(toks, o))) {
            if toks.get(close + 1).is_none_or(|t| t.line != toks[close].line) {
                attr[toks[i].line..=toks[close].line].fill(true);
            }
            i = close + 1;
        } else {
            i += 1;
        }
    }
    attr
}

/// The index of the `]` that closes the `[` at `open`.
fn matching(toks: &[Token<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, tok) in toks.iter().enumerate().skip(open) {
        match tok.text {
            "[" => depth += 1,
            "]" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the `unsafe` on line `at` (from 0) has a `// SAFETY:` comment: on its line, in
/// the comment lines right above, or above its statement's first line, at most
/// [`STATEMENT_LINES`] code lines up (attributes not counted); a code line that ends a
/// statement or opens or closes a block ends the search, but its own end-of-line comment
/// still counts.
fn has_safety_comment(lines: &[Line], attrs: &[bool], at: usize) -> bool {
    const MARK: &str = "SAFETY:";
    if lines[at].comment.contains(MARK) {
        return true;
    }
    let mut code_lines = 0;
    for (line, attr) in lines[..at].iter().zip(attrs).rev() {
        if line.is_blank() {
            return false;
        }
        if line.comment.contains(MARK) {
            return true;
        }
        if line.has_code() && !attr {
            code_lines += 1;
            let ends = line.code.trim_end().ends_with([';', '{', '}', ',']);
            if ends || code_lines > STATEMENT_LINES {
                return false;
            }
        }
    }
    false
}

/// Whether the item on line `at` (from 0) has a doc comment with a `# Safety` heading,
/// looking up over its doc comment and attributes.
fn has_safety_doc(lines: &[Line], attrs: &[bool], at: usize) -> bool {
    for (line, attr) in lines[..at].iter().zip(attrs).rev() {
        if line.is_blank() || (line.has_code() && !attr) {
            return false;
        }
        let comment = line.comment.trim_start();
        let doc = comment.strip_prefix("///").or_else(|| comment.strip_prefix("/**"));
        if doc.is_some_and(|text| text.trim_start().starts_with("# Safety")) {
            return true;
        }
    }
    false
}

/// Check 2: no `todo!`, `dbg!`, `unimplemented!` in code.
pub fn check_leftovers(lines: &[Line]) -> Vec<Problem> {
    let toks = tokens(lines);
    toks.windows(2)
        .filter(|pair| pair[1].text == "!" && LEFTOVER_MACROS.contains(&pair[0].text))
        .map(|pair| Problem { line: pair[0].line + 1, what: format!("`{}!` left in code", pair[0].text) })
        .collect()
}

/// Check 4: the crate root `lines` has `#![forbid(unsafe_code)]` among the inner attributes
/// it starts with.
pub fn check_forbid_unsafe(lines: &[Line]) -> Vec<Problem> {
    let toks = tokens(lines);
    let mut i = 0;
    while toks.get(i..i + 3).is_some_and(|t| t[0].text == "#" && t[1].text == "!" && t[2].text == "[") {
        let Some(end) = matching(&toks, i + 2) else { break };
        let attr: Vec<&str> = toks[i + 3..end].iter().map(|t| t.text).collect();
        if attr.first() == Some(&"forbid") && attr.contains(&"unsafe_code") {
            return Vec::new();
        }
        i = end + 1;
    }
    let line = toks.get(i).map_or(1, |t| t.line + 1);
    vec![Problem { line, what: "crate root without `#![forbid(unsafe_code)]` among its first inner attributes".into() }]
}

/// Check 6: a `pub fn` (free, or a method of an inherent impl) with a parameter of an
/// options type is named `…_with` and has an options type last, and a `pub fn …_with` has
/// one (a closure is no
/// options: `fill_with(f)` is a name for options it does not take), in the file's
/// non-test code (before its trailing `#[cfg(test)] mod`).
///
/// An *options type* is a type whose last path segment ends in [`OPTIONS_SUFFIX`]
/// (`ReadOptions`, `npy_arrow::ConvertOptions`) or is one of [`OPTIONS_TYPES`]
/// (`Compression`), taken by value or by reference (`&`, `&mut`, `&'a`); a type that only
/// holds one (`Option<Compression>`, `Vec<ReadOptions>`) is data, not this call's
/// settings. Left alone:
/// - setters, methods returning `&mut Self` (`ReaderOptions::read_options(&ReadOptions)`,
///   `Writer::compression(Compression)`): they set a setting, and take no options;
/// - methods of trait impls and trait declarations (no `pub` of their own): their names
///   are the trait's, such as DataFusion's `FileFormat` methods, or mirror a family the
///   users know (`register_npy` beside DataFusion's `register_parquet(name, path, options)`);
/// - `pub(crate)` and other restricted functions, which are no one else's spelling.
pub fn check_options_calls(lines: &[Line]) -> Vec<Problem> {
    let end = code_lines(lines);
    let toks: Vec<Token<'_>> = tokens(lines).into_iter().filter(|t| t.line < end).collect();
    let mut problems = Vec::new();
    for (i, tok) in toks.iter().enumerate() {
        if tok.text != "pub" {
            continue;
        }
        // `pub` then qualifiers (`const`, `async`, `unsafe`, `extern "C"`), then `fn`.
        let mut at = i + 1;
        while toks.get(at).is_some_and(|t| matches!(t.text, "const" | "async" | "unsafe" | "extern" | "\"")) {
            at += 1;
        }
        if toks.get(at).map(|t| t.text) != Some("fn") {
            continue;
        }
        let Some(name) = toks.get(at + 1) else { continue };
        let Some(open) = (at + 2..toks.len()).find(|&k| toks[k].text == "(") else { continue };
        let Some(close) = closing(&toks, open) else { continue };
        let setter = toks[close + 1..]
            .iter()
            .take_while(|t| !matches!(t.text, "{" | ";" | "where"))
            .map(|t| t.text)
            .collect::<Vec<_>>()
            .ends_with(&["-", ">", "&", "mut", "Self"]);
        if setter {
            continue;
        }
        let params = parameters(&toks[open + 1..close]);
        let options = params.iter().copied().find_map(options_type);
        // Trailing `,` of a parameter list split over lines: no parameter.
        let last = params.iter().rev().find(|p| !p.is_empty()).copied().and_then(options_type);
        let what = match (options, name.text.ends_with("_with")) {
            (Some(ty), false) => format!("`pub fn {}` takes options (`{ty}`) but is not named `…_with`", name.text),
            (None, true) => format!("`pub fn {}` is named `…_with` but takes no options", name.text),
            (Some(ty), true) if last.is_none() => {
                format!("`pub fn {}` takes its options (`{ty}`) before its last parameter", name.text)
            }
            _ => continue,
        };
        problems.push(Problem { line: name.line + 1, what });
    }
    problems
}

/// The index of the `)` that closes the `(` at `open`.
fn closing(toks: &[Token<'_>], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.text {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// A parameter list's parameters, split at its top-level commas (not those inside `<>`,
/// `()`, `[]` or `{}`; the `>` of `->` closes nothing).
fn parameters<'t, 'a>(toks: &'t [Token<'a>]) -> Vec<&'t [Token<'a>]> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (k, t) in toks.iter().enumerate() {
        match t.text {
            "(" | "[" | "{" | "<" => depth += 1,
            ">" if k > 0 && toks[k - 1].text == "-" => {}
            ")" | "]" | "}" | ">" => depth = depth.saturating_sub(1),
            "," if depth == 0 => {
                out.push(&toks[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        out.push(&toks[start..]);
    }
    out
}

/// The options type a parameter (`pattern: type`) takes, if its type is one: the type
/// after any `&`, lifetime and `mut` is a path whose last segment is an options type.
fn options_type(param: &[Token<'_>]) -> Option<String> {
    let colon = param.iter().position(|t| t.text == ":")?;
    let mut ty = &param[colon + 1..];
    loop {
        match ty {
            [first, rest @ ..] if matches!(first.text, "&" | "mut") => ty = rest,
            [quote, _, rest @ ..] if quote.text == "'" => ty = rest,
            _ => break,
        }
    }
    // The path: identifiers joined by `::`, up to the end of the type.
    let mut last = ty.first()?;
    let mut k = 1;
    while ty.get(k..k + 3).is_some_and(|p| p[0].text == ":" && p[1].text == ":") {
        last = &ty[k + 2];
        k += 3;
    }
    let whole = k == ty.len() && last.text.chars().all(crate::lex::is_ident_char);
    let named = last.text.ends_with(OPTIONS_SUFFIX) || OPTIONS_TYPES.contains(&last.text);
    (whole && named).then(|| last.text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsafe_problems(src: &str) -> Vec<Problem> {
        check_unsafe(&lex(src))
    }

    fn lines_of(problems: Vec<Problem>) -> Vec<usize> {
        problems.into_iter().map(|p| p.line).collect()
    }

    #[test]
    fn the_unsafe_count_is_the_code_s() {
        let code = lex("// unsafe { in a comment }\nunsafe fn f() {}\nfn g() { unsafe { f() } }\n\
                        unsafe impl Send for X {}\nfn h(p: unsafe fn()) { let s = \"unsafe {\"; }\n");
        assert_eq!(unsafe_counts(&[&code]), [1, 1, 1]);
        let said = |n: &str| {
            format!("**Unsafe.** In npy-core ({n} `unsafe` blocks, 1 `unsafe fn`s and 1 `unsafe impl`s): ...")
        };
        assert!(check_unsafe_count(&said("1"), &[&code]).is_empty());
        let wrong = check_unsafe_count(&said("2"), &[&code]);
        assert_eq!(wrong, ["ARCHITECTURE.md: says 2 `unsafe` blocks in npy-core; its src has 1"]);
        assert_eq!(check_unsafe_count(&said("about"), &[&code]).len(), 1);
        assert_eq!(check_unsafe_count("no count here", &[&code]).len(), 1);
    }

    #[test]
    fn unsafe_block_needs_a_safety_comment() {
        assert_eq!(lines_of(unsafe_problems("fn f() {\n    unsafe { g() }\n}\n")), [2]);
        assert!(unsafe_problems("fn f() {\n    // SAFETY: g has no preconditions.\n    unsafe { g() }\n}\n").is_empty());
        // A SAFETY list, attributes, and a statement started on the lines above.
        let ok = "\
fn f() {
    // SAFETY:
    // - p is valid for reads;
    // - p is aligned.
    #[allow(clippy::x)]
    let v =
        unsafe { p.read() };
    let w = g(); // SAFETY: on the line before.
    unsafe { h() };
    /* SAFETY: same line */ unsafe { k() };
}
";
        assert!(unsafe_problems(ok).is_empty(), "{:?}", unsafe_problems(ok));
        // One comment covers one statement: the second block has none, nor has a block after
        // a blank line, nor one whose comment is above the enclosing block.
        let bad = "\
fn f() {
    // SAFETY: covers a only.
    let x = unsafe { a() };
    let y = unsafe { b() };
    // SAFETY: far away.

    unsafe { c() };
}
// SAFETY: not for the block inside.
fn g() {
    unsafe { d() }
}
";
        assert_eq!(lines_of(unsafe_problems(bad)), [4, 7, 11]);
        // `unsafe` inside a string or a comment, a fn pointer type, an attribute: no block.
        assert!(unsafe_problems("let s = \"unsafe { x }\"; // unsafe { y }\ntype F = unsafe fn(u8);").is_empty());
        assert!(unsafe_problems("#[unsafe(no_mangle)]\nfn f() {}\n#![forbid(unsafe_code)]").is_empty());
    }

    #[test]
    fn unsafe_impl_needs_a_safety_comment() {
        assert_eq!(lines_of(unsafe_problems("struct P;\nunsafe impl Send for P {}\n")), [2]);
        let ok = "// SAFETY: P holds no pointer.\n#[automatically_derived]\nunsafe impl Send for P {}\n";
        assert!(unsafe_problems(ok).is_empty());
    }

    #[test]
    fn unsafe_fn_and_trait_need_a_safety_section() {
        let bad = "/// Reads.\npub unsafe fn read(p: *const u8) -> u8 {\n    // SAFETY: the caller's.\n    unsafe { *p }\n}\n";
        assert_eq!(
            unsafe_problems(bad),
            [Problem { line: 2, what: "unsafe fn without a `# Safety` section in its doc comment".into() }]
        );
        let ok = "/// Reads.\n///\n/// # Safety\n/// `p` is valid.\n#[inline]\npub unsafe extern \"C\" fn read(p: *const u8) -> u8 {\n    // SAFETY: the caller's.\n    unsafe { *p }\n}\n";
        assert!(unsafe_problems(ok).is_empty(), "{:?}", unsafe_problems(ok));
        assert_eq!(lines_of(unsafe_problems("/// Bytes.\npub unsafe trait Pod {}\n")), [2]);
        assert!(unsafe_problems("/// Bytes.\n///\n/// # Safety\n/// Any bytes.\npub unsafe trait Pod {}\n").is_empty());
        // A trait method implemented: the contract is the trait's. An inherent one needs its own.
        let methods = "\
// SAFETY: forwards to System.
unsafe impl GlobalAlloc for A {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: the caller's.
        unsafe { System.alloc(l) }
    }
}
impl A {
    unsafe fn raw(&self) {}
}
";
        assert_eq!(lines_of(unsafe_problems(methods)), [9]);
        // Attributes over several lines between the doc and the item; `[T; N]` in an impl's
        // head (its `;` ends no item).
        let spread = "\
/// Bytes.
///
/// # Safety
/// Any bytes.
#[diagnostic::on_unimplemented(
    message = \"not [Pod]\",
    label = \"x\",
)]
pub unsafe trait Pod {
    /// Fills.
    ///
    /// # Safety
    /// `p` is valid.
    unsafe fn fill(p: *mut Self) {}
}
// SAFETY: N of them.
#[allow(
    clippy::x,
)]
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {
    unsafe fn fill(p: *mut Self) {}
}
";
        assert!(unsafe_problems(spread).is_empty(), "{:?}", unsafe_problems(spread));
        // An array ending on the line above is no attribute.
        assert_eq!(lines_of(unsafe_problems("const A: [u8; 2] = [\n    1, 2,\n];\nunsafe fn f() {}\n")), [4]);
    }

    #[test]
    fn leftover_macros_in_code_only() {
        let src = "fn f() {\n    todo!();\n    let x = dbg!(1);\n    std::unimplemented!()\n}\n";
        let found = check_leftovers(&lex(src));
        assert_eq!(lines_of(found.clone()), [2, 3, 4]);
        assert_eq!(found[1].what, "`dbg!` left in code");
        let fine = "let s = \"todo!\"; // todo!()\n/* dbg!(x) */ let r = r\"unimplemented!()\";\nfn todo() {}\nx.dbg()";
        assert!(check_leftovers(&lex(fine)).is_empty());
    }

    #[test]
    fn unsafe_code_is_found() {
        assert!(has_unsafe(&lex("fn f() {\n    // SAFETY: none needed.\n    unsafe { g() }\n}\n")));
        assert!(has_unsafe(&lex("unsafe impl Send for P {}\n")));
        assert!(has_unsafe(&lex("#[cfg(test)]\nmod tests {\n    unsafe fn f() {}\n}\n")));
        let none =
            "#![forbid(unsafe_code)]\n// unsafe { x }\nconst S: &str = \"unsafe {}\";\ntype F = unsafe fn(u8);\n";
        assert!(!has_unsafe(&lex(none)));
    }

    #[test]
    fn crate_roots_forbid_unsafe_code() {
        let ok = "//! Docs.\n#![warn(missing_docs)]\n#![forbid(\n    unsafe_code,\n)]\n\nuse x;\n";
        assert!(check_forbid_unsafe(&lex(ok)).is_empty());
        assert_eq!(lines_of(check_forbid_unsafe(&lex("//! Docs.\n#![deny(unsafe_code)]\nuse x;\n"))), [3]);
        // Not among the first inner attributes: after an item it is no crate attribute.
        assert_eq!(lines_of(check_forbid_unsafe(&lex("use x;\n// #![forbid(unsafe_code)]\n"))), [1]);
    }

    fn options_problems(src: &str) -> Vec<Problem> {
        check_options_calls(&lex(src))
    }

    #[test]
    fn options_are_taken_by_with_functions() {
        let bad = "\
pub fn open(path: &Path, options: &ReadOptions) -> Result<R> {}
impl W {
    pub async fn batches(&self, rows: Range<usize>, options: &'a npy_arrow::ConvertOptions) {}
    pub fn add_raw(&mut self, name: &str, bytes: &[u8], compression: Compression) -> Result<()> {}
    pub const fn by_value(mut o: ReaderOptions) -> u8 {}
    pub fn fill_with(&mut self, fill: impl FnOnce(&mut [u8])) {}
}
";
        let found = options_problems(bad);
        assert_eq!(lines_of(found.clone()), [1, 3, 4, 5, 6]);
        assert_eq!(found[4].what, "`pub fn fill_with` is named `…_with` but takes no options");
        let first =
            "pub fn read_batch_with(\n    &self,\n    options: &ConvertOptions,\n    rows: Range<usize>,\n) {}\n";
        assert_eq!(
            options_problems(first),
            [Problem {
                line: 1,
                what: "`pub fn read_batch_with` takes its options (`ConvertOptions`) before its last parameter".into()
            }]
        );
        assert_eq!(found[0].what, "`pub fn open` takes options (`ReadOptions`) but is not named `…_with`");
        assert!(found[1].what.contains("`ConvertOptions`"), "{}", found[1].what);
        let fine = "\
pub fn open_with(path: &Path, options: &ReadOptions) -> Result<R> {}
pub fn open(path: &Path) -> Result<R> {}
pub fn from_store_with(
    store: Arc<dyn ObjectStore>,
    limits: &ReaderOptions,
    options: &ReadOptions,
) -> Result<R> {}
impl ReaderOptions {
    pub fn read_options(&mut self, options: &ReadOptions) -> &mut Self {}
}
impl Writer {
    pub fn compression(&mut self, compression: Compression) -> &mut Self {}
    pub(crate) fn inner(&self, options: &ReadOptions) {}
    pub fn new(name: &str, layout: &Layout, compression: Option<Compression>) -> Self {}
    pub fn f(g: impl Fn(u8) -> ReadOptions, h: HashMap<String, ReadOptions>) {}
    pub fn for_each(&self, f: &mut dyn FnMut(&ReadOptions)) {}
}
impl FileFormat for F {
    fn create_physical_plan(&self, state: &dyn Session, conf: FileScanConfig, options: &ReadOptions) {}
}
pub trait Ext {
    fn register_npy(&self, name: &str, options: &NpyReadOptions);
}
#[cfg(test)]
mod tests {
    pub fn helper(options: &ReadOptions) {}
}
";
        assert!(options_problems(fine).is_empty(), "{:?}", options_problems(fine));
    }
}
