//! batch/v1 Jobs and CronJobs (`pkg/registry/batch/job/strategy.go`,
//! `pkg/registry/batch/cronjob/strategy.go`): their Go types, defaulting, a Job's generated
//! selector and template labels (`PrepareForCreate`, after the field manager recorded the
//! request, so that no manager owns them), rules, generation (bumped by a change of the spec
//! through the main resource), status isolation both ways, a Job's status rules on `/status`
//! writes, the `status.successful` field label, a Job's DELETE orphaning its dependents by
//! default (`DefaultGarbageCollectionPolicy`), the create warnings (`WarningsOnCreate`) and the
//! printers' columns (`pkg/printers/internalversion/printers.go`: `printJob`, `printCronJob`).
//! The rules are [`crate::validation::batch`]'s.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::deployment::{containers, description};
use super::{Deletion, Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::go::fmt::go_quote;
use crate::lifecycle::propagation::{FOREGROUND, ORPHAN, Propagation, deletion_finalizers};
use crate::object::finalizers;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::{Column, age_since};
use crate::validation::{self, FieldError, apps, batch, gotypes};

/// The strategy of one of the kinds.
pub(crate) enum Batch {
    /// `jobs`.
    Jobs,
    /// `cronjobs`.
    CronJobs,
}

/// The fields of a Job's Go type that are structs rather than pointers, or lists without
/// `omitempty` (see [`Strategy::value_structs`]).
const JOB_STRUCTS: &[&str] = &[
    "spec",
    "spec.template",
    "spec.template.metadata",
    "spec.template.spec",
    "spec.template.spec.containers",
    "status",
];

/// The same of a CronJob's.
const CRON_JOB_STRUCTS: &[&str] = &[
    "spec",
    "spec.jobTemplate",
    "spec.jobTemplate.metadata",
    "spec.jobTemplate.spec",
    "spec.jobTemplate.spec.template",
    "spec.jobTemplate.spec.template.metadata",
    "spec.jobTemplate.spec.template.spec",
    "spec.jobTemplate.spec.template.spec.containers",
    "status",
];

static JOB: Typed = typed!("io.k8s.api.batch.v1.Job", JOB_STRUCTS);
static CRON_JOB: Typed = typed!("io.k8s.api.batch.v1.CronJob", CRON_JOB_STRUCTS);

/// The descriptions the CronJob printer takes from batch/v1beta1's `SwaggerDoc()`.
mod described {
    pub(super) const SCHEDULE: &str =
        "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
    pub(super) const TIME_ZONE: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
    pub(super) const SUSPEND: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
    pub(super) const ACTIVE: &str = "A list of pointers to currently running jobs.";
    pub(super) const LAST_SCHEDULE: &str =
        "Information when was the last time the job was successfully scheduled.";
}

impl Batch {
    fn typed(&self) -> &'static Typed {
        match self {
            Batch::Jobs => &JOB,
            Batch::CronJobs => &CRON_JOB,
        }
    }

    /// `obj` defaulted (a clone): what the spec compares as after decoding.
    fn defaulted(&self, obj: &Value) -> Value {
        let mut obj = obj.clone();
        let _ = self.decode(&mut obj);
        obj
    }
}

/// A Job's `status.successful` field label: its succeeded count.
fn job_field_value(obj: &Value, label: &str) -> Option<String> {
    (label == "status.successful")
        .then(|| obj["status"]["succeeded"].as_i64().unwrap_or(0).to_string())
}

/// `hasJobCondition`: whether the first condition of `type_` is true.
fn has_condition(obj: &Value, type_: &str) -> bool {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .is_some_and(|c| c["status"] == "True")
}

/// `printJob`'s Status cell.
fn job_status(obj: &Value) -> Value {
    let status = if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if !obj["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    json!(status)
}

/// `printJob`'s Completions cell: `succeeded/completions`, or `succeeded/1 of parallelism` for
/// a work queue.
fn job_completions(obj: &Value) -> Value {
    let succeeded = obj["status"]["succeeded"].as_i64().unwrap_or(0);
    let spec = &obj["spec"];
    json!(match spec["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match spec["parallelism"].as_i64().unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    })
}

/// `printJob`'s Duration cell: from the start to the completion (or to `now`).
fn job_duration(obj: &Value, now: Timestamp) -> Value {
    let start = obj["status"]["startTime"].as_str();
    if start.is_none() {
        return json!("");
    }
    let end = obj["status"]["completionTime"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .unwrap_or(now);
    age_since(start, end)
}

/// `metav1.FormatLabelSelector`: `<none>` for a missing or empty selector.
fn format_selector(selector: &Value) -> Value {
    let text = apps::selector_string(selector);
    json!(if selector.is_null() || text.is_empty() {
        "<none>".to_owned()
    } else {
        text
    })
}

/// The wide Containers, Images and Selector columns of the pod template and selector at `spec`
/// (`spec` of a Job, `spec.jobTemplate.spec` of a CronJob).
fn wide_columns(cron: bool) -> [Column; 3] {
    let spec_of = move |o: &Value| -> Value {
        if cron {
            o["spec"]["jobTemplate"].clone()
        } else {
            o.clone()
        }
    };
    [
        Column::new(
            "Containers",
            "string",
            1,
            Box::new(move |o, _| containers(&spec_of(o), "name")),
        )
        .described("Names of each container in the template."),
        Column::new(
            "Images",
            "string",
            1,
            Box::new(move |o, _| containers(&spec_of(o), "image")),
        )
        .described("Images referenced by each container in the template."),
        Column::new(
            "Selector",
            "string",
            1,
            Box::new(move |o, _| format_selector(&spec_of(o)["spec"]["selector"])),
        )
        .described(&description("io.k8s.api.batch.v1.JobSpec", "selector")),
    ]
}

impl Strategy for Batch {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*self.typed().go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        match self {
            Batch::Jobs => batch::default_job(obj),
            Batch::CronJobs => batch::default_cron_job(obj),
        }
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        match self {
            Batch::Jobs => batch::job_rules(new, old),
            Batch::CronJobs => batch::cron_job_rules(new, old),
        }
    }

    fn update_revalidates_metadata(&self) -> bool {
        // A Job's ValidateUpdate runs ValidateJob (its ValidateObjectMeta) and
        // ValidateJobUpdate; a CronJob's only ValidateObjectMetaUpdate.
        matches!(self, Batch::Jobs)
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        let mut warnings: Vec<String> = apps::name_warning(name).into_iter().collect();
        warnings.extend(match self {
            Batch::Jobs => batch::job_spec_warnings(&obj["spec"], "spec"),
            Batch::CronJobs => batch::job_spec_warnings(
                &obj["spec"]["jobTemplate"]["spec"],
                "spec.jobTemplate.spec",
            ),
        });
        Ok(warnings)
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        // The job status strategy's ValidateUpdate; a CronJob's status is not validated.
        if matches!(self, Batch::Jobs) && subresource == Some("status") {
            return validation::invalid(info, new, batch::job_status_rules(new, old));
        }
        Ok(())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if matches!(self, Batch::Jobs) {
            batch::generate_selector(obj);
        }
    }

    fn prepare_for_update(&self, _old: &Value, new: &mut Value, _subresource: Option<&str>) {
        // Decoding defaults the spec before the strategy compares it.
        let _ = self.decode(new);
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // The status strategies' PrepareForUpdate: the spec is the stored one; the metadata and
        // the status are the write's.
        crate::object::keep_stored(new, old, "spec");
        if !new["status"].is_object() {
            new["status"] = json!({});
        }
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        subresource: Option<&str>,
    ) -> Option<bool> {
        super::spec_changed(|o| self.defaulted(o), old, new, subresource)
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&self.typed().apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        match self {
            Batch::Jobs => JOB_STRUCTS,
            Batch::CronJobs => CRON_JOB_STRUCTS,
        }
    }

    fn field_labels(&self) -> &'static [&'static str] {
        match self {
            Batch::Jobs => &["status.successful"],
            Batch::CronJobs => &[],
        }
    }

    /// A Job's REST storage (`pkg/registry/batch/job/storage/storage.go` `Delete`,
    /// `DeleteCollection`): a DELETE that names no propagation policy orphans the pods, and
    /// says so.
    fn delete_warnings(&self, options: &Value) -> Vec<String> {
        let unset = |field: &str| options.get(field).is_none_or(Value::is_null);
        if matches!(self, Batch::Jobs) && unset("propagationPolicy") && unset("orphanDependents") {
            vec![
                "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"
                    .to_owned(),
            ]
        } else {
            Vec::new()
        }
    }

    /// batch/v1's conversion of a Job's field labels (`pkg/apis/batch/v1/conversion.go`); a
    /// CronJob has none.
    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        matches!(self, Batch::Jobs)
            .then(|| format!("field label {} not supported for Job", go_quote(field)))
    }

    fn field_values(&self) -> Option<fn(&Value, &str) -> Option<String>> {
        match self {
            Batch::Jobs => Some(job_field_value),
            Batch::CronJobs => None,
        }
    }

    fn before_delete(
        &self,
        old: &Value,
        policy: Option<Propagation>,
        now: &str,
    ) -> Result<Deletion, ApiError> {
        // batch/v1 Jobs orphan their dependents by default (`DefaultGarbageCollectionPolicy`):
        // a DELETE without a policy, of a Job without a garbage collector finalizer, leaves it
        // deleting with the `orphan` finalizer, as the generic deletion does for that policy.
        let current = finalizers(old);
        let defaulted = matches!(self, Batch::Jobs)
            && policy.is_none()
            && old["metadata"]["deletionTimestamp"].is_null()
            && !current.iter().any(|f| f == ORPHAN || f == FOREGROUND);
        if !defaulted {
            return Ok(Deletion::Generic);
        }
        let pending = deletion_finalizers(&current, Some(Propagation::Orphan)).unwrap_or(current);
        let mut deleting = old.clone();
        let meta = &mut deleting["metadata"];
        meta["finalizers"] = json!(pending);
        meta["deletionTimestamp"] = json!(now);
        if let Some(g) = meta["generation"].as_i64().filter(|g| *g > 0) {
            meta["generation"] = json!(g + 1);
        }
        meta["deletionGracePeriodSeconds"] = json!(0);
        Ok(Deletion::Replace(deleting))
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        let mut columns = vec![Column::name()];
        match self {
            Batch::Jobs => {
                columns.extend([
                    Column::new("Status", "string", 0, Box::new(|o, _| job_status(o)))
                        .described("Status of the job."),
                    Column::new(
                        "Completions",
                        "string",
                        0,
                        Box::new(|o, _| job_completions(o)),
                    )
                    .described(&description("io.k8s.api.batch.v1.JobStatus", "succeeded")),
                    Column::new("Duration", "string", 0, Box::new(job_duration))
                        .described("Time required to complete the job."),
                    Column::age(),
                ]);
                columns.extend(wide_columns(false));
            }
            Batch::CronJobs => {
                use described::*;
                columns.extend([
                    Column::new(
                        "Schedule",
                        "string",
                        0,
                        Box::new(|o, _| o["spec"]["schedule"].clone()),
                    )
                    .described(SCHEDULE),
                    Column::new(
                        "Timezone",
                        "string",
                        0,
                        Box::new(|o, _| match o["spec"]["timeZone"].as_str() {
                            Some(zone) => json!(zone),
                            None => json!("<none>"),
                        }),
                    )
                    .described(TIME_ZONE),
                    Column::new(
                        "Suspend",
                        "boolean",
                        0,
                        Box::new(|o, _| match o["spec"]["suspend"].as_bool() {
                            Some(true) => json!("True"),
                            Some(false) => json!("False"),
                            None => json!("<unset>"),
                        }),
                    )
                    .described(SUSPEND),
                    Column::new(
                        "Active",
                        "integer",
                        0,
                        Box::new(|o, _| {
                            json!(o["status"]["active"].as_array().map_or(0, Vec::len))
                        }),
                    )
                    .described(ACTIVE),
                    Column::new(
                        "Last Schedule",
                        "string",
                        0,
                        Box::new(|o, now| match o["status"]["lastScheduleTime"].as_str() {
                            Some(at) => age_since(Some(at), now),
                            None => json!("<none>"),
                        }),
                    )
                    .described(LAST_SCHEDULE),
                    Column::age(),
                ]);
                columns.extend(wide_columns(true));
            }
        }
        columns
    }
}
