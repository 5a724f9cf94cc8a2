//! Content negotiation of responses, as the apiserver's `endpoints/handlers/negotiation` does it:
//! the first clause of `Accept` (by quality, then specificity) that names a media type the server
//! serializes, with the representation it asks for (`as=Table` or `as=PartialObjectMetadata`,
//! `g=meta.k8s.io`, `v=v1` or `v1beta1`) if the endpoint allows that. No acceptable clause is
//! 406 NotAcceptable naming the media types served. Responses are always written as JSON: a
//! client that negotiated YAML or protobuf gets JSON (every client in practice lists it).

use std::collections::HashMap;

use super::status::ApiError;

/// How a response (or each watch event) carries its objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    /// The objects themselves.
    Object,
    /// `meta.k8s.io/v1` `Table` rows (`kubectl get`), with the objects as `includeObject` says.
    Table(IncludeObject),
    /// `PartialObjectMetadata` or, with `list`, `PartialObjectMetadataList`: metadata only.
    PartialObjectMetadata { list: bool },
}

/// `TableOptions.includeObject`: what each Table row carries in `object`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    /// Nothing.
    None,
    /// The object as `PartialObjectMetadata` (the default).
    Metadata,
    /// The whole object.
    Object,
}

/// A media type the server serializes: type, subtype, and whether it has a stream (watch)
/// serializer. The order is the codec factory's, which 406 messages list.
const SERVED: [(&str, &str, bool); 3] = [
    ("application", "json", true),
    ("application", "yaml", false),
    ("application", "vnd.kubernetes.protobuf", true),
];

/// One clause of an `Accept` header (goautoneg `Accept`).
struct Clause<'a> {
    kind: &'a str,
    subtype: &'a str,
    quality: f64,
    params: HashMap<&'a str, &'a str>,
}

/// goautoneg `ParseAccept`: clauses ordered by quality, then concrete types before wildcards.
fn clauses(header: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause<'_>> = header
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';');
            let range = pieces.next().unwrap_or_default();
            let (kind, subtype) = match range.split_once('/') {
                Some((k, s)) if !s.contains('/') => (k.trim(), s.trim()),
                None if range.trim() == "*" => ("*", "*"),
                _ => return None,
            };
            let mut clause = Clause {
                kind,
                subtype,
                quality: 1.0,
                params: HashMap::new(),
            };
            for param in pieces {
                let Some((key, value)) = param.split_once('=') else {
                    continue;
                };
                match key.trim() {
                    "q" => clause.quality = value.trim().parse().unwrap_or(0.0),
                    key => drop(clause.params.insert(key, value.trim())),
                }
            }
            Some(clause)
        })
        .collect();
    out.sort_by(|a, b| {
        b.quality
            .total_cmp(&a.quality)
            .then_with(|| (a.kind == "*").cmp(&(b.kind == "*")))
            .then_with(|| (a.subtype == "*").cmp(&(b.subtype == "*")))
    });
    out
}

/// What the request is, as far as negotiation cares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endpoint {
    /// A custom resource: served without conversion as JSON and YAML only (the CRD handler's
    /// standard serializers leave protobuf out).
    pub custom: bool,
    /// A watch: the negotiated media type needs a stream serializer.
    pub watch: bool,
}

/// `acceptMediaTypeOptions` with the request scope's restrictions: the representation a clause
/// asks for of a served media type, or `None` if the endpoint does not serve it that way.
fn options(clause: &Clause<'_>, served: (&str, &str, bool), endpoint: Endpoint) -> Option<Kind> {
    let (_, subtype, streams) = served;
    if let Some(stream) = clause.params.get("stream").filter(|s| !s.is_empty())
        && (!streams || *stream != "watch")
    {
        return None;
    }
    if clause
        .params
        .get("sv")
        .is_some_and(|v| !v.is_empty() && *v != "v1")
    {
        return None;
    }
    let target = ["as", "g", "v"].map(|k| clause.params.get(k).copied());
    if target == [None, None, None] {
        // No conversion: custom resources serve only their standard serializers.
        return (!endpoint.custom || subtype != "vnd.kubernetes.protobuf").then_some(Kind::Object);
    }
    let [kind, group, version] = target.map(Option::unwrap_or_default);
    if group != "meta.k8s.io" || !matches!(version, "v1" | "v1beta1") {
        return None;
    }
    match kind {
        // Tables are served as JSON and YAML only.
        "Table" => matches!(subtype, "json" | "yaml").then_some(Kind::Table),
        "PartialObjectMetadata" => Some(Kind::PartialObjectMetadata { list: false }),
        "PartialObjectMetadataList" => Some(Kind::PartialObjectMetadata { list: true }),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Table,
    PartialObjectMetadata { list: bool },
}

fn not_acceptable(stream: bool) -> ApiError {
    let served: Vec<String> = SERVED
        .iter()
        .filter(|(_, _, streams)| !stream || *streams)
        .map(|(kind, subtype, _)| {
            let suffix = if stream { ";stream=watch" } else { "" };
            format!("{kind}/{subtype}{suffix}")
        })
        .collect();
    ApiError::not_acceptable(format!(
        "only the following media types are accepted: {}",
        served.join(", ")
    ))
}

/// `optionsForTransform` for Tables: `includeObject` from the query, 400 if unknown.
fn include_object(query: &HashMap<String, String>) -> Result<IncludeObject, ApiError> {
    match query.get("includeObject").map(String::as_str) {
        None | Some("" | "Metadata") => Ok(IncludeObject::Metadata),
        Some("None") => Ok(IncludeObject::None),
        Some("Object") => Ok(IncludeObject::Object),
        Some(other) => Err(ApiError::bad_request(format!(
            "Unable to convert to Table as requested: includeObject: Invalid value: \"{other}\": \
             must be 'Metadata', 'Object', 'None', or empty"
        ))),
    }
}

/// What [`negotiate_versioned`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// How the objects are carried.
    pub representation: Representation,
    /// Whether the Table or PartialObjectMetadata asked for is `meta.k8s.io/v1beta1` (its
    /// `apiVersion` then says so).
    pub v1beta1: bool,
    /// Whether the response is YAML (`application/yaml`); else JSON (protobuf is answered as
    /// JSON).
    pub yaml: bool,
}

/// [`negotiate`], with the version of the representation and the media type chosen.
pub(crate) fn negotiate_versioned(
    accept: Option<&str>,
    query: &HashMap<String, String>,
    endpoint: Endpoint,
) -> Result<Negotiated, ApiError> {
    // No Accept header: the first served media type, as is.
    let Some(accept) = accept.filter(|a| !a.is_empty()) else {
        return Ok(Negotiated {
            representation: Representation::Object,
            v1beta1: false,
            yaml: false,
        });
    };
    let chosen = clauses(accept).iter().find_map(|clause| {
        SERVED.iter().find_map(|&served| {
            let (kind, subtype, streams) = served;
            let matches = (clause.kind == kind
                && (clause.subtype == subtype || clause.subtype == "*"))
                || (clause.kind == "*" && clause.subtype == "*");
            let v1beta1 = clause.params.get("v").is_some_and(|v| *v == "v1beta1");
            matches
                .then(|| options(clause, served, endpoint))
                .flatten()
                .map(|k| (k, streams, v1beta1, subtype == "yaml"))
        })
    });
    let Some((kind, streams, v1beta1, yaml)) = chosen else {
        // go-restful answers first when no clause names a media type the route produces at
        // all (parameters aside); a built-in's GET routes produce the served types.
        let any_type = clauses(accept).iter().any(|clause| {
            SERVED.iter().any(|(kind, subtype, _)| {
                (clause.kind == *kind || clause.kind == "*")
                    && (clause.subtype == *subtype || clause.subtype == "*")
            })
        });
        if !any_type && !endpoint.custom && !endpoint.watch {
            let available: Vec<String> = SERVED
                .iter()
                .map(|(kind, subtype, _)| format!("{kind}/{subtype}"))
                .collect();
            return Err(ApiError::route_not_acceptable(&available));
        }
        return Err(not_acceptable(false));
    };
    if endpoint.watch && !streams {
        return Err(not_acceptable(true));
    }
    let representation = match kind {
        Kind::Object => Representation::Object,
        Kind::Table => Representation::Table(include_object(query)?),
        Kind::PartialObjectMetadata { list } => Representation::PartialObjectMetadata { list },
    };
    Ok(Negotiated {
        representation,
        v1beta1: v1beta1 && kind != Kind::Object,
        yaml,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `NegotiateOutputMediaType` (and, for watches, `NegotiateOutputMediaTypeStream`): the
    /// representation the request's `Accept` header asks for, or 406 NotAcceptable.
    fn negotiate(
        accept: Option<&str>,
        query: &HashMap<String, String>,
        endpoint: Endpoint,
    ) -> Result<Representation, ApiError> {
        negotiate_versioned(accept, query, endpoint).map(|chosen| chosen.representation)
    }

    fn negotiated(accept: &str, custom: bool, watch: bool) -> Result<Representation, String> {
        negotiate(Some(accept), &HashMap::new(), Endpoint { custom, watch }).map_err(|e| e.message)
    }

    #[test]
    fn kubectl_get_gets_tables_and_falls_back_to_json() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            negotiated(kubectl, true, true),
            Ok(Representation::Table(IncludeObject::Metadata))
        );
        // Not a Table kind the server knows: the next clause.
        assert_eq!(
            negotiated(
                "application/json;as=Chart;g=meta.k8s.io;v=v1, application/json",
                false,
                false
            ),
            Ok(Representation::Object)
        );
        assert_eq!(
            negotiated(
                "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
                true,
                false
            ),
            Ok(Representation::PartialObjectMetadata { list: true })
        );
        // Quality orders clauses.
        assert_eq!(
            negotiated(
                "application/json;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1",
                false,
                false
            ),
            Ok(Representation::Table(IncludeObject::Metadata))
        );
        assert_eq!(negotiated("*/*", true, true), Ok(Representation::Object));
    }

    #[test]
    fn unserved_media_types_are_not_acceptable() {
        let listed = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";
        // A built-in's route refuses a media type it does not produce at all (go-restful).
        assert_eq!(
            negotiated("application/xml", false, false),
            Err("406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf".into())
        );
        assert_eq!(
            negotiated("application/xml", true, false),
            Err(listed.into())
        );
        // Custom resources are not served as protobuf, but the message lists what the
        // serializer knows.
        assert_eq!(
            negotiated("application/vnd.kubernetes.protobuf", true, false),
            Err(listed.into())
        );
        assert_eq!(
            negotiated("application/yaml", false, true),
            Err("only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch".into())
        );
        // Tables are JSON or YAML.
        assert_eq!(
            negotiated(
                "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1",
                false,
                false
            ),
            Err(listed.into())
        );
    }

    #[test]
    fn include_object_is_checked_for_tables() {
        let table = "application/json;as=Table;g=meta.k8s.io;v=v1";
        let query = |v: &str| HashMap::from([("includeObject".to_string(), v.to_string())]);
        let endpoint = Endpoint {
            custom: false,
            watch: false,
        };
        assert_eq!(
            negotiate(Some(table), &query("Object"), endpoint).ok(),
            Some(Representation::Table(IncludeObject::Object))
        );
        assert_eq!(
            negotiate(Some(table), &query("All"), endpoint)
                .unwrap_err()
                .message,
            "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
        );
    }
}
