//! # kubeward-testing
//!
//! An in-process Kubernetes API server for tests, served over HTTP on loopback so that an
//! unmodified `kube::Client`, `kube::runtime::Controller` and `kubectl` talk to it. Use it as a
//! dev-dependency to test a controller end to end without a cluster:
//!
//! ```toml
//! [dev-dependencies]
//! kubeward-testing = "0.1"
//! ```
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! let server = kubeward_testing::ApiServer::start().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! let created = cms.create(&PostParams::default(), &cm).await?;
//! assert!(created.metadata.uid.is_some());
//! # Ok(()) }
//! ```
//!
//! # The same tests on a real kube-apiserver
//!
//! [`Cluster`] starts the embedded server, or with `KUBEWARD_TEST_APISERVER=real` etcd,
//! kube-apiserver and kube-controller-manager from [`KUBEBUILDER_ASSETS`](ASSETS_VARIABLE)
//! (`scripts/kube-assets` builds them), behind a loopback proxy that applies the same
//! [`Faults`] and keeps the same request log. Write a test against `Cluster` and it runs on
//! either backend unchanged, faults included ([`Cluster::expire_watches`],
//! [`Cluster::restart`], [`Cluster::relist_with_deletes`]); what only the embedded server offers
//! is behind [`Cluster::embedded`].
//!
//! # What behaves like kube-apiserver
//!
//! - **Metadata**: `uid`, `creationTimestamp`, `generateName` (prefix + 5 random characters),
//!   `managedFields` for every write; custom resources (and CRDs) start at `generation` 1, which
//!   bumps when anything outside `metadata` changes (`status` excluded when the status
//!   subresource is on) and when `deletionTimestamp` is set.
//! - **One cluster-wide resourceVersion**, a string of a number, increasing with every write.
//!   A write that changes nothing is not a write: same resourceVersion, no watch event.
//! - **Validation** (apimachinery `objectmeta.go`, core and coordination validation), 422
//!   `Invalid` with `details.causes[].field` and upstream's messages: names per kind (DNS-1123
//!   subdomain; label for namespaces), `generateName`, label keys and values, annotations
//!   (256 KiB in all), owner references (uid required, one controller), finalizer names;
//!   ConfigMap keys, 1 MiB of data, a key in both `data` and `binaryData`, `immutable`; Secret
//!   `type` defaulting to `Opaque` and immutable, `stringData` folded into `data`, typed secrets'
//!   required keys; Lease durations. Undecodable fields (bad base64, Lease times) are 400 as the
//!   decoder answers. Request bodies over 3 MiB are 413.
//! - **Optimistic concurrency**: PUT with a stale resourceVersion is 409 Conflict; a PUT of a
//!   custom resource or a CustomResourceDefinition (or their status) without one, or with `0`,
//!   is 422 `metadata.resourceVersion: Invalid value: 0: must be specified for an update`
//!   (built-ins update unconditionally); a PUT of a missing event creates it (201); a PATCH
//!   conflicts only if it carries `metadata.resourceVersion`. DELETE preconditions (uid,
//!   resourceVersion) are honoured. `dryRun=All` answers without storing.
//! - **Status subresource** (CRD strategy, `apiextensions-apiserver` `strategy.go`): main-resource
//!   writes keep the stored status; `/status` writes keep everything but `status` — including
//!   labels and annotations, exactly as the CRD `statusStrategy.PrepareForUpdate` copies the old
//!   object (the field manager still records the labels a `/status` write asked for, as
//!   upstream's does). Creates drop `status`.
//! - **Scale subresource** of custom resources (`subresources.scale`): GET, PUT and JSON or merge
//!   PATCH of an `autoscaling/v1` `Scale` read from and written to the declared paths; the
//!   paths' own validation of the resource (`.spec.replicas accessor error: …`, `should be a
//!   non-negative integer`); discovery lists `<plural>/scale`.
//! - **PATCH**: `json-patch+json` (a `test` of a missing path against `null` passes, as kube-runtime's
//!   `finalizer` relies on), `merge-patch+json`, `apply-patch+yaml` (server-side apply with
//!   conflicts and `force`; `fieldManager` required: 422 `PatchOptions` Invalid as
//!   `ValidatePatchOptions` answers), `strategic-merge-patch+json` is 415 for custom resources;
//!   for built-in kinds it is apimachinery's strategic merge (`strategicpatch`, checked against
//!   its test cases): lists merge by the patch strategy and merge key of the kind's OpenAPI
//!   definition (`metadata.finalizers` a union, `metadata.ownerReferences` by `uid`, namespace
//!   conditions by `type`), other lists are replaced; `$patch: replace|delete`,
//!   `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and `$retainKeys` are
//!   applied, `null` deletes; malformed directives are 400, other merge errors upstream's 500
//!   with apimachinery's message.
//! - **Finalizers**: DELETE sets `deletionTimestamp` (+ `deletionGracePeriodSeconds: 0`) and
//!   answers the object; the object goes when its finalizers become empty — in that update,
//!   which is not stored: watchers see only `DELETED` (carrying the last stored object) and the
//!   writer gets its update back; new finalizers on a deleting object are 422. Without
//!   finalizers CRDs and namespaces answer the deleted object, custom resources and built-ins a `Status`
//!   of `Success`.
//! - **Garbage collection** (kube-controller-manager's collector, in a background task of the
//!   server woken by the writes that concern it): a dependent whose owner references all name
//!   objects that are gone (or have another uid) is deleted; references to gone owners are
//!   dropped while another owner lives. `propagationPolicy` (and the deprecated
//!   `orphanDependents`; unknown values are 422 on `DeleteOptions`) sets the owner's finalizers
//!   as the registry does: `Foreground` adds `foregroundDeletion` (dependents are deleted and the
//!   owner goes once no dependent with `blockOwnerDeletion: true` is left), `Orphan` adds
//!   `orphan` (dependents lose their references to the owner, then it goes), `Background` (the
//!   default of every kind served here) deletes the owner at once. Finalizers already on the
//!   owner decide when no policy is given; the policy may come in the body or the query;
//!   `orphanDependents: false` is answered `202 Accepted`. A foreground chain that loops has its
//!   owner references unblocked, as upstream breaks cycles.
//! - **Namespaces**: created `Active` with the `kubernetes` spec finalizer; DELETE answers the
//!   Namespace with `deletionTimestamp` and `status.phase: Terminating`; the namespace
//!   controller then deletes every object in it (background propagation: objects with
//!   finalizers get a `deletionTimestamp` and wait, so controllers' cleanup runs), writes the
//!   `NamespaceDeletionDiscoveryFailure`, `NamespaceDeletionGroupVersionParsingFailure`,
//!   `NamespaceDeletionContentFailure`, `NamespaceContentRemaining` and
//!   `NamespaceFinalizersRemaining` conditions with upstream's reasons and messages (`Some
//!   content in the namespace has finalizers remaining: example.com/x in 1 resource instances`), and removes the
//!   namespace once nothing is left. Spec finalizers change only through `PUT .../finalize`
//!   (which removes a terminating namespace at once, leaving any content stored, as etcd
//!   would). `default`, `kube-system` and `kube-public` answer 403
//!   `this namespace may not be deleted`; creating in a terminating namespace is 403 `unable to
//!   create new content in namespace X because it is being terminated` (NamespaceLifecycle
//!   admission, with the `NamespaceTerminating` cause).
//! - **LIST**: `metadata.resourceVersion` always; `limit`/`continue` (upstream's token, 410
//!   Expired once compacted, a malformed one 400 `invalid continue token: ...` with Go's base64
//!   or JSON error; `remainingItemCount` only without selectors; `resourceVersion=0` ignores
//!   `limit`, as the watch cache serving it does); a continued list and a list with
//!   `resourceVersionMatch=Exact` show the state at their resourceVersion (the live objects with
//!   every later write undone, from the watch history);
//!   `labelSelector`; `fieldSelector` on `metadata.name`/`metadata.namespace` and, for events,
//!   the `involvedObject.*`/`regarding.*`, `reason`, `type`, `source`, `reportingComponent`
//!   fields (`field label not supported: X` otherwise). Integer parameters (`limit`,
//!   `timeoutSeconds`) that are not integers are 400 with the parameter codec's
//!   `strconv.ParseInt: parsing "abc": invalid syntax`. Boolean parameters (`watch`,
//!   `allowWatchBookmarks`, `sendInitialEvents`, `force`, `orphanDependents`) are false only for
//!   `0` and `false` in any case, as the codec reads them (`True`, `1`, `f`, `yes` are true).
//!   Namespaces serve no `deletecollection`
//!   (405, and discovery does not list it), as upstream's namespace storage has none.
//! - **WATCH**: JSON lines flushed at once; resourceVersion unset or `0` replays the current state
//!   as ADDED; `N` replays the retained changes after `N`; older than the retained history
//!   (which starts after the built-in namespaces, as a watch cache starts at its first list) is
//!   HTTP 200 then an `ERROR` event with a 410 `Expired` Status; objects entering a selector are
//!   ADDED, objects leaving it DELETED with their previous content stamped with the change's
//!   resourceVersion (the watch cache's `convertToWatchEvent`); `allowWatchBookmarks` (periodic BOOKMARKs), `timeoutSeconds`,
//!   streaming lists (`sendInitialEvents=true` + `resourceVersionMatch=NotOlderThan`: initial
//!   ADDED events, then a BOOKMARK annotated `k8s.io/initial-events-end: "true"`, as a watch from
//!   resourceVersion unset or `0` that allows bookmarks also ends them).
//!   [`ApiServer::compact`] drops the history and ends open watches with `ERROR 410`, so watchers
//!   relist.
//! - **Discovery and CRDs**: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<g>[/<v>]` (legacy
//!   documents; kubectl falls back to them from aggregated discovery). **OpenAPI** for
//!   `kubectl explain`: `/openapi/v3` (the index, and a document per group-version) and
//!   `/openapi/v2` (JSON, or gnostic protobuf as client-go asks), with upstream's schemas of
//!   the built-in kinds (trimmed from the release-1.34 spec by `testing/openapi/trim.py`, the
//!   data strategic merge patch reads too) and each installed CRD version's schema as
//!   apiextensions-apiserver publishes it (`apiVersion`, `kind`, `metadata` added,
//!   `x-kubernetes-group-version-kind`; value validations stripped in v2), following CRD changes;
//!   each kind's `patch` operation carries `fieldValidation`, so `kubectl create` delegates
//!   field validation to the server. A CRD (POSTed or
//!   [`ApiServer::install_crd`]) is Established and NamesAccepted at once and served at each
//!   served version, scope and status subresource as declared. `kubectl get` gets Tables (the
//!   built-in printers' columns, or a CRD's `additionalPrinterColumns`; `includeObject`), and
//!   `kubectl get -w` gets watch events whose objects are one-row Tables with the same columns,
//!   `columnDefinitions` in the first event only, as upstream's watch encoder sends them, so
//!   kubectl prints updates under the list's header; metadata-only clients get
//!   `PartialObjectMetadata` (lists, gets and watches).
//! - **Custom resources follow their CRD's structural schema** (apiextensions-apiserver): on
//!   create, update, patch and apply, of the object and of its status, unknown fields are pruned
//!   (kept under `x-kubernetes-preserve-unknown-fields` and in embedded resources' envelopes) and
//!   `default`s applied (also on read, for defaults added later); values are validated with
//!   kube-openapi's messages as 422 Invalid causes — `type`, `nullable`, `enum`, `required`,
//!   `minimum`/`maximum` (and exclusive), `multipleOf`, `minLength`/`maxLength`, `pattern`,
//!   `format` (the string formats apiextensions checks; `isbn*` and `creditcard` are accepted
//!   unchecked), `min`/`maxItems`, `min`/`maxProperties`, `x-kubernetes-int-or-string`,
//!   `x-kubernetes-embedded-resource` (`apiVersion` and `kind` required), list types `set` and
//!   `map` (duplicates rejected) — then `x-kubernetes-validations` CEL rules (the `cel` crate with
//!   the strings, lists and math extensions) with `message`, `messageExpression`, `reason`,
//!   `fieldPath` and transition rules on `oldSelf`, skipped after a blocking error as upstream
//!   does. Updates ratchet: a value equal to its stored counterpart (correlated by property
//!   name and list-map keys) is not re-validated, so rules a CRD tightens later bind only what
//!   changes. A CRD whose rule or pattern does not compile is 422. `fieldValidation=Strict` answers
//!   400 naming unknown and duplicate fields (`strict decoding error: unknown field
//!   "spec.foo"`), `Warn` (the default) sends `Warning: 299 - "unknown field \"spec.foo\""`,
//!   `Ignore` prunes silently; duplicate JSON keys are reported for every kind.
//! - **apps/v1 Deployments** (`pkg/registry/apps/deployment`): discovery (`deploy`, category
//!   `all`), OpenAPI, `kubectl get deploy` columns (`READY`, `UP-TO-DATE`, `AVAILABLE`; wide:
//!   containers, images, selector), upstream's defaulting of the Deployment and its pod template
//!   (replicas 1, rolling update 25 %/25 %, `revisionHistoryLimit` 10,
//!   `progressDeadlineSeconds` 600; `restartPolicy`, `dnsPolicy`, `schedulerName`,
//!   `terminationGracePeriodSeconds`, `imagePullPolicy` from the image's tag, probes, ports'
//!   protocol, volume sources' modes, quantities in canonical form) and validation with
//!   upstream's messages (selector required, matching the template's labels and immutable;
//!   strategy, replicas and the other counts; containers' names, images, ports, env, volume
//!   mounts, resources and quantities; volumes' names and sources); `generation` bumped by a
//!   change of the spec or the annotations; the status subresource (a main write keeps the
//!   status, a status write keeps the spec and labels); the scale subresource (an
//!   `autoscaling/v1` `Scale` with the selector's string form; GET, PUT, merge, JSON and
//!   strategic merge PATCH); strategic merge patch and server-side apply by the OpenAPI's
//!   merge keys and list-map keys (containers and env by `name`, ports by `containerPort` and
//!   `protocol`).
//! - **apps/v1 ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions**
//!   (`pkg/registry/apps/{replicaset,statefulset,daemonset,controllerrevision}`) as Deployments
//!   are served: discovery (`rs`, `sts`, `ds`, category `all`), OpenAPI, the printers' columns
//!   (`DESIRED`/`CURRENT`/`READY` of a ReplicaSet; `READY` of a StatefulSet; a DaemonSet's
//!   scheduling counts and `NODE SELECTOR`; wide: containers, images, selector; a revision's
//!   `CONTROLLER` and `REVISION`); upstream's defaulting (the pod template's; a StatefulSet's
//!   `podManagementPolicy` OrderedReady, rolling update with partition 0,
//!   `persistentVolumeClaimRetentionPolicy` Retain/Retain, its claim templates' `volumeMode`
//!   Filesystem, `status.phase` Pending and type; a DaemonSet's rolling update of 1 unavailable
//!   and 0 surge; `revisionHistoryLimit` 10; the status counts the encoder always writes) and
//!   validation with upstream's messages (selector required, matching the template and
//!   immutable; restart policy `Always`; a StatefulSet's pod management, update strategy,
//!   retention policy, ordinals, service name, claim templates' access modes, storage request
//!   and volume mode, and every spec field but `replicas`, `ordinals`, `template`,
//!   `updateStrategy`, `revisionHistoryLimit`, `persistentVolumeClaimRetentionPolicy` and
//!   `minReadySeconds` immutable; a DaemonSet's rolling update (exactly one of max surge and
//!   max unavailable); a revision's `data` required, an object and immutable); `generation`
//!   bumped by a spec change only; a DaemonSet's template generation (the
//!   `deprecated.daemonset.template.generation` annotation, bumped by a template change); the
//!   status subresource (a status write keeps the spec, a main write the status; none for
//!   ControllerRevisions) with each kind's status rules; the scale subresource of ReplicaSets
//!   and StatefulSets; a StatefulSet's `maxUnavailable` dropped (its feature gate is off in
//!   v1.34).
//! - **core/v1 Services and Endpoints** (`pkg/registry/core/service`, `endpoint`): discovery
//!   (`svc`, category `all`; `ep`), OpenAPI, `kubectl get svc` columns (`TYPE`, `CLUSTER-IP`,
//!   `EXTERNAL-IP`, `PORT(S)`; wide: selector) and `kubectl get ep`'s (`ENDPOINTS`), the field
//!   labels `spec.clusterIP` and `spec.type`; upstream's defaulting (`type` ClusterIP,
//!   `sessionAffinity` None (ClientIP's 10800 s timeout), `internalTrafficPolicy` Cluster, ports'
//!   `protocol` TCP and `targetPort` = `port`, `externalTrafficPolicy` Cluster for NodePort and
//!   LoadBalancer, `allocateLoadBalancerNodePorts` true, `ipFamilies` `[IPv4]` and
//!   `ipFamilyPolicy` SingleStack (RequireDualStack with both families for a selectorless
//!   headless Service, as upstream); an Endpoints port's `protocol`); cluster IPs allocated
//!   from the service CIDR ([`ApiServerBuilder::service_cluster_ip_range`], default
//!   `10.0.0.0/24`, its first address kept for the `kubernetes` Service) and node ports (and a
//!   `Local` LoadBalancer's `healthCheckNodePort`) from the node port range
//!   ([`ApiServerBuilder::service_node_port_range`], default 30000-32767), lowest first where
//!   kube-apiserver picks at random; a requested IP or port honoured or refused with upstream's
//!   messages (`provided IP is already allocated`, `the provided network does not match the
//!   current range`, `provided port is not in the valid range. ...`, `provided port is already
//!   allocated`), `None` for headless, nothing for ExternalName, all freed on delete (and node
//!   ports when the type no longer needs them); a PUT that leaves out the cluster IP or node
//!   ports keeps them; what allocation adds is owned by no field manager; validation with
//!   upstream's messages (ports' names, numbers, protocols, target ports and duplicates,
//!   selector, session affinity, type-specific rules, ExternalName, cluster IPs and IP families,
//!   `clusterIPs[0]` that `may not change once set` except to and from ExternalName, traffic
//!   policies, load balancer fields, the create warnings of `GetWarningsForService`); the
//!   status subresource (load balancer ingress rules, `ipMode` defaulted); Endpoints' subsets,
//!   addresses and ports rules, and the deprecation warning on every request to them.
//! - **core/v1 Pods** (`pkg/registry/core/pod`): discovery (`po`, category `all`; subresources
//!   `status`, `binding`, `eviction`), OpenAPI, `kubectl get po` columns (`READY`, `STATUS` as
//!   the printer derives it from phase, reason and container states, `RESTARTS` with the last
//!   restart's age, `AGE`; wide: `IP`, `NODE`, `NOMINATED NODE`, `READINESS GATES`), the field
//!   labels of `ToSelectableFields` (`spec.nodeName` (and `spec.host`), `spec.restartPolicy`,
//!   `spec.schedulerName`, `spec.serviceAccountName`, `spec.hostNetwork`, `status.phase`,
//!   `status.podIP`, `status.podIPs`, `status.nominatedNodeName`); upstream's defaulting (the
//!   pod spec's, as for templates, and the Pod's own: requests defaulted to limits,
//!   `enableServiceLinks`, host ports of a host-network pod, `podIP`/`podIPs` kept in step)
//!   and `PrepareForCreate` (`generation` 1, `status.phase` Pending, the QoS class, the
//!   `SchedulingGated` condition); the admission every cluster runs on a new pod:
//!   `DefaultTolerationSeconds` (the `not-ready`/`unreachable` tolerations, added back on
//!   updates), `Priority` (0 and `PreemptLowerPriority` without a class; the two built-in
//!   classes), `ServiceAccount` (`serviceAccountName` defaulted to `default`, a pod whose
//!   account does not exist refused with upstream's 403 — no controller makes `default`
//!   accounts here, as on a control plane without kube-controller-manager's, so a test creates
//!   it — and the account's token volume `kube-api-access-*` mounted unless the pod or the
//!   account opts out); validation with upstream's messages (the pod spec's rules as for
//!   templates; `activeDeadlineSeconds`, `nodeName`, ephemeral containers refused on create;
//!   on update: containers neither added nor removed, images, `activeDeadlineSeconds` only
//!   lowered, tolerations only added, and any other spec change refused with upstream's `pod
//!   updates may not change fields other than ...`); the status subresource (a main write keeps
//!   the status, a status write keeps the spec, owner references and deletion timestamp; its
//!   rules: `nodeName` unchanged, `nominatedNodeName`, `observedGeneration`, an immutable QoS
//!   class); `generation` bumped by spec changes only; `binding` (`BindingREST`: `nodeName` and
//!   the `PodScheduled` condition; a bound, deleting or gated pod refused with upstream's 409);
//!   `eviction` (`EvictionREST` without PodDisruptionBudgets: the `DisruptionTarget` condition,
//!   then a DELETE with the eviction's options); graceful deletion (`CheckGracefulDelete`: a
//!   pod bound to a node gets `deletionTimestamp` its grace period ahead and
//!   `deletionGracePeriodSeconds`, and stays until a DELETE with a shorter period — a kubelet's
//!   `gracePeriodSeconds=0` — or its finalizers' removal once that period is 0; an unbound or
//!   finished pod is deleted at once; the deleted pod is answered, `ReturnDeletedObject`).
//! - **Built-ins**: namespaces (`default`, `kube-system`, `kube-public`, `kube-node-lease` exist;
//!   creating in a missing namespace is 404), configmaps, secrets, serviceaccounts, leases,
//!   events in `events.k8s.io/v1` and `v1` from one store (validation of each version, the core
//!   field mapping), with a TTL (default 1 h) re-armed by every write.
//! - **Authentication**: bearer tokens configured with [`ApiServerBuilder::token`] name users and
//!   groups (service accounts get theirs, everyone `system:authenticated`); once any are
//!   configured, a missing token is 401 `Unauthorized` (or `system:anonymous` with
//!   [`ApiServerBuilder::anonymous_auth`]), and [`ApiServer::client`] carries an administrator
//!   token. Without configured tokens, requests without credentials are `system:admin` in
//!   `system:masters`. A bearer token that authenticates no one is 401 `Unauthorized` either
//!   way, as kube-apiserver answers it. One [`Identity`] names who a client ([`ApiServer::client_for`]) or a
//!   kubeconfig ([`ApiServer::write_kubeconfig_for`]) acts as: the administrator, a token, any
//!   user in any groups (a token is minted for it), a user bound to its own rules, or a client
//!   certificate. With [`ApiServerBuilder::tls`] the server serves https from a CA minted at
//!   start, and client certificates it issues ([`Identity::Certificate`]) authenticate as their
//!   common name. kubectl
//!   sends a kubeconfig's token or certificate only to https servers; over plain http it reaches
//!   other identities with `--as`.
//! - **Impersonation**: `Impersonate-User`, `-Group`, `-Uid` and `-Extra-*` headers (kubectl
//!   `--as`, `--as-group`), each value checked with the `impersonate` verb on `users`, `groups`,
//!   `serviceaccounts`, `uids` or `userextras/<key>` and refused with upstream's 403 message;
//!   groups without a user are 400.
//! - **Authorization** as `--authorization-mode=RBAC` decides: `system:masters` may do anything;
//!   everyone else is authorized by the Roles, ClusterRoles, RoleBindings and
//!   ClusterRoleBindings (`rbac.authorization.k8s.io/v1`) stored in the server — validated and
//!   defaulted as upstream — with the real 403 messages (`: RBAC: clusterrole… "x" not found`
//!   appended when a bound role is missing). A fresh server stores `cluster-admin` (bound to
//!   `system:masters`), `system:discovery`, `system:public-info-viewer` and `system:basic-user`.
//!   Non-resource requests (discovery, `/version`) are authorized too. Clients acting as
//!   an [`Identity::Rules`] are decided by their own rules only (non-resource requests
//!   unchecked). The `OwnerReferencesPermissionEnforcement` admission (blocking an owner's
//!   deletion needs `update` on its `finalizers`; changing an object's owner references needs
//!   `delete` on it) applies to everyone but `system:masters`, on creates, updates, merge
//!   patches and strategic merge patches (on the references the merge produces). Writing a role
//!   or binding that grants more than the writer holds is 403 (`user "u" (groups=[…]) is
//!   attempting to grant RBAC permissions not currently held:` and the missing rules) unless the
//!   writer may `escalate` the role or `bind` the bound one.
//! - **Self reviews**: `SelfSubjectAccessReview`, `SelfSubjectRulesReview` and
//!   `SelfSubjectReview` answer with the same decisions and rules, so `kubectl auth can-i`
//!   (`--list`) and `kubectl auth whoami` work, with `--as` too.
//! - **Errors** are `Status` objects with the real reason, code, details and message.
//! - **Content types**: JSON everywhere; YAML request bodies for creates, updates and apply
//!   patches, read as go-yaml v2 reads them (YAML 1.1: `yes`, `on`, `y` are booleans, keys too;
//!   the last duplicate key wins, each reported as `line 7: key "a" already set in map` — a
//!   warning, or under `Strict` a 400; syntax errors in go-yaml's words); protobuf request bodies for ConfigMap, Secret, Namespace, ServiceAccount and Service (what
//!   `kubectl create configmap|secret|namespace|serviceaccount|service` sends), Endpoints, Lease and both Event
//!   versions (client-go's leader election and event recorders), the RBAC kinds (`kubectl create
//!   role|clusterrole|rolebinding|clusterrolebinding`) and the self reviews, decoded as the Go types do
//!   (empty strings and zero values their JSON omits are not stored, so no `generateName: ""`).
//!   `Accept` is negotiated as the apiserver does (quality order, `as=Table`/
//!   `as=PartialObjectMetadata[List]` with `g=meta.k8s.io` and `v=v1`/`v1beta1`, Tables only as
//!   JSON or YAML, custom resources not as protobuf); nothing acceptable is 406 NotAcceptable
//!   `only the following media types are accepted: application/json, application/yaml,
//!   application/vnd.kubernetes.protobuf` (the `;stream=watch` types for watches). Responses are
//!   JSON whatever was negotiated.
//!
//! # kubectl
//!
//! [`kubectl::Kubectl`] runs the real `kubectl` from `PATH` with a kubeconfig the server wrote
//! ([`ApiServer::write_kubeconfig`], [`ApiServer::write_kubeconfig_for`]): run a command and
//! read its output, assert it succeeds or fails, poll until its output satisfies a check, or
//! read a long-running `kubectl get -w` line by line.
//!
//! # Alert rules
//!
//! With the `alert-rules` feature, `assert_alert_rules` checks the rules `kubeward::alerts`
//! generates for a controller with
//! `promtool`: they load, their scenarios pass, and removing any guard fails its scenario.
//!
//! # What is not modelled
//!
//! - Of CRD schemas: the warnings upstream sends for CEL failures it ratchets (here they pass
//!   silently), `allOf`/`oneOf`/`not` (`anyOf` is evaluated), `optionalOldSelf`, CEL cost
//!   budgets and Kubernetes' own CEL libraries (quantity, URL, IP, `format` functions); the
//!   validation of a CRD's schema beyond compiling its rules and patterns.
//! - Conversion between CRD versions (objects are served at the requested version as stored).
//! - Graceful deletion periods (`gracePeriodSeconds`) but of Pods; discovery does not list
//!   `namespaces/finalize`. The controllers react to each write at once, where upstream's
//!   namespace controller requeues a namespace with remaining finalizers after about 8 seconds.
//!   Deleting a CRD deletes its objects at once.
//! - Watch caches' consistency rules beyond the above (a list at a resourceVersion older than
//!   the watch history is served from the latest state; continue tokens expire (410) only
//!   across [`ApiServer::compact`], not by the history limit),
//!   protobuf request bodies of other kinds (415), YAML or protobuf responses (a client that
//!   negotiates them gets JSON), `/api/v1/watch/...` legacy paths, aggregated discovery.
//! - Of access control: client certificates not issued by the server (and more than one
//!   organization per certificate); service-account tokens issued by the server
//!   (TokenRequest) — tokens are configured or minted by the test; ClusterRole aggregation
//!   (`aggregationRule` is stored, not resolved) and the aggregated `admin`/`edit`/`view` roles;
//!   SubjectAccessReview and LocalSubjectAccessReview; the `Node` authorizer.
//! - OpenAPI: only each kind's `patch` operation is listed (no other paths, parameters or
//!   response schemas); no ETags or `hash` parameters.
//! - Of Deployments: the rules of probes and lifecycle handlers, security contexts, affinity,
//!   tolerations, topology spread, DNS config, host aliases, readiness and scheduling gates,
//!   each volume source's own fields, `envFrom`, ephemeral containers and resize policies (all
//!   accepted as valid); the warnings `GetWarningsForPodTemplate` adds; the zero times of a
//!   status condition the Go encoder writes as `null`; protobuf bodies; no controller acts on a
//!   Deployment (its status is what a test writes).
//! - Kinds not served yet (404, as a server without them): batch/v1 Jobs and CronJobs,
//!   discovery.k8s.io EndpointSlices, PersistentVolumeClaims and PersistentVolumes, Nodes,
//!   ResourceQuotas, LimitRanges, policy/v1 PodDisruptionBudgets, networking.k8s.io Ingresses,
//!   IngressClasses and NetworkPolicies, HorizontalPodAutoscalers, StorageClasses.
//! - Of ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions: what Deployments leave out
//!   of the pod template; of claim templates, `dataSource`/`dataSourceRef` and the storage and
//!   volume attributes class names; the warnings of `GetWarningsForPodTemplate` and of claim
//!   specs (a StatefulSet's negative `revisionHistoryLimit` warns on create only); a DaemonSet's
//!   template generation annotation is kept in its Table rows and PartialObjectMetadata (upstream
//!   drops it there), and a write leaving it out is not recorded as owning it; the order of the
//!   volumes a StatefulSet's claim templates add when a template volume's rule fails (upstream
//!   iterates a Go map); protobuf bodies; no controller acts on these kinds (no pods, no
//!   revisions, no status).
//! - Of Services: the `kubernetes` Service and its Endpoints in `default` (its address is only
//!   kept free); dual-stack and IPv6 service CIDRs (the server is single-stack IPv4, and
//!   refuses IPv6 families and RequireDualStack as such a kube-apiserver does); ServiceCIDR and
//!   IPAddress objects (networking.k8s.io); the `services/proxy` subresource; the warnings of
//!   IPs and CIDRs in non-canonical forms (of Services and Endpoints) and a Service update's
//!   warnings; reads normalising Services stored by older servers (`defaultOnRead`); allocation
//!   is lowest first where kube-apiserver's is random; no controller acts on a Service (no
//!   Endpoints or EndpointSlices are made for its selector, no load balancer status is
//!   written).
//! - Of Pods: what Deployments leave out of the pod spec, and `GetWarningsForPod`; the diff
//!   after `pod updates may not change fields other than ...` is a unified diff of the v1
//!   spec's JSON, where upstream diffs its internal Go struct; the subresources `attach`,
//!   `exec`, `log`, `portforward`, `proxy`, `ephemeralcontainers` and `resize` (neither listed
//!   in discovery nor served: 404); PodDisruptionBudgets (not served: an eviction always
//!   deletes, never answers 429); pod-level resources (`spec.resources`) and their defaults;
//!   PriorityClasses (only the two built-in ones are known); mountable-secret enforcement
//!   and the Pod Security admission levels (every namespace is `privileged`); the
//!   `conditions` (`Completed`, `Failed`) a Table row of a finished pod carries; a pod
//!   condition's zero times, written as `null`, are not owned by the field manager; protobuf
//!   bodies (415); no
//!   scheduler or kubelet acts on a pod (it stays `Pending` until a test binds it and writes
//!   its status).
//! - Strategic merge patch: the merged object of a built-in kind is stored as merged, where
//!   upstream decodes it into the Go type (dropping unknown fields, e.g. a `$setElementOrder`
//!   key inside a subtree the patch adds whole); server-side apply of built-in kinds does not
//!   read the definitions' list types for kinds other than the apps/v1 ones and Pods (it keeps its own
//!   metadata and condition rules).

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod accept;
#[cfg(feature = "alert-rules")]
mod alert_rules;
mod apply;
mod auth;
mod cluster;
mod continue_token;
mod discovery;
mod endpoints;
mod faults;
mod go;
mod grant;
mod health;
mod identity;
mod kinds;
mod kubeconfig;
pub mod kubectl;
mod lifecycle;
mod metrics;
mod negotiation;
mod object;
mod openapi;
mod params;
mod patch;
mod pipeline;
mod protobuf;
mod rbac;
mod real;
mod registry;
mod requests;
mod resources;
mod routes;
mod scale;
mod schema;
mod selector;
mod server;
mod shared;
mod status;
mod store;
mod strategic;
mod table;
mod validation;
mod wait;
mod watch;
mod yaml;

#[cfg(feature = "alert-rules")]
pub use alert_rules::assert_alert_rules;
pub use cluster::{BACKEND_VARIABLE, Backend, Cluster};
pub use faults::{Fault, FaultAction, FaultId, Faults, PathMatch};
pub use identity::Identity;
pub use metrics::{Sample, metric_samples, metric_value};
pub use real::ASSETS_VARIABLE;
pub use requests::{RequestLog, RequestRecord};
pub use server::{ApiServer, ApiServerBuilder, ServerError};
pub use status::ApiError;
pub use wait::{ConditionMatch, EventMatch, WaitError, wait_for_condition, wait_for_event};
