"""Field-by-field and enum-by-enum comparison of two OpenAPI documents: the reference (the hosted
API's, `linode-openapi-4.189.0.json.gz` beside this file, with the spec's renames applied) and the
one nubis serves.

For every operation both documents have, it compares the success response body and the request
body: each field present in one and not the other, of another type, and each value of an enum
one has and the other lacks. Operations the reference has under the spec's resources that nubis
does not serve are reported too. Every difference is a line `METHOD PATH FIELD: kind`:

    response  FIELD: not served | not in the reference | type A (reference B)
              FIELD: enum value V not served | enum value V not in the reference
    request   FIELD: request field not served | request field not in the reference
              FIELD: request type A (reference B)
              FIELD: request enum value V not served | request enum value V not in the reference
              FIELD: request enum not served (the reference has an enum, nubis documents none)
    operation METHOD PATH: operation not served | operation not in the reference
    live      FIELD: returned, not in the reference | not returned | returned TYPE (reference TYPES)
              FIELD: returned value V not in the reference's enum      (`live_differences`)

`FIELD` is a dotted path, `[]` marking array items. A response field nubis documents without the
enum the reference has is no difference here: test_reference_live.py checks the values nubis
returns against the reference's enum. Used by test_reference*.py; run it with the
served document's address to print every difference, or with `--vendor SOURCE.json` to rebuild the
vendored reference from the hosted document."""

import fnmatch
import gzip
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
REFERENCE = Path(os.environ.get("NUBIS_REFERENCE_OPENAPI", HERE / "linode-openapi-4.189.0.json.gz"))
DECISIONS = ROOT / "docs" / "decisions.md"

PATH_RENAMES = [("/linode/instances", "/compute/instances"), ("/linode/types", "/compute/types")]
FIELD_RENAMES = {"linode_id": "instance_id", "linodes": "instances", "linode": "instance", "add_linodes": "add_instances",
                 "linode_label": "instance_label"}
METHODS = ("get", "post", "put", "delete")

# The reference's resources the spec covers: an operation under one of these that nubis does not
# serve is a difference ("operation not served"); the others are products outside nubis.
SPEC_RESOURCES = (
    "/v4/compute/instances", "/v4/compute/types", "/v4/profile", "/v4/account", "/v4/networking",
    "/v4/nodebalancers", "/v4/vpcs", "/v4/regions", "/v4/maintenance", "/v4/images",
)


class Field:
    """A field of a schema: its types (`number` for integers too, `null` when nullable) and the
    values of its enum (None when it has none)."""

    __slots__ = ("types", "enum")

    def __init__(self, types, enum):
        self.types, self.enum = types, enum

    def __repr__(self):
        return f"Field({sorted(self.types)}, {None if self.enum is None else sorted(map(str, self.enum))})"


def resolve(doc, node, seen=()):
    """Follows `$ref`s (JSON pointers into `doc`)."""
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen:
            return {}
        seen = (*seen, ref)
        target = doc
        for part in ref.removeprefix("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
    return node


def types_of(doc, schema, depth=0):
    schema = resolve(doc, schema)
    if not isinstance(schema, dict) or depth > 8:
        return set()
    t = schema.get("type")
    out = set(t) if isinstance(t, list) else ({t} if t else set())
    if not t and "properties" in schema:
        out.add("object")
    if not t and "enum" in schema:
        out |= {json_type(v) for v in schema["enum"]}
    if schema.get("nullable"):
        out.add("null")
    for key in ("oneOf", "anyOf", "allOf"):
        for s in schema.get(key, []):
            out |= types_of(doc, s, depth + 1)
    if "integer" in out:
        out.discard("integer")
        out.add("number")  # the reference mixes integer and number for the same values
    return out


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "string")


def enum_of(doc, schema, depth=0):
    """The values of a schema's enum, merged over its `oneOf`/`anyOf`/`allOf` parts; None when no
    part has one. `null` is no value of an enum here (nullability is the type's)."""
    schema = resolve(doc, schema)
    if not isinstance(schema, dict) or depth > 8:
        return None
    out = None
    if isinstance(schema.get("enum"), list):
        out = {v for v in schema["enum"] if v is not None}
    for key in ("oneOf", "anyOf", "allOf"):
        for s in schema.get(key, []):
            e = enum_of(doc, s, depth + 1)
            if e is not None:
                out = (out or set()) | e
    return out


def items_of(doc, schema, depth=0):
    """The item schemas of an array schema (through its `oneOf`/`anyOf`/`allOf` parts)."""
    schema = resolve(doc, schema)
    if not isinstance(schema, dict) or depth > 8:
        return []
    out = [schema["items"]] if isinstance(schema.get("items"), dict) else []
    for key in ("oneOf", "anyOf", "allOf"):
        for s in schema.get(key, []):
            out += items_of(doc, s, depth + 1)
    return out


def fields(doc, schema, prefix="", depth=0, rename=False, request=False):
    """{field path: Field} of a schema, `[]` marking array items (an array of scalars with an enum
    has a `path[]` field carrying the enum). A request body leaves out `readOnly` fields, a
    response `writeOnly` ones; the reference's enum values are renamed like its fields."""
    schema = resolve(doc, schema)
    if not isinstance(schema, dict) or depth > 8:
        return {}
    out = {}
    for key in ("allOf", "oneOf", "anyOf"):
        for part in schema.get(key, []):
            for path, f in fields(doc, part, prefix, depth + 1, rename, request).items():
                merge(out, path, f)
    for name, sub in (schema.get("properties") or {}).items():
        name = FIELD_RENAMES.get(name, name) if rename else name
        sub = resolve(doc, sub)
        path = f"{prefix}{name}"
        if not isinstance(sub, dict):
            merge(out, path, Field(set(), None))
            continue
        if sub.get("readOnly" if request else "writeOnly"):
            continue
        merge(out, path, Field(types_of(doc, sub), renamed(enum_of(doc, sub), rename, name)))
        for p, f in fields(doc, sub, path + ".", depth + 1, rename, request).items():
            merge(out, p, f)
        if "array" in out[path].types:
            for items in items_of(doc, sub):
                e = renamed(enum_of(doc, items), rename, name)
                if e is not None:
                    merge(out, path + "[]", Field(types_of(doc, items), e))
                for p, f in fields(doc, items, path + "[].", depth + 1, rename, request).items():
                    merge(out, p, f)
    return out


def renamed(enum, rename, name):
    """The spec's names for the reference's enum values, as nubis's names layer renames them: a
    `type` `linode` is `instance` (a device or entity type), an `action` `linode_*` is
    `instance_*` (an event action)."""
    if enum is None or not rename:
        return enum
    if name == "type":
        return {"instance" if v == "linode" else v for v in enum}
    if name == "action":
        return {"instance_" + v[7:] if isinstance(v, str) and v.startswith("linode_") else v for v in enum}
    return enum


def merge(out, path, f):
    if path not in out:
        out[path] = Field(set(f.types), None if f.enum is None else set(f.enum))
        return
    old = out[path]
    old.types |= f.types
    if f.enum is not None:
        old.enum = (old.enum or set()) | f.enum


def template(path):
    return re.sub(r"\{[^}]+\}", "{}", path)


def operations(doc, prefix, rename):
    """{(METHOD, templated path): operation}; the reference's `/{apiVersion}` becomes `prefix`."""
    out = {}
    for path, item in (doc.get("paths") or {}).items():
        p = path.removeprefix("/{apiVersion}")
        if rename:
            for old, new in PATH_RENAMES:
                p = p.replace(old, new)
        p = template(prefix + p)
        for m in METHODS:
            if isinstance(item, dict) and m in item:
                out[(m.upper(), p)] = item[m]
    return out


def json_schema(doc, node):
    node = resolve(doc, node or {})
    content = (node.get("content") or {}) if isinstance(node, dict) else {}
    media = content.get("application/json") or {}
    return media.get("schema")


def success_schema(doc, op):
    responses = op.get("responses") or {}
    for code in ("200", "201", "202"):
        if code in responses:
            return json_schema(doc, responses[code])
    return None


def request_schema(doc, op):
    return json_schema(doc, op.get("requestBody"))


def scalar_types(types):
    return types - {"null"}


def compare(m, p, ref_fields, our_fields, request):
    out = []
    for f in sorted(set(ref_fields) | set(our_fields)):
        ours, theirs = our_fields.get(f), ref_fields.get(f)
        if ours is None:
            out.append(f"{m} {p} {f}: " + ("request field not served" if request else "not served"))
            continue
        if theirs is None:
            out.append(f"{m} {p} {f}: " + ("request field not in the reference" if request else "not in the reference"))
            continue
        a, b = ours.types, theirs.types
        if request:
            # What a client may send: nubis refusing null where the reference allows it matters,
            # nubis also accepting null does not.
            a = a if "null" in b else scalar_types(a)
        if a and b and a != b:
            word = "request type" if request else "type"
            out.append(f"{m} {p} {f}: {word} {','.join(sorted(a))} (reference {','.join(sorted(b))})")
        if request and ours.enum is None and theirs.enum is not None and theirs.types & {"string"}:
            # What a client may send is not documented: the values nubis takes are unknown to it.
            out.append(f"{m} {p} {f}: request enum not served")
        if ours.enum is not None and theirs.enum is not None:
            word = "request enum value" if request else "enum value"
            for v in sorted(ours.enum - theirs.enum, key=str):
                out.append(f"{m} {p} {f}: {word} {v} not in the reference")
            for v in sorted(theirs.enum - ours.enum, key=str):
                out.append(f"{m} {p} {f}: {word} {v} " + "not served")
    return out


def differences(reference, served):
    """Sorted lines `METHOD PATH FIELD: kind` (see the module's documentation)."""
    ref_ops = operations(reference, "/v4", rename=True)
    our_ops = operations(served, "", rename=False)
    out = []
    for key in sorted(set(ref_ops) & set(our_ops)):
        m, p = key
        for request, schema_of in ((False, success_schema), (True, request_schema)):
            ref_schema = schema_of(reference, ref_ops[key])
            our_schema = schema_of(served, our_ops[key])
            ref_fields = fields(reference, ref_schema, rename=True, request=request) if ref_schema else {}
            our_fields = fields(served, our_schema, request=request) if our_schema else {}
            out += compare(m, p, ref_fields, our_fields, request)
    for m, p in sorted(set(ref_ops) - set(our_ops)):
        if p.startswith(SPEC_RESOURCES):
            out.append(f"{m} {p}: operation not served")
    for m, p in sorted(set(our_ops) - set(ref_ops)):
        if p.startswith("/v4/") and p != "/v4/openapi.json":
            out.append(f"{m} {p}: operation not in the reference")
    return out


def response_fields(doc, op, rename=True):
    """The fields of an operation's success answer (of its items, for an answer that is a plain
    list)."""
    schema = success_schema(doc, op)
    if schema is None:
        return {}
    if resolve(doc, schema).get("type") == "array":
        out = {}
        for items in items_of(doc, schema):
            for p, f in fields(doc, items, rename=rename).items():
                merge(out, p, f)
        return out
    return fields(doc, schema, rename=rename)


def flatten(value, prefix="", out=None):
    """{field path: [values]} of a JSON answer, `[]` marking array items as in `fields` (the
    items of an array of scalars are the values of `path[]`)."""
    out = {} if out is None else out
    if isinstance(value, list):  # a plain list: its items' fields
        for item in value:
            flatten(item, prefix, out)
        return out
    if not isinstance(value, dict):
        return out
    for k, v in value.items():
        path = f"{prefix}{k}"
        out.setdefault(path, []).append(v)
        if isinstance(v, dict):
            flatten(v, path + ".", out)
        if isinstance(v, list):
            for item in v:
                if isinstance(item, dict):
                    flatten(item, path + "[].", out)
                else:
                    out.setdefault(path + "[]", []).append(item)
    return out


def missing(value, ref_fields, prefix="", out=None):
    """The reference's fields absent from an answer: in every object of it (each item of an
    array on its own), the keys the reference gives that object."""
    out = set() if out is None else out
    if isinstance(value, list):
        for item in value:
            missing(item, ref_fields, prefix, out)
        return out
    if not isinstance(value, dict):
        return out
    for f in ref_fields:
        rest = f[len(prefix):] if f.startswith(prefix) else None
        if rest and "." not in rest and not rest.endswith("[]") and rest not in value:
            out.add(f)
    for k, v in value.items():
        if isinstance(v, dict):
            missing(v, ref_fields, f"{prefix}{k}.", out)
        elif isinstance(v, list):
            missing(v, ref_fields, f"{prefix}{k}[].", out)
    return out


def live_differences(method, path, body, ref_fields):
    """Lines `METHOD PATH FIELD: kind` for one answer against the reference's fields of that
    operation's response: `returned, not in the reference`, `not returned`, `returned TYPE
    (reference TYPES)`, `returned value V not in the reference's enum`."""
    got = flatten(body)
    out = []
    for f in sorted(got):
        ref = ref_fields.get(f)
        if ref is None:
            if not f.endswith("[]"):
                out.append(f"{method} {path} {f}: returned, not in the reference")
            continue
        for t in sorted({json_type(v) for v in got[f]}):
            if ref.types and t not in ref.types:
                out.append(f"{method} {path} {f}: returned {t} (reference {','.join(sorted(ref.types))})")
        if ref.enum:
            for value in sorted({v for v in got[f] if isinstance(v, str)} - ref.enum):
                out.append(f"{method} {path} {f}: returned value {value} not in the reference's enum")
    for f in sorted(missing(body, ref_fields)):
        out.append(f"{method} {path} {f}: not returned")
    return out


def listed_differences():
    """The differences docs/decisions.md lists with their reasons: the lines of its fenced
    `reference-differences` blocks, each `METHOD PATH FIELD: kind` with `*` wildcards; the
    reasons are the block's `#` comments and the text around it."""
    text = DECISIONS.read_text()
    out = []
    for block in re.findall(r"```reference-differences\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


def is_listed(diff, listed):
    """Whether a difference matches a listed entry (`*` matches any text, `fnmatch` style;
    `[` is literal)."""
    return any(fnmatch.fnmatchcase(diff, entry.replace("[", "[[]")) for entry in listed)


def is_listed_any(entry, diffs):
    """Whether a listed entry matches one of the differences."""
    return any(is_listed(d, [entry]) for d in diffs)


def unlisted(diffs, listed=None):
    listed = listed_differences() if listed is None else listed
    return [d for d in diffs if not is_listed(d, listed)]


def load_reference():
    if not REFERENCE.exists():
        raise FileNotFoundError(f"the reference document is not at {REFERENCE}: set NUBIS_REFERENCE_OPENAPI")
    data = REFERENCE.read_bytes()
    if REFERENCE.suffix == ".gz":
        data = gzip.decompress(data)
    if REFERENCE.suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(data)
    return json.loads(data)


# What the vendored copy keeps of the hosted document: the shapes, not the prose.
STRIPPED = {"description", "summary", "example", "examples", "externalDocs", "tags", "security", "title", "operationId", "parameters"}


def strip(node, in_properties=False):
    """The document without its prose, examples, parameters and error answers (keys of a
    `properties` map are field names and stay)."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if not in_properties:
                if k in STRIPPED or k.startswith("x-"):
                    continue
                if k == "responses" and isinstance(v, dict):
                    v = {c: r for c, r in v.items() if str(c).startswith("2")}
            out[k] = strip(v, k == "properties" and not in_properties)
        return out
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def vendor(source, target):
    doc = json.loads(Path(source).read_text())
    kept = {
        "openapi": doc["openapi"],
        "info": {"title": doc["info"]["title"], "version": doc["info"]["version"]},
        "paths": strip(doc["paths"]),
        "components": {k: strip(doc["components"][k]) for k in ("schemas", "responses") if k in doc["components"]},
    }
    data = json.dumps(kept, separators=(",", ":"), sort_keys=True).encode()
    Path(target).write_bytes(gzip.compress(data, 9, mtime=0))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--vendor"]:
        vendor(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else REFERENCE)
        sys.exit(0)
    import urllib.request

    served = json.load(urllib.request.urlopen(sys.argv[1]))
    diffs = differences(load_reference(), served)
    for d in unlisted(diffs) if "--unlisted" in sys.argv else diffs:
        print(d)
