"""Under attack: what a hostile client on the LAN, the API or the broker, or a hostile device, can
hold of `castline run`, against the real daemon, simulator and mosquitto. The daemon runs with a
low descriptor limit (`prlimit --nofile=256`) so that exhaustion would show at once; during each
attack the API answers (median under 100 ms), a device that drops reconnects, and the daemon's
RSS stays under a stated bound; afterwards /metrics counts what was refused."""
import json
import os
import signal
import statistics
import subprocess
import time

import pytest

from conftest import PYTHON, CLIENTS, REPO, Simulator, castline_binary, wait_until
from hub import Hub, api, EventReader

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

RSS_BOUND_MB = 300
FAKE_MP4 = (b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 1200)[:307200]
TOKEN = "hostile-token-0123456789"


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def api_latencies(hub, count=10):
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        status, _, _ = hub.get("/v1")
        samples.append(time.perf_counter() - start)
        assert status == 200
    return samples


def metric(hub, name):
    _, text, _ = hub.get("/metrics")
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " ") or line.startswith(name + "{"))


def reconnects(hub, sim, index=1, bound=15):
    """Drops device `index`'s connections; seconds until the daemon's link is connected again."""
    uuid = sim.ready["devices"][index]["uuid"]
    link = lambda: hub.get(f"/v1/devices/{uuid}")[1].get("link")
    started = time.monotonic()
    assert sim.control({"command": "drop", "device": index})["ok"]
    wait_until(lambda: link() != "connected" or time.monotonic() - started > 1, 5, "the drop seen")
    wait_until(lambda: link() == "connected", bound, f"device {index} reconnected under attack")
    return time.monotonic() - started


class Attacker:
    def __init__(self, netns, *argv):
        self.process = subprocess.Popen(netns.command(PYTHON, os.path.join(CLIENTS, "hostile_http.py"), *argv),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.process.stdout.readline()
        assert first, self.process.stderr.read()
        self.ready = json.loads(first)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=30)
        return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def hostile(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "3"], frame_log=False)
    root = os.path.join(workdir, "media")
    os.makedirs(root)
    with open(os.path.join(root, "clip.mp4"), "wb") as f:
        f.write(FAKE_MP4)
    token_file = os.path.join(workdir, "token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    hub = Hub(netns, sim, workdir, media_roots=[root], prefix=["prlimit", "--nofile=256:256", "--"],
              api_extra=f"  listen: 127.0.0.1:18800\n  token_file: {token_file}\n  read_timeout: 2")
    status, body, _ = hub.post(f"/v1/devices/{sim.ready['devices'][0]['uuid']}/cast", {"media": os.path.join(root, "clip.mp4")})
    assert status == 200, body
    url = sim.control({"command": "list"})["devices"][0]["state"]["media"]["contentId"]
    yield netns, sim, hub, url
    code = hub.stop()
    assert sim.stop() == 0
    assert code == 0, hub.log()[-3000:]


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def under_attack(netns, sim, hub, attacker_argv):
    """Runs one attack; the API's latencies, a device's reconnect time, the daemon's RSS and
    descriptors during it, and the attacker's own counts after."""
    before = open_fds(hub.process.pid)
    attacker = Attacker(netns, *attacker_argv)
    try:
        latencies = api_latencies(hub)
        reconnect = reconnects(hub, sim)
        rss = rss_mb(hub.process.pid)
        fds = open_fds(hub.process.pid)
    finally:
        counts = attacker.stop()
    counts["fds_before"], counts["fds_during"] = before, fds
    print(f"{attacker_argv[0]}: API p50 {statistics.median(latencies) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms; "
          f"reconnect {reconnect:.2f} s; RSS {rss:.0f} MB; fds {before} → {fds}; attacker {counts}")
    assert statistics.median(latencies) < 0.1 and max(latencies) < 1, latencies
    assert rss < RSS_BOUND_MB, rss
    assert hub.process.poll() is None
    return counts


def test_pipelined_idle_unauthenticated_and_slow_clients_cannot_exhaust_the_daemon(hostile):
    netns, sim, hub, url = hostile
    host, port = url.split("/")[2].split(":")
    path = "/" + url.split("/", 3)[3]
    # 2,000 pipelined media requests on one connection, never reading the answers.
    counts = under_attack(netns, sim, hub, ["pipeline", host, port, path, "2000"])
    # One answer in flight: the daemon holds one more connection and one open file, not 2,000.
    assert counts["opened"] == 1 and counts["fds_during"] - counts["fds_before"] <= 4, counts
    # 500 idle media connections: the per-address bound closes all but 16.
    counts = under_attack(netns, sim, hub, ["idle", host, port, "500"])
    assert counts["still_open"] <= 16, counts
    assert metric(hub, 'castline_media_refused_total{reason="connections_per_peer"}') >= 400
    # 200 unauthenticated 1 MiB bodies to the TCP API: 401 at the head, the rest refused at accept.
    counts = under_attack(netns, sim, hub, ["bodies", "127.0.0.1", "18800", "200", str(1 << 20)])
    assert counts["still_open"] == 0 and counts["unauthorized"] + counts["refused"] + counts["closed_by_server"] >= 200, counts
    assert counts["fds_during"] - counts["fds_before"] <= 16, counts
    assert metric(hub, 'castline_api_refused_total{listener="tcp",reason="unauthorized"}') >= 200
    # 400 clients trickling a header line every second: closed by the 2 s request bound.
    counts = under_attack(netns, sim, hub, ["slowheader", "127.0.0.1", "18800", "400", "1"])
    assert counts["still_open"] == 0, counts
    assert metric(hub, 'castline_api_refused_total{listener="any",reason="request_timeout"}') >= 16
    # Afterwards: everything works, and the cast still plays from its own URL.
    assert hub.get("/v1/devices")[0] == 200
    assert sim.control({"command": "list"})["devices"][0]["state"]["media"]["contentId"] == url


def test_a_device_that_floods_its_statuses_is_folded_logged_once_and_bounded_in_cpu(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "2"], frame_log=False)
    hub = Hub(netns, sim, workdir)
    flooder = sim.ready["devices"][0]["uuid"]
    events = EventReader(hub.socket, kinds="device,media")
    try:
        def cpu_seconds():
            with open(f"/proc/{hub.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        time.sleep(1)   # the sessions settle: what follows is the flood's cost alone
        before, started, seen_before = cpu_seconds(), time.monotonic(), len(events.events)
        seconds = 5
        assert sim.control({"command": "flood", "device": 0, "rate": 50000, "seconds": seconds})["senders"] >= 1
        time.sleep(seconds + 0.5)   # the flood's own length is the behaviour under test
        elapsed = time.monotonic() - started
        cpu = (cpu_seconds() - before) / elapsed
        mine = [e for e in events.events[seen_before:] if e.get("device") == flooder and e.get("kind") == "device" and e.get("type") == "status"]
        print(f"flood of 50,000 RECEIVER_STATUS/s for {seconds} s: castline used {cpu:.2f} of a core; "
              f"{len(mine)} status events for it in {elapsed:.1f} s ({len(mine) / elapsed:.1f}/s)")
        # At most one per 100 ms (plus the first, at once).
        assert len(mine) <= 10 * elapsed + 1, len(mine)
        assert len(mine) >= 10 * seconds * 0.5, "the flood's changes reach the events (folded, not lost)"
        # What remains is TLS and frame decoding of all the device sends (the fold bounds what
        # follows): 0.70-0.80 of a core in this debug build on 2 cores, with SwiftNIO's debug
        # assertions a sixth of it. Bounded below one core: the other device and the API keep theirs.
        assert cpu < 0.9, f"castline used {cpu:.2f} of a core"
        lines = [line for line in hub.log().splitlines() if "floods its broadcasts" in line]
        endpoint = f"{sim.ready['devices'][0]['address']}:{sim.ready['devices'][0]['castPort']}"
        assert len(lines) == 1 and endpoint in lines[0], lines
        # The other device and the API are untouched.
        assert hub.get(f"/v1/devices/{sim.ready['devices'][1]['uuid']}")[1]["link"] == "connected"
    finally:
        events.close()
        code = hub.stop()
        assert sim.stop() == 0
        assert code == 0, hub.log()[-3000:]


def test_control_characters_from_a_device_are_escaped_in_the_clis_text_output(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "1"], frame_log=False)
    hub = Hub(netns, sim, workdir)
    device = sim.ready["devices"][0]["uuid"]
    # Any sender on the LAN can set a title; this one clears the screen, sets the window title,
    # hides a link, returns the carriage and reverses the text.
    title = "Movie\x1b[2J\x1b]0;owned\x07\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\\rfake\u202etxt.exe"
    try:
        status, body, _ = hub.post(f"/v1/devices/{device}/cast", {"media": "http://media.invalid/a.mp4", "content_type": "video/mp4",
                                                                  "title": title})
        assert status == 200, body
        for argv in (["status", "--device", device], ["status", "--device", device, "--direct", "--host",
                                                       f"{sim.ready['devices'][0]['address']}:{sim.ready['devices'][0]['castPort']}"]):
            result = subprocess.run(netns.command(castline_binary(), *argv, "--api-socket", hub.socket), capture_output=True, timeout=60)
            out = result.stdout.decode()
            assert result.returncode == 0, result.stderr
            assert "\\u001b[2J" in out and "\\u001b]8;;http://evil.example/" in out and "\\u000d" in out and "\\u202e" in out, out
            assert not any(c in out for c in ("\x1b", "\r", "\x07", "\u202e")), repr(out)
    finally:
        code = hub.stop()
        assert sim.stop() == 0
        assert code == 0, hub.log()[-3000:]


def test_a_yaml_alias_bomb_is_refused_and_a_bad_jobs_file_keeps_the_good_jobs(netns, workdir):
    """`devices: [&a "<10,000 chars>", *a × 19,999]` is a 200 KB body that would expand to 200 MB:
    refused at once with a clear error, nothing written. Then a jobs file with one job that no
    longer parses: the daemon restarts with the good job and quarantines only the bad one."""
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "1"], frame_log=False)
    name = sim.ready["devices"][0]["name"]
    jobs_file = os.path.join(workdir, "jobs.json")
    hub = Hub(netns, sim, workdir)
    try:
        good = {"devices": [name], "media": {"url": "http://media.invalid/good.mp4", "title": "Good"}}
        status, body, _ = api(hub.socket, "PUT", "/v1/jobs/good", good)
        assert status == 201, body
        bomb = ('devices: [&a "' + "x" * 10_000 + '", ' + ", ".join(["*a"] * 19_999) + ']\nmedia: {url: "http://media.invalid/b.mp4"}\n').encode()
        started = time.monotonic()
        status, body, _ = api(hub.socket, "PUT", "/v1/jobs/bomb", raw=bomb)
        elapsed = time.monotonic() - started
        print(f"alias bomb of {len(bomb)} bytes: {status} in {elapsed * 1000:.0f} ms: {body}")
        assert status in (400, 413), body
        message = body["error"]["message"]
        assert "alias" in message and "*a" in message, message
        assert elapsed < 2, f"the refusal took {elapsed:.1f} s"
        assert api(hub.socket, "GET", "/v1/jobs/bomb")[0] == 404
        assert os.path.getsize(jobs_file) < 64 * 1024, os.path.getsize(jobs_file)
        assert rss_mb(hub.process.pid) < RSS_BOUND_MB
    finally:
        code = hub.stop()
    assert code == 0, hub.log()[-3000:]
    # One job in the file is broken (an edit by hand, a file from a newer version): only it is lost.
    with open(jobs_file) as f:
        saved = json.load(f)
    assert [j["name"] for j in saved["jobs"]] == ["good"], saved
    saved["jobs"].insert(0, {"name": "broken", "devices": "not a list", "media": {"url": 5}})
    with open(jobs_file, "w") as f:
        json.dump(saved, f)
    hub = Hub(netns, sim, workdir)
    try:
        status, body, _ = api(hub.socket, "GET", "/v1/jobs/good")
        assert status == 200 and body["source"] == "api", body
        assert api(hub.socket, "GET", "/v1/jobs/broken")[0] == 404
        wait_until(lambda: (sim.control({"command": "list"})["devices"][0]["state"].get("media") or {}).get("contentId") == good["media"]["url"],
                   15, "the good job to play after the restart")
        log = hub.log()
        assert "job broken (jobs[0]) quarantined" in log, log[-3000:]
        with open(jobs_file + ".quarantine") as f:
            quarantined = [json.loads(line) for line in f if line.strip()]
        assert quarantined[0]["job"]["name"] == "broken" and quarantined[0]["reason"], quarantined
    finally:
        code = hub.stop()
        assert sim.stop() == 0
        assert code == 0, hub.log()[-3000:]
