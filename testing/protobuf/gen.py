#!/usr/bin/env python3
"""Writes testing/protobuf/messages.json: the table the in-process API server's protobuf decoder
(testing/src/protobuf.rs) reads to turn a Kubernetes protobuf request body into the JSON
client-go would have sent for the same Go object.

Sources, from Go's module cache (the versions the real tier of the differential corpus runs):

- `k8s.io/api@v0.34.12/<group>/<version>/generated.proto` of the served groups (GROUPS below)
  and `k8s.io/apimachinery@v0.34.12/pkg/apis/meta/v1/generated.proto`: each message's fields,
  their numbers, wire types (scalar, message, `repeated`, `map<k, v>`);
- the Go types of the same packages (`types.go` and the other non-test `.go` files): for each
  field, matched by the number in its `protobuf:"..."` tag, its JSON name and options
  (`omitempty`, `omitzero`, `inline`) and whether it is a pointer; these decide what Go's
  `encoding/json` writes for a field the protobuf body left out or set to a zero value;
- each group's `register.go` (`GroupName`, the types `addKnownTypes` registers): the kinds a
  body may name (lists left out: no write takes one).

Run by hand from the workspace root after a Kubernetes version bump; the output is committed:

    python3 testing/protobuf/gen.py > testing/protobuf/messages.json

Output (deterministic: messages and kinds sorted by name, a message's fields in the Go struct's
declaration order, which is the order Go's JSON encoder writes them in):

    {"source": ..., "kinds": {apiVersion: {kind: message}},
     "messages": {message: [field, ...]}}

A field is `{"n": number, "json": name, "type": type}` plus, when true, `"rep"` (repeated),
`"map"` (a `map<string, type>`), `"ptr"` (a Go pointer), `"omitempty"`, `"omitzero"`,
`"inline"` (an embedded struct whose fields Go's JSON writes into the parent). `type` is a
scalar (`string`, `bool`, `int32`, `int64`, `bytes`), a message's full name, or one of the
well-known types Kubernetes encodes its own way: `@time` (meta/v1 Time), `@microtime`,
`@duration`, `@quantity`, `@intorstring`, `@rawextension`, `@fieldsv1`, and `@strings` (a
message whose Go type is a named `[]string`, such as `ExtraValue`: field 1 holds the items).
Only the messages reachable from the kinds are written.
"""

import json
import os
import re
import sys

MOD = "/root/go/pkg/mod/k8s.io"
API = f"{MOD}/api@v0.34.12"
MACHINERY = f"{MOD}/apimachinery@v0.34.12"

SOURCE = "k8s.io/api@v0.34.12 and k8s.io/apimachinery@v0.34.12 generated.proto and Go types"

# The groups the in-process server serves (or will), as `<group dir>/<version>`.
GROUPS = [
    "core/v1",
    "apps/v1",
    "batch/v1",
    "autoscaling/v1",
    "autoscaling/v2",
    "policy/v1",
    "discovery/v1",
    "networking/v1",
    "storage/v1",
    "coordination/v1",
    "events/v1",
    "rbac/v1",
    "authorization/v1",
    "authentication/v1",
]

META = "k8s.io.apimachinery.pkg.apis.meta.v1"

# Messages whose Go types encode themselves to JSON their own way.
WELL_KNOWN = {
    f"{META}.Time": "@time",
    f"{META}.MicroTime": "@microtime",
    f"{META}.Duration": "@duration",
    f"{META}.FieldsV1": "@fieldsv1",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "@quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "@intorstring",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "@rawextension",
}

SCALARS = {"string", "bool", "int32", "int64", "bytes"}


def proto_messages(path):
    """{full message name: [(label, type, name, number)]} of one generated.proto."""
    text = open(path).read()
    package = re.search(r"^package ([\w.]+);", text, re.M).group(1)
    out = {}
    for m in re.finditer(r"^message (\w+) \{\n(.*?)^\}", text, re.M | re.S):
        fields = []
        for f in re.finditer(
            r"^  (optional|repeated|required)?\s*(map<\s*[\w.]+\s*,\s*[\w.]+\s*>|[\w.]+) (\w+) = (\d+)",
            m.group(2),
            re.M,
        ):
            label, typ, name, number = f.groups()
            fields.append((label or "map", typ, name, int(number)))
        out[f"{package}.{m.group(1)}"] = fields
    return package, out


def resolve(typ, package):
    """The full name of a proto type used in `package`, or the scalar / well-known token."""
    if typ in SCALARS:
        return typ
    full = typ[1:] if typ.startswith(".") else f"{package}.{typ}"
    return WELL_KNOWN.get(full, full)


def go_structs(directory):
    """{struct name: [(number or None, json name, options, pointer, inline)]} and the names of
    named `[]string` types, from the Go files of one package."""
    structs, string_lists = {}, set()
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".go") or name.endswith("_test.go") or name.startswith("zz_"):
            continue
        text = open(os.path.join(directory, name)).read()
        string_lists.update(re.findall(r"^type (\w+) \[\]string$", text, re.M))
        for m in re.finditer(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
            fields = []
            for line in m.group(2).splitlines():
                f = re.match(r"^\t(\w+(?:\.\w+)?)(?: (\S+))? `([^`]*)`", line)
                if not f:
                    continue
                go_type, tags = f.group(2), f.group(3)
                j = re.search(r'json:"([^"]*)"', tags)
                p = re.search(r'protobuf:"[a-z0-9]+,(\d+),', tags)
                if not j or j.group(1) == "-":
                    continue
                json_name, *options = j.group(1).split(",")
                inline = go_type is None and "inline" in options
                fields.append(
                    (
                        int(p.group(1)) if p else None,
                        json_name,
                        set(options),
                        bool(go_type and go_type.startswith("*")),
                        inline,
                    )
                )
            structs[m.group(1)] = fields
    return structs, string_lists


def register(directory):
    """The group name and the kinds `addKnownTypes` registers, from a package's register.go."""
    text = open(os.path.join(directory, "register.go")).read()
    group = re.search(r'GroupName = "([^"]*)"', text).group(1)
    known = re.search(r"func addKnownTypes\(.*?^\}", text, re.M | re.S).group(0)
    return group, sorted(set(re.findall(r"&(\w+)\{\}", known)))


def main():
    protos, go, string_lists, kinds = {}, {}, set(), {}
    sources = [(f"{API}/{g}", g) for g in GROUPS] + [(f"{MACHINERY}/pkg/apis/meta/v1", None)]
    for directory, group_dir in sources:
        package, messages = proto_messages(f"{directory}/generated.proto")
        protos.update(messages)
        structs, lists = go_structs(directory)
        for struct, fields in structs.items():
            go[f"{package}.{struct}"] = fields
        string_lists.update(f"{package}.{name}" for name in lists)
        if group_dir:
            group, known = register(directory)
            version = group_dir.split("/")[1]
            api_version = f"{group}/{version}" if group else version
            kinds[api_version] = {
                k: f"{package}.{k}"
                for k in known
                # Lists are never a write's body.
                if f"{package}.{k}" in messages and not k.endswith("List")
            }

    out, todo = {}, sorted({m for kinds_of in kinds.values() for m in kinds_of.values()})
    while todo:
        name = todo.pop()
        if name in out:
            continue
        package = name.rsplit(".", 1)[0]
        by_number = {}
        for label, typ, _, number in protos[name]:
            if label == "map":
                key, value = re.match(r"map<\s*([\w.]+)\s*,\s*([\w.]+)\s*>", typ).groups()
                by_number[number] = {"map": resolve(key, package), "type": resolve(value, package)}
            else:
                by_number[number] = {"type": resolve(typ, package)}
                if label == "repeated":
                    by_number[number]["rep"] = True
        fields = []
        for number, json_name, options, pointer, inline in go[name]:
            if number is None:
                continue  # TypeMeta: the envelope carries apiVersion and kind
            field = {"n": number, "json": json_name, **by_number.pop(number)}
            for flag, on in [
                ("ptr", pointer),
                ("omitempty", "omitempty" in options),
                ("omitzero", "omitzero" in options),
                ("inline", inline),
            ]:
                if on:
                    field[flag] = True
            typ = field["type"]
            if typ in string_lists:
                field["type"] = "@strings"
            elif not typ.startswith("@") and typ not in SCALARS:
                todo.append(typ)
            fields.append(field)
        if by_number:
            sys.exit(f"{name}: proto fields {sorted(by_number)} have no Go field")
        out[name] = fields

    json.dump(
        {"source": SOURCE, "kinds": kinds, "messages": out},
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
