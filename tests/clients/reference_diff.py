"""Field-by-field comparison of two OpenAPI documents: the reference (the hosted API's, with the
spec's renames applied) and the one nubis serves. Compares, for every operation both documents
have, the fields of the success response body: present in one and not the other, or of another
type. Used by test_reference.py; run it directly to print every difference."""

import fnmatch
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
import os

REFERENCE = Path(os.environ.get("NUBIS_REFERENCE_OPENAPI", "/work/shared/reference/linode-openapi-4.176.0-subset.yaml"))
DECISIONS = ROOT / "docs" / "decisions.md"

PATH_RENAMES = [("/linode/instances", "/compute/instances"), ("/linode/types", "/compute/types")]
FIELD_RENAMES = {"linode_id": "instance_id", "linodes": "instances", "linode": "instance", "add_linodes": "add_instances"}
METHODS = ("get", "post", "put", "delete")


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


def types_of(doc, schema):
    schema = resolve(doc, schema)
    t = schema.get("type")
    out = set(t) if isinstance(t, list) else ({t} if t else set())
    if not t and ("properties" in schema or "allOf" in schema):
        out.add("object")
    if not t and "enum" in schema:
        out |= {type(v).__name__.replace("str", "string").replace("NoneType", "null") for v in schema["enum"]}
    if schema.get("nullable"):
        out.add("null")
    for key in ("oneOf", "anyOf", "allOf"):
        for s in schema.get(key, []):
            if isinstance(s, dict):
                out |= types_of(doc, s)
    if "integer" in out:
        out.discard("integer")
        out.add("number")  # the reference mixes integer and number for the same values
    return out


def fields(doc, schema, prefix="", depth=0, rename=False):
    """{field path: set of types} of a schema, `[]` marking array items."""
    schema = resolve(doc, schema)
    if not isinstance(schema, dict) or depth > 6:
        return {}
    out = {}
    for key in ("allOf", "oneOf", "anyOf"):
        for part in schema.get(key, []):
            out.update(fields(doc, part, prefix, depth + 1, rename))
    for name, sub in (schema.get("properties") or {}).items():
        name = FIELD_RENAMES.get(name, name) if rename else name
        sub = resolve(doc, sub)
        path = f"{prefix}{name}"
        out[path] = types_of(doc, sub) if isinstance(sub, dict) else set()
        if isinstance(sub, dict):
            out.update(fields(doc, sub, path + ".", depth + 1, rename))
            items = resolve(doc, sub.get("items", {})) if "array" in out[path] else None
            if isinstance(items, dict):
                out.update(fields(doc, items, path + "[].", depth + 1, rename))
    return out


def template(path):
    return re.sub(r"\{[^}]+\}", "{}", path)


def operations(doc, prefix, rename):
    out = {}
    for path, item in (doc.get("paths") or {}).items():
        p = path
        if rename:
            for old, new in PATH_RENAMES:
                p = p.replace(old, new)
        p = template(prefix + p)
        for m in METHODS:
            if m in item:
                out[(m.upper(), p)] = item[m]
    return out


def success_schema(doc, op):
    responses = op.get("responses") or {}
    r = resolve(doc, responses.get("200") or {})
    content = (r.get("content") or {}).get("application/json") or {}
    return content.get("schema")


def differences(reference, served):
    """Sorted lines `METHOD PATH FIELD: kind`."""
    ref_ops = operations(reference, "/v4", rename=True)
    our_ops = operations(served, "", rename=False)
    out = []
    for key in sorted(set(ref_ops) & set(our_ops)):
        ref_schema = success_schema(reference, ref_ops[key])
        our_schema = success_schema(served, our_ops[key])
        ref_fields = fields(reference, ref_schema, rename=True) if ref_schema else {}
        our_fields = fields(served, our_schema) if our_schema else {}
        m, p = key
        for f in sorted(set(ref_fields) | set(our_fields)):
            if f not in our_fields:
                out.append(f"{m} {p} {f}: not served")
            elif f not in ref_fields:
                out.append(f"{m} {p} {f}: not in the reference")
            elif ref_fields[f] and our_fields[f] and ref_fields[f] != our_fields[f]:
                ours, theirs = ",".join(sorted(our_fields[f])), ",".join(sorted(ref_fields[f]))
                out.append(f"{m} {p} {f}: type {ours} (reference {theirs})")
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
    """Whether a difference matches a listed entry (`*` matches any text, `fnmatch` style)."""
    return any(fnmatch.fnmatchcase(diff, entry) for entry in listed)


def load_reference():
    if not REFERENCE.exists():
        raise FileNotFoundError(f"the reference document is not at {REFERENCE}: set NUBIS_REFERENCE_OPENAPI")
    return yaml.safe_load(REFERENCE.read_text())


if __name__ == "__main__":
    import json
    import urllib.request

    served = json.load(urllib.request.urlopen(sys.argv[1]))
    for d in differences(load_reference(), served):
        print(d)
