"""Bad input from outside: `castline sim` survives it and answers it the documented way.

One simulator serves every scenario in this module (the bad input piles up on one process); each
test ends by checking that a fresh, well-behaved sender is still served, and the last one checks
that the process is alive, holds no connection and printed no crash. The raw sender
(clients/raw_sender.py) runs inside the test namespace like every other client.
"""
import os
import shutil
import tempfile

import pytest

from clients.polling import poll
from conftest import Namespace, Simulator, run_client

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

CRASH_TEXT = ("Fatal error", "Program crashed", "Precondition failed", "Assertion failed", "Segmentation fault",
              "Illegal instruction", "Current stack trace")
GENERIC_INVALID = {"type": "INVALID_REQUEST", "requestId": 0, "reason": "INVALID_COMMAND"}
# What raw_sender.py's BAD_PAYLOADS must get back, on the receiver and on the media namespace.
EXPECTED_REJECTIONS = {
    "truncated-json": GENERIC_INVALID,
    "not-json": GENERIC_INVALID,
    "json-array": GENERIC_INVALID,
    "json-string": GENERIC_INVALID,
    "binary-payload": GENERIC_INVALID,
    "missing-request-id": GENERIC_INVALID,
    "string-request-id": GENERIC_INVALID,
    "missing-type": {"type": "INVALID_REQUEST", "requestId": 11, "reason": "INVALID_COMMAND"},
    "unknown-type": {"type": "INVALID_REQUEST", "requestId": 12, "reason": "INVALID_COMMAND"},
}


@pytest.fixture(scope="module")
def shared_sim():
    """One `castline sim` (own namespace and work dir) for the whole module; SIGTERM must end it with 0."""
    namespace = Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-conf-")
    os.chmod(workdir, 0o755)
    simulator = None
    try:
        simulator = Simulator(namespace, workdir, extra=["--no-mdns"])
        simulator.namespace = namespace
        yield simulator
    finally:
        code = simulator.stop() if simulator else 0
        namespace.close()
        stderr = open(simulator.stderr_path).read() if simulator else ""
        shutil.rmtree(workdir, ignore_errors=True)
        assert code == 0, f"castline sim exited with {code} on SIGTERM: {stderr[-6000:]}"


def raw(sim, scenario, namespace=None):
    device = sim.device
    return run_client(namespace or sim.namespace, "raw_sender.py", device["address"], str(device["castPort"]),
                      scenario, timeout=40)


def state(sim):
    return sim.control({"command": "list"})["devices"][0]["state"]


def connection_events(sim, local_port, want=None, timeout=10.0):
    """Frame-log entries of the latest connection from `local_port`; waits (bounded) until
    `want(entries)` holds, and returns them as they are then either way (the caller asserts)."""
    peer = f"{sim.device['address']}:{local_port}"

    def mine():
        entries = sim.frames()
        opened = [e for e in entries if e["event"] == "opened" and e.get("peer") == peer]
        return [e for e in entries if opened and e.get("connection") == opened[-1]["connection"]]

    def wanted():
        entries = mine()
        return (entries,) if want(entries) else None

    found = poll(wanted, timeout) if want is not None else None
    return found[0] if found else mine()


def frame_errors(entries):
    return [e["error"] for e in entries if e["event"] == "frameError"]


def is_closed(entries):
    return any(e["event"] == "closed" for e in entries)


def assert_still_serving(sim):
    """The process is alive and a new sender gets RECEIVER_STATUS (TLS, CONNECT, GET_STATUS)."""
    assert sim.process.poll() is None, f"castline sim died: {sim.log_text()}"
    assert raw(sim, "status")["status"] == "RECEIVER_STATUS"


# 1. Not TLS at all.

@pytest.mark.parametrize("scenario", ["tcp-garbage", "http-get"])
def test_plain_tcp_instead_of_tls_is_closed(shared_sim, scenario):
    seen = raw(shared_sim, scenario)
    assert seen["closed"] in ("eof", "reset"), seen
    assert seen["seconds"] < 5, seen
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    errors = frame_errors(entries)
    assert len(errors) == 1 and errors[0].startswith("TLS: handshakeFailed"), entries
    assert is_closed(entries), entries
    assert_still_serving(shared_sim)


@pytest.mark.parametrize("scenario", ["status", "status-abrupt-close"])
def test_well_behaved_sender_leaves_no_frame_error(shared_sim, scenario):
    """A TCP close without TLS close_notify after complete frames is normal, not bad input."""
    seen = raw(shared_sim, scenario)
    assert seen["status"] == "RECEIVER_STATUS"
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    assert is_closed(entries) and frame_errors(entries) == [], entries


def test_a_tls_record_that_does_not_decrypt_is_bad_input_and_closes(shared_sim):
    """Random ciphertext in an application-data record: BoringSSL refuses it, the device records
    a TLS frame error naming the reason and closes; the simulator goes on serving."""
    seen = raw(shared_sim, "tls-bad-record")
    assert seen["before"] == "RECEIVER_STATUS", seen
    # Closed: plainly, or after a TLS alert naming the bad record.
    assert (seen["closed"] in ("eof", "reset") or seen["closed"].startswith("tls-error:")) and seen["seconds"] < 5, seen
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    errors = frame_errors(entries)
    assert len(errors) == 1 and errors[0].startswith("TLS: "), entries
    assert "BAD_DECRYPT" in errors[0] or "BAD_RECORD_MAC" in errors[0], errors
    assert is_closed(entries), entries
    assert_still_serving(shared_sim)


# 2. Length prefix above CastFrameLimits.maxBodySize (65,536).

@pytest.mark.parametrize("scenario,size", [("oversized", 65537), ("oversized-huge", 0xFFFFFFFF)])
def test_oversized_length_prefix_closes_the_connection(shared_sim, scenario, size):
    seen = raw(shared_sim, scenario)
    assert seen["before"] == "RECEIVER_STATUS", seen
    assert seen["closed"] in ("eof", "reset") and seen["seconds"] < 5, seen
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    errors = frame_errors(entries)
    assert errors and errors[0] == f"frame body of {size} bytes exceeds the 65536-byte limit", entries
    assert is_closed(entries), entries
    assert_still_serving(shared_sim)


def test_body_of_exactly_the_limit_is_accepted(shared_sim):
    seen = raw(shared_sim, "max-size")
    assert seen["bodyBytes"] == 65536
    assert seen["reply"] == "RECEIVER_STATUS" and seen["after"] == "RECEIVER_STATUS", seen
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    assert frame_errors(entries) == [], entries


# 3. A frame whose body is not a CastMessage.

def test_undecodable_body_is_dropped_and_the_connection_goes_on(shared_sim):
    seen = raw(shared_sim, "garbage-body")
    # Each bad body is followed by a GET_STATUS on the same connection: every one is answered.
    assert seen["cases"] == {label: "RECEIVER_STATUS" for label in
                             ("random-bytes", "bad-wire-type", "truncated-varint", "missing-fields",
                              "string-without-payload")}, seen
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    errors = frame_errors(entries)
    assert len(errors) == 5, entries
    assert all("is not a CastMessage" in e for e in errors[:3]), errors
    assert "lacks required field 'protocol_version'" in errors[3], errors
    assert "lacks required field 'payload_utf8'" in errors[4], errors
    # All five were recorded before the connection ended (the sender closed it, not the device).
    events = [e["event"] for e in entries]
    assert events.index("closed") > max(i for i, e in enumerate(events) if e == "frameError"), events
    assert_still_serving(shared_sim)


# 4 and 5. Invalid JSON / envelope on the request namespaces.

def test_invalid_receiver_requests_get_invalid_request(shared_sim):
    before = state(shared_sim)["rejectedMessages"]
    seen = raw(shared_sim, "invalid-receiver")
    assert seen["replies"] == EXPECTED_REJECTIONS, seen
    assert seen["after"] == "RECEIVER_STATUS", seen
    assert state(shared_sim)["rejectedMessages"] - before == len(EXPECTED_REJECTIONS)
    inbound = [e for e in connection_events(shared_sim, seen["localPort"], is_closed)
               if e["event"] == "frame" and e["direction"] == "in" and e["namespace"].endswith(".receiver")]
    assert inbound[0]["invalidJSON"] is True and inbound[0]["payload"] == '{"type": "GET_STATUS", "requestId": 7'
    assert_still_serving(shared_sim)


def test_invalid_media_requests_get_invalid_request(shared_sim):
    before = state(shared_sim)["rejectedMessages"]
    seen = raw(shared_sim, "invalid-media")
    assert seen["transportId"], seen
    assert seen["replies"] == EXPECTED_REJECTIONS, seen
    assert seen["after"] == "MEDIA_STATUS", seen
    assert seen["stopped"] is True, seen
    after = state(shared_sim)
    assert after["rejectedMessages"] - before == len(EXPECTED_REJECTIONS)
    assert after["app"] is None
    assert_still_serving(shared_sim)


# 6. Messages nobody handles.

def test_unknown_namespace_is_ignored_and_counted(shared_sim):
    before = state(shared_sim)["ignoredMessages"]
    seen = raw(shared_sim, "unknown-namespace")
    assert seen["after"] == "RECEIVER_STATUS", seen       # the connection stays open
    assert seen["nobodyReplies"] == [], seen                # nothing on the unknown namespace within ~1 s
    assert state(shared_sim)["ignoredMessages"] - before == 1
    assert frame_errors(connection_events(shared_sim, seen["localPort"], is_closed)) == []
    assert_still_serving(shared_sim)


def test_receiver_request_without_connect_is_ignored(shared_sim):
    before = state(shared_sim)["ignoredMessages"]
    seen = raw(shared_sim, "without-connect")
    assert seen["before"] == "timeout", seen                # no reply without a virtual connection
    assert seen["after"] == "RECEIVER_STATUS", seen         # answered once CONNECTed, same connection
    assert state(shared_sim)["ignoredMessages"] - before == 1


# 7. Zero-length frame.

def test_zero_length_frame_closes_the_connection(shared_sim):
    seen = raw(shared_sim, "zero-length")
    assert seen["before"] == "RECEIVER_STATUS", seen
    assert seen["closed"] in ("eof", "reset") and seen["seconds"] < 5, seen
    entries = connection_events(shared_sim, seen["localPort"], is_closed)
    errors = frame_errors(entries)
    assert errors and errors[0] == "frame with a 0-byte body", entries
    assert is_closed(entries), entries
    assert_still_serving(shared_sim)


# 8. Transport namespaces.

def test_heartbeat_garbage_is_ignored(shared_sim):
    seen = raw(shared_sim, "heartbeat-garbage")
    assert seen["heartbeatReplies"] == [], seen             # non-JSON / truncated / binary / unknown type
    assert seen["after"] == "RECEIVER_STATUS", seen         # the connection stays open
    assert seen["pong"] == {"type": "PONG"}, seen           # and a real PING still gets its PONG
    assert frame_errors(connection_events(shared_sim, seen["localPort"], is_closed)) == []


def test_device_auth_garbage_gets_an_auth_error(shared_sim):
    seen = raw(shared_sim, "device-auth-garbage")
    assert seen.get("hasError") is True and seen["errorType"] == "INTERNAL_ERROR", seen
    assert seen["after"] == "RECEIVER_STATUS", seen


# Survival.

def test_simulator_survived_all_bad_input(shared_sim):
    assert_still_serving(shared_sim)
    poll(lambda: not state(shared_sim)["connections"], 10)
    listing = shared_sim.control({"command": "list"})["devices"][0]
    assert listing["connections"] == [] and listing["state"]["connections"] == [], listing
    assert listing["state"]["senders"] == [], listing
    assert shared_sim.process.poll() is None
    log = open(shared_sim.stderr_path).read()
    crashes = [text for text in CRASH_TEXT if text in log]
    assert not crashes, f"crash text {crashes} in the simulator's stderr: {log[-6000:]}"


# Silent senders (separate simulator with short heartbeat timings).

def test_silent_connections_are_dropped_after_the_heartbeat_timeout(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--ping-interval", "0.5", "--heartbeat-timeout", "1.5"])
    sim.namespace = netns
    try:
        silent = raw(sim, "silent-tcp")                     # TCP only, TLS never started
        assert silent["closed"] in ("eof", "reset") and 1.0 <= silent["seconds"] < 5, silent
        partial = raw(sim, "partial-frame")                 # half a length prefix, then silence
        assert partial["before"] == "RECEIVER_STATUS", partial
        assert partial["closed"] in ("eof", "reset") and 1.0 <= partial["seconds"] < 5, partial
        assert is_closed(connection_events(sim, silent["localPort"], is_closed))
        assert_still_serving(sim)
    finally:
        code = sim.stop()
    assert code == 0
