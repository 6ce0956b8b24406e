"""Web pages and dashboards on TVs, end to end: `castline site` / `cast --site` / a text/html URL
through the web-pages plugin (DashCast, Home Assistant Cast) against `castline sim`; the
pre-flight (X-Frame-Options, unreachable pages) against a real HTTP server in the namespace; a
site job kept alive past the device's idle timeout; the API's site route and a channel request;
pychromecast's own DashCastController and HomeAssistantController against the simulator."""
import json
import os
import re
import subprocess
import time
import urllib.parse

import pytest

from conftest import CLIENTS, PYTHON, Simulator, castline_binary, run_client, wait_until
from hub import Hub, api
import page_server

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

DEVICE = "127.0.0.1"
DASHCAST = "84912283"
HOME_ASSISTANT = "A078F6B0"



@pytest.fixture
def pages(netns):
    """A web server in the namespace: its base URL. Stopped by PID at teardown."""
    process, base = page_server.start(netns)
    yield base
    page_server.stop(process)


def castline(netns, *args, timeout=60, env=None):
    return netns.run(castline_binary(), *args, timeout=timeout, env=env)


def app_state(sim, index=0):
    return sim.control({"command": "list"})["devices"][index]["state"].get("app")


def launches(sim):
    return [f for f in sim.frames() if f.get("namespace") == "urn:x-cast:com.google.cast.receiver"
            and '"LAUNCH"' in json.dumps(f.get("payload", ""))]


def test_cast_site_shows_the_page_with_dashcast(netns, sim, pages):
    url = f"{pages}/dash.html"
    result = castline(netns, "cast", "--site", url, "--device", DEVICE)
    assert result.returncode == 0, result.stderr
    assert f"showing {url} with DashCast ({DASHCAST})" in result.stdout, result.stdout
    # DashCast's receiver is an https page: an http page in its frame would be blocked as mixed
    # content, so it is forced, and the line says so.
    assert "forced\n  note: sent with force: the page is http" in result.stdout and "mixed content" in result.stdout, result.stdout
    app = app_state(sim)
    assert app["appId"] == DASHCAST and app["page"]["url"] == url and app["page"]["force"] is True


def test_a_text_html_url_given_to_cast_goes_to_dashcast_and_says_so(netns, sim, pages):
    url = f"{pages}/moved"
    result = castline(netns, "cast", url, "--device", DEVICE)
    assert result.returncode == 0, result.stderr
    assert "is a web page (text/html): shown with DashCast" in result.stdout, result.stdout
    app = app_state(sim)
    assert app["appId"] == DASHCAST and app["page"]["url"] == url


def test_a_local_html_file_says_how_to_show_it(netns, sim, workdir):
    page = os.path.join(workdir, "board.html")
    with open(page, "w") as f:
        f.write("<html><body>board</body></html>")
    result = castline(netns, "cast", page, "--device", DEVICE)
    assert result.returncode == 64, (result.returncode, result.stdout, result.stderr)
    assert "is a web page" in result.stderr and "castline site http://HOST:PORT/board.html" in result.stderr, result.stderr


@pytest.mark.parametrize("page,header", [("deny.html", "X-Frame-Options: DENY"),
                                         ("csp.html", "frame-ancestors 'self'")])
def test_a_page_that_refuses_frames_is_forced_and_the_line_says_why(netns, sim, pages, page, header):
    url = f"{pages}/{page}"
    result = castline(netns, "site", url, "--device", DEVICE)
    assert result.returncode == 0, result.stderr
    assert "forced" in result.stdout and header in result.stdout, result.stdout
    assert app_state(sim)["page"] == {"url": url, "force": True, "reloadTime": 0}


def test_an_http_page_is_named_as_mixed_content_and_no_force_keeps_it_framed(netns, sim, pages):
    url = f"{pages}/framable.html"
    result = castline(netns, "site", url, "--device", DEVICE, "--no-force", "--reload-every", "30")
    assert result.returncode == 0, result.stderr
    assert "mixed content" in result.stdout and "may stay blank" in result.stdout, result.stdout
    # The simulator blocks it as the real DashCast does: framed http in an https page.
    assert app_state(sim)["page"] == {"url": url, "force": False, "reloadTime": 30000, "blocked": "mixed-content"}


@pytest.mark.parametrize("path,reason", [(":1/dash.html", "connection refused"), ("/missing.html", "HTTP 404")])
def test_an_unreachable_page_fails_before_anything_is_launched(netns, sim, pages, path, reason):
    url = "http://127.0.0.1:1/dash.html" if path.startswith(":") else f"{pages}{path}"
    result = castline(netns, "site", url, "--device", DEVICE)
    assert result.returncode == 4, (result.returncode, result.stdout, result.stderr)
    assert reason in result.stderr and "nothing was cast" in result.stderr, result.stderr
    assert app_state(sim) is None or app_state(sim)["appId"] != DASHCAST
    assert launches(sim) == [], "nothing is launched for a page that cannot be fetched"


def test_text_html_into_the_default_media_receiver_fails_readably(netns, sim, pages):
    result = castline(netns, "cast", f"{pages}/dash.html", "--app", "CC1AD845", "--content-type", "text/html",
                      "--device", DEVICE)
    assert result.returncode == 4, (result.returncode, result.stdout, result.stderr)
    assert "LOAD_FAILED" in result.stderr and "MEDIA_SRC_NOT_SUPPORTED" in result.stderr, result.stderr


def test_site_job_keeps_its_page_past_a_10_s_idle_timeout(netns, workdir, pages):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--app-idle-timeout", "10"])
    hub = None
    try:
        url = f"{pages}/dash.html"
        hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: lobby-dashboard
    devices: ["*"]
    site: {{url: "{url}", idle_timeout: 10}}
""")
        wait_until(lambda: (app_state(sim) or {}).get("page", {}).get("url") == url, 20, "the job's page on the device")
        shown = time.monotonic()
        launched = len(launches(sim))
        # A keep-alive every 6.7 s (two thirds of 10 s): the 7th comes 47 s after the cast, by
        # when the idle timeout would have stopped an app left alone four times.
        sent = re.compile(r"keep-alive \d+: ")
        wait_until(lambda: len(sent.findall(hub.log())) >= 7, 60, "7 keep-alives")
        assert time.monotonic() - shown >= 45
        app = app_state(sim)
        assert app["appId"] == DASHCAST and app["page"]["url"] == url, app
        assert "stopped: no media" not in sim.log_text(), "the idle timeout never caught the page"
        assert len(launches(sim)) == launched, "keep-alives re-send the page; they do not relaunch"
        assert "keep-alive every 6.7 s (idle timeout 10 s, the job's idle_timeout)" in hub.log()
        keepalives = [line for line in hub.log().splitlines() if sent.search(line)]
        assert all(url in line for line in keepalives), keepalives
    finally:
        if hub:
            hub.stop()
        sim.stop()


def test_a_site_job_shows_the_page_again_as_soon_as_the_app_stops(netns, sim, workdir, pages):
    url = f"{pages}/dash.html"
    log = os.path.join(workdir, "hub.jsonl")
    hub = Hub(netns, sim, workdir, json_log=log, jobs=f"""jobs:
  - name: lobby-dashboard
    devices: ["*"]
    site: "{url}"
""")
    try:
        wait_until(lambda: (app_state(sim) or {}).get("page", {}).get("url") == url, 20, "the job's page on the device")
        sim.control({"command": "stop-app"})
        wait_until(lambda: (app_state(sim) or {}).get("page", {}).get("url") == url and "the receiver app was stopped" in hub.log(),
                   20, "the page back after the app stopped")
        wait_until(lambda: hub.log().count("showing " + url) >= 2, 10, "the second showing logged")
    finally:
        hub.stop()
    # The log tells the screen's story: shown, one gap with its reason, shown again.
    stats = castline(netns, "logs", "stats", "--json", log)
    assert stats.returncode == 0, stats.stderr
    [screen] = json.loads(stats.stdout)["screens"]
    assert screen["url"] == url and screen["shown_s"] > 0, screen
    [gap] = screen["gaps"]
    assert gap["reason"] == "the receiver app was stopped" and gap["duration_s"] is not None and gap["duration_s"] < 10, gap
    text = castline(netns, "logs", "stats", log).stdout
    assert "gap" in text and "the receiver app was stopped" in text, text


def test_the_api_site_route_and_a_channel_request_to_dashcast(netns, sim, workdir, pages):
    hub = Hub(netns, sim, workdir)
    try:
        name = urllib.parse.quote(sim.ready["devices"][0]["name"])
        url = f"{pages}/deny.html"
        status, body, _ = hub.post(f"/v1/devices/{name}/site", {"url": url})
        assert status == 200, body
        assert body["app"] == DASHCAST and body["force"] is True and "X-Frame-Options: DENY" in body["preflight"]["refuses_frames"]
        assert app_state(sim)["page"]["url"] == url
        status, body, _ = hub.post(f"/v1/devices/{name}/site", {"url": "ftp://example"})
        assert status == 400 and body["error"]["code"] == "bad_url", body
        status, body, _ = hub.post(f"/v1/devices/{name}/site", {"url": "http://127.0.0.1:1/"})
        assert status == 422 and body["error"]["code"] == "site_unreachable", body
        # Media into DashCast: refused at once (it has no media namespace), not after a timeout.
        status, body, _ = hub.post(f"/v1/devices/{name}/cast", {"media": "http://media.invalid/a.mp4", "app": DASHCAST})
        assert status == 422 and body["error"]["code"] == "app_without_media", body
        other = f"{pages}/dash.html"
        status, body, _ = hub.post(f"/v1/devices/{name}/channels/urn:x-cast:com.madmod.dashcast",
                                   {"message": {"url": other, "force": False}})
        assert status == 200 and body["via"] == "dashcast", body
        assert app_state(sim)["page"]["url"] == other
    finally:
        hub.stop()


def test_the_home_assistant_dashboard_shows_a_view_and_the_token_is_never_logged(netns, sim, workdir):
    token = "castline-secret-refresh-token-5f1c"
    token_file = os.path.join(workdir, "ha-token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    os.chmod(token_file, 0o600)
    hub = Hub(netns, sim, workdir, api_extra=f"""plugins:
  config:
    web-pages: {{home_assistant: {{url: "https://ha.example:8123", uuid: "0a1b2c", token_file: "{token_file}"}}}}
""", log_rules="debug")
    try:
        name = urllib.parse.quote(sim.ready["devices"][0]["name"])
        status, body, _ = hub.post(f"/v1/devices/{name}/site", {"home_assistant": {"view_path": "lobby"}})
        assert status == 200, body
        assert body["app"] == HOME_ASSISTANT and body["reply"]["connected"] is True
        page = app_state(sim)["page"]
        assert page["hassUrl"] == "https://ha.example:8123" and page["lovelacePath"] == "lobby"
        # The token went to the device (the simulator connected) and into no log.
        with open(sim.frame_log) as f:
            frames = f.read()
        assert "refreshToken" in frames, "the connect message is in the frame log"
        for where, text in [("daemon log", hub.log()), ("simulator log", sim.log_text()), ("frame log", frames)]:
            assert token not in text, f"the refresh token is in the {where}"
        os.chmod(token_file, 0o644)
        status, body, _ = hub.post(f"/v1/devices/{name}/site", {"home_assistant": {"view_path": "other"}})
        # Still connected: the token file is not read again, and the view changes.
        assert status == 200, body
    finally:
        hub.stop()


def test_pychromecast_dashcast_controller_loads_a_url(netns, sim):
    device = sim.device
    client = subprocess.Popen(netns.command(PYTHON, os.path.join(CLIENTS, "web_apps.py"), device["address"], str(device["castPort"]),
                                            device["uuid"], "dashcast", "https://example.com/board", "true"),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sent = json.loads(client.stdout.readline() or "{}")
        assert sent.get("app_id") == DASHCAST, (sent, client.stderr.read() if client.poll() is not None else "")
        wait_until(lambda: (app_state(sim) or {}).get("page") == {"url": "https://example.com/board", "force": True, "reloadTime": 0},
                   10, "the page pychromecast sent, on the device")
    finally:
        client.stdin.close()
        client.wait(timeout=20)
    assert client.returncode == 0, client.stderr.read()


def test_pychromecast_home_assistant_controller_shows_a_view(netns, sim):
    device = sim.device
    result = run_client(netns, "web_apps.py", device["address"], str(device["castPort"]), device["uuid"],
                        "homeassistant", "https://ha.example:8123", "0a1b2c", "a-refresh-token", "kitchen")
    assert result["connected"] is True, result
    assert result["status"]["lovelacePath"] == "kitchen" and result["status"]["hassUrl"] == "https://ha.example:8123"


MANIFEST = """// swift-tools-version:6.0
import PackageDescription
let package = Package(
    name: "my-dashcast",
    products: [.library(name: "MyDashCast", type: .dynamic, targets: ["MyDashCast"])],
    dependencies: [.package(path: "{repo}")],
    targets: [.target(name: "MyDashCast", dependencies: [
        .product(name: "CastPluginKit", package: "{identity}"),
    ])]
)
"""

ENTRY = """
enum MyDashCast: CastlinePlugin {
    static let id = "my-dashcast"
    static let version = "1.0.0"
    static let summary = "DashCast, my way"
    static let license = "Apache-2.0"
    static let features: [PluginFeatureDefinition] = [.channel(MyDashCastChannel.self, id: "my-dashcast")]
}

@_cdecl("castline_plugin_v1_describe")
public func castlinePluginDescribe() -> UnsafeRawPointer? { PluginExport.describe(MyDashCast.self) }
"""


def test_the_dashcast_walkthrough_builds_a_plugin_outside_the_tree(netns, sim, workdir, pages):
    """Plugins/README.md's worked example, followed to the letter: a package of its own that
    depends on castline's CastPluginKit, DashCastChannel.swift copied in, built, loaded with
    --plugin-path (web-pages turned off), and a page sent through it."""
    from conftest import REPO
    package = os.path.join(workdir, "my-dashcast")
    os.makedirs(os.path.join(package, "Sources", "MyDashCast"))
    with open(os.path.join(package, "Package.swift"), "w") as f:
        f.write(MANIFEST.replace("{repo}", REPO).replace("{identity}", os.path.basename(REPO.rstrip("/")).lower()))
    with open(os.path.join(REPO, "Plugins", "WebPages", "DashCastChannel.swift")) as f:
        source = f.read().replace("DashCastChannel", "MyDashCastChannel")
    with open(os.path.join(package, "Sources", "MyDashCast", "MyDashCast.swift"), "w") as f:
        f.write(source + ENTRY)
    build = subprocess.run(["swift", "build", "--product", "MyDashCast", "--scratch-path", os.path.join(package, ".build")],
                           cwd=package, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    library = os.path.join(package, ".build", "debug", "libMyDashCast.so")
    inspect = castline(netns, "plugins", "inspect", library)
    assert inspect.returncode == 0 and "channel:my-dashcast" in inspect.stdout, inspect.stdout + inspect.stderr
    hub = Hub(netns, sim, workdir, api_extra=f"plugins: {{paths: [{library}], disabled: [web-pages]}}")
    try:
        url = f"{pages}/dash.html"
        sent = castline(netns, "channel", "request", "--api-socket", hub.socket, "--device", DEVICE,
                        "--namespace", "urn:x-cast:com.madmod.dashcast", "--app", DASHCAST, json.dumps({"url": url}), "--json")
        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert json.loads(sent.stdout.splitlines()[-1])["via"] == "my-dashcast", sent.stdout
        assert app_state(sim)["page"]["url"] == url
    finally:
        hub.stop()


def test_a_schedule_switches_from_media_to_a_site_and_back_to_idle(netns, workdir, pages):
    """Dayparting with a page: a media entry, then a site entry, each a few seconds ahead (UTC):
    the device plays the media, then shows the page in DashCast, then is left idle, each switch
    within a second of its boundary, read from the simulator's own state."""
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"mediaRules": [{"contentId": "*.mp4", "duration": 600}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    url = f"{pages}/dash.html"
    start = int(time.time()) + 6
    at = lambda t: time.strftime("%H:%M:%S", time.gmtime(t))
    hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: lobby
    devices: ["*"]
    timezone: UTC
    schedule:
      - {{days: daily, from: "{at(start)}", to: "{at(start + 5)}", media: "http://media.invalid/morning.mp4"}}
      - {{days: daily, from: "{at(start + 5)}", to: "{at(start + 10)}", site: "{url}"}}
""")
    try:
        changes = []

        def watch():
            state = sim.control({"command": "list"})["devices"][0]["state"]
            app = state.get("app")
            if not app or app.get("isIdleScreen"):
                shown = None
            elif app.get("appId") == DASHCAST:
                shown = (app.get("page") or {}).get("url")
                if not shown:
                    return False   # DashCast up, its page not sent yet
            else:
                shown = ((state.get("media") or {}).get("contentId") or "").rsplit("/", 1)[-1]
                if not shown:
                    return False   # the app launched, its media not loaded yet
            if not changes or changes[-1][1] != shown:
                changes.append((time.time(), shown))
            return len(changes) >= 4

        try:
            wait_until(watch, 30, "three switches", interval=0.05)
        except AssertionError:
            raise AssertionError((changes, start, hub.log()[-3000:]))
        assert [name for _, name in changes[:4]] == [None, "morning.mp4", url, None], changes
        for (when, _), boundary in zip(changes[1:4], (start, start + 5, start + 10)):
            assert abs(when - boundary) <= 1.0, (when - boundary, changes)
    finally:
        hub.stop()
        assert sim.stop() == 0
