//! Building JavaScript values: plain objects and arrays.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::JsValue;

/// A plain object of `entries`.
pub fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (key, value) in entries {
        // Defining a property of a fresh plain object cannot fail.
        let _ = Reflect::set(&o, &(*key).into(), value);
    }
    o.into()
}

/// An array of numbers.
pub fn numbers(values: impl IntoIterator<Item = usize>) -> JsValue {
    values.into_iter().map(|v| JsValue::from(v as f64)).collect::<Array>().into()
}
