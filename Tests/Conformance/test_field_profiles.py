"""Field profiles over real sockets (issue 47): the simulator's devices close idle apps, cover the
screen, go to standby or another input, hang or cancel launches, reboot daily, and take a media's
duration from the media, each as its profile says; unmodified pychromecast still works against
every profile, because a profile changes timing, never the protocol."""
import json
import os
import subprocess
import time
from datetime import datetime

import pytest

from conftest import PYTHON, CLIENTS, Simulator, run_client, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

PROFILES = ["ideal", "chromecast", "nest-hub", "nest-hub-fuchsia", "chromecast-google-tv", "cast-tv", "speaker"]


def start_sim(netns, workdir, *extra, launch_delay=0, config=None):
    argv = ["--no-mdns", *extra]
    if config is not None:
        path = os.path.join(workdir, "sim.json")
        with open(path, "w") as f:
            json.dump(config, f)
        argv += ["--config", path]
    return Simulator(netns, workdir, extra=argv, launch_delay=launch_delay)


def state(sim, device=0):
    listing = sim.control({"command": "list", "device": device})
    assert listing["ok"], listing
    return listing["devices"][0]["state"]


def client(netns, sim, *args, timeout=90):
    d = sim.device
    return run_client(netns, "field_client.py", d["address"], str(d["castPort"]), d["uuid"], *args, timeout=timeout)


def config_device(**field_keys):
    """One device of model Chromecast on 127.0.0.1 with the given profile keys."""
    device = {"name": "Field TV", "uuid": "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "model": "Chromecast", "address": "127.0.0.1"}
    device.update(field_keys)
    return {"devices": [device]}


@pytest.mark.parametrize("profile", PROFILES)
def test_unmodified_pychromecast_passes_against_every_profile(netns, workdir, profile):
    """pychromecast_flow.py's steps under each profile with the simulator's default 1 s start-up
    (a profile may set its own), then a STOP from the control socket; and the LOAD's
    transitional statuses as real devices send them: IDLE without idleReason (extendedStatus
    LOADING), BUFFERING, PLAYING. (pychromecast's quit_app is left out: see field_client.py.)"""
    sim = start_sim(netns, workdir, "--profile", profile, launch_delay=None)
    try:
        assert state(sim)["field"]["profile"] == profile
        seen = client(netns, sim, "flow")
        assert seen == {"playing": True, "paused": True, "seek": True, "volume": True, "app_id": "CC1AD845"}, (profile, seen)
        assert sim.control({"command": "stop-app"})["ok"]
        assert state(sim)["app"] is None
        statuses = []
        for frame in sim.frames():
            if frame.get("event") == "frame" and frame.get("direction") == "out" and frame.get("type") == "MEDIA_STATUS":
                for entry in (frame.get("payload") or {}).get("status", []):
                    statuses.append((entry.get("playerState"), entry.get("idleReason"),
                                     (entry.get("extendedStatus") or {}).get("playerState")))
        first_loading = statuses.index(("IDLE", None, "LOADING"))
        first_buffering = statuses.index(("BUFFERING", None, None))
        first_playing = statuses.index(("PLAYING", None, None))
        assert first_loading < first_buffering < first_playing, statuses
    finally:
        assert sim.stop() == 0, sim.log_text()


@pytest.mark.parametrize("reset_by,closes", [(None, True), ("any-message", False)])
def test_an_idle_page_is_closed_unless_messages_reset_the_timer(netns, workdir, reset_by, closes):
    """nest-hub-fuchsia at 10×: DashCast closed 3 s after its launch although the sender sends
    its page every second (only media resets that model's timer); `--idle-reset-by any-message`
    makes the same messages keep it."""
    extra = ["--profile", "nest-hub-fuchsia", "--field-time-scale", "10"]
    if reset_by:
        extra += ["--idle-reset-by", reset_by]
    sim = start_sim(netns, workdir, *extra)
    try:
        field = state(sim)["field"]
        assert field["appIdleTimeout"] == pytest.approx(3.0) and field["idleResetBy"] == (reset_by or "media")
        seen = client(netns, sim, "keepalive", "8", "1", "https://example.com/board")
        if closes:
            assert seen["closed_after"] is not None and 2.0 <= seen["closed_after"] <= 4.5, seen
            closes_sent = [f for f in sim.frames() if f.get("event") == "frame" and f.get("direction") == "out"
                           and f.get("type") == "CLOSE"]
            assert closes_sent, "the device told its sender the app closed"
        else:
            assert seen["closed_after"] is None and seen["app_id"] == "84912283", seen
    finally:
        assert sim.stop() == 0, sim.log_text()


def start_watch(netns, sim, seconds):
    d = sim.device
    process = subprocess.Popen(netns.command(PYTHON, os.path.join(CLIENTS, "field_client.py"), d["address"], str(d["castPort"]),
                                             d["uuid"], "watch", str(seconds)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert json.loads(line) == {"event": "launched"}, (line, process.stderr.read() if process.poll() is not None else "")
    return process


def finish_watch(process, timeout=30):
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


@pytest.mark.parametrize("profile,reports_cec", [("chromecast", True), ("cast-tv", False)])
def test_cover_standby_and_input_change_the_screen_truth_and_cec_only_where_reported(netns, workdir, profile, reports_cec):
    sim = start_sim(netns, workdir, "--profile", profile)
    watcher = None
    try:
        watcher = start_watch(netns, sim, 6)
        assert state(sim)["screen"] == {"shows": "app", "app_visible": True, "covered_by": None}
        assert sim.control({"command": "cover"})["ok"]
        assert state(sim)["screen"] == {"shows": "ambient", "app_visible": False, "covered_by": "control"}
        assert state(sim)["app"]["appId"] == "CC1AD845", "the app runs on under the cover"
        assert sim.control({"command": "uncover"})["ok"]
        assert state(sim)["screen"]["app_visible"] is True
        assert sim.control({"command": "standby"})["ok"]
        assert state(sim)["screen"] == {"shows": "off", "app_visible": False, "covered_by": None}
        time.sleep(0.5)   # a pause for pychromecast to see the broadcast, recorded in its changes
        assert sim.control({"command": "standby", "enabled": False})["ok"]
        assert sim.control({"command": "input"})["ok"]
        assert state(sim)["screen"]["shows"] == "other-input"
        time.sleep(0.5)
        assert sim.control({"command": "input", "active": True})["ok"]
        changes = finish_watch(watcher)["changes"]
        watcher = None
        stand_by = {c["is_stand_by"] for c in changes}
        active = {c["is_active_input"] for c in changes}
        wire = [(f.get("payload") or {}).get("status", {}) for f in sim.frames()
                if f.get("direction") == "out" and f.get("type") == "RECEIVER_STATUS"]
        if reports_cec:
            assert True in stand_by and False in stand_by, changes
            assert False in active and True in active, changes
        else:
            # pychromecast reads a missing isStandBy as True and a missing isActiveInput as None:
            # what it sees never changes, and no status on the wire carries either field.
            assert len(stand_by) == 1 and len(active) == 1, changes
            assert wire and not any("isStandBy" in w or "isActiveInput" in w for w in wire), wire
        assert {c["app_id"] for c in changes} == {"CC1AD845"}, "the app ran throughout"
    finally:
        if watcher and watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        assert sim.stop() == 0, sim.log_text()


def test_ambient_mode_covers_a_page_after_its_time_and_a_launch_uncovers_it(netns, workdir):
    sim = start_sim(netns, workdir, config=config_device(profile="chromecast-google-tv",
                                                          field={"ambient": {"after": 2, "coversApp": True},
                                                                 "appIdleTimeout": None, "launch": {"readyAfter": 0}}))
    try:
        assert client(netns, sim, "launch", "84912283", "10")["result"] == "ok"
        launched = time.monotonic()
        assert state(sim)["screen"]["app_visible"] is True
        wait_until(lambda: state(sim)["screen"]["covered_by"] == "ambient", 6, "ambient mode")
        assert 1.5 <= time.monotonic() - launched <= 4, "covered after about 2 s"
        assert state(sim)["app"]["appId"] == "84912283", "RECEIVER_STATUS still lists the app"
        # pychromecast sends no LAUNCH for the app that runs unless forced; a LAUNCH is what wakes.
        assert client(netns, sim, "launch", "84912283", "10")["result"] == "ok"
        assert state(sim)["screen"]["covered_by"] == "ambient", "no LAUNCH went out: still covered"
        assert client(netns, sim, "launch", "84912283", "10", "force")["result"] == "ok"
        assert state(sim)["screen"]["app_visible"] is True
    finally:
        assert sim.stop() == 0, sim.log_text()


def test_a_hung_launch_gets_no_reply_and_a_cancelled_one_fails(netns, workdir):
    sim = start_sim(netns, workdir)
    try:
        assert sim.control({"command": "launch-hang", "count": 1})["ok"]
        hung = client(netns, sim, "launch", "CC1AD845", "3")
        assert hung["result"] == "timeout" and hung["app_id"] is None, hung
        assert state(sim)["field"]["launchPending"] == "hang"
        assert client(netns, sim, "launch", "CC1AD845", "10")["result"] == "ok"
    finally:
        assert sim.stop() == 0, sim.log_text()
    cancelling = start_sim(netns, workdir, config=config_device(field={"launch": {"cancelledProbability": 1}}))
    try:
        cancelled = client(netns, cancelling, "launch", "CC1AD845", "10")
        assert cancelled["result"] == "failed" and cancelled["app_id"] is None, cancelled
        assert any(f.get("type") == "LAUNCH_ERROR" and (f.get("payload") or {}).get("reason") == "CANCELLED"
                   for f in cancelling.frames() if f.get("direction") == "out")
    finally:
        assert cancelling.stop() == 0, cancelling.log_text()


def test_the_daily_reboot_comes_once_a_scaled_day(netns, workdir):
    """chromecast at 10000×: a day is 8.64 s, the 3–4 pm window 0.36 s: two reboots a day apart."""
    sim = start_sim(netns, workdir, "--profile", "chromecast", "--field-time-scale", "10000")
    try:
        def reboots():
            return [f for f in sim.frames() if f.get("event") == "fault" and f.get("kind") == "daily-reboot"]
        wait_until(lambda: len(reboots()) >= 2, 20, "two daily reboots")
        first, second = (datetime.fromisoformat(f["time"].replace("Z", "+00:00")) for f in reboots()[:2])
        gap = (second - first).total_seconds()
        # The next reboot is drawn anew in the next day's window: a day ± the window apart.
        assert 8.64 - 0.36 - 0.2 <= gap <= 8.64 + 0.36 + 0.2, (first, second)
    finally:
        assert sim.stop() == 0, sim.log_text()


@pytest.fixture
def clip_server(netns, workdir):
    """A 3 s H.264 MP4 made with ffmpeg, served on 127.0.0.1:8765 in the namespace."""
    path = os.path.join(workdir, "clip.mp4")
    subprocess.run(["ffmpeg", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=duration=3:size=320x240:rate=25",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart", path], check=True, timeout=120)
    server = subprocess.Popen(netns.command(PYTHON, "-m", "http.server", "8765", "--bind", "127.0.0.1", "--directory", workdir),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    yield "http://127.0.0.1:8765/clip.mp4"
    server.terminate()
    server.wait(timeout=10)


def test_a_local_clip_ends_at_its_own_length_not_the_senders_hint(netns, workdir, clip_server):
    sim = start_sim(netns, workdir)
    try:
        wait_until(lambda: netns.run("curl", "-sf", "-o", "/dev/null", clip_server).returncode == 0, 10, "the clip server")
        seen = client(netns, sim, "play", clip_server, "150", "20")
        assert seen["duration"] == pytest.approx(3.0, abs=0.1), seen
        assert seen["finished_after"] is not None and 2.5 <= seen["finished_after"] <= 4.5, seen
        checked = [f for f in sim.frames() if f.get("event") == "mediaChecked"]
        assert checked and checked[-1].get("duration") == pytest.approx(3.0, abs=0.1), checked
    finally:
        assert sim.stop() == 0, sim.log_text()
