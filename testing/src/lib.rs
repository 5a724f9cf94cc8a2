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
//! - **batch/v1 Jobs and CronJobs** (`pkg/registry/batch/{job,cronjob}`): discovery (category
//!   `all`; `cj`), OpenAPI, `kubectl get` columns (a Job's `STATUS`, `COMPLETIONS`, `DURATION`;
//!   a CronJob's `SCHEDULE`, `TIMEZONE`, `SUSPEND`, `ACTIVE`, `LAST SCHEDULE`; wide: containers,
//!   images, selector), a Job's `status.successful` field label (others refused in batch/v1's
//!   words); upstream's defaulting (a Job's
//!   completions and parallelism 1, `backoffLimit` 6 (MaxInt32 with a per-index limit),
//!   `completionMode` NonIndexed, `suspend` false, `manualSelector` false,
//!   `podReplacementPolicy` TerminatingOrFailed (Failed with a pod failure policy), its
//!   template's labels copied to a Job without labels; a CronJob's `concurrencyPolicy` Allow,
//!   `suspend` false, history limits 3 and 1; the pod template's) and a Job's generated
//!   selector (`batch.kubernetes.io/controller-uid`) and template labels (`controller-uid`,
//!   `job-name` and their `batch.kubernetes.io/` forms), owned by no field manager; validation
//!   with upstream's messages (restart policy `OnFailure` or `Never`; the generated selector
//!   and labels, or a manual selector matching the template; the counts; indexed Jobs'
//!   completions, parallelism, per-index limits and pod hostnames; pod failure and success
//!   policies; `managedBy`; the template (but the scheduling directives of a suspended Job that
//!   never started), selector, completions (but an indexed Job's scaled with its parallelism),
//!   completion mode and policies immutable; a CronJob's schedule as robfig/cron parses it,
//!   `TZ=`/`CRON_TZ=` refused, its time zone loaded from the system's zoneinfo as Go's
//!   `time.LoadLocation` does, then from the embedded copy kube-apiserver carries, its
//!   concurrency policy, history limits, name length and job
//!   template); `generation` bumped by a spec change only; the status
//!   subresource (a status write keeps the spec, a main write the status) with a Job's status
//!   rules (counters, conditions, times, indexes and their transitions, as under the
//!   `JobManagedBy` gate); a Job's DELETE without a propagation policy orphans its dependents
//!   (the `orphan` finalizer, batch/v1's default) and warns so, the garbage collector then
//!   removes it; the
//!   create warnings (a name that is not a DNS label, an indexed Job too large to track).
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
//! - **networking.k8s.io/v1 Ingresses, IngressClasses and NetworkPolicies**
//!   (`pkg/registry/networking/{ingress,ingressclass,networkpolicy}`): discovery (`ing` with
//!   its `status` subresource; IngressClasses cluster-scoped; `netpol`), OpenAPI, the printers'
//!   columns (`CLASS`, `HOSTS`, `ADDRESS`, `PORTS`; `CONTROLLER`, `PARAMETERS`; `POD-SELECTOR`),
//!   generation bumped by a change of the spec, an Ingress's status isolation both ways;
//!   defaulting (a NetworkPolicy's `policyTypes` and ports' `TCP`, an IngressClass's parameters
//!   scope; an Ingress path's `pathType` has none and is required); validation with upstream's
//!   messages (an Ingress's rules, hosts and wildcards, paths by `pathType`, backends (service
//!   xor resource, port name xor number), TLS, `ingressClassName` and the class annotation,
//!   with its deprecation warning; an IngressClass's controller format, immutable, and
//!   parameters; a NetworkPolicy's selectors, ports and `endPort`, peers, ipBlock CIDRs and
//!   their exceptions, policy types).
//! - **autoscaling HorizontalPodAutoscalers** (`pkg/registry/autoscaling/horizontalpodautoscaler`)
//!   in autoscaling/v2 (stored) and autoscaling/v1 (converted both ways as
//!   `pkg/apis/autoscaling/v1/conversion.go` does: `targetCPUUtilizationPercentage`, v1's 80 %
//!   CPU default, and the other metrics, current metrics, behavior and conditions kept in the
//!   `autoscaling.alpha.kubernetes.io/*` annotations, encoded byte for byte as Go writes them):
//!   discovery (`hpa`, category `all`, `status`), OpenAPI, columns (`REFERENCE`, `TARGETS`,
//!   `MINPODS`, `MAXPODS`, `REPLICAS`), v2 defaulting (`minReplicas`, the CPU metric, the
//!   behavior's scale-up and scale-down rules), status isolation both ways, the disabled
//!   `tolerance` dropped, validation with upstream's messages (scale target, replica bounds,
//!   each metric type and target, behavior rules and policies, status replica counts).
//! - **core/v1 PersistentVolumeClaims, PersistentVolumes and Nodes, storage.k8s.io/v1
//!   StorageClasses** (`pkg/registry/core/{persistentvolumeclaim,persistentvolume,node}`,
//!   `pkg/registry/storage/storageclass`): discovery (`pvc`; `pv`, `no` and `sc`
//!   cluster-scoped; the `status` subresource of all but StorageClasses), OpenAPI, the printers'
//!   columns (`STATUS`, `VOLUME`, `CAPACITY`, `ACCESS MODES`, `STORAGECLASS`,
//!   `VOLUMEATTRIBUTESCLASS`, wide `VOLUMEMODE`; a volume's `RECLAIM POLICY`, `CLAIM`,
//!   `REASON`; a node's `STATUS`, `ROLES`, `VERSION`, wide `INTERNAL-IP`, `EXTERNAL-IP`,
//!   `OS-IMAGE`, `KERNEL-VERSION`, `CONTAINER-RUNTIME`; a class's `PROVISIONER`,
//!   `RECLAIMPOLICY`, `VOLUMEBINDINGMODE`, `ALLOWVOLUMEEXPANSION` and its `(default)` marker),
//!   a node's `spec.unschedulable` field label; defaulting (`volumeMode` Filesystem, phase
//!   Pending, a volume's `Retain` and its sources' defaults, a node's allocatable resources
//!   from its capacity, a class's `Delete` and `Immediate`); status isolation both ways (a
//!   node's create keeps the status the kubelet registers it with; a volume's
//!   `lastPhaseTransitionTime`); the `StorageObjectInUseProtection` finalizers and the
//!   `TaintNodesByCondition` not-ready taint; validation with upstream's messages (access
//!   modes, the storage request, class names, a claim's spec immutable but for a bound claim's
//!   requests (with upstream's diff), volume sources (exactly one; hostPath, local with its
//!   node affinity, NFS, CSI), capacity, node selector terms; a node's taints, pod CIDRs,
//!   resource quantities, addresses, provider ID and pod CIDRs set once; a class's
//!   provisioner, parameters, policies and their immutability) and upstream's warnings on
//!   create (deprecated annotations and volume plugins, fractional byte requests,
//!   `externalID`).
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
//!   `eviction` (`EvictionREST`: a terminal, pending or deleting pod is deleted at
//!   once; otherwise the one PodDisruptionBudget selecting it decides — more than one is
//!   upstream's 500, a budget not yet observed or without allowed disruptions the 429 with its
//!   `DisruptionBudget` cause, an unready pod goes when the budget is healthy or its
//!   `unhealthyPodEvictionPolicy` is `AlwaysAllow`, else one disruption is taken and recorded
//!   in the budget's status (`disruptionsAllowed`, `disruptedPods`, the `DisruptionAllowed`
//!   condition) by `kube-apiserver`'s status write; then the `DisruptionTarget` condition and a
//!   DELETE with the eviction's options); graceful deletion (`CheckGracefulDelete`: a
//!   pod bound to a node gets `deletionTimestamp` its grace period ahead and
//!   `deletionGracePeriodSeconds`, and stays until a DELETE with a shorter period — a kubelet's
//!   `gracePeriodSeconds=0` — or its finalizers' removal once that period is 0; an unbound or
//!   finished pod is deleted at once; the deleted pod is answered, `ReturnDeletedObject`).
//! - **core/v1 ResourceQuotas and LimitRanges, policy/v1 PodDisruptionBudgets,
//!   discovery.k8s.io/v1 EndpointSlices** (`pkg/registry/core/{resourcequota,limitrange}`,
//!   `pkg/registry/policy/poddisruptionbudget`, `pkg/registry/discovery/endpointslice`):
//!   discovery (`quota` with its `status`, `limits`, `pdb` with its `status`, endpointslices
//!   without a short name), OpenAPI, `kubectl get` columns (`REQUEST` and `LIMIT` as used/hard;
//!   a limit range's `CREATED AT`; `MIN AVAILABLE`, `MAX UNAVAILABLE`, `ALLOWED DISRUPTIONS`;
//!   `ADDRESSTYPE`, `PORTS`, `ENDPOINTS` with `+ N more...`); defaulting (quantities in
//!   canonical form, a container limit's `default` from `max` and `defaultRequest` from
//!   `default` or `min`, a slice port's `TCP` and empty name); validation with upstream's
//!   messages (quota resource names, integer and non-negative quantities, scopes, their
//!   conflicts and resources, scope selectors, scopes immutable; limit types, resource names
//!   per type, min ≤ defaultRequest ≤ default ≤ max, ratios, a claim limit's storage bound;
//!   a budget's exclusive `minAvailable`/`maxUnavailable`, percentages, selector, eviction
//!   policy, status counts and conditions; a slice's address type (immutable), addresses per
//!   type, ports, hostnames, node names, hints, endpoints' problems kept by an update that
//!   leaves them unchanged); the status subresource of quotas and budgets (each write keeps
//!   the other half); `generation` of budgets (spec changes) and slices (any change but the
//!   metadata's, or the labels'); a PUT of a budget must name its resourceVersion; the
//!   FQDN-slice deprecation warning.
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
//!   warning, or under `Strict` a 400; syntax errors in go-yaml's words); protobuf request
//!   bodies of every built-in kind of the served groups (what client-go's typed clients send:
//!   `kubectl create deployment|job|cronjob|configmap|secret|service|quota|pdb|ingress|role|...`,
//!   leader election, event recorders, any Go controller), decoded by one table-driven decoder
//!   (`testing/protobuf/messages.json`, generated from upstream's `generated.proto` files and Go
//!   types) into the JSON client-go sends for the same Go object (`omitempty`, `omitzero`,
//!   pointers, `null` for nil slices and maps, structs always written); a body of another kind
//!   than the resource's, of a kind no served group registers, or without the `k8s\0` envelope
//!   is the codec's 400 in upstream's words, a custom resource's 415.
//!   `Accept` is negotiated as the apiserver does (quality order, `as=Table`/
//!   `as=PartialObjectMetadata[List]` with `g=meta.k8s.io` and `v=v1`/`v1beta1`, Tables only as
//!   JSON or YAML, custom resources not as protobuf); nothing acceptable is 406 NotAcceptable
//!   `only the following media types are accepted: application/json, application/yaml,
//!   application/vnd.kubernetes.protobuf` (the `;stream=watch` types for watches). Responses are
//!   JSON whatever was negotiated.
//!
//! # A simulated cluster
//!
//! With [`ApiServerBuilder::workloads`] (or [`ClusterBuilder::workloads`], which on the real
//! tier runs kube-controller-manager with all its controllers, kube-scheduler and KWOK) the
//! server runs what a cluster runs behind its API, on its clock ([`workloads`]): the
//! deployment, replicaset, statefulset, daemonset, job, cronjob, ttl-after-finished, endpoints,
//! endpointslice, persistent-volume (binding, a provisioner for every StorageClass, protection
//! finalizers), service-account, node-lifecycle, taint-eviction and pod-gc controllers of
//! kube-controller-manager, a scheduler (resources, node selectors and affinity, taints and
//! tolerations) and the kubelets of the nodes a test declares ([`WorkerNode`]), which run pods
//! through `ContainerCreating` to `Running` and `Ready` (after the readiness probe's initial
//! delay), to `Succeeded` for pods that run to completion, and play the faults a test asks for
//! ([`PodFault`]: `ErrImagePull`/`ImagePullBackOff`, `CrashLoopBackOff`, never ready,
//! `OOMKilled`); [`ApiServer::set_node_ready`] takes a node's kubelet away and back (on either
//! backend: [`Cluster::set_node_ready`], with [`Cluster::elapse`] to get past the grace
//! periods). So a
//! Deployment becomes `Available`, a Job `Complete`, a Service gets its endpoints and a claim
//! its volume, in milliseconds:
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kube::api::{Api, PostParams};
//! use kubeward_testing::{ApiServer, Workloads};
//!
//! let server = ApiServer::builder().workloads(Workloads::with_nodes(2)).start().await?;
//! let deployments: Api<Deployment> = Api::namespaced(server.client()?, "default");
//! # let web: Deployment = todo!();
//! deployments.create(&PostParams::default(), &web).await?;
//! let available = |d: Option<&Deployment>| {
//!     d.and_then(|d| d.status.as_ref()?.conditions.as_ref())
//!         .is_some_and(|c| c.iter().any(|c| c.type_ == "Available" && c.status == "True"))
//! };
//! kube::runtime::wait::await_condition(deployments, "web", available).await?;
//! # Ok(()) }
//! ```
//!
//! The behaviour corpus (`tests/behaviour`) runs the same scenarios on both tiers and compares
//! each object's conditions, phases and counts; what the simulation leaves out is listed in
//! each controller's module documentation.
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
//!   YAML or protobuf responses (a client that
//!   negotiates them gets JSON), `/api/v1/watch/...` legacy paths, aggregated discovery.
//! - Of protobuf request bodies: a body of the resource's kind at another version of its group
//!   (an autoscaling/v1 HorizontalPodAutoscaler sent to autoscaling/v2) is refused as its JSON
//!   is, where upstream converts it; a malformed message (truncated, a wrong wire type) is a 400
//!   in the decoder's own words, not gogo-protobuf's; quantities are kept as sent, where upstream
//!   parses them while decoding; a DELETE's `DeleteOptions` body is read as JSON only.
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
//!   status condition the Go encoder writes as `null`; without a simulated cluster
//!   ([`ApiServerBuilder::workloads`]) no controller acts on a Deployment (its status is what a
//!   test writes).
//! - Of ResourceQuotas, LimitRanges, PodDisruptionBudgets and EndpointSlices: the
//!   `ResourceQuota` admission (creates over a quota are not refused, and no controller writes
//!   a quota's `status.used`) and the `LimitRanger` admission (a pod's containers get no
//!   requests or limits from a LimitRange, nor are they checked against its bounds); a
//!   LimitRange created without a name (upstream's strategy names it with a UUID; here it is
//!   refused as any nameless object); an EndpointSlice's `deprecatedTopology`
//!   is dropped from every v1 write, the node name upstream derives from it on an update is not;
//!   the warnings of IPs in non-canonical forms in a slice; no disruption controller writes a
//!   budget's status (an eviction reads what a test wrote there), and an eviction a budget
//!   refuses is not retried against a conflicting write (there is none: writes are serial).
//! - Of PersistentVolumeClaims, PersistentVolumes, Nodes and StorageClasses: a claim's
//!   `allocatedResourceStatuses`, and its data sources' normalisation on an update recorded as
//!   the writer's in managedFields; the inner rules of the volume sources other than
//!   `hostPath`, `local`, `nfs` and `csi` (one source is still required), and the diff of their
//!   immutability refusal; a StorageClass's `allowedTopologies`; the node-label deprecation
//!   warnings; the `PersistentVolumeClaimResize` admission (a bound claim's expansion is not
//!   checked against its class's `allowVolumeExpansion`); the `nodes/proxy` subresource and the
//!   deprecated `configSource`/`status.config` rules; a volume's phase transition time on a
//!   /status write is the wall clock's, not the injected clock's. `StorageObjectInUseProtection`
//!   adds its finalizers, `DefaultStorageClass` the default class and `TaintNodesByCondition`
//!   its taint, but no controller removes them (a deleted claim or volume stays `Terminating`,
//!   as on a cluster without kube-controller-manager) and nothing binds claims to volumes.
//! - Of Ingresses, IngressClasses, NetworkPolicies and HorizontalPodAutoscalers: the warnings of
//!   IPs and CIDRs in non-canonical forms (a NetworkPolicy's ipBlocks, an Ingress's load
//!   balancer status); an empty list and an absent one are not told apart where upstream's
//!   rules do (an Ingress's `rules: []` is reported as `null`, an HPA behavior's `policies: []`
//!   is defaulted); a v1 write takes the fields it changed away from the managers of v2 only
//!   where the v1 forms differ (upstream compares in each manager's version); a server-side
//!   apply through v1 that names `targetCPUUtilizationPercentage` is refused 500 (it is typed
//!   as v2); a v1 Table's rows are built from the v1 view (the CPU metric listed last, the
//!   conversion's annotations in the rows' metadata); a v1 write is decoded as v2 (no
//!   unknown-field errors of its own); the HPAConfigurableTolerance and HPAScaleToZero gates
//!   are off, as kube-apiserver's defaults; no controller acts on these kinds (no load
//!   balancer status, no scaling).
//! - Of Jobs and CronJobs: what Deployments leave out of the pod template; the value printed in
//!   a Job's `spec.template: ... field is immutable` (upstream prints the internal Go struct);
//!   the warnings of `GetWarningsForPodTemplate` and of updates (a large indexed Job's, a `TZ`
//!   in a schedule); `managedBy`'s path after its domain; the
//!   64 KiB limit of a success policy's indexes; a schedule's `TZ=` without a space, on which
//!   upstream panics.
//! - Of ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions: what Deployments leave out
//!   of the pod template; of claim templates, `dataSource`/`dataSourceRef` and the storage and
//!   volume attributes class names; the warnings of `GetWarningsForPodTemplate` and of claim
//!   specs (a StatefulSet's negative `revisionHistoryLimit` warns on create only); a DaemonSet's
//!   template generation annotation is kept in its Table rows and PartialObjectMetadata (upstream
//!   drops it there), and a write leaving it out is not recorded as owning it; the order of the
//!   volumes a StatefulSet's claim templates add when a template volume's rule fails (upstream
//!   iterates a Go map); without a simulated cluster no controller acts on these kinds (no
//!   pods, no revisions, no status).
//! - Of Services: the `kubernetes` Service and its Endpoints in `default` (its address is only
//!   kept free); dual-stack and IPv6 service CIDRs (the server is single-stack IPv4, and
//!   refuses IPv6 families and RequireDualStack as such a kube-apiserver does); ServiceCIDR and
//!   IPAddress objects (networking.k8s.io); the `services/proxy` subresource; the warnings of
//!   IPs and CIDRs in non-canonical forms (of Services and Endpoints) and a Service update's
//!   warnings; reads normalising Services stored by older servers (`defaultOnRead`); allocation
//!   is lowest first where kube-apiserver's is random; no load balancer status is written, and
//!   without a simulated cluster no Endpoints or EndpointSlices are made for a selector.
//! - Of Pods: what Deployments leave out of the pod spec, and `GetWarningsForPod`; the diff
//!   after `pod updates may not change fields other than ...` is a unified diff of the v1
//!   spec's JSON, where upstream diffs its internal Go struct; the subresources `attach`,
//!   `exec`, `log`, `portforward`, `proxy`, `ephemeralcontainers` and `resize` (neither listed
//!   in discovery nor served: 404); pod-level resources (`spec.resources`) and their defaults;
//!   PriorityClasses (only the two built-in ones are known); mountable-secret enforcement
//!   and the Pod Security admission levels (every namespace is `privileged`); the
//!   `conditions` (`Completed`, `Failed`) a Table row of a finished pod carries; a pod
//!   condition's zero times, written as `null`, are not owned by the field manager; without a simulated cluster no
//!   scheduler or kubelet acts on a pod (it stays `Pending` until a test binds it and writes
//!   its status).
//! - Strategic merge patch: the merged object of a built-in kind is stored as merged, where
//!   upstream decodes it into the Go type (dropping unknown fields, e.g. a `$setElementOrder`
//!   key inside a subtree the patch adds whole); server-side apply reads the definitions' list
//!   types of the workload kinds, Pods, Services, Endpoints and the kinds served since (batch,
//!   storage, policy, networking, autoscaling), not of the older built-ins (ConfigMaps, Secrets,
//!   ServiceAccounts, Namespaces, Leases, Events, RBAC), which keep its own metadata and
//!   condition rules.

#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod accept;
#[cfg(feature = "alert-rules")]
mod alert_rules;
mod apply;
mod auth;
mod cluster;
mod continue_token;
mod deprecated;
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
pub mod workloads;
mod yaml;

#[cfg(feature = "alert-rules")]
pub use alert_rules::assert_alert_rules;
pub use cluster::{BACKEND_VARIABLE, Backend, Cluster, ClusterBuilder};
pub use faults::{Fault, FaultAction, FaultId, Faults, PathMatch};
pub use identity::Identity;
pub use metrics::{Sample, metric_samples, metric_value};
pub use real::ASSETS_VARIABLE;
pub use requests::{RequestLog, RequestRecord};
pub use server::{ApiServer, ApiServerBuilder, ServerError};
pub use status::ApiError;
pub use wait::{ConditionMatch, EventMatch, WaitError, wait_for_condition, wait_for_event};
pub use workloads::{PodFault, WorkerNode, Workloads};
