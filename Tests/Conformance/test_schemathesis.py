"""schemathesis (PyPI) against docs/api/openapi.yaml and the live daemon over its TCP listener, in
the test's namespace: every generated request, valid or not, gets no 5xx and an answer the document
describes (status, content type, schema, Allow on 405), and a request the document forbids is
refused. The event stream is left out: it never ends.

One check is left out, `positive_data_acceptance` ("a schema-valid request is accepted"): what the
daemon checks beyond JSON Schema (the log-rule grammar, whether a URL's content type can be told, a
channel plugin's own command format) is a 400 or 422 with its reason, by design."""
import os
import subprocess

import pytest

from conftest import PYTHON, REPO, Simulator
from hub import Hub

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

SCHEMATHESIS = os.path.join(os.path.dirname(PYTHON), "schemathesis")
SECONDS = os.environ.get("CASTLINE_SCHEMATHESIS_SECONDS", "60")


def test_the_daemon_answers_as_its_openapi_document_says(netns, workdir):
    # Every media ends after a second, so an announcement (which waits for its end, then for the
    # restore) answers in seconds; the request timeout still leaves room for a restore's own bound.
    rules = os.path.join(workdir, "sim.json")
    with open(rules, "w") as f:
        f.write('{"mediaRules": [{"contentId": "*", "duration": 1}]}')
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "3", "--config", rules])
    token_file = os.path.join(workdir, "token")
    with open(token_file, "w") as f:
        f.write("schemathesis-token-0123456789\n")
    os.chmod(token_file, 0o600)
    hub = Hub(netns, sim, workdir, api_extra=f"  listen: 127.0.0.1:18770\n  token_file: {token_file}",
              log_rules="warning,ControlPlane:info")
    report = os.path.join(workdir, "schemathesis")
    try:
        result = netns.run(
            SCHEMATHESIS, "run", os.path.join(REPO, "docs", "api", "openapi.yaml"), "--url", "http://127.0.0.1:18770",
            "-H", "Authorization: Bearer schemathesis-token-0123456789", "--checks", "all", "--exclude-checks", "positive_data_acceptance", "--exclude-path", "/v1/events",
            "--max-time", SECONDS, "--request-timeout", "60", "--max-response-time", "60", "--seed", "1", "--generation-database", ":memory:", "--report", "junit", "--report-dir", report,
            timeout=int(SECONDS) + 240, env=dict(os.environ, SCHEMATHESIS_HOOKS=""))
        output = result.stdout + result.stderr
        with open(os.environ.get("CASTLINE_SCHEMATHESIS_OUTPUT", os.path.join(workdir, "schemathesis.txt")), "w") as f:
            f.write(output)
        assert result.returncode == 0, output[-8000:] + "\ndaemon log:\n" + hub.log()[-4000:]
        assert "No issues found" in output or "passed" in output, output[-3000:]
        assert hub.process.poll() is None, "the daemon survived the run"
    finally:
        code = hub.stop()
        with open(hub.stderr_path) as f:
            assert code == 0, f.read()[-3000:]
        assert sim.stop() == 0
