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
        "POST /v4/compute/instances region: request field not accepted",
        "POST /v4/compute/instances type: request field not in the reference",
        "POST /v4/compute/instances label: request type string (reference null,string)",
        "POST /v4/compute/instances interface_generation: request enum value legacy_config not accepted",
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
    assert rd.differences(doc, doc) == []


def test_listed_entries_match_with_wildcards_and_literal_brackets():
    listed = ["* *data[].status: enum value * not served", "GET /v4/compute/instances/{}/backups: operation not served"]
    assert rd.is_listed("GET /v4/compute/instances data[].status: enum value booting not served", listed)
    assert rd.is_listed("GET /v4/compute/instances/{}/backups: operation not served", listed)
    assert not rd.is_listed("GET /v4/compute/instances datax.status: enum value booting not served", listed)
    assert not rd.is_listed("GET /v4/compute/instances data[].status: enum value booting not in the reference", listed)


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
