//! A panic here is a bug, never a property of the input (npy-core returns errors for bad
//! input). WebAssembly then traps, and the instance's state can no longer be trusted: the
//! hook hands the message to JavaScript first, which makes a new instance before the next
//! call and throws an `NpyError` of kind `internal` (see `js/wasm.js`).

use std::cell::RefCell;

use js_sys::Function;
use wasm_bindgen::prelude::*;

thread_local! {
    static REPORT: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// Installs the hook that reports a panic's message to the function [`on_panic`] gave.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let message = info.to_string();
        REPORT.with(|report| {
            if let Some(f) = report.borrow().as_ref() {
                // The instance traps right after this; a reporter that throws changes nothing.
                let _ = f.call1(&JsValue::NULL, &message.into());
            }
        });
    }));
}

/// Sets the function a panic's message goes to (before the instance traps).
#[wasm_bindgen(js_name = onPanic)]
pub fn on_panic(report: Function) {
    REPORT.with(|r| *r.borrow_mut() = Some(report));
}

/// Panics, for the package's test of what a panic does: JavaScript's error and a working
/// instance after it.
#[wasm_bindgen(js_name = panicForTest)]
pub fn panic_for_test() {
    panic!("a panic for the test of panics");
}
