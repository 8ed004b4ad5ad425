//! The lexer under tidy's checks ([`crate::tidy`]) and the layers check
//! ([`crate::layers`]): Rust source split line by line into code and comments, string and
//! char literals blanked, so that nothing inside a string or a comment counts; its tokens;
//! and where a file's test code starts.

/// One source line, split.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Line {
    /// The code: comments removed, the contents of string and char literals removed (their
    /// quotes stay, so `"todo!"` is `""`).
    pub code: String,
    /// The comments on the line (`//...` and the parts of `/* */` comments), with their
    /// markers.
    pub comment: String,
}

impl Line {
    /// Whether the line has code (not only comments or blanks).
    pub fn has_code(&self) -> bool {
        !self.code.trim().is_empty()
    }

    /// Whether the line has neither code nor comments.
    pub fn is_blank(&self) -> bool {
        !self.has_code() && self.comment.trim().is_empty()
    }
}

/// Where the lexer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    LineComment,
    /// Nesting depth.
    BlockComment(usize),
    Str,
    /// The number of `#`s.
    RawStr(usize),
}

/// Splits `src` into lines of code and comments.
pub fn lex(src: &str) -> Vec<Line> {
    let chars: Vec<char> = src.chars().collect();
    let mut lines = vec![Line::default()];
    let mut state = State::Code;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let line = lines.last_mut().expect("one line at least");
        if c == '\n' {
            if state == State::LineComment {
                state = State::Code;
            }
            lines.push(Line::default());
            i += 1;
            continue;
        }
        match state {
            State::Code => {
                let prev_ident = i > 0 && is_ident_char(chars[i - 1]);
                if c == '/' && next == Some('/') {
                    state = State::LineComment;
                    line.comment.push_str("//");
                    i += 2;
                } else if c == '/' && next == Some('*') {
                    state = State::BlockComment(1);
                    line.comment.push_str("/*");
                    i += 2;
                } else if c == '"' {
                    state = State::Str;
                    line.code.push('"');
                    i += 1;
                } else if let (false, Some((prefix, hashes))) = (prev_ident, raw_string_start(&chars[i..])) {
                    state = State::RawStr(hashes);
                    line.code.push('"');
                    i += prefix;
                } else if c == '\'' {
                    // A char literal keeps its quotes only; a lifetime or label its name.
                    line.code.push('\'');
                    i += 1;
                    if let Some(len) = char_literal_len(&chars[i..]) {
                        line.code.push('\'');
                        i += len;
                    }
                } else {
                    line.code.push(c);
                    i += 1;
                }
            }
            State::LineComment => {
                line.comment.push(c);
                i += 1;
            }
            State::BlockComment(depth) => {
                if c == '/' && next == Some('*') {
                    state = State::BlockComment(depth + 1);
                    line.comment.push_str("/*");
                    i += 2;
                } else if c == '*' && next == Some('/') {
                    state = if depth == 1 { State::Code } else { State::BlockComment(depth - 1) };
                    line.comment.push_str("*/");
                    i += 2;
                } else {
                    line.comment.push(c);
                    i += 1;
                }
            }
            State::Str => {
                if c == '\\' && next != Some('\n') {
                    i += 2;
                } else {
                    if c == '"' {
                        line.code.push('"');
                        state = State::Code;
                    }
                    i += 1;
                }
            }
            State::RawStr(hashes) => {
                let closes = c == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#'));
                if closes {
                    line.code.push('"');
                    state = State::Code;
                    i += 1 + hashes;
                } else {
                    i += 1;
                }
            }
        }
    }
    lines
}

/// Whether `c` can be part of an identifier.
pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// If `s` starts a raw string (`r"`, `r#"`, `br"`, `cr##"`, ...): the length of its opening
/// and its number of `#`s.
fn raw_string_start(s: &[char]) -> Option<(usize, usize)> {
    let mut at = match s {
        ['r', ..] => 1,
        ['b' | 'c', 'r', ..] => 2,
        _ => return None,
    };
    let hashes = s[at..].iter().take_while(|&&c| c == '#').count();
    at += hashes;
    (s.get(at) == Some(&'"')).then_some((at + 1, hashes))
}

/// After a `'`: the length of the rest of a char literal (`a'`, `\n'`, `\u{1F600}'`), or
/// `None` for a lifetime or a label.
fn char_literal_len(s: &[char]) -> Option<usize> {
    match s {
        ['\\', ..] => {
            // An escape: up to the closing quote (skipping the escaped character).
            s.iter().skip(2).position(|&c| c == '\'' || c == '\n').filter(|&k| s[2 + k] == '\'').map(|k| k + 3)
        }
        [c, '\'', ..] if *c != '\n' => Some(2),
        _ => None,
    }
}

/// A token of code: an identifier, a number or one punctuation character, with its line
/// (from 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    /// The line, from 0.
    pub line: usize,
    /// The text.
    pub text: &'a str,
}

/// The tokens of `lines`, in order.
pub fn tokens(lines: &[Line]) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let code = line.code.as_str();
        let mut rest = code.char_indices().peekable();
        while let Some((start, c)) = rest.next() {
            if c.is_whitespace() {
                continue;
            }
            let mut end = start + c.len_utf8();
            if is_ident_char(c) {
                while let Some(&(at, d)) = rest.peek() {
                    if !is_ident_char(d) {
                        break;
                    }
                    end = at + d.len_utf8();
                    rest.next();
                }
            }
            out.push(Token { line: n, text: &code[start..end] });
        }
    }
    out
}

/// Check 3's count: the lines before the last top-level `#[cfg(test)]` that marks a
/// `mod` (other attributes may sit between), or all lines if there is none.
pub fn code_lines(lines: &[Line]) -> usize {
    let mut count = lines.len();
    // A source ending with a newline has an empty last "line".
    if lines.last().is_some_and(Line::is_blank) {
        count -= 1;
    }
    for (n, line) in lines.iter().enumerate() {
        if line.code.trim_end() != "#[cfg(test)]" {
            continue;
        }
        let item = lines[n + 1..]
            .iter()
            .filter(|l| l.has_code())
            .map(|l| l.code.as_str())
            .find(|code| !code.trim_start().starts_with("#["));
        if item.is_some_and(|code| code.starts_with("mod ") || code.starts_with("pub(crate) mod ")) {
            count = n;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexer_blanks_strings_chars_and_comments() {
        let lines = lex("let s = \"todo!() // no\"; // dbg!(x)\nlet c = '\"'; let l: &'a str = r#\"a \" b\"#;");
        assert_eq!(lines[0].code, "let s = \"\"; ");
        assert_eq!(lines[0].comment, "// dbg!(x)");
        assert_eq!(lines[1].code, "let c = ''; let l: &'a str = \"\";");
        let lines = lex("a /* one /* two */ still */ b\n/* x\ny */ c 'x' '\\n' '\\u{1F600}' b'z' 'label: loop {}");
        assert_eq!(lines[0].code, "a  b");
        assert_eq!(lines[1].code, "");
        assert_eq!(lines[2].code, " c '' '' '' b'' 'label: loop {}");
        // An escaped quote and an escaped newline stay inside the string.
        let lines = lex("\"a \\\" todo!() \\\n dbg!()\" x");
        assert_eq!(lines[0].code, "\"");
        assert_eq!(lines[1].code, "\" x");
    }

    #[test]
    fn code_lines_stop_at_the_trailing_test_module() {
        assert_eq!(code_lines(&lex("a\nb\nc\n")), 3);
        assert_eq!(code_lines(&lex("a\nb\nc")), 3);
        let src = "#[cfg(test)]\nuse x;\nfn a() {}\n\n#[cfg(test)]\n#[allow(x)]\nmod tests {\n    fn t() {}\n}\n";
        assert_eq!(code_lines(&lex(src)), 4);
        // An indented `#[cfg(test)] mod` is not the file's test module.
        assert_eq!(code_lines(&lex("mod a {\n    #[cfg(test)]\n    mod tests {}\n}\n")), 4);
    }
}
