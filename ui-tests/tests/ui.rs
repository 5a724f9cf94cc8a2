//! Compile-pass and compile-fail cases of the macros. Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p kubeward-ui-tests --test ui`, then read every one: each must
//! underline the offending token.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/pass/*.rs");
    t.compile_fail("tests/fail/*.rs");
}
