"""A device reached by address takes its identity from the device, as one found over mDNS does
(issue 41): `castline run` and `castline sim` in a network namespace. A static Nest Hub gets its
model from eureka_info, so `daemon.idle_timeouts` sets its site job's keep-alive and the page is
never relaunched; `devices[].model` overrides the model; a speaker group given by its address
(its port on the leader) is a group with members, in the daemon and in `status --direct`."""
import json
import os
import re
import time

import pytest

from conftest import REPO, Simulator, castline_binary, wait_until
from hub import Hub
import page_server

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

GROUP_CONFIG = os.path.join(REPO, "configs", "sim-groups.json")
DASHCAST = "84912283"
NEST_HUB = "Google Nest Hub"
# The simulator's default device is the well-behaved one: any message resets its idle timer. A
# real Nest Hub's resets only on media (no keep-alive could hold its page); the config says the
# device here is the well-behaved one, so that these tests judge what the model's idle timeout does.
ANY_MESSAGE = f'field_profiles: {{"{NEST_HUB}*": {{idle_reset_by: any-message}}}}'



@pytest.fixture
def page(netns):
    """A dashboard page served in the namespace: its URL. Stopped by PID at teardown."""
    process, base = page_server.start(netns)
    yield f"{base}/dash.html"
    page_server.stop(process)


def site_job(url):
    return f"""jobs:
  - name: kitchen-dashboard
    devices: ["*"]
    site: "{url}"
"""


def launches(sim):
    return [f for f in sim.frames() if f.get("namespace") == "urn:x-cast:com.google.cast.receiver"
            and '"LAUNCH"' in json.dumps(f.get("payload", ""))]


def app_page(sim):
    app = sim.control({"command": "list"})["devices"][0]["state"].get("app") or {}
    return (app.get("appId"), (app.get("page") or {}).get("url"))


def keep_alive_line(log):
    """The job's "keep-alive every N s (idle timeout M s, SOURCE)" line, as (N, M, SOURCE)."""
    found = re.search(r"keep-alive every ([\d.]+) s \(idle timeout ([\d.]+) s, ([^)]*)\)", log)
    return (float(found.group(1)), float(found.group(2)), found.group(3)) if found else None


def test_a_static_nest_hub_keeps_its_dashboard_with_the_models_idle_timeout(netns, workdir, page):
    # The device stops an app without media 15 s after its last use, as a Nest Hub does (45 s in
    # the field); the config knows that per model and lists the device by address only.
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--model", NEST_HUB, "--app-idle-timeout", "15"])
    hub = None
    try:
        hub = Hub(netns, sim, workdir, jobs=site_job(page), daemon_extra=f'idle_timeouts: {{"{NEST_HUB}*": 15}}, {ANY_MESSAGE}',
                  devices=[{"name": "Kitchen display", "address": sim.device["address"], "castPort": sim.device["castPort"]}])
        status, device, _ = hub.get("/v1/devices/Kitchen%20display")
        assert status == 200 and device["model"] == NEST_HUB, device
        assert device["id"] == sim.device["uuid"], "the id is the one eureka_info and mDNS give"
        wait_until(lambda: app_page(sim) == (DASHCAST, page), 20, "the job's page on the display")
        assert keep_alive_line(hub.log()) == (10.0, 15.0, f'daemon.idle_timeouts "{NEST_HUB}*" for model {NEST_HUB}'), hub.log()[-3000:]
        assert f'Kitchen display at {sim.device["address"]}:{sim.device["castPort"]}: model "{NEST_HUB}" (eureka_info)' in hub.log()
        shown, launched = time.monotonic(), len(launches(sim))
        # Three keep-alives, 10 s apart: past two idle timeouts of the device. Without the model
        # the job would wait the default 600 s, and the device would stop the page every 15 s
        # (a LAUNCH each time the job shows it again).
        sent = re.compile(r"keep-alive \d+: ")
        wait_until(lambda: len(sent.findall(hub.log())) >= 3, 60, "3 keep-alives")
        assert time.monotonic() - shown >= 30 - 1
        assert len(launches(sim)) == launched, f"{len(launches(sim)) - launched} relaunch(es) in {time.monotonic() - shown:.0f} s"
        assert "stopped: no media" not in sim.log_text(), "the idle timeout never caught the page"
        assert app_page(sim) == (DASHCAST, page)
    finally:
        if hub:
            hub.stop()
        sim.stop()


def test_devices_model_overrides_the_model_the_device_gives(netns, workdir, page):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--model", "Chromecast"])
    hub = None
    try:
        hub = Hub(netns, sim, workdir, jobs=site_job(page), daemon_extra=f'idle_timeouts: {{"{NEST_HUB}*": 30}}, {ANY_MESSAGE}',
                  devices=[{"name": "Kitchen display", "address": sim.device["address"], "castPort": sim.device["castPort"],
                            "model": NEST_HUB}])
        check = netns.run(castline_binary(), "config", "check", "--no-plugins", hub.config)
        assert check.returncode == 0 and ": ok (1 device(s), 1 job(s)" in check.stdout, check.stdout + check.stderr
        status, device, _ = hub.get("/v1/devices/Kitchen%20display")
        assert status == 200 and device["model"] == NEST_HUB, device
        wait_until(lambda: keep_alive_line(hub.log()), 20, "the job's keep-alive line")
        assert keep_alive_line(hub.log()) == (20.0, 30.0, f'daemon.idle_timeouts "{NEST_HUB}*" for model {NEST_HUB}')
        assert 'model "Google Nest Hub" (devices[].model)' in hub.log()
        # Direct mode reads the same config: the override there too.
        shown = netns.run(castline_binary(), "status", "--direct", "--device", "Kitchen display", "--config", hub.config, "--json")
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout.splitlines()[-1])["model"] == NEST_HUB, shown.stdout
    finally:
        if hub:
            hub.stop()
        sim.stop()


def test_a_group_by_address_is_a_group_in_the_daemon_and_in_status_direct(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--config", GROUP_CONFIG, "--no-mdns"])
    hub = None
    try:
        group = sim.ready["groups"][0]
        members = [sim.ready["devices"][i]["name"] for i in group["memberIndexes"]]
        endpoint = f"{group['address']}:{group['castPort']}"
        assert group["castPort"] != 8009
        # Given by address, with a name of the config's own.
        hub = Hub(netns, sim, workdir, devices=[{"name": "Downstairs speakers", "address": group["address"],
                                                 "castPort": group["castPort"]}])

        def shown():
            status, body, _ = hub.get(f"/v1/devices/{group['uuid']}")
            return body if status == 200 else {}

        seen = wait_until(lambda: (b := shown()) and len(b.get("group", {}).get("members", [])) == 3 and b, 10,
                          "the group's members in the daemon")
        assert [m["name"] for m in seen["group"]["members"]] == members, seen
        assert seen["device"] == "Downstairs speakers" and seen["model"] == "Google Cast Group", seen
        # Direct mode on the bare address: the group's own name and id, and its members.
        direct = netns.run(castline_binary(), "status", "--direct", "--device", endpoint, "--json", timeout=60)
        assert direct.returncode == 0, direct.stderr
        status = json.loads(direct.stdout.splitlines()[-1])
        assert status["id"] == group["uuid"] and status["device"] == group["name"], status
        assert [m["name"] for m in status["group"]["members"]] == members, status
        text = netns.run(castline_binary(), "status", "--direct", "--device", endpoint, timeout=60)
        assert text.returncode == 0 and "members: " + ", ".join(members[:1]) in text.stdout, text.stdout
    finally:
        if hub:
            hub.stop()
        sim.stop()
