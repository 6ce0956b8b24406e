"""Media a receiver could not play fails on `castline sim` as on a receiver: `castline cast`
reports the device's LOAD_FAILED readably (exit 4), pychromecast sees idle_reason ERROR, and
playable loopback media still plays. The media server and a silent port run in the test's
namespace; nothing leaves it."""
import os
import socket
import subprocess
import sys

import pytest

from conftest import PYTHON, CLIENTS, Simulator, castline_binary, run_client, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

PORT = 8097
SOURCE_NOT_SUPPORTED = "MEDIA_SRC_NOT_SUPPORTED (104): the device could not load the media"


@pytest.fixture
def media(netns):
    server = subprocess.Popen(netns.command(PYTHON, os.path.join(CLIENTS, "media_server.py"), str(PORT)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    probe = f"import socket; socket.create_connection(('127.0.0.1', {PORT}), 1).close()"
    wait_until(lambda: netns.run(sys.executable, "-c", probe).returncode == 0, 10, "the media server")
    yield f"http://127.0.0.1:{PORT}"
    server.kill()
    server.wait(timeout=5)


def cast(netns, url, *extra):
    # --direct: this process casts itself; a hub some other test left running is never asked.
    return netns.run(castline_binary(), "cast", url, "--device", "127.0.0.1", "--content-type", "video/mp4", "--direct", *extra,
                     timeout=60)


@pytest.mark.parametrize("path,why", [
    ("/missing.mp4", "HTTP 404"), ("/broken.mp4", "HTTP 500"), ("/page.mp4", "not media"),
])
def test_castline_reports_each_failure_readably(netns, sim, media, path, why):
    result = cast(netns, media + path)
    assert result.returncode == 4, (why, result.stdout, result.stderr)
    assert "LOAD_FAILED: " + SOURCE_NOT_SUPPORTED in result.stderr, (why, result.stderr)
    checked = [f for f in sim.frames() if f["event"] == "mediaChecked"]
    assert checked and checked[-1]["detailedErrorCode"] == 104, checked
    out = [f for f in sim.frames() if f["event"] == "frame" and f["direction"] == "out"]
    failed = [f for f in out if f.get("type") == "LOAD_FAILED"]
    assert failed and failed[-1]["payload"]["detailedErrorCode"] == 104, failed
    idle = [s for f in out if f.get("type") == "MEDIA_STATUS" for s in f["payload"]["status"]]
    assert any(s["playerState"] == "IDLE" and s.get("idleReason") == "ERROR" for s in idle), idle


def test_refused_hls_and_playable_media(netns, sim, media):
    refused = cast(netns, "http://127.0.0.1:1/clip.mp4")
    assert refused.returncode == 4 and "LOAD_FAILED: " + SOURCE_NOT_SUPPORTED in refused.stderr, refused.stderr
    hls = netns.run(castline_binary(), "cast", media + "/live/missing.m3u8", "--device", "127.0.0.1",
                    "--content-type", "application/x-mpegURL", "--direct", timeout=60)
    assert hls.returncode == 4, hls.stderr
    assert "HLS_NETWORK_MASTER_PLAYLIST (311): the device could not fetch the HLS playlist" in hls.stderr, hls.stderr
    ok = cast(netns, media + "/ok.mp4")
    assert ok.returncode == 0 and "PLAYING" in ok.stdout, ok.stdout + ok.stderr
    elsewhere = cast(netns, "http://media.invalid/clip.mp4")
    assert elsewhere.returncode == 0, elsewhere.stderr
    unchecked = [f for f in sim.frames() if f["event"] == "mediaNotChecked"]
    assert unchecked and unchecked[-1]["url"] == "http://media.invalid/clip.mp4", unchecked


def test_a_silent_media_server_fails_the_load_after_the_fetch_timeout(netns, workdir):
    listener = subprocess.Popen(netns.command(PYTHON, "-c", (
        "import socket, time\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 8096)); s.listen(8)\n"
        "print('ready', flush=True); time.sleep(120)\n")), stdout=subprocess.PIPE, text=True)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--media-fetch-timeout", "1"])
    try:
        assert listener.stdout.readline().strip() == "ready"
        result = cast(netns, "http://127.0.0.1:8096/clip.mp4")
        assert result.returncode == 4 and SOURCE_NOT_SUPPORTED in result.stderr, result.stderr
        checked = [f for f in sim.frames() if f["event"] == "mediaChecked"]
        assert checked and checked[-1]["result"] == "timeout", checked
    finally:
        sim.stop()
        listener.kill()
        listener.wait(timeout=5)


@pytest.mark.parametrize("path", ["/missing.mp4", "/page.mp4", None])
def test_pychromecast_sees_idle_reason_error(netns, sim, media, path):
    url = media + path if path else "http://127.0.0.1:1/clip.mp4"
    device = sim.device
    seen = run_client(netns, "pychromecast_load_failure.py", device["address"], str(device["castPort"]), device["uuid"], url)
    assert seen["reached_idle"], seen
    assert seen["player_state"] == "IDLE" and seen["idle_reason"] == "ERROR", seen
