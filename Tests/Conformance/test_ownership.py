"""Who owns a TV's screen, end to end: `castline run` against `castline sim`, another sender
played by unmodified pychromecast. A yielding job leaves the other sender's media alone through
the transitional statuses of its load (IDLE without a reason, LOADING, BUFFERING), through a
SIGHUP that changes the job, and takes the screen back only when the other sender's session ends.
The rules are in docs/cli.md ("Who owns a screen")."""
import json
import os
import signal

import pytest

from conftest import CLIENTS, PYTHON, wait_until
from hub import Hub
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
