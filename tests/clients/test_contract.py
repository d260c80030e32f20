"""The served OpenAPI document is a contract: schemathesis generates requests for every
operation from it and fails on any 5xx, any response that violates its documented schema or
content type, any undocumented status code and any operation that ignores authentication."""

import os
import subprocess
import sys
from pathlib import Path

CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "ignored_auth",
])


def test_schemathesis_finds_no_failure(fresh_nubis, tmp_path):
    exe = Path(sys.executable).with_name("schemathesis")
    examples = os.environ.get("NUBIS_CONTRACT_EXAMPLES", "10")
    seed = os.environ.get("NUBIS_CONTRACT_SEED", "1")
    cmd = [
        str(exe), "run", f"{fresh_nubis.base_url}/openapi.json",
        "--url", f"http://{fresh_nubis.addr}",
        "-H", f"Authorization: Bearer {fresh_nubis.token}",
        "--checks", CHECKS,
        "--phases", "examples,coverage,fuzzing",
        "--max-examples", examples, "--seed", seed,
        "--workers", "2", "--no-color",
        "--report", "junit", "--report-dir", str(tmp_path),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-20000:]
    assert "Tested: " in out and "passed" in out, out[-5000:]
