"""The comparison itself (reference_diff.py), on tiny documents and without a server: each kind of
difference it exists to find is reported, so it cannot silently compare nothing."""

import reference_diff as rd


def page(item):
    return {"type": "object", "properties": {"data": {"type": "array", "items": item}, "page": {"type": "integer"}}}


INSTANCE = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "label": {"type": "string"},
        "status": {"type": "string", "enum": ["running", "offline", "booting"]},
        "linode_id": {"type": "integer"},
        "specs": {"type": "object", "properties": {"disk": {"type": "integer"}}},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    },
}


def reference():
    return {
        "openapi": "3.0.1",
        "paths": {
            "/{apiVersion}/linode/instances": {
                "get": {"responses": {"200": {"content": {"application/json": {"schema": page(INSTANCE)}}}}},
                "post": {
                    "requestBody": {"content": {"application/json": {"schema": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string", "nullable": True},
                            "region": {"type": "string"},
                            "interface_generation": {"type": "string", "enum": ["legacy_config", "linode"]},
                            "backups_enabled": {"type": "string", "enum": ["yes", "no"]},
                        },
                    }}}},
                    "responses": {"200": {"content": {"application/json": {"schema": INSTANCE}}}},
                },
            },
            "/{apiVersion}/linode/instances/{linodeId}/backups": {"get": {"responses": {"200": {}}}},
            "/{apiVersion}/volumes": {"get": {"responses": {"200": {}}}},
        },
    }


def served():
    instance = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "label": {"type": "integer"},  # a type differs
            "status": {"type": "string", "enum": ["running", "offline", "resizing"]},  # enum differs
            "instance_id": {"type": "integer"},  # the renamed `linode_id`
            "specs": {"$ref": "#/components/schemas/Specs"},  # through a $ref, one field less
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "extra": {"type": "boolean"},  # a field the reference lacks
        },
    }
    return {
        "openapi": "3.1.0",
        "components": {"schemas": {"Specs": {"type": "object", "properties": {}}}},
        "paths": {
            "/v4/compute/instances": {
                "get": {"responses": {"200": {"content": {"application/json": {"schema": page(instance)}}}}},
                "post": {
                    "requestBody": {"content": {"application/json": {"schema": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string"},  # refuses the null the reference allows
                            "type": {"type": "string"},  # a field the reference lacks
                            "interface_generation": {"type": "string", "enum": ["linode"]},
                            "backups_enabled": {"type": "string"},  # no enum documented
                        },
                    }}}},
                    "responses": {"200": {"content": {"application/json": {"schema": instance}}}},
                },
            },
        },
    }


def test_each_kind_of_difference_is_reported():
    diffs = rd.differences(reference(), served())
    expected = {
        # response fields: a type, a missing field, an extra field, enum values both ways
        "GET /v4/compute/instances data[].label: type number (reference string)",
        "GET /v4/compute/instances data[].specs.disk: not served",
        "GET /v4/compute/instances data[].extra: not in the reference",
        "GET /v4/compute/instances data[].status: enum value resizing not in the reference",
        "GET /v4/compute/instances data[].status: enum value booting not served",
        "POST /v4/compute/instances label: type number (reference string)",
        # request fields
        "POST /v4/compute/instances region: request field not served",
        "POST /v4/compute/instances type: request field not in the reference",
        "POST /v4/compute/instances label: request type string (reference null,string)",
        "POST /v4/compute/instances interface_generation: request enum value legacy_config not served",
        "POST /v4/compute/instances backups_enabled: request enum not served",
        # an operation of the spec's resources not served; volumes are outside the spec
        "GET /v4/compute/instances/{}/backups: operation not served",
    }
    assert expected <= set(diffs), sorted(expected - set(diffs))
    # The renamed field and equal fields (with their equal enums) are no difference.
    assert not [d for d in diffs if "instance_id" in d or "linode_id" in d or " id:" in d or "tags" in d], diffs
    assert not [d for d in diffs if "/volumes" in d], diffs
    assert "GET /v4/compute/instances data[].status: enum value running not served" not in diffs


def test_equal_documents_have_no_difference():
    doc = served()
    same = {**doc, "paths": {"/{apiVersion}" + p.removeprefix("/v4"): item for p, item in doc["paths"].items()}}
    assert rd.differences(same, doc) == []


def test_listed_entries_match_with_wildcards_and_literal_brackets():
    listed = ["* *data[].status: enum value * not served", "GET /v4/compute/instances/{}/backups: operation not served"]
    assert rd.is_listed("GET /v4/compute/instances data[].status: enum value booting not served", listed)
    assert rd.is_listed("GET /v4/compute/instances/{}/backups: operation not served", listed)
    assert not rd.is_listed("GET /v4/compute/instances datax.status: enum value booting not served", listed)
    assert not rd.is_listed("GET /v4/compute/instances data[].status: enum value booting not in the reference", listed)
    assert rd.is_listed_any(listed[0], ["x", "PUT /v4/a data[].status: enum value b not served"])
    assert not rd.is_listed_any(listed[0], ["PUT /v4/a data.status: enum value b not served"])


def test_each_kind_of_difference_of_a_live_answer_is_reported():
    ref_fields = rd.response_fields(reference(), {"responses": {"200": {"content": {"application/json": {
        "schema": page(INSTANCE)}}}}})
    answer = {
        "data": [
            {"id": 1, "label": 7, "status": "rebooting", "instance_id": 2, "specs": {}, "tags": ["a", "c"], "extra": None},
            {"id": 2, "label": "b", "status": "running", "instance_id": 3, "specs": {"disk": 1}, "tags": []},
        ],
    }
    diffs = rd.live_differences("GET", "/v4/compute/instances", answer, ref_fields)
    assert set(diffs) == {
        "GET /v4/compute/instances data[].label: returned number (reference string)",
        "GET /v4/compute/instances data[].status: returned value rebooting not in the reference's enum",
        "GET /v4/compute/instances data[].tags[]: returned value c not in the reference's enum",
        "GET /v4/compute/instances data[].extra: returned, not in the reference",
        "GET /v4/compute/instances page: not returned",
        "GET /v4/compute/instances data[].specs.disk: not returned",  # the first item's
    }, diffs
    # A field under an object that was not returned is not expected; an empty page has no items.
    assert rd.live_differences("GET", "/v4/x", {"data": [], "page": 1}, ref_fields) == []


def test_the_vendored_reference_is_the_hosted_document():
    doc = rd.load_reference()
    assert doc["info"]["version"] == "4.189.0"
    ops = rd.operations(doc, "/v4", rename=True)
    assert len(ops) > 300
    fields = rd.fields(doc, rd.success_schema(doc, ops[("GET", "/v4/compute/instances/{}")]), rename=True)
    assert {"id", "label", "status", "ipv4", "specs.disk"} <= set(fields)
    assert {"running", "offline", "provisioning"} <= fields["status"].enum
    # A request body is kept too.
    body = rd.fields(doc, rd.request_schema(doc, ops[("POST", "/v4/compute/instances")]), rename=True)
    assert {"region", "type", "label", "image", "interfaces[].purpose"} <= set(body)


def test_vendoring_keeps_field_names_and_drops_prose():
    doc = {"openapi": "3.0.1", "info": {"title": "t", "version": "1"}, "components": {"schemas": {}},
           "paths": {"/a": {"get": {"summary": "s", "description": "d", "responses": {
               "200": {"content": {"application/json": {"schema": {"type": "object", "description": "d", "example": {},
                   "properties": {"description": {"type": "string"}, "x-y": {"type": "string"}}}}}},
               "400": {}}}}}}
    kept = rd.strip(doc["paths"])
    assert kept == {"/a": {"get": {"responses": {"200": {"content": {"application/json": {"schema": {
        "type": "object", "properties": {"description": {"type": "string"}, "x-y": {"type": "string"}}}}}}}}}}
