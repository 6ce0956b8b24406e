"""castline against the field's devices (issue 47), the built binary as a user runs it, the
simulator's own view as the truth: a page on a device whose idle timer only media resets is shown
again at once after each close, each relaunch counted with its cause, the timeout learned and
kept across a restart, and `config check` says no keep-alive can hold it; castline's receiver
keeps the same page up with no relaunch; the API's screen follows the simulator's (standby, another
input, ambient mode by the model's profile) and `screen_off: wake` brings the app back; a hung
launch is abandoned after its bound and retried."""
import json
import os
import re
import time

import pytest

from conftest import Simulator, castline_binary, wait_until
from hub import Hub
import page_server

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

NEST_HUB = "Google Nest Hub"
GOOGLE_TV = "Chromecast with Google TV"
RECEIVER = "CA5711FE"


@pytest.fixture
def page(netns):
    process, base = page_server.start(netns)
    yield f"{base}/dash.html"
    page_server.stop(process)


def sim_with(netns, workdir, devices, *extra):
    path = os.path.join(workdir, "sim.json")
    with open(path, "w") as f:
        json.dump({"devices": devices}, f)
    return Simulator(netns, workdir, extra=["--no-mdns", "--config", path, *extra], launch_delay=None)


def hub_device(name, uuid, model, **field):
    return {"name": name, "uuid": uuid, "model": model, "address": "127.0.0.1", **field}


def sim_log(sim):
    """The simulator's whole log (`log_text` keeps only its tail)."""
    sim.stderr.flush()
    with open(sim.stderr_path) as f:
        return f.read()


def listing(sim):
    return {d["name"]: d["state"] for d in sim.control({"command": "list"})["devices"]}


def launches(sim, device_name=None):
    """The LAUNCHes the simulator received (for one device, by its name)."""
    uuid = next((d["uuid"] for d in sim.ready["devices"] if d["name"] == device_name), None) if device_name else None
    assert device_name is None or uuid, device_name
    frames = [f for f in sim.frames() if f.get("direction") == "in" and f.get("type") == "LAUNCH"]
    return [f for f in frames if uuid is None or f.get("device") == uuid]


def metric(hub, name, **labels):
    status, body, _ = hub.get("/metrics")
    assert status == 200
    text = body if isinstance(body, str) else body.decode() if isinstance(body, bytes) else json.dumps(body)
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def site_jobs(*jobs):
    lines = ["jobs:"]
    for name, device, site in jobs:
        lines.append(f"  - {{name: {name}, devices: [\"{device}\"], site: {site}}}")
    return "\n".join(lines) + "\n"


def test_a_page_only_media_keeps_is_relaunched_at_once_counted_and_its_timeout_learned(netns, workdir, page):
    # A Nest Hub after the Fuchsia update, its idle close shortened to 4 s: castline assumes the
    # model's 600 s (only media resets it), sends no keep-alive, and learns the 4 s.
    sim = sim_with(netns, workdir, [hub_device("Kitchen", "4e657374487562000000000000000001", NEST_HUB, profile="nest-hub-fuchsia",
                                               field={"appIdleTimeout": 4, "ambient": None,
                                                      "launch": {"readyAfter": 0.2, "pageAppExtra": 0, "cancelledProbability": 0}})])
    hub = None
    try:
        devices = [{"name": "Kitchen", "address": sim.device["address"], "castPort": sim.device["castPort"], "model": NEST_HUB}]
        hub = Hub(netns, sim, workdir, jobs=site_jobs(("board", "Kitchen", f'"{page}"')), devices=devices)
        wait_until(lambda: "no keep-alive: only media resets the idle timer of Google Nest Hub" in hub.log(), 20, "the no-keep-alive line")
        wait_until(lambda: sim_log(sim).count("stopped: no media") >= 3, 30, "three idle closes")
        closes = sim_log(sim).count("stopped: no media")
        wait_until(lambda: metric(hub, "castline_device_launches_total", reason="app-closed") >= closes, 10, "each close relaunched")
        assert metric(hub, "castline_device_launches_total", reason="first") == 1
        assert "keep-alive " not in re.sub(r"no keep-alive", "", hub.log()), "no keep-alive was sent"
        # Each relaunch follows its close at once (within the launch's 0.2 s and a little).
        wait_until(lambda: (listing(sim)["Kitchen"].get("app") or {}).get("appId") == "84912283", 5, "the page back")
        learned = json.load(open(os.path.join(workdir, "field-learned.json")))
        entry = learned["devices"][sim.device["uuid"]]
        assert abs(entry["idle_timeout"] - 4) < 0.8 and entry["model"] == NEST_HUB, entry
        assert oct(os.stat(os.path.join(workdir, "field-learned.json")).st_mode & 0o777) == "0o600"
        check = netns.run(castline_binary(), "config", "check", "--no-plugins", hub.config)
        assert check.returncode == 0, check.stdout + check.stderr
        assert 'jobs[0] "board" shows a page on Kitchen (model Google Nest Hub, profile nest-hub): only media resets' in check.stdout + check.stderr
        hub.stop()
        hub = None
        # A restart knows the device's 4 s.
        hub = Hub(netns, sim, workdir, jobs=site_jobs(("board", "Kitchen", f'"{page}"')), devices=devices)
        wait_until(lambda: "learned: the device closed an idle app after" in hub.log(), 20, "the learned timeout after a restart")
    finally:
        if hub:
            hub.stop()
        sim.stop()


def test_castlines_receiver_keeps_the_same_page_with_no_relaunch(netns, workdir, page):
    sim = sim_with(netns, workdir, [hub_device("Kitchen", "4e657374487562000000000000000002", NEST_HUB, profile="nest-hub-fuchsia",
                                               field={"appIdleTimeout": 3, "ambient": {"after": 3, "coversApp": True},
                                                      "launch": {"readyAfter": 0.2, "pageAppExtra": 0, "cancelledProbability": 0}})])
    hub = None
    try:
        hub = Hub(netns, sim, workdir, jobs=site_jobs(("board", "Kitchen", f'{{url: "{page}", receiver: castline}}')),
                  daemon_extra=f"castline_receiver_app_id: {RECEIVER}")
        wait_until(lambda: (listing(sim)["Kitchen"].get("app") or {}).get("page", {}).get("url") == page, 20, "the page in castline's receiver")
        shown = time.monotonic()
        assert listing(sim)["Kitchen"]["app"]["appId"] == RECEIVER
        assert "castline's receiver (CA5711FE) keeps itself alive with silent media" in hub.log()
        # Four idle timeouts and ambient delays: no close, no cover, one launch. The waiting is the
        # behaviour under test (nothing happens for 12 s), sampled once a second.
        while time.monotonic() - shown < 12:
            screen = listing(sim)["Kitchen"]["screen"]
            assert screen["app_visible"] is True, screen
            time.sleep(1)
        assert "stopped: no media" not in sim_log(sim)
        assert len(launches(sim)) == 1, [f.get("payload") for f in launches(sim)]
        status, device, _ = hub.get("/v1/devices/Kitchen")
        # A Nest Hub reports no HDMI-CEC fields and the receiver's media keeps ambient mode away:
        # castline claims nothing it cannot see.
        assert status == 200 and device["screen"] == {"visible": None, "reason": None, "source": None}, device
    finally:
        if hub:
            hub.stop()
        sim.stop()


def bar_and_lobby(netns, workdir):
    """Bar, a Google TV (ambient mode covers a page after 600 s, 3 s at 200×; no CEC fields), and
    Lobby, a Chromecast that reports CEC (standby, the active input), at field time ×200."""
    return sim_with(netns, workdir, [
        hub_device("Bar", "476f6f676c6554560000000000000003", GOOGLE_TV, profile="chromecast-google-tv", field={"appIdleTimeout": None},
                   castPort=8009, httpPort=8008, httpsPort=8443),
        hub_device("Lobby", "4368726f6d6563617374000000000004", "Chromecast", profile="chromecast", field={"dailyReboot": None},
                   castPort=8019, httpPort=8018, httpsPort=8453),
    ], "--field-time-scale", "200")


def test_the_apis_screen_follows_the_simulators_and_wake_brings_the_app_back(netns, workdir, page):
    # Google TV: ambient mode covers a page after 600 s, 3 s at 200×; it reports no CEC fields.
    # Chromecast: reports CEC; its job wakes a dark screen.
    sim = bar_and_lobby(netns, workdir)
    hub = None
    try:
        hub = Hub(netns, sim, workdir,
                  jobs=site_jobs(("bar", "Bar", f'"{page}"'), ("lobby", "Lobby", f'"{page}"')).replace(
                      'name: lobby,', 'name: lobby, screen_off: wake,'),
                  daemon_extra=f'field_time_scale: 200, field_profiles: {{"{GOOGLE_TV}": {{idle_timeout: never}}}}')

        def api_screen(name):
            status, device, _ = hub.get(f"/v1/devices/{name}")
            assert status == 200
            return device.get("screen")

        wait_until(lambda: all((listing(sim)[n].get("app") or {}).get("page", {}).get("url") == page for n in ("Bar", "Lobby")), 20,
                   "both pages up")
        # Bar: covered by ambient mode after 3 s, in the simulator and by castline's profile; no
        # relaunch under screen_off: report.
        wait_until(lambda: listing(sim)["Bar"]["screen"]["covered_by"] == "ambient", 10, "the simulator's cover")
        wait_until(lambda: api_screen("Bar") == {"visible": False, "reason": "covered", "source": "profile"}, 3, "castline's cover")
        bar_launches = len(launches(sim, "Bar"))
        assert bar_launches == 1
        time.sleep(2)   # the behaviour under test: nothing is launched while the cover stays
        assert len(launches(sim, "Bar")) == bar_launches, "report only reports"
        assert listing(sim)["Bar"]["screen"]["covered_by"] == "ambient"
        # Lobby: on, then standby: castline sees it and wakes the TV with a LAUNCH.
        wait_until(lambda: api_screen("Lobby") == {"visible": True, "reason": None, "source": "device"}, 10, "Lobby visible")
        lobby_launches = len(launches(sim, "Lobby"))
        assert sim.control({"command": "standby", "device": 1})["ok"]
        wait_until(lambda: len(launches(sim, "Lobby")) > lobby_launches, 10, "a wake")
        wait_until(lambda: listing(sim)["Lobby"]["screen"] == {"shows": "app", "app_visible": True, "covered_by": None}, 10,
                   "the TV on again, on the app")
        wait_until(lambda: api_screen("Lobby")["visible"] is True, 5, "castline sees it on")
        assert "the screen shows no app (standby); screen_off: wake" in hub.log()
        assert metric(hub, "castline_device_launches_total", reason="screen-off", device="Lobby") >= 1
        assert metric(hub, "castline_device_screen", screen="covered", device="Bar") == 1
    finally:
        if hub:
            hub.stop()
        sim.stop()


def test_a_hung_launch_is_abandoned_after_its_bound_and_retried(netns, workdir, page):
    sim = sim_with(netns, workdir, [hub_device("Lobby", "4368726f6d6563617374000000000005", "Chromecast", profile="chromecast",
                                               field={"dailyReboot": None, "launch": {"readyAfter": 0.1}})])
    hub = None
    try:
        assert sim.control({"command": "launch-hang", "count": 1})["ok"]
        started = time.monotonic()
        hub = Hub(netns, sim, workdir, jobs=site_jobs(("lobby", "Lobby", f'"{page}"')), daemon_extra="field_time_scale: 5")
        wait_until(lambda: (listing(sim)["Lobby"].get("app") or {}).get("page", {}).get("url") == page, 20, "the page after the hang")
        took = time.monotonic() - started
        assert len(launches(sim)) == 2, "the hung launch, then the retry"
        assert 2 <= took <= 12, took
        assert metric(hub, "castline_device_launches_total", reason="retry") == 1
        assert re.search(r"cannot show .*: LAUNCH failed: no reply within 2(\.0)? s", hub.log()), hub.log()[-2000:]
    finally:
        if hub:
            hub.stop()
        sim.stop()
