#!/usr/bin/env python3
"""Writes testing/openapi/builtins.json: the OpenAPI v2 definitions of the built-in kinds the
in-process API server serves, and every definition they reference, trimmed from upstream's
published spec.

Source: kubernetes/kubernetes `api/openapi-spec/swagger.json` of the release the server claims
to be (release-1.34, matching k8s-openapi's `v1_34` feature); kubernetes-client/python keeps the
same file as `kubernetes/swagger.json.unprocessed` (the committed data was generated from its
commit 4f585b3b8, "generated API change" for release-1.34; the apps/v1 and autoscaling/v1
definitions were added from the v1.34.12 tag's file, which Go's module cache holds as
`k8s.io/kubernetes@v1.34.12/api/openapi-spec/swagger.json` where scripts/kube-assets built the real
tier, and which regenerates every earlier definition byte for byte). Run from the workspace root:

    python3 testing/openapi/trim.py swagger.json > testing/openapi/builtins.json

The output is one JSON object: `{"source": ..., "definitions": {name: schema}}`, keys sorted, so
a regeneration's diff shows what upstream changed. Definitions keep upstream's text and vendor
extensions (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`,
`x-kubernetes-group-version-kind`, list types), which both strategic merge patch and the
published OpenAPI documents read. To serve another built-in kind, add its definition (and its
List's) to ROOTS and regenerate.
"""

import json
import sys

SOURCE = "kubernetes/kubernetes release-1.34 api/openapi-spec/swagger.json"

ROOTS = [
    f"io.k8s.api.core.v1.{k}{suffix}"
    for k in ["ConfigMap", "Secret", "ServiceAccount", "Namespace", "Event", "Service", "Endpoints"]
    for suffix in ["", "List"]
] + [
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.events.v1.EventList",
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.coordination.v1.LeaseList",
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.DeploymentList",
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.PodList",
    # The `binding` and `eviction` subresources of pods.
    "io.k8s.api.core.v1.Binding",
    "io.k8s.api.policy.v1.Eviction",
] + [
    f"io.k8s.api.apps.v1.{k}{suffix}"
    for k in ["ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"]
    for suffix in ["", "List"]
] + [
    # The `/scale` subresource of the apps/v1 workloads.
    "io.k8s.api.autoscaling.v1.Scale",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList",
] + [
    f"io.k8s.api.rbac.v1.{k}{suffix}"
    for k in ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]
    for suffix in ["", "List"]
] + [
    "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
    "io.k8s.api.authorization.v1.SelfSubjectRulesReview",
    "io.k8s.api.authentication.v1.SelfSubjectReview",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
] + [
    f"io.k8s.api.{group}.{k}{suffix}"
    for group, kinds in [
        ("core.v1", ["PersistentVolumeClaim", "PersistentVolume", "Node", "ResourceQuota", "LimitRange"]),
        ("batch.v1", ["Job", "CronJob"]),
        ("discovery.v1", ["EndpointSlice"]),
        ("policy.v1", ["PodDisruptionBudget"]),
        ("networking.v1", ["Ingress", "IngressClass", "NetworkPolicy"]),
        ("autoscaling.v2", ["HorizontalPodAutoscaler"]),
        ("autoscaling.v1", ["HorizontalPodAutoscaler"]),
        ("storage.v1", ["StorageClass"]),
    ]
    for k in kinds
    for suffix in ["", "List"]
]

PREFIX = "#/definitions/"


def refs(node):
    """Every definition name a schema node references."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(PREFIX):
            yield ref[len(PREFIX):]
        for value in node.values():
            yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def main():
    with open(sys.argv[1]) as f:
        definitions = json.load(f)["definitions"]
    keep = {}
    todo = list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = definitions[name]
        todo.extend(refs(keep[name]))
    json.dump({"source": SOURCE, "definitions": keep}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
