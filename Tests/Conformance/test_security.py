"""Safety at castline's edges, against the real daemon (`castline run`), the real simulator and a
real mosquitto, each case as an API or MQTT client (or a plugin author) would try it:

- local files are served only from `media.roots`, only if they are media, only to the device
  that was told to fetch them, and only while its cast lives; no token leaves castline;
- the TCP API refuses a request without its token before reading the body, and its TLS
  listener refuses a client that does not trust it;
- hostile plugins (real .so files built here with cc from Tests/PluginFixtures/Hostile) cannot
  crash the daemon: every bad length, size, count and string is refused with an error record
  naming the plugin and the problem; a plugin that is not castline's own runs isolated by
  default, its namespace answers 503 while it restarts, and a leaking one is restarted at its
  memory limit."""
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import time

import pytest

from conftest import REPO, Simulator, castline_binary, wait_until
from hub import Hub, api, EventReader

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

# An MP4 file type box first: castline and the simulated device both recognise the container.
FAKE_MP4 = (b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 1200)[:307200]
HOSTILE_NS = "urn:x-cast:org.castline.hostile"
TEST_NS = "urn:x-cast:org.castline.test"


def write(path, data, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


@pytest.fixture
def tree(workdir):
    """media/ (the root): clip.mp4, notes.txt, id_ed25519, disguised.mp3, escape.mp4 → ../private;
    private/ (outside): secret.mp4, secret.txt (0600)."""
    root, private = os.path.join(workdir, "media"), os.path.join(workdir, "private")
    os.makedirs(root)
    os.makedirs(private)
    write(os.path.join(root, "clip.mp4"), FAKE_MP4)
    write(os.path.join(root, "notes.txt"), b"just some text\n")
    write(os.path.join(root, "id_ed25519"), b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ==\n", 0o600)
    write(os.path.join(root, "disguised.mp3"), b"not audio, whatever the name says\n")
    write(os.path.join(private, "secret.mp4"), FAKE_MP4)
    write(os.path.join(private, "secret.txt"), b"the secret\n", 0o600)
    os.symlink(os.path.join(private, "secret.mp4"), os.path.join(root, "escape.mp4"))
    return {"root": root, "private": private}


@pytest.fixture
def sim2(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "2"])
    yield simulator
    assert simulator.stop() == 0


def device_state(sim, index=0):
    return sim.control({"command": "list"})["devices"][index]


def listening_ports(netns, pid):
    """TCP ports the process `pid` listens on in the namespace (ss)."""
    out = netns.run("ss", "-ltnpH").stdout
    return sorted({int(line.split()[3].rsplit(":", 1)[1]) for line in out.splitlines() if f"pid={pid}," in line})


def get(netns, host, port, path, source=None, headers=()):
    """(status, body) of one GET in the namespace (curl), from the local address `source`."""
    argv = ["curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--max-time", "5"]
    if source:
        argv += ["--interface", source]
    for header in headers:
        argv += ["-H", header]
    result = subprocess.run(netns.command(*argv, f"http://{host}:{port}{path}"), capture_output=True, timeout=30)
    body, _, status = result.stdout.rpartition(b"\n")
    return int(status or 0), body


def metric(hub, name):
    _, text, _ = hub.get("/metrics")
    values = [float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " ") or line.startswith(name + "{")]
    return sum(values)


REFUSED = [
    ("private/secret.mp4", "video/mp4", 403, "path_not_allowed"),   # outside the root
    ("media/escape.mp4", "video/mp4", 403, "path_not_allowed"),     # a symlink out of the root
    ("/etc/shadow", "audio/mpeg", 403, "path_not_allowed"),
    ("private/secret.txt", "audio/mpeg", 403, "path_not_allowed"),
    ("private/nothing-here.mp4", "video/mp4", 403, "path_not_allowed"),   # the same answer whether it exists or not
    ("media/notes.txt", "audio/mpeg", 415, "not_media"),            # text, whatever the claimed type
    ("media/id_ed25519", "audio/mpeg", 415, "not_media"),           # a key
    ("media/disguised.mp3", "audio/mpeg", 415, "not_media"),
]


def test_local_files_outside_the_roots_or_not_media_are_refused_and_nothing_is_served(netns, sim2, workdir, tree):
    hub = Hub(netns, sim2, workdir, media_roots=[tree["root"]])
    device = sim2.ready["devices"][0]["uuid"]
    try:
        for path, content_type, status, code in REFUSED:
            media = path if path.startswith("/") else os.path.join(workdir, path)
            got, body, _ = hub.post(f"/v1/devices/{device}/cast", {"media": media, "content_type": content_type})
            assert (got, body["error"]["code"]) == (status, code), (path, body)
        # Nothing reached the device, nothing was published, and no media server even listens.
        assert device_state(sim2)["mediaFetches"] == [] and device_state(sim2)["state"].get("media") is None
        assert metric(hub, "castline_media_published_files") == 0
        assert listening_ports(netns, hub.process.pid) == [], "a media server listens though nothing was served"
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]


def test_a_served_file_answers_only_its_device_only_while_its_cast_lives_and_its_token_never_leaves(netns, sim2, workdir, tree):
    hub = Hub(netns, sim2, workdir, media_roots=[tree["root"]], log_rules="info,CastChannel.*:warning,MediaFileServer:info")
    devices = sim2.ready["devices"]
    events = EventReader(hub.socket)
    try:
        status, body, _ = hub.post(f"/v1/devices/{devices[0]['uuid']}/cast", {"media": os.path.join(tree["root"], "clip.mp4")})
        assert status == 200 and body["state"] == "PLAYING" and body["served"] == "clip.mp4", body
        # The simulator's own view: the URL the device was given, with its token.
        url = device_state(sim2)["state"]["media"]["contentId"]
        match = re.fullmatch(r"http://([0-9.]+):(\d+)/([0-9a-f]{32})/clip\.mp4", url)
        assert match, url
        host, port, token = match.group(1), int(match.group(2)), match.group(3)
        # The device's address gets the file; any other address a 404, like a path never published.
        address = devices[0]["address"]
        status, data = get(netns, host, port, f"/{token}/clip.mp4", source=address, headers=["Range: bytes=0-99"])
        assert status == 206 and data == FAKE_MP4[:100]
        other = "127.0.0.2" if address != "127.0.0.2" else "127.0.0.3"
        assert get(netns, host, port, f"/{token}/clip.mp4", source=other)[0] == 404
        assert get(netns, host, port, f"/{'0' * 32}/clip.mp4", source=address)[0] == 404
        # No token in any view: the API, the event stream, the daemon's log.
        _, listing, _ = hub.get("/v1/devices")
        assert token not in json.dumps(listing) and "clip.mp4" in json.dumps(listing)
        wait_until(lambda: any("clip.mp4" in json.dumps(e) for e in events.events), 10, "an event naming the file")
        assert not any(token in json.dumps(e) for e in events.events)
        assert token not in hub.log()
        # Stopped: the URL is gone, for the device too.
        status, body, _ = hub.post(f"/v1/devices/{devices[0]['uuid']}/stop", {"app": True})
        assert status == 200, body
        assert get(netns, host, port, f"/{token}/clip.mp4", source=address)[0] == 404
        assert metric(hub, "castline_media_published_files") == 0
        assert metric(hub, 'castline_media_refused_total{reason="wrong_peer"}') >= 1
    finally:
        events.close()
        assert hub.stop() == 0, hub.log()[-3000:]


def tls_files(workdir):
    """A CA and a server certificate for 127.0.0.1 signed by it, and a second CA that signed nothing."""
    paths = {name: os.path.join(workdir, name) for name in ("ca.key", "ca.pem", "other.key", "other.pem", "server.key", "server.csr",
                                                             "server.pem", "san.cnf")}
    run = lambda *argv: subprocess.run(["openssl", *argv], check=True, capture_output=True)
    for ca, key in (("ca.pem", "ca.key"), ("other.pem", "other.key")):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=test {ca}", "-keyout", paths[key], "-out", paths[ca])
    with open(paths["san.cnf"], "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", paths["server.key"], "-out", paths["server.csr"])
    run("x509", "-req", "-in", paths["server.csr"], "-CA", paths["ca.pem"], "-CAkey", paths["ca.key"], "-CAcreateserial", "-days", "2",
        "-extfile", paths["san.cnf"], "-out", paths["server.pem"])
    os.chmod(paths["server.key"], 0o600)
    return paths


def test_the_tcp_api_refuses_before_reading_a_body_and_its_tls_refuses_an_untrusting_client(netns, sim2, workdir):
    token_file = os.path.join(workdir, "token")
    write(token_file, b"security-token-0123456789\n", 0o600)
    tls = tls_files(workdir)
    hub = Hub(netns, sim2, workdir, api_extra=f"  listen: 127.0.0.1:18790\n  token_file: {token_file}\n"
                                               f"  tls_certificate: {tls['server.pem']}\n  tls_key: {tls['server.key']}")
    script = f"""
import json, socket, ssl, sys, time
def client(ca):
    context = ssl.create_default_context(cafile=ca)
    return context.wrap_socket(socket.create_connection(("127.0.0.1", 18790), timeout=5), server_hostname="127.0.0.1")
result = {{}}
try:
    client({tls['other.pem']!r}).close()
    result["wrong_ca"] = "accepted"
except ssl.SSLError as error:
    result["wrong_ca"] = "refused: " + error.reason
for length in (900000, 5 * 1024 * 1024):
    s = client({tls['ca.pem']!r})
    s.sendall(f"POST /v1/devices/x/cast HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: {{length}}\\r\\n\\r\\n".encode())
    started = time.monotonic()
    answer = b""
    while chunk := s.recv(65536):
        answer += chunk
    result[str(length)] = [answer.split(b"\\r\\n")[0].decode(), round(time.monotonic() - started, 3)]
s = client({tls['ca.pem']!r})
s.sendall(b"GET /v1/devices HTTP/1.1\\r\\nHost: x\\r\\nAuthorization: Bearer security-token-0123456789\\r\\nConnection: close\\r\\n\\r\\n")
answer = b""
while chunk := s.recv(65536):
    answer += chunk
result["with_token"] = answer.split(b"\\r\\n")[0].decode()
print(json.dumps(result))
"""
    try:
        out = netns.run("python3", "-c", script, timeout=60)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["wrong_ca"].startswith("refused"), result
        # 401 at the head, the body never read (the client sent none and the answer did not wait
        # for it), and the connection closed; a body over the limit is not even told about.
        for length in ("900000", str(5 * 1024 * 1024)):
            assert result[length][0] == "HTTP/1.1 401 Unauthorized" and result[length][1] < 2, result
        assert result["with_token"] == "HTTP/1.1 200 OK", result
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]


class Mosquitto:
    """An anonymous mosquitto on the namespace's 127.0.0.1:1883."""

    def __init__(self, netns, workdir):
        self.netns = netns
        config = os.path.join(workdir, "mosquitto.conf")
        with open(config, "w") as f:
            f.write(f"listener 1883 127.0.0.1\nallow_anonymous true\nlog_dest file {workdir}/mosquitto.log\n")
        self.process = subprocess.Popen(netns.command("mosquitto", "-c", config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.log = os.path.join(workdir, "mqtt-all.txt")
        self.out = open(self.log, "w")
        wait_until(lambda: self.pub("probe", "1").returncode == 0, 10, "mosquitto up")
        self.follower = subprocess.Popen(netns.command("mosquitto_sub", "-h", "127.0.0.1", "-t", "#", "-v"),
                                         stdout=self.out, stderr=subprocess.DEVNULL)

    def pub(self, topic, payload):
        return self.netns.run("mosquitto_pub", "-h", "127.0.0.1", "-t", topic, "-q", "1", "-m", payload, timeout=15)

    def everything(self):
        self.out.flush()
        with open(self.log) as f:
            return f.read()

    def stop(self):
        for process in (self.follower, self.process):
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=10)
        self.out.close()


def test_mqtt_casts_of_files_outside_the_roots_are_refused_and_no_token_reaches_the_broker(netns, sim2, workdir, tree):
    broker = Mosquitto(netns, workdir)
    hub = Hub(netns, sim2, workdir, media_roots=[tree["root"]],
              api_extra="mqtt: {url: \"mqtt://127.0.0.1:1883\", agent: sec, keepalive: 5}")
    device = sim2.ready["devices"][1]["uuid"]
    try:
        wait_until(lambda: f"castline/sec/device/{device}/state" in broker.everything(), 20, "the device's retained state")

        def result_of(command_id):
            for line in broker.everything().splitlines():
                topic, _, payload = line.partition(" ")
                if topic == f"castline/sec/device/{device}/result" and json.loads(payload).get("id") == command_id:
                    return json.loads(payload)
            return None
        for index, (path, content_type, status, code) in enumerate(REFUSED):
            media = path if path.startswith("/") else os.path.join(workdir, path)
            command_id = f"bad-{index}"
            assert broker.pub(f"castline/sec/device/{device}/set",
                              json.dumps({"id": command_id, "command": "cast", "media": media, "content_type": content_type})).returncode == 0
            result = wait_until(lambda: result_of(command_id), 15, f"the result of {command_id}")
            assert result["ok"] is False and result["error"]["code"] == code, (path, result)
        assert device_state(sim2, 1)["mediaFetches"] == []
        assert broker.pub(f"castline/sec/device/{device}/set",
                          json.dumps({"id": "good", "command": "cast", "media": os.path.join(tree["root"], "clip.mp4")})).returncode == 0
        result = wait_until(lambda: result_of("good"), 20, "the good cast's result")
        assert result["ok"] is True, result
        token = device_state(sim2, 1)["state"]["media"]["contentId"].split("/")[3]
        assert len(token) == 32
        wait_until(lambda: "clip.mp4" in broker.everything(), 10, "the state naming the file")
        assert token not in broker.everything(), "a token reached the broker"
    finally:
        code = hub.stop()
        broker.stop()
        assert code == 0, hub.log()[-3000:]


# MARK: Plugins

def build_hostile(workdir, variant):
    """Tests/PluginFixtures/Hostile/hostile.c built with -DHOSTILE_<variant>, in a folder of the
    test's own (so not castline's plugin folder)."""
    folder = os.path.join(workdir, "plugins")
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o755)
    out = os.path.join(folder, f"libhostile-{variant.lower().replace('_', '-')}.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O0", f"-DHOSTILE_{variant}", "-I", os.path.join(REPO, "SDK", "Sources", "CCastPluginABI", "include"),
                    os.path.join(REPO, "Tests", "PluginFixtures", "Hostile", "hostile.c"), "-o", out], check=True, timeout=120)
    os.chmod(out, 0o755)
    return out


def records(path):
    """The JSON sink's records, with `message` and `fields` for its OpenTelemetry `body` and `attributes`."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        parsed = [json.loads(line) for line in f if line.strip()]
    return [dict(r, message=r.get("body", ""), fields=r.get("attributes", {})) for r in parsed]


def error_records(path, plugin):
    return [r for r in records(path) if r.get("level") in ("error", "assert") and plugin in json.dumps(r)]


def test_hostile_lengths_sizes_counts_and_strings_are_refused_with_a_record_and_the_daemon_goes_on(netns, sim2, workdir):
    plugins = {v: build_hostile(workdir, v) for v in ("EMIT_HUGE", "STRUCT_SIZE", "COUNT", "NO_NUL")}
    log = os.path.join(workdir, "daemon.jsonl")
    # In castline's own process on purpose: the checks at the ABI are what is under test.
    hub = Hub(netns, sim2, workdir, json_log=log, plugin_paths=list(plugins.values()),
              plugins="{in_process: [hostile-emit, hostile-no-nul, hostile-count, hostile-struct-size]}",
              allowed_namespaces=(HOSTILE_NS, TEST_NS))
    device = sim2.ready["devices"][0]["uuid"]
    try:
        # The descriptor of 4 GiB and the count past its array: refused at load, each an error
        # record naming it, on the console and (held from start-up until the sinks opened) in
        # the JSON sink, with the daemon's pid and role.
        refused = [r for r in records(log) if r.get("level") == "error" and "feature_count exceeds the array" in r.get("body", "")]
        assert refused, [r.get("body") for r in records(log)][:20]
        assert refused[0]["attributes"]["pid"] == hub.process.pid and refused[0]["attributes"]["role"] == "daemon", refused[0]
        assert refused[0]["attributes"]["problem"] and "hostile-count" in json.dumps(refused[0])
        assert any(r.get("level") == "error" and plugins["STRUCT_SIZE"] in json.dumps(r) for r in records(log))
        lines = hub.log().splitlines()
        sized = [line for line in lines if " ERROR " in line and plugins["STRUCT_SIZE"] in line]
        assert sized and "struct_size 4294967295 is over the 4096 bytes" in sized[0], lines[-20:]
        counted = [line for line in lines if " ERROR " in line and "hostile-count" in line and "feature_count exceeds the array" in line]
        assert counted, lines[-20:]
        assert not any(ord(c) < 0x20 and c != "\t" for line in counted for c in line), "raw garbage in the record"
        status, body, _ = hub.get("/v1/plugins")
        loaded = {p["id"]: p for p in body["plugins"]}
        assert "hostile-count" not in loaded and "hostile-struct-size" not in loaded
        assert loaded["hostile-emit"]["state"] == "loaded" and loaded["hostile-no-nul"]["state"] == "loaded", body
        # An emit of 1 TiB: refused, the next media-format plugin answers, the cast goes on.
        status, body, _ = hub.post(f"/v1/devices/{device}/cast", {"media": "http://media.invalid/a.mp4", "content_type": "video/mp4"})
        assert status == 200 and body["state"] == "PLAYING", body
        emitted = wait_until(lambda: [r for r in error_records(log, "hostile-emit") if "1099511627776 bytes" in r["message"]], 10, "the emit record")
        assert emitted[0]["fields"]["problem"] == "bad_argument", emitted
        # Strings without a NUL, running into an unreadable page: refused, the command fails cleanly.
        path = f"/v1/devices/{device}/channels/{HOSTILE_NS.replace(':', '%3A')}"
        status, body, _ = hub.post(path, {"message": {"do": "unterminated"}, "app": "CA571E00"})
        assert status == 422 and body["error"]["code"] == "channel_plugin_error", body
        unterminated = wait_until(lambda: [r for r in error_records(log, "hostile-no-nul") if "not readable memory" in r["message"]
                                           or "not NUL-terminated" in r["message"]], 10, "the string record")
        assert unterminated[0]["fields"]["plugin"] == "hostile-no-nul", unterminated
        # Still here, still serving.
        assert hub.process.poll() is None and hub.get("/v1/devices")[0] == 200
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]


def test_a_plugin_that_is_not_castlines_runs_isolated_by_default_and_its_namespace_answers_503_while_it_restarts(netns, sim2, workdir):
    segv = build_hostile(workdir, "SEGV")
    log = os.path.join(workdir, "daemon.jsonl")
    hub = Hub(netns, sim2, workdir, json_log=log, plugin_paths=[segv])   # no plugins: section at all
    path = f"/v1/devices/{sim2.ready['devices'][0]['uuid']}/channels/{TEST_NS.replace(':', '%3A')}"
    try:
        status, body, _ = hub.post(path, {"message": {"do": "pid"}, "app": "CA571E00"})
        assert status == 200 and body["reply"]["pid"] != hub.process.pid, body   # in its helper, not the daemon
        status, body, _ = hub.get("/v1/plugins")
        assert {p["id"]: p["state"] for p in body["plugins"]}["hostile-segv"] == "isolated", body
        hub.post(path, {"message": {"do": "crash"}})
        # Between the crash and the restart: 503 plugin_unavailable, never the generic path.
        status, body, _ = hub.post(path, {"message": {"do": "pid"}})
        assert status == 503 and body["error"]["code"] == "plugin_unavailable", body
        assert hub.process.poll() is None and hub.get("/v1/devices")[0] == 200
        crashed = wait_until(lambda: [r for r in error_records(log, "hostile-segv") if "SIGSEGV" in r["message"]], 10, "the crash record")
        assert crashed[0]["fields"]["problem"] == "crashed", crashed

        def back():
            status, body, _ = hub.post(path, {"message": {"do": "pid"}})
            return status == 200 and body["reply"]["pid"]
        wait_until(back, 20, "the plugin restarted")
        status, body, _ = hub.get("/v1/plugins")
        state = {p["id"]: p for p in body["plugins"]}["hostile-segv"]
        assert state["state"] == "isolated" and state["restarts"] == 1 and "SIGSEGV" in state["reason"], state
        assert metric(hub, 'castline_plugin_restarts_total{plugin="hostile-segv"}') == 1
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]


def test_a_leaking_plugin_is_restarted_at_its_memory_limit_and_the_record_names_the_limit(netns, sim2, workdir):
    leak = build_hostile(workdir, "LEAK")
    log = os.path.join(workdir, "daemon.jsonl")
    hub = Hub(netns, sim2, workdir, json_log=log, plugin_paths=[leak], plugins="{limits: {memory_mb: 64}}",
              allowed_namespaces=(HOSTILE_NS,))
    path = f"/v1/devices/{sim2.ready['devices'][0]['uuid']}/channels/{HOSTILE_NS.replace(':', '%3A')}"
    try:
        status, body, _ = hub.post(path, {"message": {"do": "pid"}, "app": "CA571E00"})
        assert status == 200, body
        first = body["reply"]["pid"]
        over = wait_until(lambda: [r for r in error_records(log, "hostile-leak") if "limit memory_mb" in r["message"]], 20, "the limit record")
        assert over[0]["fields"]["limit"] == "memory_mb" and over[0]["fields"]["problem"] == "limit", over

        def restarted():
            status, body, _ = hub.post(path, {"message": {"do": "pid"}})
            return status == 200 and body["reply"]["pid"] != first
        wait_until(restarted, 20, "the helper restarted")
        status, body, _ = hub.get("/v1/plugins")
        state = {p["id"]: p for p in body["plugins"]}["hostile-leak"]
        assert state["restarts"] >= 1 and "memory_mb" in state["reason"], state
        assert hub.process.poll() is None
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]
