"""Who owns a TV's screen, end to end: `castline run` against `castline sim`, another sender
played by unmodified pychromecast. A yielding job leaves the other sender's media alone through
the transitional statuses of its load (IDLE without a reason, LOADING, BUFFERING), through a
SIGHUP that changes the job, and takes the screen back only when the other sender's session ends.
The rules are in docs/cli.md ("Who owns a screen")."""
import json
import os
import signal
import threading
import time
import urllib.parse

import pytest

from conftest import CLIENTS, PYTHON, Simulator, castline_binary, wait_until
from hub import EventReader, Hub, api
from test_sites import pages  # noqa: F401 (the page server fixture)

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

DASHBOARD = "http://media.invalid/dashboard.mp4"
VISITOR = "http://media.invalid/visitor.mp4"


def shows(sim, index=0):
    """The simulator's own view: (app id, contentId) of device `index`."""
    state = sim.control({"command": "list"})["devices"][index]["state"]
    app = state.get("app") or {}
    media = state.get("media") or {}
    return app.get("appId"), media.get("contentId"), media.get("playerState")


def visitor(netns, sim, hold, url=VISITOR, index=0):
    device = sim.ready["devices"][index]
    result = netns.run(PYTHON, os.path.join(CLIENTS, "pychromecast_visitor.py"), device["address"],
                       str(device["castPort"]), device["uuid"], url, str(hold), timeout=60 + hold)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0 and lines, result.stderr[-3000:]
    return json.loads(lines[-1])


def job(url, extra=""):
    return f"""jobs:
  - name: lobby
    devices: ["*"]
    media: {{url: "{url}", title: Dashboard}}
    takeover: yield
    retry_delay: 0.5
    check_interval: 1
{extra}"""


def site_job(url):
    return f"""jobs:
  - name: lobby
    devices: ["*"]
    site: {{url: "{url}"}}
    takeover: yield
    retry_delay: 0.5
    check_interval: 1
"""


def page(sim, index=0):
    state = sim.control({"command": "list"})["devices"][index]["state"]
    return ((state.get("app") or {}).get("page") or {}).get("url")


def test_a_yielding_job_leaves_a_pychromecast_cast_alone_through_its_load_and_a_sighup(netns, sim, workdir):
    hub = Hub(netns, sim, workdir, jobs=job(DASHBOARD))
    try:
        wait_until(lambda: shows(sim)[1:] == (DASHBOARD, "PLAYING"), 20, "the job's cast")
        first = visitor(netns, sim, hold=1, url="http://media.invalid/first-visitor.mp4")
        assert first["kept"], f"the job took the screen back from the first sender: {first}"
        wait_until(lambda: "playing → yielding" in hub.log(), 10, "the job to yield")
        # A second sender casts to the yielding TV: its load's statuses are not an ending.
        seen = visitor(netns, sim, hold=4)
        assert seen["played"], seen
        assert seen["kept"], f"the job took the screen back from the other sender: {seen}"
        # The load went through the transitional statuses that used to read as an ending.
        assert any(s[0] == "IDLE" and s[1] is None for s in seen["states"]), seen["states"]
        log = hub.log()
        assert "playing → yielding" in log, log[-3000:]
        assert "yielding → casting" not in log, log[-3000:]
        # A SIGHUP that changes the job's media: the new content waits for the screen.
        with open(hub.config) as f:
            config = f.read()
        with open(hub.config, "w") as f:
            f.write(config.replace(DASHBOARD, "http://media.invalid/dashboard-2.mp4"))
        hub.process.send_signal(signal.SIGHUP)
        wait_until(lambda: "config reloaded" in hub.log(), 10, "the reload")
        # The restarted job finds the visitor's media and yields (its state says so), and the
        # visitor still plays after the job settled.
        wait_until(lambda: hub.log().count("→ yielding") >= 2, 10, "the reloaded job to yield")
        assert shows(sim)[1:] == (VISITOR, "PLAYING"), shows(sim)
        assert "yielding → casting" not in hub.log(), hub.log()[-3000:]
        # The other sender's session ends (its app stops): the job casts its new content.
        sim.control({"command": "stop-app"})
        wait_until(lambda: shows(sim)[1:] == ("http://media.invalid/dashboard-2.mp4", "PLAYING"), 20,
                   "the job's new content once the screen was free")
        assert "yielding → casting" in hub.log()
    finally:
        hub.stop()


def test_a_yielding_dashboard_leaves_two_pychromecast_casts_alone_and_a_sighup_waits(netns, sim, workdir, pages):
    url = f"{pages}/dash.html"
    hub = Hub(netns, sim, workdir, jobs=site_job(url))
    try:
        wait_until(lambda: page(sim) == url, 20, "the dashboard on the TV")
        # Every view says which page the TV shows, and whose it is.
        name = urllib.parse.quote(sim.ready["devices"][0]["name"])
        body = wait_until(lambda: (lambda b: b if b.get("ownerKind") == "job" else None)(hub.get(f"/v1/devices/{name}")[1]), 10,
                          "the job's page in the API")
        assert body["state"] == "PAGE" and body["page"]["url"] == url and body["owner"] == "lobby", body
        assert body["page"]["title"] == "Board /dash.html", body
        status = netns.run(castline_binary(), "status", "--api-socket", hub.socket, "--device", sim.ready["devices"][0]["name"])
        assert status.returncode == 0 and url in status.stdout and "PAGE" in status.stdout and "job lobby" in status.stdout, status
        assert "Board /dash.html" in status.stdout, status.stdout
        first = visitor(netns, sim, hold=1, url="http://media.invalid/first-visitor.mp4")
        assert first["kept"], f"the dashboard took the screen back from the first sender: {first}"
        wait_until(lambda: "playing → yielding" in hub.log(), 10, "the job to yield")
        seen = visitor(netns, sim, hold=4)
        assert seen["played"] and seen["kept"], f"the dashboard took the screen back from the second sender: {seen}"
        with open(hub.config) as f:
            config = f.read()
        with open(hub.config, "w") as f:
            f.write(config.replace(url, f"{pages}/framable.html"))
        hub.process.send_signal(signal.SIGHUP)
        wait_until(lambda: "config reloaded" in hub.log(), 10, "the reload")
        wait_until(lambda: hub.log().count("→ yielding") >= 2, 10, "the reloaded job to yield")
        assert shows(sim)[1:] == (VISITOR, "PLAYING"), shows(sim)
        assert "yielding → casting" not in hub.log(), hub.log()[-3000:]
        sim.control({"command": "stop-app"})
        wait_until(lambda: page(sim) == f"{pages}/framable.html", 20, "the new page once the screen was free")
    finally:
        hub.stop()


@pytest.mark.parametrize("count", [3, 50])
def test_concurrent_casts_to_one_tv_have_one_winner_and_the_rest_are_superseded(netns, sim, workdir, count):
    hub = Hub(netns, sim, workdir)
    try:
        device = sim.ready["devices"][0]["name"]
        barrier = threading.Barrier(count, timeout=20)
        answers = [None] * count

        def cast(i):
            barrier.wait()
            answers[i] = api(hub.socket, "POST", f"/v1/devices/{urllib.parse.quote(device)}/cast",
                             {"media": f"http://media.invalid/burst-{i}.mp4"})[:2]

        threads = [threading.Thread(target=cast, args=(i,)) for i in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert all(a is not None for a in answers), "every cast got an answer"
        winners = [i for i, (status, _) in enumerate(answers) if status == 200]
        superseded = [i for i, (status, body) in enumerate(answers) if status == 409 and body["error"]["code"] == "superseded"]
        others = [answers[i] for i in range(count) if i not in winners and i not in superseded]
        assert len(winners) == 1, f"one winner, got {len(winners)}; others: {others[:3]}"
        assert len(superseded) == count - 1 and not others, others[:3]
        winner = f"http://media.invalid/burst-{winners[0]}.mp4"
        # The simulator shows the winner's media, and castline says the screen is the command's.
        wait_until(lambda: shows(sim)[1:] == (winner, "PLAYING"), 10, "the winner's media on the TV")
        status, body, _ = hub.get(f"/v1/devices/{urllib.parse.quote(device)}")
        assert status == 200 and body["owner"] == "command", body
        assert body["contentId"] == winner, body
        assert "LAUNCH_ERROR" not in hub.log(), hub.log()[-3000:]
    finally:
        hub.stop()


def media_rules(workdir, rules):
    path = os.path.join(workdir, "sim-rules.json")
    with open(path, "w") as f:
        json.dump({"mediaRules": rules}, f)
    return path


def test_an_announcement_on_20_tvs_gives_each_back_to_its_job_and_exit_codes_say_what_came_back(netns, workdir, pages):
    """10 TVs play a playlist job (item 1 is short, so each is on item 2 by the announcement), 10
    show a dashboard job (DashCast). The announce job plays a chime on all 20; each job shows its
    own content again: the playlist at its item and position, the page. Then two TVs are down: the
    run exits 5 (documented), and the other 18 come back."""
    rules = media_rules(workdir, [{"contentId": "*chime*", "duration": 2}, {"contentId": "*item-1.mp4", "duration": 3},
                                  {"contentId": "*item-*", "duration": 600}])
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", rules, "--devices", "20"])
    names = [d["name"] for d in sim.ready["devices"]]
    url = f"{pages}/dash.html"
    items = ", ".join(f'"http://media.invalid/item-{i}.mp4"' for i in range(1, 5))
    hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: loop
    devices: {json.dumps(names[:10])}
    media: {{items: [{items}], repeat: all}}
  - name: board
    devices: {json.dumps(names[10:])}
    site: "{url}"
  - name: chime
    devices: ["*"]
    announce: {{media: "http://media.invalid/chime.mp3", volume: 60, timeout: 30}}
""")
    try:
        def state(i):
            return sim.control({"command": "list"})["devices"][i]["state"]

        def on_item_2(i):
            media = state(i).get("media") or {}
            return media.get("contentId") == "http://media.invalid/item-2.mp4" and media.get("playerState") == "PLAYING"

        wait_until(lambda: all(on_item_2(i) for i in range(10)), 40, "every playlist TV on item 2")
        wait_until(lambda: all(page(sim, i) == url for i in range(10, 20)), 40, "every dashboard TV on its page")
        before = {i: state(i)["media"]["currentTime"] for i in range(10)}
        run = netns.run(castline_binary(), "jobs", "run", "chime", "--api-socket", hub.socket, timeout=120)
        assert run.returncode == 0, (run.stdout, run.stderr, hub.log()[-4000:])
        assert run.stdout.count("; restored") == 20, run.stdout
        for i in range(10):
            media = state(i)["media"]
            assert media["contentId"] == "http://media.invalid/item-2.mp4", (names[i], media)
            assert media["currentTime"] >= before[i], (names[i], before[i], media)
            assert media.get("repeatMode") == "REPEAT_ALL", media
        for i in range(10, 20):
            assert page(sim, i) == url, (names[i], state(i))
        log = hub.log()
        assert "superseded" not in log and "cannot tell what it showed" not in log, log[-4000:]

        # Two TVs down: the run says which, exits 5, and the other 18 come back.
        for index in (3, 14):
            assert sim.control({"command": "outage", "device": index, "downFor": 60})["ok"]
        wait_until(lambda: hub.connected() == 18, 30, "the hub to see two TVs down")
        run = netns.run(castline_binary(), "jobs", "run", "chime", "--api-socket", hub.socket, timeout=120)
        assert run.returncode == 5, (run.returncode, run.stdout, run.stderr)
        assert run.stdout.count("; restored") == 18, run.stdout
        assert names[3] in run.stderr and names[14] in run.stderr, run.stderr
    finally:
        hub.stop()
        assert sim.stop() == 0


def test_every_view_says_who_owns_the_screen_and_unknown_while_the_tv_is_unreachable(netns, sim, workdir):
    """The owner and state follow what the simulator shows: the job's cast, another sender's
    (pychromecast), nobody after the app stops, unknown during an outage (and commands fail at
    once with 503 device_unreachable), the job's again after it; each change is an `owner` event
    with its reason, and a command's cast does not stay `command` through a reboot."""
    hub = Hub(netns, sim, workdir, jobs=job(DASHBOARD, extra="    recast_on: [found, reboot]\n"))
    events = EventReader(hub.socket, kinds="device")
    name = urllib.parse.quote(sim.ready["devices"][0]["name"])

    def device():
        status, body, _ = hub.get(f"/v1/devices/{name}")
        assert status == 200, body
        return body

    try:
        wait_until(lambda: shows(sim)[1:] == (DASHBOARD, "PLAYING"), 20, "the job's cast")
        wait_until(lambda: device().get("owner") == "lobby" and device().get("ownerKind") == "job", 5, "owner: the job")

        seen = visitor(netns, sim, hold=0.5)
        assert seen["kept"], seen
        wait_until(lambda: device().get("ownerKind") == "other", 5, "owner: another sender")

        # An outage: the view says unknown, not the last state, and a command fails at once.
        assert sim.control({"command": "outage", "device": 0, "downFor": 4})["ok"]
        body = wait_until(lambda: (lambda b: b if b["state"] == "UNKNOWN" else None)(device()), 15, "state UNKNOWN")
        assert body["ownerKind"] == "unknown" and "contentId" not in body and body["link"] != "connected", body
        started = time.monotonic()
        status, answer, _ = api(hub.socket, "POST", f"/v1/devices/{name}/pause")
        assert status == 503 and answer["error"]["code"] == "device_unreachable", answer
        assert time.monotonic() - started < 1.0, "a command to an unreachable TV fails at once"
        # Back: the visitor's media still plays (an outage keeps the device's state).
        wait_until(lambda: device().get("state") == "PLAYING" and device().get("ownerKind") == "other", 30,
                   "the view back after the outage")

        # The visitor's app stops: the job casts again (nobody, then the job's).
        sim.control({"command": "stop-app"})
        wait_until(lambda: device().get("owner") == "lobby" and shows(sim)[1:] == (DASHBOARD, "PLAYING"), 20, "the job's again")

        kinds = [e["ownerKind"] for e in events.events if e.get("type") == "owner"]
        assert kinds[:1] == ["job"] or "job" in kinds, kinds
        for expected in ("other", "unknown", "nobody"):
            assert expected in kinds, kinds
        assert all(e.get("reason") for e in events.events if e.get("type") == "owner"), events.events
    finally:
        events.close()
        hub.stop()


def test_a_commands_cast_does_not_stay_command_through_a_reboot(netns, sim, workdir):
    hub = Hub(netns, sim, workdir)
    name = urllib.parse.quote(sim.ready["devices"][0]["name"])
    try:
        status, body, _ = api(hub.socket, "POST", f"/v1/devices/{name}/cast", {"media": "http://media.invalid/a.mp4"})
        assert status == 200 and body["owner"] == "command", body
        assert sim.control({"command": "reboot", "device": 0, "downFor": 1})["ok"]

        def after_reboot():
            status, body, _ = hub.get(f"/v1/devices/{name}")
            return body if body.get("link") == "connected" and body.get("state") == "NO_APP" else None
        body = wait_until(after_reboot, 30, "the device back, idle")
        assert body.get("ownerKind") == "nobody" and "owner" not in body, body
    finally:
        hub.stop()


def dashcast_sends(sim):
    """The DashCast messages the simulator received, in order: (url, force)."""
    sent = []
    for frame in sim.frames():
        if frame.get("namespace") != "urn:x-cast:com.madmod.dashcast" or frame.get("direction") not in (None, "in"):
            continue
        payload = frame.get("payload")
        if isinstance(payload, str):
            try:
                payload = json.loads(payload)
            except ValueError:
                continue
        if isinstance(payload, dict) and "url" in payload:
            sent.append((payload["url"], payload.get("force")))
    return sent


def test_an_http_page_is_sent_with_force_on_every_switch(netns, sim, workdir, pages):
    """DashCast's https receiver blocks an http page in its frame: every send of it carries
    force, the first cast, the in-place switch a SIGHUP makes, and the keep-alives after it."""
    url = f"{pages}/dash.html"
    hub = Hub(netns, sim, workdir, jobs=site_job(url).replace('site: {url: "' + url + '"}', 'site: {url: "' + url + '", idle_timeout: 10}'))
    try:
        wait_until(lambda: page(sim) == url, 20, "the page")
        new = f"{pages}/framable.html"
        with open(hub.config) as f:
            config = f.read()
        with open(hub.config, "w") as f:
            f.write(config.replace(url, new))
        hub.process.send_signal(signal.SIGHUP)
        wait_until(lambda: page(sim) == new, 20, "the new page, switched in place")
        shown = len(dashcast_sends(sim))
        wait_until(lambda: len(dashcast_sends(sim)) > shown and page(sim) == new, 30, "a keep-alive of the new page")
        sends = dashcast_sends(sim)
        assert [u for u, _ in sends][:1] == [url] and new in [u for u, _ in sends], sends
        assert all(force is True for _, force in sends), f"every send of an http page has force: {sends}"
    finally:
        hub.stop()


FILE_SERVER = r"""
import http.server, os, sys
root = sys.argv[1]
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = os.path.join(root, os.path.basename(self.path))
        size = os.path.getsize(path)
        start, end = 0, size - 1
        ranged = self.headers.get("Range", "")
        if ranged.startswith("bytes="):
            first, _, last = ranged[6:].partition("-")
            start, end = int(first or 0), min(int(last) if last else size - 1, size - 1)
        self.send_response(206 if ranged else 200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            left = end - start + 1
            while left > 0:
                chunk = f.read(min(left, 1 << 16))
                if not chunk:
                    break
                try:
                    self.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    return
                left -= len(chunk)
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
server.RequestHandlerClass = Handler
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def wav(path, seconds, rate=8000):
    import wave
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\0\0" * rate * seconds)


@pytest.mark.parametrize("seconds", [240, 600])
def test_a_long_wav_over_http_is_loaded_with_its_stated_duration_and_starts_at_90_s(netns, sim, workdir, seconds):
    """The probe reads a URL's first MiB: the duration sent is the one the WAV header states
    (never one estimated from that head), so `--start 90` plays from 90 s instead of ending."""
    import subprocess
    import sys
    folder = os.path.join(workdir, "served")
    os.makedirs(folder)
    wav(os.path.join(folder, "long.wav"), seconds)
    server = subprocess.Popen(netns.command(sys.executable, "-c", FILE_SERVER, folder), stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        url = f"http://127.0.0.1:{port}/long.wav"
        cast = netns.run(castline_binary(), "cast", url, "--device", "127.0.0.1", "--start", "90", "--json", "--direct", timeout=60)
        assert cast.returncode == 0, cast.stderr
        loads = [f for f in sim.frames() if f.get("namespace") == "urn:x-cast:com.google.cast.media" and '"LOAD"' in json.dumps(f.get("payload"))]
        payload = loads[-1]["payload"]
        payload = json.loads(payload) if isinstance(payload, str) else payload
        duration = payload["media"].get("duration")
        assert duration is None or abs(duration - seconds) < 0.5, f"LOAD duration {duration} for a {seconds} s file"
        state = sim.control({"command": "list"})["devices"][0]["state"]["media"]
        assert state["playerState"] == "PLAYING" and state["currentTime"] >= 90, state
    finally:
        server.terminate()
        server.wait(timeout=10)
