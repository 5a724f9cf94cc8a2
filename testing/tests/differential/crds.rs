//! CustomResourceDefinitions: the validation of a CRD itself (names, versions, structural
//! schemas, `x-kubernetes-*` extensions, CEL rules), then custom resources against structural
//! schemas (types, formats, value validations, defaulting, pruning, list types, CEL rules with
//! transition rules, subresources, `metadata.generation`).
//!
//! Every case's CRD is `widgets.NS.example.com` (group `NS.example.com`, kind `Widget`), so
//! cluster-scoped names are unique per case; a case waits for it to be served before it writes
//! custom resources.

use serde_json::{Value, json};

use crate::corpus::{Case, Step, delete, get, merge, patch, post, put};

/// The CRD's collection path.
pub const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The collection of widgets of a case's own CRD (`install`), in the case's namespace.
pub const WIDGETS: &str = "/apis/NS.example.com/v1/namespaces/NS/widgets";

/// A CRD for widgets of group `NS.example.com` with `spec` described by `spec_schema`;
/// `version_extra` is merged into its only version (subresources, printer columns).
pub fn widget_crd(spec_schema: Value, version_extra: Value) -> Value {
    group_crd("NS.example.com", spec_schema, version_extra)
}

fn group_crd(group: &str, spec_schema: Value, version_extra: Value) -> Value {
    let mut version = json!({
        "name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": spec_schema,
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            },
        }},
    });
    merge(&mut version, version_extra);
    let mut crd = crd_with_versions(json!([version]));
    crd["metadata"]["name"] = json!(format!("widgets.{group}"));
    crd["spec"]["group"] = json!(group);
    crd
}

/// A CRD for widgets with the given `spec.versions`.
fn crd_with_versions(versions: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.NS.example.com"},
        "spec": {
            "group": "NS.example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": versions,
        },
    })
}

/// Creates the CRD and waits until its resource is served.
pub fn install(crd: Value) -> Vec<Step> {
    let group = crd["spec"]["group"].as_str().unwrap_or_default().to_owned();
    vec![
        post(CRDS, crd),
        get(format!("/apis/{group}/v1/namespaces/NS/widgets")).until(|status, _| status == 200),
    ]
}

/// A widget named `name` with `spec`, of a case's own CRD.
pub fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "NS.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

/// A CRD that many cases share, installed once (kube-apiserver takes seconds to serve a new
/// CRD): cases write widgets in their own namespaces. Its name is fixed, not per case.
pub struct Fixture {
    group: String,
    crd: Value,
}

impl Fixture {
    /// Widgets of `group` whose `spec` has `properties`, with the status and scale
    /// subresources (`spec.replicas`, `status.replicas`).
    pub fn new(group: &str, mut properties: serde_json::Map<String, Value>) -> Self {
        properties.insert("replicas".into(), json!({"type": "integer"}));
        Fixture {
            group: group.into(),
            crd: group_crd(
                group,
                json!({"type": "object", "properties": properties}),
                json!({"subresources": {"status": {}, "scale": {
                    "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector"}}}),
            ),
        }
    }

    /// The setup of a case that uses it.
    pub fn setup(&self) -> Vec<Step> {
        install(self.crd.clone())
    }

    /// The widgets in the case's namespace.
    pub fn collection(&self) -> String {
        format!("/apis/{}/v1/namespaces/NS/widgets", self.group)
    }

    /// A widget named `name` with `spec`.
    pub fn widget(&self, name: &str, spec: Value) -> Value {
        json!({"apiVersion": format!("{}/v1", self.group), "kind": "Widget",
               "metadata": {"name": name}, "spec": spec})
    }

    /// POSTs a widget named `name` with `spec`.
    pub fn create(&self, name: &str, spec: Value) -> Step {
        post(self.collection(), self.widget(name, spec))
    }
}

/// The property name of a case's schema in a shared CRD (`minimum and maximum` ->
/// `minimumAndMaximum`).
pub fn property_name(label: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(if upper { c.to_ascii_uppercase() } else { c });
            upper = false;
        } else {
            upper = !out.is_empty();
        }
    }
    out
}

/// A case on the shared CRD: the schema of its own `spec` property (if it needs one) and its
/// steps, given the fixture and the name of that property.
struct Shared {
    name: String,
    schema: Option<Value>,
    steps: StepsOn,
}

/// A case's steps, given the shared fixture and the name of its property.
type StepsOn = Box<dyn Fn(&Fixture, &str) -> Vec<Step>>;

impl Shared {
    fn new(
        name: impl Into<String>,
        schema: Option<Value>,
        steps: impl Fn(&Fixture, &str) -> Vec<Step> + 'static,
    ) -> Self {
        Shared {
            name: name.into(),
            schema,
            steps: Box::new(steps),
        }
    }

    /// A case that creates one widget per value of `values`, each the value of its property.
    fn creating(name: impl Into<String>, schema: Value, values: Vec<Value>) -> Self {
        Shared::new(name, Some(schema), move |fixture, property| {
            values
                .iter()
                .enumerate()
                .map(|(i, v)| fixture.create(&format!("w{i}"), json!({property: v})))
                .collect()
        })
    }
}

pub fn cases() -> Vec<Case> {
    let mut cases = definition_cases();
    let shared: Vec<Shared> = [
        value_cases(),
        behaviour_cases(),
        cel_cases(),
        subresource_cases(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let properties = shared
        .iter()
        .filter_map(|s| Some((property_name(&s.name), s.schema.clone()?)))
        .collect();
    let fixture = Fixture::new("crds.corpus.example.com", properties);
    cases.extend(shared.into_iter().map(|s| {
        let steps = (s.steps)(&fixture, &property_name(&s.name));
        Case::new(s.name, steps).after(fixture.setup())
    }));
    cases.extend(own_crd_cases());
    cases
}

/// The validation of a CRD itself.
fn definition_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let object = json!({"type": "object"});
    let mut named = |label: &str, edit: Value| {
        let mut crd = widget_crd(object.clone(), json!({}));
        merge(&mut crd, edit);
        cases.push(Case::new(format!("crd: {label}"), vec![post(CRDS, crd)]));
    };
    named("valid", json!({}));
    named(
        "name not plural.group",
        json!({"metadata": {"name": "gadgets.NS.example.com"}}),
    );
    named(
        "group without a dot",
        json!({"metadata": {"name": "widgets.NS"}, "spec": {"group": "NS"}}),
    );
    named(
        "plural uppercase",
        json!({"metadata": {"name": "Widgets.NS.example.com"}, "spec": {"names": {"plural": "Widgets"}}}),
    );
    named(
        "kind lowercase",
        json!({"spec": {"names": {"kind": "widget"}}}),
    );
    named("kind missing", json!({"spec": {"names": {"kind": ""}}}));
    named(
        "listKind equal to kind",
        json!({"spec": {"names": {"listKind": "Widget"}}}),
    );
    named(
        "singular uppercase",
        json!({"spec": {"names": {"singular": "Widget"}}}),
    );
    named(
        "short name with a space",
        json!({"spec": {"names": {"shortNames": ["w w"]}}}),
    );
    named("scope unknown", json!({"spec": {"scope": "Global"}}));
    named("scope missing", json!({"spec": {"scope": null}}));
    named("no versions", json!({"spec": {"versions": []}}));
    let version = |name: &str, storage: bool| {
        json!({"name": name, "served": true, "storage": storage,
               "schema": {"openAPIV3Schema": {"type": "object"}}})
    };
    let mut versions = |label: &str, versions: Value| {
        cases.push(Case::new(
            format!("crd: {label}"),
            vec![post(CRDS, crd_with_versions(versions))],
        ));
    };
    versions(
        "two storage versions",
        json!([version("v1", true), version("v2", true)]),
    );
    versions("no storage version", json!([version("v1", false)]));
    versions(
        "same version twice",
        json!([version("v1", true), version("v1", false)]),
    );
    versions("version name uppercase", json!([version("V1", true)]));
    versions(
        "version without a schema",
        json!([{"name": "v1", "served": true, "storage": true}]),
    );
    versions(
        "two versions served",
        json!([version("v1", true), version("v2beta1", false)]),
    );
    // Schemas: each is the version's whole openAPIV3Schema.
    for (label, schema) in [
        (
            "schema root without type",
            json!({"properties": {"spec": {"type": "object"}}}),
        ),
        ("schema root a string", json!({"type": "string"})),
        (
            "schema property without type",
            json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}}),
        ),
        (
            "schema unknown type",
            json!({"type": "object", "properties": {"spec": {"type": "thing"}}}),
        ),
        (
            "schema items without type",
            json!({"type": "object", "properties": {"spec": {"type": "array", "items": {}}}}),
        ),
        (
            "schema array without items",
            json!({"type": "object", "properties": {"spec": {"type": "array"}}}),
        ),
        (
            "schema properties and additionalProperties",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "string"}}}}),
        ),
        (
            "schema metadata with other properties",
            json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"labels": {"type": "object"}}}}}),
        ),
        (
            "schema metadata name pattern",
            json!({"type": "object", "properties": {"metadata": {"type": "object",
                "properties": {"name": {"type": "string", "maxLength": 10}}}}}),
        ),
        (
            "schema int-or-string with a type",
            json!({"type": "object", "properties": {"spec": {"type": "string", "x-kubernetes-int-or-string": true}}}),
        ),
        (
            "schema preserve-unknown-fields false",
            json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": false}}}),
        ),
        (
            "schema list-type map without keys",
            json!({"type": "object", "properties": {"spec": {"type": "array", "x-kubernetes-list-type": "map",
                "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}}),
        ),
        (
            "schema list-map key not required",
            json!({"type": "object", "properties": {"spec": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"],
                "items": {"type": "object", "properties": {"k": {"type": "string"}}}}}}),
        ),
        (
            "schema list-map keys on a set",
            json!({"type": "object", "properties": {"spec": {"type": "array", "x-kubernetes-list-type": "set",
                "x-kubernetes-list-map-keys": ["k"], "items": {"type": "string"}}}}),
        ),
        (
            "schema list-type on an object",
            json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-list-type": "set"}}}),
        ),
        (
            "schema list-type unknown",
            json!({"type": "object", "properties": {"spec": {"type": "array", "x-kubernetes-list-type": "bag",
                "items": {"type": "string"}}}}),
        ),
        (
            "schema set of objects",
            json!({"type": "object", "properties": {"spec": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "object"}}}}),
        ),
        (
            "schema embedded-resource not an object",
            json!({"type": "object", "properties": {"spec": {"type": "string", "x-kubernetes-embedded-resource": true}}}),
        ),
        (
            "schema embedded-resource without preserve",
            json!({"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-embedded-resource": true}}}),
        ),
        (
            "schema default of the wrong type",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "integer", "default": "x"}}}}}),
        ),
        (
            "schema default outside an enum",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}}}}),
        ),
        (
            "schema default at the root",
            json!({"type": "object", "default": {}}),
        ),
        (
            "schema pattern not compiling",
            json!({"type": "object", "properties": {"spec": {"type": "string", "pattern": "a("}}}),
        ),
        (
            "schema unknown format",
            json!({"type": "object", "properties": {"spec": {"type": "string", "format": "colour"}}}),
        ),
        (
            "schema negative maxLength",
            json!({"type": "object", "properties": {"spec": {"type": "string", "maxLength": -1}}}),
        ),
        (
            "schema nullable root",
            json!({"type": "object", "nullable": true}),
        ),
        (
            "schema $ref",
            json!({"type": "object", "properties": {"spec": {"$ref": "#/definitions/x"}}}),
        ),
        (
            "schema uniqueItems",
            json!({"type": "object", "properties": {"spec": {"type": "array", "uniqueItems": true,
                "items": {"type": "string"}}}}),
        ),
        (
            "schema int-or-string anyOf with types",
            json!({"type": "object", "properties": {"spec": {"x-kubernetes-int-or-string": true,
                "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
        ),
        (
            "schema anyOf with a type",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}}}),
        ),
        (
            "cel rule not compiling",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "x-kubernetes-validations": [{"rule": "self.a ==="}]}}}),
        ),
        (
            "cel rule on an unknown field",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.b == 'x'"}]}}}),
        ),
        (
            "cel rule not a bool",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.a"}]}}}),
        ),
        (
            "cel empty rule",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "x-kubernetes-validations": [{"rule": ""}]}}}),
        ),
        (
            "cel messageExpression not compiling",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "true", "messageExpression": "self.a +"}]}}}),
        ),
        (
            "cel messageExpression not a string",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "integer"}},
                "x-kubernetes-validations": [{"rule": "true", "messageExpression": "self.a"}]}}}),
        ),
        (
            "cel unknown reason",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "x-kubernetes-validations": [{"rule": "true", "reason": "FieldValueWrong"}]}}}),
        ),
        (
            "cel fieldPath not in the schema",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "true", "fieldPath": ".b"}]}}}),
        ),
        (
            "cel fieldPath not a path",
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "true", "fieldPath": "a["}]}}}),
        ),
        (
            "cel oldSelf under an atomic list",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "maxItems": 10, "items": {"type": "object",
                    "properties": {"a": {"type": "string", "maxLength": 10}},
                    "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]}}}}}}),
        ),
        (
            "cel oldSelf under a set",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set",
                    "items": {"type": "string", "maxLength": 10,
                    "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}}}),
        ),
        (
            "cel oldSelf under a list-map",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "required": ["k"],
                    "properties": {"k": {"type": "string", "maxLength": 10}, "a": {"type": "string", "maxLength": 10}},
                    "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}]}}}}}}),
        ),
        (
            "cel rule over unbounded lists",
            json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "items": {"type": "array", "items": {"type": "string"}},
                    "x-kubernetes-validations": [{"rule": "self.all(x, x.all(y, x.all(z, y.matches(z))))"}]}}}}}),
        ),
    ] {
        cases.push(Case::new(
            format!("crd: {label}"),
            vec![post(
                CRDS,
                crd_with_versions(json!([{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": schema},
                }])),
            )],
        ));
    }
    cases
}

/// Custom resources' values against value validations.
fn value_cases() -> Vec<Shared> {
    let mut cases = Vec::new();
    for (label, schema, values) in [
        (
            "string",
            json!({"type": "string"}),
            vec![json!("x"), json!(1), json!(true), json!(null), json!({})],
        ),
        (
            "integer",
            json!({"type": "integer"}),
            vec![json!(1), json!(1.5), json!("1"), json!(1e3), json!(-0)],
        ),
        (
            "number",
            json!({"type": "number"}),
            vec![json!(1), json!(1.5), json!("1.5")],
        ),
        (
            "boolean",
            json!({"type": "boolean"}),
            vec![json!(true), json!("true"), json!(0)],
        ),
        (
            "array of strings",
            json!({"type": "array", "items": {"type": "string"}}),
            vec![json!(["a"]), json!("a"), json!([1]), json!([])],
        ),
        (
            "object",
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            vec![json!({"a": "x"}), json!([]), json!("x")],
        ),
        (
            "map of integers",
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            vec![json!({"a": 1}), json!({"a": "1"})],
        ),
        (
            "enum",
            json!({"type": "string", "enum": ["a", "b"]}),
            vec![json!("a"), json!("c"), json!("")],
        ),
        (
            "integer enum",
            json!({"type": "integer", "enum": [1, 2]}),
            vec![json!(2), json!(3)],
        ),
        (
            "minimum and maximum",
            json!({"type": "integer", "minimum": 1, "maximum": 10}),
            vec![json!(1), json!(0), json!(10), json!(11)],
        ),
        (
            "exclusive bounds",
            json!({"type": "number", "minimum": 1, "exclusiveMinimum": true,
                   "maximum": 10, "exclusiveMaximum": true}),
            vec![json!(1), json!(1.5), json!(10)],
        ),
        (
            "multipleOf",
            json!({"type": "integer", "multipleOf": 3}),
            vec![json!(9), json!(10)],
        ),
        (
            "minLength and maxLength",
            json!({"type": "string", "minLength": 2, "maxLength": 3}),
            vec![json!("ab"), json!("a"), json!("abcd"), json!("ünï")],
        ),
        (
            "pattern",
            json!({"type": "string", "pattern": "^[a-z]+$"}),
            vec![json!("abc"), json!("ABC"), json!("a1")],
        ),
        (
            "minItems and maxItems",
            json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}}),
            vec![json!([1]), json!([]), json!([1, 2, 3])],
        ),
        (
            "minProperties and maxProperties",
            json!({"type": "object", "minProperties": 1, "maxProperties": 1,
                   "additionalProperties": {"type": "string"}}),
            vec![json!({"a": "x"}), json!({}), json!({"a": "x", "b": "y"})],
        ),
        (
            "nullable",
            json!({"type": "string", "nullable": true}),
            vec![json!(null), json!("x")],
        ),
        (
            "nullable object",
            json!({"type": "object", "nullable": true, "properties": {"a": {"type": "string"}}}),
            vec![json!(null), json!({"a": null})],
        ),
        (
            "int-or-string",
            json!({"x-kubernetes-int-or-string": true}),
            vec![json!(1), json!("50%"), json!(1.5), json!(true), json!([])],
        ),
        (
            "int-or-string with a maximum",
            json!({"x-kubernetes-int-or-string": true, "anyOf": [{"maximum": 10}]}),
            vec![json!(5), json!(50), json!("50%")],
        ),
        (
            "format date-time",
            json!({"type": "string", "format": "date-time"}),
            vec![
                json!("2024-01-02T03:04:05Z"),
                json!("2024-01-02T03:04:05.123+02:00"),
                json!("2024-01-02"),
                json!("yesterday"),
            ],
        ),
        (
            "format date",
            json!({"type": "string", "format": "date"}),
            vec![json!("2024-01-02"), json!("2024-13-02")],
        ),
        (
            "format int32",
            json!({"type": "integer", "format": "int32"}),
            vec![json!(2147483647), json!(2147483648_i64)],
        ),
        (
            "format email",
            json!({"type": "string", "format": "email"}),
            vec![json!("a@example.com"), json!("not an email")],
        ),
        (
            "format hostname",
            json!({"type": "string", "format": "hostname"}),
            vec![json!("a.example.com"), json!("-bad-")],
        ),
        (
            "format ipv4",
            json!({"type": "string", "format": "ipv4"}),
            vec![json!("10.0.0.1"), json!("10.0.0.256")],
        ),
        (
            "format cidr",
            json!({"type": "string", "format": "cidr"}),
            vec![json!("10.0.0.0/8"), json!("10.0.0.0")],
        ),
        (
            "format uuid",
            json!({"type": "string", "format": "uuid"}),
            vec![
                json!("123e4567-e89b-12d3-a456-426614174000"),
                json!("123e4567"),
            ],
        ),
        (
            "format byte",
            json!({"type": "string", "format": "byte"}),
            vec![json!("aGVsbG8="), json!("%%%")],
        ),
        (
            "format duration",
            json!({"type": "string", "format": "duration"}),
            vec![json!("1h30m"), json!("an hour")],
        ),
        (
            "format quantity",
            json!({"type": "string", "format": "quantity"}),
            vec![json!("1Gi"), json!("lots")],
        ),
        (
            "list-type set",
            json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
            vec![
                json!(["a", "b"]),
                json!(["a", "a"]),
                json!(["a", "b", "a", "b"]),
            ],
        ),
        (
            "list-type map",
            json!({"type": "array", "x-kubernetes-list-type": "map",
                   "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "required": ["name"],
                             "properties": {"name": {"type": "string"}, "v": {"type": "integer"}}}}),
            vec![
                json!([{"name": "a", "v": 1}, {"name": "b"}]),
                json!([{"name": "a", "v": 1}, {"name": "a", "v": 2}]),
                json!([{"v": 1}]),
            ],
        ),
        (
            "list-type map with two keys",
            json!({"type": "array", "x-kubernetes-list-type": "map",
                   "x-kubernetes-list-map-keys": ["name", "port"],
                   "items": {"type": "object", "required": ["name", "port"],
                             "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}),
            vec![
                json!([{"name": "a", "port": 1}, {"name": "a", "port": 2}]),
                json!([{"name": "a", "port": 1}, {"name": "a", "port": 1}]),
            ],
        ),
        (
            "required",
            json!({"type": "object", "required": ["a", "b"],
                   "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}),
            vec![json!({"a": "x", "b": "y"}), json!({"a": "x"}), json!({})],
        ),
        (
            "several errors",
            json!({"type": "object", "required": ["a"], "properties": {
                "a": {"type": "string", "maxLength": 1},
                "b": {"type": "integer", "minimum": 5},
                "c": {"type": "string", "enum": ["x"]}}}),
            vec![json!({"b": 1, "c": "y"}), json!({"a": "long", "b": "s"})],
        ),
        (
            "nested arrays",
            json!({"type": "array", "items": {"type": "object", "properties": {
                "ports": {"type": "array", "items": {"type": "integer", "maximum": 65535}}}}}),
            vec![json!([{"ports": [80, 70000]}, {"ports": ["x"]}])],
        ),
    ] {
        cases.push(Shared::creating(format!("cr {label}"), schema, values));
    }
    for (label, specs) in [
        ("cr spec not an object", vec![json!("x"), json!([1])]),
        ("cr spec null", vec![json!(null)]),
    ] {
        cases.push(Shared::new(label, None, move |fixture, _| {
            specs
                .iter()
                .enumerate()
                .map(|(i, spec)| fixture.create(&format!("w{i}"), spec.clone()))
                .collect()
        }));
    }
    cases
}

/// Defaulting, pruning, preserving unknown fields, embedded resources, metadata.
fn behaviour_cases() -> Vec<Shared> {
    let mut cases = Vec::new();
    for (label, schema, specs) in [
        (
            "default",
            json!({"type": "object", "properties": {
                "a": {"type": "string", "default": "x"},
                "b": {"type": "integer", "default": 3},
                "o": {"type": "object", "default": {}, "properties": {"c": {"type": "boolean", "default": true}}}}}),
            vec![json!({}), json!({"a": "given"}), json!({"o": {"c": false}})],
        ),
        (
            "default null",
            json!({"type": "object", "properties": {
                "a": {"type": "string", "default": "x"},
                "n": {"type": "string", "nullable": true, "default": "y"}}}),
            vec![json!({"a": null}), json!({"n": null})],
        ),
        (
            "default in list items",
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {
                "type": "object", "properties": {"p": {"type": "integer", "default": 80}}}}}}),
            vec![json!({"l": [{}, {"p": 1}]})],
        ),
        (
            "pruning",
            json!({"type": "object", "properties": {"a": {"type": "string"},
                "o": {"type": "object", "properties": {"b": {"type": "string"}}}}}),
            vec![json!({"a": "x", "unknown": 1, "o": {"b": "y", "c": "z"}})],
        ),
        (
            "preserve unknown fields",
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                   "properties": {"a": {"type": "string"}}}),
            vec![
                json!({"a": "x", "free": {"any": [1, 2]}}),
                json!({"a": 1, "free": 1}),
            ],
        ),
        (
            "preserve unknown fields nested",
            json!({"type": "object", "properties": {
                "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "closed": {"type": "object"}}}),
            vec![json!({"open": {"x": 1}, "closed": {"y": 2}})],
        ),
        (
            "embedded resource",
            json!({"type": "object", "properties": {"r": {"type": "object",
                "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}}),
            vec![
                json!({"r": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "junk": 1}, "data": {"k": "v"}}}),
                json!({"r": {"kind": "ConfigMap"}}),
                json!({"r": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}}),
            ],
        ),
    ] {
        cases.push(Shared::creating(format!("cr {label}"), schema, specs));
    }
    // Metadata, kinds and verbs, each case with an integer property of its own.
    let integer = || Some(json!({"type": "integer"}));
    let object = |f: &Fixture, body: Value| {
        let mut w = f.widget("w", json!({}));
        merge(&mut w, body);
        post(f.collection(), w)
    };
    cases.push(Shared::new(
        "cr unknown top-level field",
        None,
        move |f, _| vec![object(f, json!({"extra": 1}))],
    ));
    cases.push(Shared::new("cr bad name", None, |f, _| {
        vec![f.create("Bad_Name", json!({}))]
    }));
    cases.push(Shared::new("cr wrong apiVersion", None, move |f, _| {
        vec![object(
            f,
            json!({"apiVersion": "crds.corpus.example.com/v2"}),
        )]
    }));
    cases.push(Shared::new("cr wrong kind", None, move |f, _| {
        vec![object(f, json!({"kind": "Gadget"}))]
    }));
    cases.push(Shared::new("cr without kind", None, move |f, _| {
        vec![object(f, json!({"kind": null}))]
    }));
    cases.push(Shared::new(
        "cr generation bumps on a spec change only",
        integer(),
        |f, p| {
            let path = format!("{}/g", f.collection());
            let merge_patch =
                |body: Value| patch(path.clone(), "application/merge-patch+json", body);
            vec![
                f.create("g", json!({p: 1})),
                merge_patch(json!({"metadata": {"labels": {"l": "v"}}})),
                merge_patch(json!({"spec": {p: 2}})),
                merge_patch(json!({"spec": {p: 2}})),
            ]
        },
    ));
    cases.push(Shared::new("cr list and get", integer(), |f, p| {
        vec![
            f.create("a", json!({p: 1})),
            f.create("b", json!({})),
            get(f.collection()),
            get(format!("{}/a", f.collection())),
            get(format!("{}/missing", f.collection())),
        ]
    }));
    cases.push(Shared::new(
        "cr put without resourceVersion",
        integer(),
        |f, p| {
            vec![
                f.create("p", json!({})),
                put(
                    format!("{}/p", f.collection()),
                    f.widget("p", json!({p: 1})),
                ),
            ]
        },
    ));
    cases.push(Shared::new(
        "cr put with resourceVersion 0",
        integer(),
        |f, p| {
            let mut zero = f.widget("z", json!({p: 1}));
            zero["metadata"]["resourceVersion"] = json!("0");
            vec![
                f.create("z", json!({})),
                put(format!("{}/z", f.collection()), zero),
            ]
        },
    ));
    cases.push(Shared::new("cr delete answers the object", None, |f, _| {
        let path = format!("{}/d", f.collection());
        vec![f.create("d", json!({})), delete(path.clone()), get(path)]
    }));
    cases.push(Shared::new(
        "cr strategic merge patch",
        integer(),
        |f, p| {
            vec![
                f.create("s", json!({})),
                patch(
                    format!("{}/s", f.collection()),
                    "application/strategic-merge-patch+json",
                    json!({"spec": {p: 1}}),
                ),
            ]
        },
    ));
    cases.push(Shared::new("cr json patch", integer(), |f, p| {
        vec![
            f.create("j", json!({p: 1})),
            patch(
                format!("{}/j", f.collection()),
                "application/json-patch+json",
                json!([{"op": "replace", "path": format!("/spec/{p}"), "value": 2},
                       {"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]),
            ),
        ]
    }));
    cases
}

/// CEL `x-kubernetes-validations`, including transition rules.
fn cel_cases() -> Vec<Shared> {
    let mut cases = Vec::new();
    let rule_schema = |rules: Value| {
        json!({"type": "object",
               "properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
                              "s": {"type": "string", "maxLength": 64},
                              "l": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 8}}},
               "x-kubernetes-validations": rules})
    };
    for (label, rules, specs) in [
        (
            "cel rule",
            json!([{"rule": "self.a <= self.b"}]),
            vec![json!({"a": 1, "b": 2}), json!({"a": 3, "b": 2})],
        ),
        (
            "cel message",
            json!([{"rule": "self.a <= self.b", "message": "a must not exceed b"}]),
            vec![json!({"a": 3, "b": 2})],
        ),
        (
            "cel messageExpression",
            json!([{"rule": "self.a <= self.b", "messageExpression": "'a is ' + (self.a > 100 ? 'far' : 'just') + ' over ' + self.s"}]),
            vec![json!({"a": 3, "b": 2, "s": "b"})],
        ),
        (
            "cel reason and fieldPath",
            json!([{"rule": "self.a <= self.b", "reason": "FieldValueForbidden", "fieldPath": ".a"}]),
            vec![json!({"a": 3, "b": 2})],
        ),
        (
            "cel reason duplicate",
            json!([{"rule": "self.a != 1", "reason": "FieldValueDuplicate", "message": "dup"}]),
            vec![json!({"a": 1})],
        ),
        (
            "cel reason required",
            json!([{"rule": "has(self.s)", "reason": "FieldValueRequired", "fieldPath": ".s"}]),
            vec![json!({})],
        ),
        (
            "cel has",
            json!([{"rule": "has(self.a) == has(self.b)", "message": "a and b together"}]),
            vec![json!({"a": 1}), json!({}), json!({"a": 1, "b": 1})],
        ),
        (
            "cel string functions",
            json!([{"rule": "self.s.startsWith('x') && self.s.size() < 5"}]),
            vec![
                json!({"s": "xy"}),
                json!({"s": "yy"}),
                json!({"s": "xyyyyy"}),
            ],
        ),
        (
            "cel list macros",
            json!([{"rule": "self.l.all(x, x != 'bad')"}, {"rule": "self.l.exists(x, x == 'ok')", "message": "needs ok"}]),
            vec![
                json!({"l": ["ok"]}),
                json!({"l": ["bad"]}),
                json!({"l": []}),
            ],
        ),
        (
            "cel two rules failing",
            json!([{"rule": "self.a > 0"}, {"rule": "self.b > 0"}]),
            vec![json!({"a": 0, "b": 0})],
        ),
        (
            "cel runtime error",
            json!([{"rule": "self.a / self.b > 0"}]),
            vec![json!({"a": 1, "b": 0})],
        ),
        (
            "cel no such key",
            json!([{"rule": "self.s == 'x'"}]),
            vec![json!({})],
        ),
        (
            "cel messageExpression empty",
            json!([{"rule": "false", "messageExpression": "''", "message": "fallback"}]),
            vec![json!({})],
        ),
    ] {
        cases.push(Shared::creating(label, rule_schema(rules), specs));
    }
    cases.push(Shared::creating(
        "cel rule on a property",
        json!({"type": "integer",
            "x-kubernetes-validations": [{"rule": "self >= 1024", "message": "unprivileged"}]}),
        vec![json!(8080), json!(80)],
    ));
    cases.push(Shared::creating(
        "cel rule on list items",
        json!({"type": "array", "maxItems": 4, "items": {
            "type": "string", "maxLength": 8,
            "x-kubernetes-validations": [{"rule": "self != 'no'"}]}}),
        vec![json!(["yes", "no", "no"])],
    ));
    cases.push(Shared::creating(
        "cel rule after a schema error",
        json!({"type": "object", "properties": {"a": {"type": "integer", "maximum": 5}},
            "x-kubernetes-validations": [{"rule": "self.a != 10"}]}),
        vec![json!({"a": 10})],
    ));
    // Transition rules: updates accepted and refused.
    for (label, property, create, update) in [
        (
            "transition immutable",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}),
            json!({"v": "a"}),
            json!({"v": "b"}),
        ),
        (
            "transition immutable unchanged",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}),
            json!({"v": "a"}),
            json!({"v": "a"}),
        ),
        (
            "transition only increases",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "messageExpression": "oldSelf - self > 1 ? 'may not decrease by more than one' : 'may not decrease'"}]}),
            json!({"v": 5}),
            json!({"v": 3}),
        ),
        (
            "transition only increases, up",
            json!({"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf"}]}),
            json!({"v": 5}),
            json!({"v": 6}),
        ),
        (
            "transition added field",
            json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}),
            json!({}),
            json!({"v": "new"}),
        ),
        (
            "transition on an object",
            json!({"type": "object", "properties": {"x": {"type": "integer"}},
                   "x-kubernetes-validations": [{"rule": "!has(oldSelf.x) || has(self.x)", "message": "x may not be removed"}]}),
            json!({"v": {"x": 1}}),
            json!({"v": {}}),
        ),
        (
            "transition in a list-map",
            json!({"type": "array", "maxItems": 4, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                   "items": {"type": "object", "required": ["k"],
                             "properties": {"k": {"type": "string", "maxLength": 4}, "n": {"type": "integer"}},
                             "x-kubernetes-validations": [{"rule": "self.n >= oldSelf.n", "fieldPath": ".n"}]}}),
            json!({"v": [{"k": "a", "n": 2}, {"k": "b", "n": 2}]}),
            json!({"v": [{"k": "b", "n": 1}, {"k": "a", "n": 3}]}),
        ),
    ] {
        cases.push(Shared::new(label, Some(property), move |fixture, p| {
            let spec = |v: &Value| match v.get("v") {
                Some(v) => json!({p: v}),
                None => json!({}),
            };
            let path = format!("{}/t", fixture.collection());
            vec![
                fixture.create("t", spec(&create)),
                patch(
                    path.clone(),
                    "application/merge-patch+json",
                    json!({"spec": spec(&update)}),
                ),
                get(path),
            ]
        }));
    }
    cases
}

/// The status and scale subresources of the shared CRD.
fn subresource_cases() -> Vec<Shared> {
    let mut cases = Vec::new();
    let string = || Some(json!({"type": "string"}));
    let with_status = |f: &Fixture, spec: Value, status: Value| {
        let mut w = f.widget("s", spec);
        w["status"] = status;
        w
    };
    cases.push(Shared::new(
        "subresource: create drops status",
        string(),
        move |f, p| {
            vec![post(
                f.collection(),
                with_status(f, json!({p: "a"}), json!({"replicas": 1})),
            )]
        },
    ));
    cases.push(Shared::new("subresource: status patch ignores spec", string(), |f, p| {
        vec![
            f.create("s", json!({p: "a"})),
            patch(
                format!("{}/s/status", f.collection()),
                "application/merge-patch+json",
                json!({"spec": {p: "b"}, "status": {"replicas": 2}, "metadata": {"labels": {"l": "v"}}}),
            ),
        ]
    }));
    cases.push(Shared::new(
        "subresource: main patch ignores status",
        string(),
        |f, p| {
            vec![
                f.create("s", json!({p: "a"})),
                patch(
                    format!("{}/s", f.collection()),
                    "application/merge-patch+json",
                    json!({"spec": {p: "b"}, "status": {"replicas": 2}}),
                ),
            ]
        },
    ));
    cases.push(Shared::new(
        "subresource: status put without resourceVersion",
        None,
        move |f, _| {
            vec![
                f.create("s", json!({})),
                put(
                    format!("{}/s/status", f.collection()),
                    with_status(f, json!({}), json!({"replicas": 3})),
                ),
            ]
        },
    ));
    cases.push(Shared::new(
        "subresource: status of a missing object",
        None,
        |f, _| {
            vec![patch(
                format!("{}/none/status", f.collection()),
                "application/merge-patch+json",
                json!({"status": {"replicas": 2}}),
            )]
        },
    ));
    cases.push(Shared::new("subresource: status get", None, |f, _| {
        vec![
            f.create("s", json!({})),
            get(format!("{}/s/status", f.collection())),
        ]
    }));
    cases.push(Shared::new(
        "subresource: status change keeps generation",
        string(),
        |f, p| {
            let path = format!("{}/s", f.collection());
            vec![
                f.create("s", json!({p: "a"})),
                patch(
                    format!("{path}/status"),
                    "application/merge-patch+json",
                    json!({"status": {"replicas": 1}}),
                ),
                patch(
                    path,
                    "application/merge-patch+json",
                    json!({"spec": {p: "c"}}),
                ),
            ]
        },
    ));
    cases.push(Shared::new("subresource: scale get", None, |f, _| {
        vec![
            f.create("s", json!({"replicas": 2})),
            get(format!("{}/s/scale", f.collection())),
        ]
    }));
    cases.push(Shared::new("subresource: scale discovery", None, |f, _| {
        vec![get(f.collection().replace("/namespaces/NS/widgets", ""))]
    }));
    // A widget with one replica, then one write of it (a PATCH of `path`, relative to the
    // widget), then a GET of its scale when `then_scale`.
    let scale_writes: [(&str, &str, &str, Value, bool); 3] = [
        (
            "subresource: scale with a selector",
            "status",
            "application/merge-patch+json",
            json!({"status": {"replicas": 1, "selector": "app=web"}}),
            true,
        ),
        (
            "subresource: scale json patch",
            "scale",
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/spec/replicas", "value": 3}]),
            false,
        ),
        (
            "subresource: scale negative",
            "scale",
            "application/merge-patch+json",
            json!({"spec": {"replicas": -1}}),
            false,
        ),
    ];
    for (label, subresource, content_type, body, then_scale) in scale_writes {
        cases.push(Shared::new(label, None, move |f, _| {
            let path = format!("{}/s", f.collection());
            let mut steps = vec![
                f.create("s", json!({"replicas": 1})),
                patch(format!("{path}/{subresource}"), content_type, body.clone()),
            ];
            if then_scale {
                steps.push(get(format!("{path}/scale")));
            }
            steps
        }));
    }
    cases.push(Shared::new(
        "subresource: scale of a missing object",
        None,
        |f, _| vec![get(format!("{}/missing/scale", f.collection()))],
    ));
    cases.push(Shared::new("subresource: scale patch", None, |f, _| {
        let path = format!("{}/s", f.collection());
        vec![
            f.create("s", json!({"replicas": 2})),
            patch(
                format!("{path}/scale"),
                "application/merge-patch+json",
                json!({"spec": {"replicas": 5}}),
            ),
            get(path),
        ]
    }));
    cases
}

/// Cases that need a CRD of their own (`NS.example.com`): another scope, no status
/// subresource.
fn own_crd_cases() -> Vec<Case> {
    let plain = || widget_crd(json!({"type": "object"}), json!({}));
    let mut cluster_scoped = plain();
    cluster_scoped["spec"]["scope"] = json!("Cluster");
    let mut without_status = widget("s", json!({}));
    without_status["status"] = json!({"phase": "x"});
    vec![
        Case::new(
            "cr cluster-scoped",
            vec![post(
                "/apis/NS.example.com/v1/widgets",
                json!({"apiVersion": "NS.example.com/v1", "kind": "Widget",
                            "metadata": {"name": "c", "namespace": "NS"}}),
            )],
        )
        .after(vec![
            post(CRDS, cluster_scoped),
            get("/apis/NS.example.com/v1/widgets").until(|status, _| status == 200),
        ]),
        // CustomResourceDefinitions do not allow unconditional updates either (the CRD
        // strategy's and its status strategy's AllowUnconditionalUpdate).
        Case::new(
            "crd put without resourceVersion",
            vec![put(format!("{CRDS}/widgets.NS.example.com"), plain())],
        )
        .after(install(plain())),
        Case::new(
            "crd status put without resourceVersion",
            vec![put(
                format!("{CRDS}/widgets.NS.example.com/status"),
                plain(),
            )],
        )
        .after(install(plain())),
        Case::new(
            "subresource: none, status kept",
            vec![
                post(WIDGETS, without_status),
                get(format!("{WIDGETS}/s/status")),
            ],
        )
        .after(install(plain())),
    ]
}
