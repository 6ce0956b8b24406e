"""pychromecast 14 (unmodified, from PyPI) against `castline sim` as it runs by default (a real
device's 1 s app start-up: an instant LAUNCH reply makes pychromecast's two threads write to its
TLS socket at once, pychromecast#1030)."""
import pytest

from conftest import Simulator, run_client

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")


@pytest.fixture
def default_sim(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--no-mdns"], launch_delay=None)
    yield simulator
    assert simulator.stop() == 0, simulator.log_text()


def test_pychromecast_play_pause_seek_volume_quit(netns, default_sim):
    sim = default_sim
    device = sim.device
    seen = run_client(netns, "pychromecast_flow.py", device["address"], str(device["castPort"]), device["uuid"])
    assert seen["connected"] is True
    assert seen["friendly_name"] == "castline sim"
    assert seen["initial_app"] is None
    assert seen["app_after_play"] == "CC1AD845"
    assert seen["reached_playing"], seen
    assert seen["title"] == "Big Buck Bunny"
    assert seen["content_type"] == "video/mp4"
    assert seen["content_id"] == "http://media.invalid/castline/big-buck-bunny.mp4"
    assert seen["reached_paused"], seen
    assert seen["seek_ok"], seen
    assert abs(seen["current_time_after_seek"] - 42.5) < 0.01
    assert seen["volume_ok"], seen
    assert seen["quit_ok"], seen
    assert seen["app_after_quit"] is None

    frames = [f for f in sim.frames() if f["event"] == "frame"]
    inbound = [(f["namespace"].rsplit(".", 1)[-1], f.get("type")) for f in frames if f["direction"] == "in"]
    for expected in [("connection", "CONNECT"), ("receiver", "LAUNCH"), ("media", "LOAD"), ("media", "PAUSE"),
                     ("media", "SEEK"), ("receiver", "SET_VOLUME"), ("receiver", "STOP")]:
        assert expected in inbound, f"{expected} not in the frame log: {inbound}"
