//! Lists: paging with `limit` and `continue` (across writes), `resourceVersion` and
//! `resourceVersionMatch` combinations, Table and `PartialObjectMetadataList` output.

use crate::corpus::{Case, Step, TABLE, delete, get};
use crate::watch::create;

/// The namespace's ConfigMaps.
const CMS: &str = "/api/v1/namespaces/NS/configmaps";

fn list(query: &str) -> Step {
    get(format!("{CMS}?{query}"))
}

/// Three ConfigMaps, `a`, `b` (app=db) and `c`.
fn three() -> Vec<Step> {
    vec![create("a", "web"), create("b", "db"), create("c", "web")]
}

const PARTIAL_LIST: &str = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
const PARTIAL: &str = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Paging.
    cases.push(Case::new(
        "paging: every page",
        [
            three(),
            vec![
                list("limit=1").remember("$CONT1", "/metadata/continue"),
                list("limit=1&continue=$CONT1").remember("$CONT2", "/metadata/continue"),
                list("limit=1&continue=$CONT2"),
            ],
        ]
        .concat(),
    ));
    cases.push(Case::new(
        "paging: a write between pages",
        [
            three(),
            vec![
                list("limit=2").remember("$CONT", "/metadata/continue"),
                create("d", "web"),
                delete(format!("{CMS}/c")),
                list("limit=2&continue=$CONT"),
            ],
        ]
        .concat(),
    ));
    cases.push(Case::new(
        "paging: with a labelSelector",
        [
            three(),
            vec![
                list("limit=1&labelSelector=app%3Dweb").remember("$CONT", "/metadata/continue"),
                list("limit=1&labelSelector=app%3Dweb&continue=$CONT"),
            ],
        ]
        .concat(),
    ));
    cases.push(Case::new(
        "paging: continue with a resourceVersion",
        [
            three(),
            vec![
                list("limit=1").remember("$CONT", "/metadata/continue"),
                list("continue=$CONT&resourceVersion=0"),
            ],
        ]
        .concat(),
    ));
    cases.push(Case::new(
        "paging: continue with resourceVersionMatch",
        [
            three(),
            vec![
                list("limit=1").remember("$CONT", "/metadata/continue"),
                list("continue=$CONT&resourceVersionMatch=NotOlderThan"),
            ],
        ]
        .concat(),
    ));
    for (label, query) in [
        ("paging: limit larger than the list", "limit=10"),
        ("paging: limit 0", "limit=0"),
        ("paging: limit 3 of 3", "limit=3"),
        ("paging: limit not a number", "limit=many"),
        ("list: resourceVersion 0", "resourceVersion=0"),
        (
            "list: resourceVersion 0 with limit",
            "resourceVersion=0&limit=1",
        ),
        ("list: resourceVersion not a number", "resourceVersion=abc"),
        (
            "list: resourceVersionMatch without resourceVersion",
            "resourceVersionMatch=NotOlderThan",
        ),
        (
            "list: resourceVersionMatch Exact at 0",
            "resourceVersionMatch=Exact&resourceVersion=0",
        ),
        (
            "list: resourceVersionMatch NotOlderThan at 0",
            "resourceVersionMatch=NotOlderThan&resourceVersion=0",
        ),
        (
            "list: resourceVersionMatch unknown",
            "resourceVersionMatch=Newest&resourceVersion=0",
        ),
        (
            "list: resourceVersionMatch lower case",
            "resourceVersionMatch=notOlderThan&resourceVersion=0",
        ),
        ("list: timeoutSeconds", "timeoutSeconds=5"),
        (
            "list: labelSelector and limit",
            "labelSelector=app%3Ddb&limit=5",
        ),
    ] {
        let mut steps = three();
        steps.push(list(query));
        cases.push(Case::new(label, steps));
    }
    // At a remembered resourceVersion.
    for (label, query) in [
        (
            "list: NotOlderThan a remembered resourceVersion",
            "resourceVersionMatch=NotOlderThan&resourceVersion=$RV",
        ),
        (
            "list: a remembered resourceVersion, unmatched",
            "resourceVersion=$RV",
        ),
        (
            "list: Exact at a remembered resourceVersion",
            "resourceVersionMatch=Exact&resourceVersion=$RV",
        ),
        (
            "list: Exact at a remembered resourceVersion with limit",
            "resourceVersionMatch=Exact&resourceVersion=$RV&limit=1",
        ),
    ] {
        cases.push(Case::new(
            label,
            vec![
                create("a", "web").remember("$RV", "/metadata/resourceVersion"),
                create("b", "db"),
                list(query),
            ],
        ));
    }
    // Representations.
    for (label, accept, path) in [
        ("table: list", TABLE, CMS.to_owned()),
        (
            "table: list includeObject=None",
            TABLE,
            format!("{CMS}?includeObject=None"),
        ),
        (
            "table: list includeObject=Object",
            TABLE,
            format!("{CMS}?includeObject=Object"),
        ),
        (
            "table: list includeObject=Metadata",
            TABLE,
            format!("{CMS}?includeObject=Metadata"),
        ),
        (
            "table: list includeObject=Everything",
            TABLE,
            format!("{CMS}?includeObject=Everything"),
        ),
        ("table: get", TABLE, format!("{CMS}/a")),
        (
            "table: v1beta1",
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            CMS.to_owned(),
        ),
        (
            "table: wrong group",
            "application/json;as=Table;v=v1;g=example.com",
            CMS.to_owned(),
        ),
        (
            "table: or json",
            "application/json;as=Table;v=v1;g=meta.k8s.io, application/json",
            CMS.to_owned(),
        ),
        (
            "table: of namespaces",
            TABLE,
            "/api/v1/namespaces?fieldSelector=metadata.name%3DNS".to_owned(),
        ),
        (
            "table: of secrets",
            TABLE,
            "/api/v1/namespaces/NS/secrets".to_owned(),
        ),
        ("partial: list", PARTIAL_LIST, CMS.to_owned()),
        ("partial: get", PARTIAL, format!("{CMS}/a")),
        ("partial: list asked for one", PARTIAL, CMS.to_owned()),
        (
            "partial: one asked for a list",
            PARTIAL_LIST,
            format!("{CMS}/a"),
        ),
        (
            "partial: v1beta1 list",
            "application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io",
            CMS.to_owned(),
        ),
        (
            "partial: list with limit",
            PARTIAL_LIST,
            format!("{CMS}?limit=1"),
        ),
        ("accept: yaml", "application/yaml", format!("{CMS}/a")),
        (
            "accept: nothing acceptable",
            "text/html",
            format!("{CMS}/a"),
        ),
    ] {
        cases.push(Case::new(
            label,
            vec![
                create("a", "web"),
                create("b", "db"),
                get(path).header("Accept", accept),
            ],
        ));
    }
    cases
}
