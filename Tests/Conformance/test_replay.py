"""Record and replay: `castline capture` records a session with one `castline sim` while
pychromecast launches the Default Media Receiver, loads a clip and pauses it; a second
`castline sim --replay` of that capture then shows castline (`status --follow`) and pychromecast
the same device (identity, eureka_info) and the same statuses (app id, content id, player-state
sequence) as the original run, from the recording. Everything runs in the test's namespace."""
import json
import os
import signal
import subprocess
import urllib.request

import pytest

from conftest import PYTHON, CLIENTS, Simulator, castline_binary, run_client, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

CLIP = "http://media.invalid/castline/replay.mp4"


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def folded(values):
    out = []
    for value in values:
        if not out or out[-1] != value:
            out.append(value)
    return out


def media_states(frames):
    """Player states of the MEDIA_STATUS frames received, repeats folded."""
    return folded([s["playerState"] for f in frames if f.get("event") == "frame" and f["direction"] == "in"
                   and f.get("type") == "MEDIA_STATUS" for s in f["payload"].get("status", [])])


def drive_fault_free(netns, sim, path):
    device = sim.device
    return run_client(netns, "pychromecast_replay.py", "127.0.0.1", str(device["castPort"]), device["uuid"], "drive", "0")


def drive_with_a_drop(netns, sim, path):
    """Play, then every connection drops (a network outage of 1 s; the app plays on), then,
    once the capture has rejoined, pause from a new pychromecast."""
    device = sim.device
    args = ("127.0.0.1", str(device["castPort"]), device["uuid"])
    played = run_client(netns, "pychromecast_replay.py", *args, "play", "0")
    wait_until(lambda: "PLAYING" in media_states(read_lines(path)), 10, "the capture to see PLAYING")
    sim.control({"command": "outage", "device": 0, "downFor": 1})

    def rejoined():
        lines = read_lines(path)
        closed = [i for i, f in enumerate(lines) if f["event"] == "closed"]
        return closed and "PLAYING" in media_states(lines[closed[0]:])
    wait_until(rejoined, 30, "the capture to reconnect and see PLAYING again")
    paused = run_client(netns, "pychromecast_replay.py", *args, "pause", "0")
    return {"reached_playing": played["reached_playing"], "reached_paused": paused["reached_paused"],
            "content_ids": played["content_ids"], "app_ids": played["app_ids"], "states": played["states"] + paused["states"]}


def capture_session(netns, workdir, sim, drive=drive_fault_free, extra=()):
    path = os.path.join(workdir, "capture.jsonl")
    device = sim.device
    capture = subprocess.Popen(netns.command(castline_binary(), "capture", "--device", f"127.0.0.1:{device['castPort']}",
                                             "--for", "60", *extra, path),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # castline watches the original run as it will watch the replay: `status --follow`.
    follow = subprocess.Popen(netns.command(*follow_argv(device["castPort"], 60)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: os.path.exists(path) and any(f.get("type") == "RECEIVER_STATUS" for f in read_lines(path)), 20,
                   "the capture to join the device")
        driven = drive(netns, sim, path)
        wait_until(lambda: "PAUSED" in media_states(read_lines(path)), 10, "the capture to see PAUSED")
    finally:
        for process in (capture, follow):
            process.send_signal(signal.SIGINT)
        out, err = capture.communicate(timeout=20)
        followed, follow_err = follow.communicate(timeout=20)
    assert capture.returncode == 0, err
    assert follow.returncode == 0, follow_err
    return path, driven, castline_view([json.loads(line) for line in followed.splitlines() if line.startswith("{")])


def follow_argv(port, seconds):
    return [castline_binary(), "status", "--device", f"127.0.0.1:{port}", "--direct", "--follow", "--json", "--for", str(seconds)]


def lasting(view):
    return folded([entry for entry in view if entry[0] != "LOADING"])


def castline_view(lines):
    """What castline showed: (state, appId, contentId) per change, repeats folded."""
    return folded([(s.get("state"), s.get("appId"), s.get("contentId")) for s in lines])


def castline_follow(netns, port, seconds):
    result = netns.run(*follow_argv(port, seconds), timeout=seconds + 30)
    assert result.returncode == 0, result.stderr
    return castline_view([json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")])


def test_capture_then_replay_shows_the_same_device_and_statuses(netns, workdir, sim):
    original_uuid, original_name = sim.device["uuid"], sim.device["name"]
    path, driven, castline_original = capture_session(netns, workdir, sim)
    assert driven["reached_playing"] and driven["reached_paused"], driven
    lines = read_lines(path)
    assert lines[0]["event"] == "capture" and lines[-1]["event"] == "end", (lines[0], lines[-1])
    assert lines[0]["device"]["id"] == original_uuid and lines[0]["eurekaInfo"]["name"] == original_name, lines[0]
    frames = [f for f in lines if f["event"] == "frame"]
    assert all(isinstance(f["offset"], float) for f in frames)
    recorded_states = media_states(frames)
    assert recorded_states[-2:] == ["PLAYING", "PAUSED"], recorded_states
    recorded_apps = folded([a["appId"] for f in frames if f.get("type") == "RECEIVER_STATUS"
                            for a in f["payload"]["status"].get("applications", [])])
    assert "CC1AD845" in recorded_apps, recorded_apps
    recorded_uptime = lines[0]["eurekaInfo"]["uptime"]
    assert sim.stop() == 0

    replay_dir = os.path.join(workdir, "replay")
    os.mkdir(replay_dir)
    replayed = Simulator(netns, replay_dir, extra=["--no-mdns", "--replay", path])
    try:
        assert replayed.device["uuid"] == original_uuid and replayed.device["name"] == original_name, replayed.ready
        probe = netns.run(PYTHON, "-c", "import urllib.request,sys;"
                          "sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:8008/setup/eureka_info', timeout=5).read().decode())")
        assert json.loads(probe.stdout)["uptime"] == recorded_uptime, probe.stdout   # the recorded document, not a live one

        # castline: a following session on the replayed device sees the recorded session.
        seen = castline_follow(netns, replayed.device["castPort"], 6)
        # castline's follower shows the state it reads on each change, so a state that lasted
        # under a millisecond (LOADING: IDLE with the media, right before BUFFERING) shows in one
        # run and not in another; every other change is compared.
        assert lasting(seen) == lasting(castline_original), (seen, castline_original)
        assert [state for state, _, _ in seen][-3:] == ["BUFFERING", "PLAYING", "PAUSED"], seen
        assert seen[-1][1:] == ("CC1AD845", CLIP), seen

        # pychromecast: the same, through its own connection and requests.
        observed = run_client(netns, "pychromecast_replay.py", "127.0.0.1", str(replayed.device["castPort"]), original_uuid,
                              "observe", "10")
        # The whole sequence, including pychromecast's own UNKNOWN before the first status and
        # after it disconnects, as in the original run.
        assert observed["states"] == driven["states"], (observed, driven)
        assert folded([s for s in driven["states"] if s != "UNKNOWN"]) == recorded_states, (driven, recorded_states)
        assert observed["content_ids"] == driven["content_ids"] == [CLIP], (observed, driven)
        assert observed["app_ids"] == driven["app_ids"], (observed, driven)

        # A request the capture never made: the standard model answers, the frame log says so.
        volume = netns.run(castline_binary(), "volume", "30", "--device", f"127.0.0.1:{replayed.device['castPort']}", "--direct",
                           timeout=60)
        assert volume.returncode == 0, volume.stderr
        log = replayed.frames()
        assert any(f["event"] == "replayed" for f in log), "no request was answered from the recording"
        unrecorded = [f for f in log if f["event"] == "unrecorded"]
        assert any(f["type"] == "SET_VOLUME" for f in unrecorded), unrecorded
        assert not any(f["type"] in ("GET_STATUS", "LAUNCH", "LOAD", "PAUSE") for f in unrecorded), unrecorded
    finally:
        assert replayed.stop() == 0, replayed.log_text()


def test_a_drop_in_the_capture_is_replayed_and_the_session_goes_on(netns, workdir, sim):
    path, driven, castline_original = capture_session(netns, workdir, sim, drive=drive_with_a_drop)
    assert driven["reached_playing"] and driven["reached_paused"], driven
    lines = read_lines(path)
    closed = [i for i, f in enumerate(lines) if f["event"] == "closed"]
    assert closed and closed[0] < len(lines) - 3, "the drop is not in the capture"
    assert media_states(lines)[-2:] == ["PLAYING", "PAUSED"], media_states(lines)
    paused_at = max(f["offset"] for f in lines if f.get("type") == "MEDIA_STATUS"
                    and any(s["playerState"] == "PAUSED" for s in f["payload"]["status"]))
    assert sim.stop() == 0

    replay_dir = os.path.join(workdir, "replay")
    os.mkdir(replay_dir)
    replayed = Simulator(netns, replay_dir, extra=["--no-mdns", "--replay", path])
    try:
        port = replayed.device["castPort"]
        seen = castline_follow(netns, port, int(paused_at) + 6)
        media_seen = folded([entry for entry in lasting(seen) if entry[0] in ("BUFFERING", "PLAYING", "PAUSED")])
        media_original = folded([entry for entry in lasting(castline_original) if entry[0] in ("BUFFERING", "PLAYING", "PAUSED")])
        assert media_seen == media_original, (seen, castline_original)
        assert seen[-1] == ("PAUSED", "CC1AD845", CLIP), seen
        log = replayed.frames()
        assert any(f["event"] == "replayedDrop" for f in log), "the recorded drop was not replayed"

        observed = run_client(netns, "pychromecast_replay.py", "127.0.0.1", str(port), replayed.device["uuid"], "observe",
                              str(int(paused_at) + 10))
        assert [s for s in observed["states"] if s in ("PLAYING", "PAUSED")][-2:] == ["PLAYING", "PAUSED"], observed
        assert observed["content_ids"] == [CLIP] and observed["app_ids"] == ["CC1AD845"], observed
    finally:
        assert replayed.stop() == 0, replayed.log_text()


def test_bad_captures_and_unreachable_devices_are_clear_errors(netns, workdir):
    missing = netns.run(castline_binary(), "sim", "--no-mdns", "--replay", os.path.join(workdir, "none.jsonl"), timeout=30)
    assert missing.returncode == 64 and "cannot read" in missing.stderr, missing.stderr
    not_capture = os.path.join(workdir, "frames.jsonl")
    with open(not_capture, "w") as f:
        f.write('{"event":"frame","offset":0}\nnot json\n')
    refused = netns.run(castline_binary(), "sim", "--no-mdns", "--replay", not_capture, timeout=30)
    assert refused.returncode == 64 and "line 2 is not a JSON object" in refused.stderr, refused.stderr
    path = os.path.join(workdir, "nothing.jsonl")
    unreachable = netns.run(castline_binary(), "capture", "--device", "127.0.0.1:1", "--for", "5", path, timeout=30)
    assert unreachable.returncode == 3 and "connection refused" in unreachable.stderr, unreachable.stderr
    lines = read_lines(path)
    assert [f["event"] for f in lines] == ["capture", "end"] and lines[1]["reason"].startswith("connect failed"), lines
