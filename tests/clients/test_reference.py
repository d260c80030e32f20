"""The served OpenAPI document against the reference (the hosted API's 4.176.0 document, with
the spec's renames applied), field by field for every operation both have: each difference is
listed with its reason in docs/decisions.md ("Differences from the reference document")."""

import reference_diff as rd


def test_every_difference_from_the_reference_is_listed_with_its_reason(nubis):
    served = nubis.api("GET", "/openapi.json").json()
    diffs = rd.differences(rd.load_reference(), served)
    assert len(diffs) > 0 or served["paths"], "nothing was compared"
    listed = rd.listed_differences()
    unlisted = [d for d in diffs if not rd.is_listed(d, listed)]
    assert not unlisted, "differences from the reference not listed in docs/decisions.md:\n" + "\n".join(unlisted)


def test_the_comparison_sees_the_operations_both_documents_have(nubis):
    served = nubis.api("GET", "/openapi.json").json()
    ref_ops = rd.operations(rd.load_reference(), "/v4", rename=True)
    our_ops = rd.operations(served, "", rename=False)
    both = set(ref_ops) & set(our_ops)
    # Every operation nubis serves that the reference documents is compared.
    assert ("GET", "/v4/compute/instances/{}") in both
    assert ("POST", "/v4/networking/firewalls") in both
    assert len(both) >= 90, sorted(set(our_ops) - set(ref_ops))
    # And the comparison sees fields (a broken resolver would compare nothing).
    fields = rd.fields(served, rd.success_schema(served, our_ops[("GET", "/v4/compute/instances/{}")]))
    assert {"id", "label", "status", "ipv4"} <= set(fields)
