"""catt 0.13 (unmodified, from PyPI) against `castline sim`: it reads eureka_info on 8008/8443
first, then speaks CASTV2 on 8009."""
import os
import subprocess
import sys

import pytest

from conftest import REPO, Simulator

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

CATT = os.path.join(os.path.dirname(os.environ.get("CASTLINE_CONFORMANCE_PYTHON", os.path.join(REPO, ".venv", "bin", "python"))), "catt")


@pytest.fixture
def launching_sim(netns, workdir):
    """The simulator as `castline sim` runs by default: a real device's app start-up time (1 s
    from LAUNCH to the app). catt depends on it: with an instant LAUNCH reply, pychromecast's two
    threads write to its TLS socket at once (see torn_write) in most runs (13 of 20 measured; 0
    of 20 with the delay)."""
    simulator = Simulator(netns, workdir, extra=["--no-mdns"], launch_delay=None)
    yield simulator
    assert simulator.stop() == 0, simulator.log_text()


def catt(netns, *args, timeout=60):
    result = netns.run(CATT, "-d", "127.0.0.1", *args, timeout=timeout)
    return result


def torn_write(result, sim, mark):
    """catt failed on pychromecast's known race (home-assistant-libs/pychromecast#1030): its
    socket thread and the caller's thread write to the one TLS socket at once (send_message takes
    no lock), the records interleave, and the device sees a record it cannot decrypt and closes
    the connection. True only when both sides show exactly that: catt's write error and the
    simulator's frame log naming the bad record (a clear error, the connection closed, nothing
    else lost)."""
    if result.returncode == 0 or "EOF occurred in violation of protocol" not in result.stderr:
        return False
    return any(f["event"] == "frameError" and "BAD_DECRYPT" in f.get("error", "") for f in sim.frames()[mark:])


def catt_cast(netns, sim, url, attempts=3):
    """`catt cast`, tried again (at most `attempts` times) only after pychromecast's torn write."""
    for _ in range(attempts):
        mark = len(sim.frames())
        result = catt(netns, "cast", url)
        if not torn_write(result, sim, mark):
            return result
    return result


def serve_media(netns, workdir):
    """A tiny HTTP server in the namespace so catt (yt-dlp) sees a direct video link."""
    media = os.path.join(workdir, "media")
    os.makedirs(media, exist_ok=True)
    with open(os.path.join(media, "clip.mp4"), "wb") as f:
        f.write(b"\x00\x00\x00\x18ftypmp42" + bytes(64))
    return subprocess.Popen(netns.command(sys.executable, "-m", "http.server", "8099", "--bind", "127.0.0.1",
                                          "--directory", media), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_catt_cast_status_pause_stop(netns, launching_sim, workdir):
    sim = launching_sim
    server = serve_media(netns, workdir)
    try:
        url = "http://127.0.0.1:8099/clip.mp4"
        cast = catt_cast(netns, sim, url)
        assert cast.returncode == 0, cast.stdout + cast.stderr
        status = catt(netns, "status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert "State: PLAYING" in status.stdout or "State: BUFFERING" in status.stdout, status.stdout
        pause = catt(netns, "pause")
        assert pause.returncode == 0, pause.stdout + pause.stderr
        paused = catt(netns, "status")
        assert "State: PAUSED" in paused.stdout, paused.stdout
        stop = catt(netns, "stop")
        assert stop.returncode == 0, stop.stdout + stop.stderr
        listing = sim.control({"command": "list"})
        assert listing["ok"]
        state = listing["devices"][0]["state"]
        assert not state.get("runningApp"), state
    finally:
        server.terminate()
        server.wait(timeout=5)

    frames = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "in"]
    loads = [f for f in frames if f.get("type") == "LOAD"]
    assert loads and loads[0]["payload"]["media"]["contentId"] == url, loads
