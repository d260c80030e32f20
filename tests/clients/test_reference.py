"""The served OpenAPI document against the hosted API's (4.189.0, vendored beside this file, with
the spec's renames applied): for every operation both have, the success response's and the request
body's fields, their types and the values of their enums; the hosted operations under the spec's
resources that nubis does not serve, and the served ones the hosted document lacks. Each difference
is listed with its reason in docs/decisions.md ("Differences from the reference document")."""

import reference_diff as rd


def test_every_difference_from_the_reference_is_listed_with_its_reason(nubis):
    served = nubis.api("GET", "/openapi.json").json()
    diffs = rd.differences(rd.load_reference(), served)
    unlisted = rd.unlisted(diffs)
    assert not unlisted, (
        f"{len(unlisted)} differences from the reference not listed in docs/decisions.md:\n" + "\n".join(unlisted)
    )


def test_the_comparison_sees_the_operations_both_documents_have(nubis):
    served = nubis.api("GET", "/openapi.json").json()
    reference = rd.load_reference()
    ref_ops = rd.operations(reference, "/v4", rename=True)
    our_ops = rd.operations(served, "", rename=False)
    both = set(ref_ops) & set(our_ops)
    # Every operation nubis serves that the reference documents is compared.
    assert ("GET", "/v4/compute/instances/{}") in both
    assert ("POST", "/v4/networking/firewalls") in both
    assert len(both) >= 180, sorted(set(our_ops) - set(ref_ops))
    # And the comparison sees fields and enums on both sides (a broken resolver would compare nothing).
    key = ("GET", "/v4/compute/instances/{}")
    ours = rd.fields(served, rd.success_schema(served, our_ops[key]))
    theirs = rd.fields(reference, rd.success_schema(reference, ref_ops[key]), rename=True)
    assert {"id", "label", "status", "ipv4"} <= set(ours) & set(theirs)
    assert ours["status"].enum and theirs["status"].enum and "running" in ours["status"].enum & theirs["status"].enum
    key = ("POST", "/v4/compute/instances")
    body = rd.fields(served, rd.request_schema(served, our_ops[key]))
    assert {"region", "type", "label", "image"} <= set(body) & set(rd.fields(reference, rd.request_schema(reference, ref_ops[key]), rename=True))
