"""The daemon's control API over its real socket, against `castline sim` with three devices in the
test's namespace: devices (an idle one included), casts, volume on an idle device, jobs put and
deleted, a custom-namespace request through the EchoChannelC plugin, the event stream across a
dropped connection, the token on TCP, bad input."""
import json
import os
import socket
import subprocess
import time

import pytest

from conftest import Simulator, castline_binary, wait_until
from hub import ECHO_NS, EventReader, Hub, api, prometheus_query, sim_devices

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

MOVIE = "http://media.invalid/movie.mp4"


@pytest.fixture
def sim3(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "3"])
    yield simulator
    assert simulator.stop() == 0


@pytest.fixture
def hub(netns, sim3, workdir):
    daemon = Hub(netns, sim3, workdir)
    yield daemon
    assert daemon.stop() == 0, daemon.log()[-3000:]


def device_state(sim, index):
    return sim_devices(sim)[index]["state"]


def test_three_devices_listed_idle_included_and_a_cast_plays(hub, sim3):
    status, body, _ = hub.get("/v1/devices")
    assert status == 200
    devices = body["devices"]
    assert sorted(d["id"] for d in devices) == sorted(d["uuid"] for d in sim3.ready["devices"])
    assert all(d["state"] == "NO_APP" and d["link"] == "connected" and "volume" in d for d in devices), devices
    name = sim3.ready["devices"][0]["name"]
    status, body, _ = hub.post(f"/v1/devices/{name.replace(' ', '%20')}/cast", {"media": MOVIE, "title": "Movie"})
    assert status == 200, body
    assert body["state"] == "PLAYING" and body["contentId"] == MOVIE and body["owner"] == "command"
    media = device_state(sim3, 0)["media"]
    assert media["playerState"] == "PLAYING" and media["contentId"] == MOVIE, "the simulator's own state"
    status, detail, _ = hub.get(f"/v1/devices/{sim3.ready['devices'][0]['uuid']}")
    assert status == 200 and detail["mediaStatus"]["media"]["contentId"] == MOVIE


def listed(hub, uuid):
    status, body, _ = hub.get("/v1/devices")
    assert status == 200, body
    return next(d for d in body["devices"] if d["id"] == uuid)


def test_volume_on_an_idle_device(hub, sim3):
    uuid = sim3.ready["devices"][2]["uuid"]
    before = listed(hub, uuid)["volume"]   # the listing keeps idle devices' objects until they change
    status, body, _ = hub.post(f"/v1/devices/{uuid}/volume", {"level": 30})
    assert status == 200, body
    assert body["state"] == "NO_APP" and abs(body["volume"] - 0.3) < 0.001
    state = device_state(sim3, 2)
    assert state["app"] is None and abs(state["volume"]["level"] - 0.3) < 0.001
    wait_until(lambda: abs(listed(hub, uuid)["volume"] - 0.3) < 0.001, 5, f"the listing to show the new volume (was {before})")
    status, body, _ = hub.post(f"/v1/devices/{uuid}/mute", {})
    assert status == 200 and body["muted"] is True and device_state(sim3, 2)["volume"]["muted"] is True
    wait_until(lambda: listed(hub, uuid).get("muted") is True, 5, "the listing to show the device muted")
    status, body, _ = hub.post(f"/v1/devices/{uuid}/volume", {"level": 0.5})
    assert status == 400 and body["error"]["code"] == "volume_not_percent", body
    assert "did you mean 50" in body["error"]["message"]


def test_a_job_put_plays_and_its_cast_stops_when_deleted(hub, sim3):
    name = sim3.ready["devices"][1]["name"]
    job = {"devices": [name], "media": {"url": "http://media.invalid/signage.mp4", "title": "Signage"}}
    status, body, _ = api(hub.socket, "PUT", "/v1/jobs/signage", job)
    assert status == 201 and body["source"] == "api", body
    wait_until(lambda: (device_state(sim3, 1).get("media") or {}).get("contentId") == job["media"]["url"], 15, "the job's cast")
    wait_until(lambda: hub.get("/v1/jobs/signage")[1]["devices"][0]["state"] == "playing", 10, "the job to report playing")
    with open(os.path.join(hub.workdir, "jobs.json")) as f:
        assert json.load(f)["jobs"][0]["name"] == "signage", "kept in the jobs file"
    status, body, _ = api(hub.socket, "DELETE", "/v1/jobs/signage")
    assert status == 200 and body == {"deleted": "signage"}
    wait_until(lambda: device_state(sim3, 1)["app"] is None, 10, "the deleted job's cast to stop")
    assert api(hub.socket, "GET", "/v1/jobs/signage")[0] == 404
    status, body, _ = api(hub.socket, "PUT", "/v1/jobs/bad", {"devices": [name], "medai": "x"})
    assert status == 400 and 'did you mean "media"' in body["error"]["message"], body


def test_a_custom_namespace_request_through_the_echo_plugin(hub, sim3):
    uuid = sim3.ready["devices"][0]["uuid"]
    path = f"/v1/devices/{uuid}/channels/{ECHO_NS.replace(':', '%3A')}"
    status, body, _ = hub.post(path, {"message": {"text": "hello, receiver"}, "wait": True, "app": "CA571E00"})
    assert status == 200, body
    assert body["via"] == "example-echo" and body["reply"]["text"] == "hello, receiver" and body["reply"]["request_id"] > 0
    assert device_state(sim3, 0)["app"]["appId"] == "CA571E00"
    status, body, _ = hub.post(f"/v1/devices/{uuid}/channels/urn%3Ax-cast%3Acom.example.secret", {"message": {"a": 1}})
    assert status == 403 and body["error"]["code"] == "namespace_not_allowed"
    status, body, _ = hub.post(f"/v1/devices/{uuid}/channels/urn%3Ax-cast%3Aorg.castline.test", {"message": {"type": "HI"}, "wait": True})
    assert status == 200 and body["via"] == "generic" and body["reply"]["type"] == "HI", body


def test_the_event_stream_carries_the_suspend_and_resume_of_a_drop(hub, sim3):
    uuid = sim3.ready["devices"][0]["uuid"]
    reader = EventReader(hub.socket, kinds="session,media")
    try:
        assert hub.post(f"/v1/devices/{uuid}/cast", {"media": MOVIE})[0] == 200
        wait_until(lambda: any(e["kind"] == "media" and e["type"] == "PLAYING" and e["device"] == uuid for e in reader.events), 10,
                   "the PLAYING event")
        assert sim3.control({"command": "drop", "device": 0})["ok"]
        wait_until(lambda: any(e["type"] == "didSuspend" and e["device"] == uuid for e in reader.events), 10, "didSuspend")
        wait_until(lambda: any(e["type"] == "didResume" and e["device"] == uuid for e in reader.events), 10, "didResume")
        suspend = next(e for e in reader.events if e["type"] == "didSuspend")
        assert "closed by the device" in suspend["reason"], suspend
        sequence = [e["seq"] for e in reader.events]
        assert sequence == sorted(sequence)
    finally:
        reader.close()


def test_bad_requests_get_a_clear_error_and_touch_nothing(hub, sim3):
    uuid = sim3.ready["devices"][0]["uuid"]
    frames = len(sim3.frames())
    cases = [
        ("POST", f"/v1/devices/{uuid}/cast", b"{not json", 400, "bad_json"),
        ("POST", f"/v1/devices/{uuid}/cast", json.dumps({"media": "ftp://x"}).encode(), 400, "bad_media"),
        ("POST", f"/v1/devices/{uuid}/seek", json.dumps({"position": "99:99:99"}).encode(), 400, "bad_position"),
        ("POST", f"/v1/devices/{uuid}/dance", b"{}", 404, "unknown_action"),
        ("POST", "/v1/devices/nobody/play", b"{}", 404, "unknown_device"),
        ("GET", "/v2/devices", None, 404, "unknown_route"),
        ("DELETE", "/v1/devices", None, 405, "method_not_allowed"),
    ]
    for method, path, raw, status, code in cases:
        got, body, headers = api(hub.socket, method, path, raw=raw)
        assert got == status and body["error"]["code"] == code, (method, path, got, body)
        if status == 405:
            assert headers.get("Allow") == "GET"
    # A body declared over 1 MiB is refused before it is read (the client may still be sending).
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(hub.socket)
    s.sendall(f"POST /v1/devices/{uuid}/cast HTTP/1.1\r\nHost: x\r\nContent-Length: {2 << 20}\r\n\r\n{{".encode())
    s.settimeout(10)
    answer = b""
    while not answer.endswith(b"}\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    s.close()
    assert answer.startswith(b"HTTP/1.1 413") and b'"body_too_large"' in answer, answer
    # Nothing of it reached the device (heartbeats aside).
    new = [f for f in sim3.frames()[frames:] if f.get("namespace", "").endswith(("media", "receiver"))]
    assert new == [], new


def test_a_silent_client_is_disconnected(netns, sim3, workdir):
    daemon = Hub(netns, sim3, workdir, api_extra="  read_timeout: 1")
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(daemon.socket)
        s.sendall(b"GET /v1/devices HTTP/1.1\r\nHost: x\r\n")   # and then nothing
        s.settimeout(10)
        started = time.monotonic()
        assert s.recv(100) == b"", "the server closes a stalled request"
        assert time.monotonic() - started < 5
        s.close()
    finally:
        assert daemon.stop() == 0


def test_tcp_without_the_token_is_refused_and_touches_no_device(netns, sim3, workdir):
    token_file = os.path.join(workdir, "token")
    with open(token_file, "w") as f:
        f.write("s3cret-token-0123456789\n")
    os.chmod(token_file, 0o600)
    daemon = Hub(netns, sim3, workdir, api_extra=f"  listen: 127.0.0.1:18765\n  token_file: {token_file}")
    try:
        frames = len(sim3.frames())
        uuid = sim3.ready["devices"][0]["uuid"]
        url = f"http://127.0.0.1:18765/v1/devices/{uuid}/cast"
        refused = netns.run("curl", "-s", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", url, "-d", json.dumps({"media": MOVIE}))
        assert refused.stdout.strip().endswith("401"), refused.stdout
        wrong = netns.run("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer nope", url)
        assert wrong.stdout.strip() == "401"
        assert [f for f in sim3.frames()[frames:] if f.get("namespace", "").endswith(("media", "receiver"))] == []
        assert device_state(sim3, 0)["app"] is None
        ok = netns.run("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer s3cret-token-0123456789",
                       "http://127.0.0.1:18765/v1/devices")
        assert ok.stdout.strip() == "200"
        assert "s3cret" not in daemon.log(), "the token never reaches a log"
    finally:
        assert daemon.stop() == 0


def test_a_token_file_others_can_read_is_refused(netns, sim3, workdir):
    token_file = os.path.join(workdir, "token")
    with open(token_file, "w") as f:
        f.write("s3cret-token-0123456789\n")
    os.chmod(token_file, 0o644)
    config = os.path.join(workdir, "bad.yaml")
    with open(config, "w") as f:
        f.write(f"api: {{socket: {workdir}/x.sock, listen: 127.0.0.1:18766, token_file: {token_file}}}\n")
    result = netns.run(castline_binary(), "run", "--config", config, timeout=20)
    assert result.returncode == 2 and "can be read or written by others" in result.stderr and "chmod 600" in result.stderr, result.stderr


def metric(text, name):
    return float(next(line.split()[-1] for line in text.splitlines() if line.startswith(name + " ")))


def test_the_daemon_maps_each_connections_tls_buffers_on_their_own(netns, sim3, workdir):
    """`castline run` has malloc map blocks of 16 KiB and more on their own, so each TLS
    connection's outbound and read buffers (16 KiB and up to 32 KiB) leave no holes in the arenas
    when it closes. A threshold the environment sets is the operator's and is kept: at glibc's own
    128 KiB, the three connections' six buffers are not mapped."""
    heaps = {}
    for threshold in (None, "131072"):
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=threshold) if threshold else None
        daemon = Hub(netns, sim3, workdir, log_rules="info,CastChannel.*:warning,ProcessMemory:debug", env=env)
        try:
            status, text, _ = daemon.get("/metrics")
            assert status == 200 and 'castline_sessions{state="connected"} 3' in text, text
            heaps[threshold] = mapped, blocks = metric(text, "castline_heap_mapped_bytes"), metric(text, "castline_heap_mapped_blocks")
            assert 0 < mapped <= metric(text, 'castline_heap_bytes{state="in_use"}'), text
            log = daemon.log()
            if threshold is None:
                assert "malloc maps blocks of 16 KiB and more on their own" in log, log
            else:
                assert "mmap threshold is left to the environment" in log and "MALLOC_MMAP_THRESHOLD_" in log, log
        finally:
            assert daemon.stop() == 0
    (ours, our_blocks), (theirs, their_blocks) = heaps[None], heaps["131072"]
    assert our_blocks - their_blocks >= 2 * 3 and ours - theirs >= 2 * 3 * 16 * 1024, heaps


def test_metrics_pass_promtool_and_a_prometheus_server_scrapes_them(netns, sim3, workdir):
    token_file = os.path.join(workdir, "token")
    with open(token_file, "w") as f:
        f.write("metrics-token-0123456789\n")
    os.chmod(token_file, 0o600)
    daemon = Hub(netns, sim3, workdir, api_extra=f"  listen: 127.0.0.1:18767\n  token_file: {token_file}")
    prometheus = None
    try:
        assert daemon.post(f"/v1/devices/{sim3.ready['devices'][0]['uuid']}/cast", {"media": MOVIE})[0] == 200
        status, text, _ = daemon.get("/metrics")
        assert status == 200 and 'castline_sessions{state="connected"} 3' in text, text
        assert "castline_request_duration_seconds_bucket" in text
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr
        # The process figures agree with what /proc says about the daemon (fds: ±3 for the API
        # connections open while the metrics were taken).
        value = lambda name: metric(text, name)
        pid = daemon.process.pid
        assert abs(value("process_open_fds") - len(os.listdir(f"/proc/{pid}/fd"))) <= 3, text
        with open(f"/proc/{pid}/status") as f:
            rss = 1024 * next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        assert 0.8 * rss <= value("process_resident_memory_bytes") <= 1.25 * rss, (rss, text)
        assert 1 << 20 <= value('castline_heap_bytes{state="in_use"}') <= value("process_resident_memory_bytes"), text
        assert value('castline_heap_bytes{state="free"}') >= 0
        config = os.path.join(workdir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global: {{scrape_interval: 1s}}
scrape_configs:
  - job_name: castline
    authorization: {{credentials_file: {token_file}}}
    static_configs: [{{targets: ["127.0.0.1:18767"]}}]
""")
        log = open(os.path.join(workdir, "prometheus.log"), "w")
        prometheus = subprocess.Popen(netns.command("prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir}/tsdb",
                                                    "--web.listen-address=127.0.0.1:19090"), stdout=log, stderr=log)

        def query(expression):
            return prometheus_query(netns, expression)

        wait_until(lambda: any(r["value"][1] == "1" for r in query('up{job="castline"}')), 30, "Prometheus to scrape castline")
        sessions = wait_until(lambda: query('castline_sessions{state="connected"}'), 15, "castline_sessions in Prometheus")
        assert sessions[0]["value"][1] == "3"
        assert wait_until(lambda: query("castline_request_duration_seconds_count"), 15, "the request histogram in Prometheus")
        resident = wait_until(lambda: query('process_resident_memory_bytes{job="castline"}'), 15, "the process figures in Prometheus")
        assert float(resident[0]["value"][1]) > 1 << 20
    finally:
        if prometheus:
            prometheus.terminate()
            prometheus.wait(timeout=20)
        assert daemon.stop() == 0
