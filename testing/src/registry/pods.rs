//! What the pod registry (`pkg/registry/core/pod/storage`) adds to the generic store: graceful
//! deletion (`rest.BeforeDelete` with a kind's `CheckGracefulDelete`, and the store's
//! `updateForGracefulDeletionAndFinalizers`), the `binding` subresource (`BindingREST`), the
//! `eviction` subresource (`EvictionREST`, its PodDisruptionBudgets' part in [`super::disruption`]), and the
//! `ServiceAccount` admission plugin on a new pod (it reads the store), with the
//! `SchedulingGated` condition `PrepareForCreate` sets.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::State;
use super::delete::is_dry_run;
use super::disruption::{self, Verdict};
use crate::kinds;
use crate::lifecycle::propagation::{Propagation, deletion_finalizers};
use crate::object::{finalizers, generate_name, meta_mut, meta_str, rfc3339};
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Qualified, delete_success};
use crate::store::StorageKey;

/// Where the pods are.
fn pods_key() -> StorageKey {
    StorageKey {
        group: String::new(),
        resource: "pods".into(),
    }
}

/// Where a service account's token is mounted.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The `status` of a subresource create: `Success`, with the create's code.
fn created_status() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "code": 201})
}

impl State {
    /// The graceful part of a DELETE of `old` with `options`, for a kind that deletes
    /// gracefully: `Some` answer when it decided the request (the object marked deleting and
    /// kept for its grace period or its finalizers, removed, or already waiting), `None` when
    /// the generic deletion follows.
    ///
    /// # Errors
    /// None yet (the signature leaves room for the store's).
    pub(super) fn graceful_delete(
        &mut self,
        info: &ResourceInfo,
        old: &Value,
        options: &Value,
        policy: Option<Propagation>,
    ) -> Result<Option<Value>, ApiError> {
        let strategy = kinds::strategy(info);
        // Negative values are read as 1 s on the delete path.
        let requested = options["gracePeriodSeconds"]
            .as_i64()
            .map(|g| if g < 0 { 1 } else { g });
        let name = meta_str(old, "name").unwrap_or_default().to_owned();
        let uid = meta_str(old, "uid").unwrap_or_default().to_owned();
        // finalizeDelete: the object (`ReturnDeletedObject`) or a success Status.
        let success = |obj: &Value| {
            if strategy.returns_deleted_object() {
                Self::to_view(info, obj)
            } else {
                delete_success(info.qualified_resource(), &name, &uid)
            }
        };
        let mut new = old.clone();
        let period;
        if let Some(since) = old["metadata"]["deletionTimestamp"].as_str() {
            let current = old["metadata"]["deletionGracePeriodSeconds"]
                .as_i64()
                .map(|g| if g < 0 { 1 } else { g });
            let Some(current) = current.filter(|g| *g != 0) else {
                return Ok(None);
            };
            if strategy.grace_period(old, requested).is_none() {
                return Ok(None);
            }
            match requested {
                // Only a shorter grace period may be given.
                Some(p) if p < current => {
                    let at = since
                        .parse::<Timestamp>()
                        .ok()
                        .and_then(|t| t.checked_add(SignedDuration::from_secs(p - current)).ok())
                        .unwrap_or_else(|| self.now());
                    let meta = meta_mut(&mut new);
                    meta.insert("deletionTimestamp".into(), json!(rfc3339(at)));
                    meta.insert("deletionGracePeriodSeconds".into(), json!(p));
                    period = p;
                }
                // The graceful deletion is pending: nothing changes.
                _ => return Ok(Some(success(old))),
            }
        } else {
            let Some(p) = strategy.grace_period(old, requested) else {
                return Ok(None);
            };
            let at = self
                .now()
                .checked_add(SignedDuration::from_secs(p))
                .unwrap_or_else(|_| self.now());
            let meta = meta_mut(&mut new);
            meta.insert("deletionTimestamp".into(), json!(rfc3339(at)));
            meta.insert("deletionGracePeriodSeconds".into(), json!(p));
            if let Some(g) = meta
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                meta.insert("generation".into(), json!(g + 1));
            }
            period = p;
        }
        let current = finalizers(old);
        let pending = match deletion_finalizers(&current, policy) {
            Some(changed) => {
                meta_mut(&mut new).insert("finalizers".into(), json!(changed));
                changed
            }
            None => current,
        };
        let waits = !pending.is_empty() || period > 0;
        if is_dry_run(options) {
            return Ok(Some(if waits {
                Self::to_view(info, &new)
            } else {
                success(&new)
            }));
        }
        let stored = self.store.put(&info.storage, new);
        self.after_write(&stored, info);
        if waits {
            return Ok(Some(Self::to_view(info, &stored)));
        }
        let ns = meta_str(old, "namespace").unwrap_or_default().to_owned();
        let gone = self
            .store
            .remove(&info.storage, &ns, &name)
            .unwrap_or_else(|| Value::clone(&stored));
        self.after_delete(&gone, info);
        Ok(Some(success(&gone)))
    }

    /// The refusals of the mutating admission a new pod (in stored form) meets before it is
    /// validated, as kube-apiserver admits before it validates: `Priority`'s and
    /// `ServiceAccount`'s (an account that does not exist).
    ///
    /// # Errors
    /// The 403.
    pub(super) fn refuse_pod_create(&self, pod: &Value) -> Result<(), ApiError> {
        self.admit_pod_create(&mut pod.clone())
    }

    /// `ServiceAccount` admission of a new pod (in stored form): `serviceAccountName` defaults
    /// to `default`, the account must exist, and unless the pod or the account opt out its
    /// token is mounted (`kube-api-access-<random>`) in every container. Then the
    /// `SchedulingGated` condition of a gated pod (`PrepareForCreate`).
    ///
    /// # Errors
    /// The 403 of a missing service account, or of `Priority` admission.
    pub(super) fn admit_pod_create(&self, pod: &mut Value) -> Result<(), ApiError> {
        let ns = meta_str(pod, "namespace").unwrap_or_default().to_owned();
        let name = meta_str(pod, "name").unwrap_or_default().to_owned();
        let forbidden = |why: &str| {
            ApiError::forbidden_object(
                Qualified {
                    group: "",
                    name: "pods",
                },
                &name,
                why,
            )
        };
        kinds::pod::admit_create(pod).map_err(|why| forbidden(&why))?;
        let spec = &mut pod["spec"];
        let account = match spec["serviceAccountName"].as_str() {
            Some(a) if !a.is_empty() => a.to_owned(),
            _ => "default".to_owned(),
        };
        spec["serviceAccountName"] = json!(account);
        spec["serviceAccount"] = json!(account);
        let key = StorageKey {
            group: String::new(),
            resource: "serviceaccounts".into(),
        };
        let Some(sa) = self.store.get(&key, &ns, &account) else {
            return Err(forbidden(&format!(
                "error looking up service account {ns}/{account}: serviceaccount \"{account}\" not found"
            )));
        };
        let automount = spec["automountServiceAccountToken"]
            .as_bool()
            .or_else(|| sa["automountServiceAccountToken"].as_bool())
            .unwrap_or(true);
        let mounted = ["containers", "initContainers"].iter().any(|list| {
            spec[*list].as_array().into_iter().flatten().any(|c| {
                c["volumeMounts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|m| m["mountPath"] == TOKEN_MOUNT_PATH)
            })
        });
        if automount && !mounted {
            let volume = generate_name("kube-api-access-");
            let mut volumes = spec["volumes"].as_array().cloned().unwrap_or_default();
            volumes.push(json!({"name": volume, "projected": {"sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace",
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
                "defaultMode": 420}}));
            spec["volumes"] = json!(volumes);
            for list in ["initContainers", "containers"] {
                for c in spec
                    .get_mut(list)
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    let mut mounts = c["volumeMounts"].as_array().cloned().unwrap_or_default();
                    mounts.push(json!({"name": volume, "readOnly": true,
                        "mountPath": TOKEN_MOUNT_PATH}));
                    c["volumeMounts"] = json!(mounts);
                }
            }
        }
        if pod["spec"]["schedulingGates"]
            .as_array()
            .is_some_and(|g| !g.is_empty())
        {
            pod["status"]["conditions"] = json!([{"type": "PodScheduled", "status": "False",
                "lastProbeTime": null, "lastTransitionTime": rfc3339(self.now()),
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]);
        }
        Ok(())
    }

    /// POST of a `Binding` to `pods/<name>/binding` (`BindingREST.Create`): the pod assigned to
    /// the target node with the `PodScheduled` condition, answered by a `Status`.
    ///
    /// # Errors
    /// 400 for a body naming another pod, the rules' refusal, 404 for a missing pod, 409 for a
    /// pod already bound, deleting or gated.
    pub(crate) fn bind_pod(
        &mut self,
        ns: &str,
        name: &str,
        binding: &Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if binding["metadata"]["name"].as_str().unwrap_or_default() != name {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Binding object",
            ));
        }
        // ValidatePodBinding, answered as an aggregate (not a Status error).
        let target = &binding["target"];
        let mut problems = Vec::new();
        let kind = target["kind"].as_str().unwrap_or_default();
        if !kind.is_empty() && kind != "Node" {
            problems.push(format!(
                "target.kind: Unsupported value: \"{kind}\": supported values: \"Node\", \"<empty>\""
            ));
        }
        let node = target["name"].as_str().unwrap_or_default();
        if node.is_empty() {
            problems.push("target.name: Required value".to_owned());
        }
        match problems.len() {
            0 => {}
            1 => return Err(ApiError::unconverted(problems.remove(0))),
            _ => return Err(ApiError::unconverted(format!("[{}]", problems.join(", ")))),
        }
        let qualified = Qualified {
            group: "",
            name: "pods",
        };
        let Some(old) = self.store.get(&pods_key(), ns, name).cloned() else {
            return Err(ApiError::not_found(qualified, name));
        };
        let binding_resource = Qualified {
            group: "",
            name: "pods/binding",
        };
        let uid = meta_str(binding, "uid").unwrap_or_default();
        let actual_uid = meta_str(&old, "uid").unwrap_or_default();
        if !uid.is_empty() && uid != actual_uid {
            return Err(ApiError::conflict(
                qualified,
                name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual_uid}"
                ),
            ));
        }
        let rv = meta_str(binding, "resourceVersion").unwrap_or_default();
        let actual_rv = meta_str(&old, "resourceVersion").unwrap_or_default();
        if !rv.is_empty() && rv != actual_rv {
            return Err(ApiError::conflict(
                qualified,
                name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual_rv}"
                ),
            ));
        }
        let refuse = |why: String| Err(ApiError::conflict(binding_resource, name, &why));
        if !old["metadata"]["deletionTimestamp"].is_null() {
            return refuse(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            ));
        }
        if let Some(bound) = old["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
            return refuse(format!(
                "pod {name} is already assigned to node \"{bound}\""
            ));
        }
        if old["spec"]["schedulingGates"]
            .as_array()
            .is_some_and(|g| !g.is_empty())
        {
            return refuse(format!("pod {name} has non-empty .spec.schedulingGates"));
        }
        let mut pod = old;
        pod["spec"]["nodeName"] = json!(node);
        if let Some(status) = pod["status"].as_object_mut() {
            status.remove("nominatedNodeName");
        }
        if let Some(annotations) = binding["metadata"]["annotations"].as_object() {
            let meta = meta_mut(&mut pod);
            let into = meta.entry("annotations").or_insert_with(|| json!({}));
            for (k, v) in annotations {
                into[k] = v.clone();
            }
        }
        self.set_pod_condition(&mut pod, json!({"type": "PodScheduled", "status": "True"}));
        if !dry_run {
            let info = self.pods_info();
            let stored = self.store.put(&pods_key(), pod);
            if let Some(info) = info {
                self.after_write(&stored, &info);
            }
        }
        Ok(created_status())
    }

    /// POST of an `Eviction` to `pods/<name>/eviction` (`EvictionREST.Create`): once the pod's
    /// PodDisruptionBudget allows it ([`State::consult_budgets`]), the pod gets the
    /// `DisruptionTarget` condition and is deleted with the eviction's `deleteOptions`,
    /// answered by a `Status`.
    ///
    /// # Errors
    /// 400 for a body naming another pod, 404 for a missing pod, the budget's refusal (429,
    /// 500 for several budgets), the deletion's errors.
    pub(crate) fn evict_pod(
        &mut self,
        ns: &str,
        name: &str,
        eviction: &Value,
        dry_run: bool,
    ) -> Result<Value, ApiError> {
        if eviction["metadata"]["name"].as_str().unwrap_or_default() != name {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let mut options = eviction["deleteOptions"].clone();
        if !options.is_object() {
            options = json!({});
        }
        if dry_run {
            options["dryRun"] = json!(["All"]);
        }
        let qualified = Qualified {
            group: "",
            name: "pods",
        };
        let Some(old) = self.store.get(&pods_key(), ns, name).cloned() else {
            return Err(ApiError::not_found(qualified, name));
        };
        let Some(info) = self.pods_info() else {
            return Err(ApiError::internal("pods are not served"));
        };
        if !disruption::ignores_budgets(&old)
            && let Verdict::DeleteAsRead = self.consult_budgets(&old, is_dry_run(&options))?
            && options["preconditions"]["resourceVersion"].is_null()
        {
            // An unready pod goes only as it was read, not once it became ready.
            if !options["preconditions"].is_object() {
                options["preconditions"] = json!({});
            }
            options["preconditions"]["resourceVersion"] =
                json!(meta_str(&old, "resourceVersion").unwrap_or_default());
        }
        if !is_dry_run(&options) {
            // The preconditions are checked against the latest pod first.
            let pod_kind = Qualified {
                group: "",
                name: "Pod",
            };
            let pre = &options["preconditions"];
            if let Some(uid) = pre["uid"].as_str().filter(|u| !u.is_empty()) {
                let actual = meta_str(&old, "uid").unwrap_or_default();
                if uid != actual {
                    return Err(ApiError::conflict(
                        pod_kind,
                        name,
                        &format!(
                            "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                        ),
                    ));
                }
            }
            if let Some(rv) = pre["resourceVersion"].as_str().filter(|r| !r.is_empty()) {
                let actual = meta_str(&old, "resourceVersion").unwrap_or_default();
                if rv != actual {
                    return Err(ApiError::conflict(
                        pod_kind,
                        name,
                        &format!(
                            "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                        ),
                    ));
                }
            }
            let mut pod = old;
            self.set_pod_condition(
                &mut pod,
                json!({"type": "DisruptionTarget", "status": "True",
                    "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}),
            );
            let stored = self.store.put(&pods_key(), pod);
            self.after_write(&stored, &info);
            // The deletion's preconditions were the update's.
            if let Some(pre) = options
                .get_mut("preconditions")
                .and_then(Value::as_object_mut)
            {
                pre.remove("resourceVersion");
            }
        }
        self.delete(&info, Some(ns), name, &options)?;
        Ok(created_status())
    }

    /// The served pods resource.
    fn pods_info(&self) -> Option<std::sync::Arc<ResourceInfo>> {
        self.registry.get("", "v1", "pods")
    }

    /// `podutil.UpdatePodCondition`: `condition` (its transition now) added, or replacing the
    /// one of its type (keeping the transition time when the status is unchanged).
    fn set_pod_condition(&self, pod: &mut Value, mut condition: Value) {
        let now = rfc3339(self.now());
        if !pod["status"].is_object() {
            pod["status"] = json!({});
        }
        let mut conditions = pod["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut ordered = json!({"type": condition["type"], "status": condition["status"],
            "lastProbeTime": null, "lastTransitionTime": now});
        for key in ["reason", "message"] {
            if let Some(v) = condition.get_mut(key) {
                ordered[key] = v.take();
            }
        }
        match conditions.iter_mut().find(|c| c["type"] == ordered["type"]) {
            Some(existing) => {
                if existing["status"] == ordered["status"] {
                    ordered["lastTransitionTime"] = existing["lastTransitionTime"].clone();
                }
                *existing = ordered;
            }
            None => conditions.push(ordered),
        }
        pod["status"]["conditions"] = json!(conditions);
    }
}
