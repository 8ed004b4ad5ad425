//! Values for JavaScript: descriptions (headers, dtypes, members) as JSON text, which
//! JavaScript parses in one call (building them property by property across the boundary
//! took 28 µs a header), and plain objects for the values of object arrays.

use js_sys::{Object, Reflect};
use wasm_bindgen::JsValue;

/// A JSON value, written by [`Json::text`].
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    /// Numbers of a count or size (exact as JavaScript numbers up to 2^53).
    pub fn nums(values: impl IntoIterator<Item = usize>) -> Json {
        Json::Arr(values.into_iter().map(|v| Json::Num(v as f64)).collect())
    }

    /// The JSON text.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(256);
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            // Counts and sizes: whole numbers, written without a fraction.
            Json::Num(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => out.push_str(&(*x as i64).to_string()),
            Json::Num(x) if x.is_finite() => out.push_str(&x.to_string()),
            Json::Num(_) => out.push_str("null"),
            Json::Str(s) => string(s, out),
            Json::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Obj(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    string(key, out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Str(s.to_string())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Str(s)
    }
}

/// `s` as a JSON string: quotes, backslashes and control characters escaped.
fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A plain object of `entries`.
pub fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (key, value) in entries {
        // Defining a property of a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &(*key).into(), value);
    }
    o.into()
}

#[cfg(test)]
mod tests {
    use super::Json;

    #[test]
    fn json_text_escapes_and_numbers() {
        let j = Json::Obj(vec![
            ("s", "a\"b\\c\n\u{1}é温".into()),
            ("n", Json::nums([0, 3, 1 << 40])),
            ("x", Json::Num(0.5)),
            ("t", Json::Bool(true)),
            ("z", Json::Null),
        ]);
        assert_eq!(j.text(), r#"{"s":"a\"b\\c\n\u0001é温","n":[0,3,1099511627776],"x":0.5,"t":true,"z":null}"#);
    }
}
