//! Go's spelling of decoded JSON values in the messages strategic merge patch errors carry:
//! `fmt`'s `%v` (`map[a:1 b:[x y]]`, keys sorted) and `reflect.TypeOf(v).String()`.

use serde_json::Value;

/// `fmt.Sprintf("%v", v)` of a value `encoding/json` decoded into an `interface{}`.
pub(super) fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_value).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_value(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// `fmt.Sprintf("%s", v)`: strings as they are, anything else as Go's `%!s(type=value)`.
pub(super) fn go_string_verb(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        other => format!("%!s({}={})", go_type(Some(other)), go_value(other)),
    }
}

/// `reflect.TypeOf(v).String()` (`%s` of a nil `reflect.Type` for a missing value), with
/// integers decoded as `int64` and other numbers as `float64`, as the apiserver decodes
/// patches (`UnmarshalCaseSensitivePreserveInts`).
pub(super) fn go_type(v: Option<&Value>) -> &'static str {
    match v {
        None | Some(Value::Null) => "%!s(<nil>)",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "int64",
        Some(Value::Number(_)) => "float64",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "[]interface {}",
        Some(Value::Object(_)) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(
            go_value(&json!({"name": "b", "$patch": "delete", "n": [1, 2.5, null, true]})),
            "map[$patch:delete n:[1 2.5 <nil> true] name:b]"
        );
        assert_eq!(go_string_verb(&json!("merge")), "merge");
        assert_eq!(go_string_verb(&json!(1)), "%!s(int64=1)");
        assert_eq!(go_type(Some(&json!(["a"]))), "[]interface {}");
        assert_eq!(go_type(Some(&json!(1.5))), "float64");
    }
}
