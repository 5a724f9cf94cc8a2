//! autoscaling HorizontalPodAutoscalers (`pkg/registry/autoscaling/horizontalpodautoscaler`),
//! served as autoscaling/v2 (their stored form) and autoscaling/v1 (a view converted both ways
//! by [`crate::validation::autoscaling`], as `pkg/apis/autoscaling/v1/conversion.go` converts
//! it): their Go type, v2 defaulting, rules, status isolation both ways (`PrepareForUpdate` of
//! the main and the status strategy), the disabled `tolerance` dropped, and the printer's
//! columns (`printHorizontalPodAutoscaler`).

use std::borrow::Cow;

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::{self, FieldError, autoscaling, gotypes};

/// The OpenAPI definition of the stored form.
const DEFINITION: &str = "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler";

/// The fields of the v2 Go type that are structs rather than pointers.
const VALUE_STRUCTS: &[&str] = &["spec", "spec.scaleTargetRef", "status"];

static TYPED: Typed = typed!(DEFINITION, VALUE_STRUCTS);

/// The OpenAPI definition of the autoscaling/v1 form.
const V1_DEFINITION: &str = "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler";

/// The fields of the v1 Go type that are structs rather than pointers (its `scaleTargetRef`
/// is atomic).
const V1_VALUE_STRUCTS: &[&str] = &["spec", "status"];

/// The list and map types of the autoscaling/v1 form.
static V1_APPLY_SCHEMA: LazyLock<ApplySchema> =
    LazyLock::new(|| ApplySchema::from_definitions(V1_DEFINITION, V1_VALUE_STRUCTS));

/// The stored object as the field manager compares an autoscaling/v1 write: its v1 form.
fn v1_form(stored: &Value) -> Value {
    autoscaling::to_v1(stored)
}

/// A stored object's form as a version serves it.
pub(crate) type ViewOf = fn(&Value) -> Value;

/// For autoscaling/v1 HorizontalPodAutoscalers, which are stored as v2: the form the field
/// manager records a write's fields in (the v1 one, as kube-apiserver's field manager works on
/// the request's version) and its list and map types; `None` for any other resource.
pub(crate) fn field_manager_view(info: &ResourceInfo) -> Option<(ViewOf, &'static ApplySchema)> {
    let v1 = info.group == "autoscaling"
        && info.plural == "horizontalpodautoscalers"
        && info.version == "v1";
    v1.then(|| (v1_form as ViewOf, &*V1_APPLY_SCHEMA))
}

/// The columns' descriptions: autoscaling/v2beta1's `SwaggerDoc()`, which the printer takes.
mod described {
    pub(super) const REFERENCE: &str = "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.";
    pub(super) const TARGETS: &str = "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.";
    pub(super) const MIN_PODS: &str = "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.";
    pub(super) const MAX_PODS: &str = "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.";
    pub(super) const REPLICAS: &str = "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.";
}

/// HorizontalPodAutoscalers' [`Strategy`], through one of the versions.
pub(crate) enum Autoscalers {
    /// autoscaling/v2: the stored form.
    V2,
    /// autoscaling/v1: converted.
    V1,
}

/// The stored (v2) form of a served object, for the columns.
fn as_stored(obj: &Value) -> Value {
    if obj["apiVersion"] == "autoscaling/v1" {
        autoscaling::from_v1(obj.clone())
    } else {
        obj.clone()
    }
}

/// `obj` defaulted (a clone), as its spec compares after decoding.
fn defaulted(obj: &Value) -> Value {
    let mut obj = obj.clone();
    autoscaling::default_v2(&mut obj);
    obj
}

impl Strategy for Autoscalers {
    fn to_served<'a>(&self, info: &ResourceInfo, stored: &'a Value) -> Cow<'a, Value> {
        match self {
            Autoscalers::V2 => super::served_as_ref(info, stored),
            Autoscalers::V1 => Cow::Owned(autoscaling::to_v1(stored)),
        }
    }

    fn to_stored(&self, info: &ResourceInfo, served: Value) -> Value {
        match self {
            Autoscalers::V2 => super::served_as(info, served),
            Autoscalers::V1 => {
                let mut stored = autoscaling::from_v1(served);
                stored["kind"] = json!(info.kind);
                stored
            }
        }
    }

    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        autoscaling::default_v2(obj);
        Ok(())
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        autoscaling::hpa_rules(new, old)
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        _old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        if subresource == Some("status") {
            return validation::invalid(info, new, autoscaling::hpa_status_rules(new));
        }
        Ok(())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        autoscaling::drop_disabled_fields(obj, None);
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, _subresource: Option<&str>) {
        autoscaling::default_v2(new);
        autoscaling::drop_disabled_fields(new, Some(old));
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // autoscalerStatusStrategy.PrepareForUpdate: the spec is the stored one.
        crate::object::keep_stored(new, old, "spec");
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        subresource: Option<&str>,
    ) -> Option<bool> {
        super::spec_changed(defaulted, old, new, subresource)
    }

    /// The served version's: server-side apply merges the served form.
    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(match self {
            Autoscalers::V2 => &TYPED.apply,
            Autoscalers::V1 => &V1_APPLY_SCHEMA,
        })
    }

    fn value_structs(&self) -> &'static [&'static str] {
        match self {
            Autoscalers::V2 => VALUE_STRUCTS,
            Autoscalers::V1 => V1_VALUE_STRUCTS,
        }
    }

    fn stored_form(&self, obj: &mut Value) {
        // The v2 encoder: `status` a struct, `desiredReplicas` and `currentMetrics` without
        // omitempty, `currentReplicas` omitted at 0.
        if !obj["status"].is_object() {
            obj["status"] = json!({});
        }
        let status = &mut obj["status"];
        if status["desiredReplicas"].is_null() {
            status["desiredReplicas"] = json!(0);
        }
        if status.get("currentMetrics").is_none() {
            status["currentMetrics"] = Value::Null;
        }
        if status["currentReplicas"] == json!(0)
            && let Some(s) = status.as_object_mut()
        {
            s.remove("currentReplicas");
        }
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        use described::*;
        vec![
            Column::name(),
            Column::new(
                "Reference",
                "string",
                0,
                Box::new(|o, _| {
                    let target = &as_stored(o)["spec"]["scaleTargetRef"];
                    json!(format!(
                        "{}/{}",
                        target["kind"].as_str().unwrap_or_default(),
                        target["name"].as_str().unwrap_or_default()
                    ))
                }),
            )
            .described(REFERENCE),
            Column::new(
                "Targets",
                "string",
                0,
                Box::new(|o, _| json!(autoscaling::format_metrics(&as_stored(o)))),
            )
            .described(TARGETS),
            Column::new(
                "MinPods",
                "string",
                0,
                Box::new(|o, _| {
                    json!(match as_stored(o)["spec"]["minReplicas"].as_i64() {
                        Some(min) => min.to_string(),
                        None => "<unset>".to_owned(),
                    })
                }),
            )
            .described(MIN_PODS),
            Column::new(
                "MaxPods",
                "string",
                0,
                Box::new(|o, _| json!(as_stored(o)["spec"]["maxReplicas"].as_i64().unwrap_or(0))),
            )
            .described(MAX_PODS),
            Column::new(
                "Replicas",
                "string",
                0,
                Box::new(|o, _| {
                    json!(
                        as_stored(o)["status"]["currentReplicas"]
                            .as_i64()
                            .unwrap_or(0)
                    )
                }),
            )
            .described(REPLICAS),
            Column::age(),
        ]
    }
}
