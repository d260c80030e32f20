"""The sign-in service's contract is its RFC 8414 authorization-server metadata
(`/.well-known/oauth-authorization-server`) and the RFCs it names: OAuth 2.0 (RFC 6749) with PKCE
(RFC 7636) at the token endpoint, token revocation (RFC 7009). It has no OpenAPI document (its
endpoints take form bodies and serve HTML pages, which OpenAPI describes poorly and the clients of
OAuth do not read): see docs/decisions.md, "The sign-in service's contract".

These tests hold the served metadata to RFC 8414 and each endpoint it names to its RFC, and throw
generated form bodies at the token and revocation endpoints: never a 5xx, always an RFC error."""

import string
from urllib.parse import urlparse

import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# RFC 6749 5.2 and RFC 7009 2.2.1.
TOKEN_ERRORS = {
    "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type",
    "invalid_scope",
}
REVOKE_ERRORS = TOKEN_ERRORS | {"unsupported_token_type"}

FIELDS = ["grant_type", "code", "redirect_uri", "code_verifier", "refresh_token", "scope", "client_id",
          "client_secret", "token", "token_type_hint"]
VALUES = st.one_of(
    st.sampled_from(["authorization_code", "refresh_token", "password", "client_credentials", "access_token",
                     "refresh_token", "", "*", "http://127.0.0.1/cb"]),
    st.text(alphabet=string.printable, max_size=40),
)
FORMS = st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=6)


def metadata(server):
    r = requests.get(f"http://{server.addr}/.well-known/oauth-authorization-server", timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    return r.json()


def test_the_metadata_is_rfc_8414(nubis):
    m = metadata(nubis)
    origin = f"http://{nubis.addr}"
    # RFC 8414 2: issuer (no query, no fragment), and the metadata a code flow needs.
    assert m["issuer"] == origin, m
    for key in ["authorization_endpoint", "token_endpoint", "revocation_endpoint"]:
        url = urlparse(m[key])
        assert f"{url.scheme}://{url.netloc}" == origin and not url.query and not url.fragment, (key, m[key])
    assert "code" in m["response_types_supported"]
    assert {"authorization_code", "refresh_token"} <= set(m["grant_types_supported"])
    assert m["code_challenge_methods_supported"] == ["S256"]  # RFC 7636: plain is not offered
    assert "*" in m["scopes_supported"]
    # RFC 8414 3: the same document under the issuer's path suffix form is not needed (no path).
    assert urlparse(m["service_documentation"]).path == "/v4/openapi.json"
    assert requests.get(m["service_documentation"], timeout=30).status_code == 200


def test_each_endpoint_answers_as_its_rfc_says(nubis):
    m = metadata(nubis)
    # RFC 6749 5.2: a token request from no client is refused with a JSON error (400, or 401 for
    # the client's authentication), not cached.
    r = requests.post(m["token_endpoint"], data={}, timeout=30)
    assert r.status_code in (400, 401), r.text
    assert r.json()["error"] in TOKEN_ERRORS
    assert r.headers["cache-control"] == "no-store"
    r = requests.post(m["token_endpoint"], data={"grant_type": "password"}, timeout=30)
    assert r.status_code in (400, 401) and r.json()["error"] in {"unsupported_grant_type", "invalid_client"}, r.text
    # RFC 7009 2.2.1: a revocation from an unknown client is refused as invalid_client.
    r = requests.post(m["revocation_endpoint"], data={"token": "x", "client_id": "nobody"}, timeout=30)
    assert r.status_code in (400, 401) and r.json()["error"] in REVOKE_ERRORS, r.text
    # RFC 6749 4.1.2.1: an authorization request naming no known client is not redirected anywhere.
    r = requests.get(m["authorization_endpoint"], params={"response_type": "code", "client_id": "nobody"},
                     allow_redirects=False, timeout=30)
    assert 400 <= r.status_code < 500 and "location" not in r.headers, (r.status_code, r.headers)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(form=FORMS, basic=st.booleans())
def test_generated_requests_get_rfc_errors_never_a_5xx(nubis, form, basic):
    m = metadata(nubis)
    auth = ("nobody", "nothing") if basic else None
    for endpoint, errors in [(m["token_endpoint"], TOKEN_ERRORS), (m["revocation_endpoint"], REVOKE_ERRORS)]:
        r = requests.post(endpoint, data=form, auth=auth, timeout=30)
        assert r.status_code < 500, (endpoint, form, r.status_code, r.text)
        if r.status_code != 200:
            assert r.json()["error"] in errors, (endpoint, form, r.text)
            assert r.headers["cache-control"] == "no-store"
            if r.status_code == 401 and basic:
                assert r.headers["www-authenticate"].startswith("Basic"), r.headers
