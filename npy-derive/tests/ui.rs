//! Compile errors of `#[derive(NpyRecord)]`, each at the attribute or field at fault.
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p npy-derive --test ui`
//! and review them.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
