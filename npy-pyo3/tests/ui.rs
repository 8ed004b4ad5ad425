//! Compile errors of `#[npy(pyo3)]`: types NumPy could make invalid, and types that are not
//! `Copy`. Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p npy-pyo3
//! --test ui` and review them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
