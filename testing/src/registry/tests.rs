use super::delete::Expiries;
use super::*;
use crate::object::{
    MAX_GENERATE_NAME_PREFIX, NAME_SUFFIX_ALPHABET, NAME_SUFFIX_LEN, generate_name,
};

#[test]
fn generated_names_are_prefix_plus_five_safe_characters() {
    let name = generate_name("web-");
    assert_eq!(name.len(), 9);
    assert!(name[4..].bytes().all(|b| NAME_SUFFIX_ALPHABET.contains(&b)));
    let long = generate_name(&"x".repeat(80));
    assert_eq!(long.len(), MAX_GENERATE_NAME_PREFIX + NAME_SUFFIX_LEN);
}

#[test]
fn expiries_return_only_what_is_due_and_rearming_moves_the_deadline() {
    let t = |s: i64| Timestamp::from_second(s).expect("valid");
    let key = |n: &str| ("default".to_string(), n.to_string());
    let mut e = Expiries::default();
    e.arm(key("a"), t(10));
    e.arm(key("b"), t(20));
    e.arm(key("a"), t(30));
    assert_eq!(e.due(t(15)), Vec::<ObjectKey>::new());
    assert_eq!(e.due(t(25)), vec![key("b")]);
    e.disarm(&key("a"));
    assert_eq!(e.due(t(100)), Vec::<ObjectKey>::new());
}
