"""Record and replay: `castline capture` records a session with one `castline sim` while
pychromecast launches the Default Media Receiver, loads a clip and pauses it; a second
`castline sim --replay` of that capture then shows castline (`status --follow`) and pychromecast
the same device (identity, eureka_info) and the same statuses (app id, content id, player-state
sequence) as the original run, from the recording. A capture built from a real device's identity
(Tests/Fixtures/real: its eureka_info answer and its TXT record) is served and advertised exactly
as the device did, and castline and pychromecast read it. Everything runs in the test's namespace."""
import json
import os
import re
import signal
import subprocess
import urllib.request

import pytest

from conftest import (PYTHON, CLIENTS, REPO, Simulator, castline_binary, run_client, start_avahi, stop_avahi,
                      wait_until)

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


REAL = os.path.join(REPO, "Tests", "Fixtures", "real")
# Each real TXT record with a real eureka_info answer of the same kind of device (video, audio).
GOLDEN_IDENTITIES = [
    ("txt-chromecast-2014.json", "eureka-info-chromecast-2022.json"),
    ("txt-google-home-mini-2020.json", "eureka-info-google-home-2018.json"),
    ("txt-shield-android-tv-2021.json", "eureka-info-chromecast-2022.json"),
    ("txt-nest-mini-2023.json", "eureka-info-google-home-2018.json"),
]


def golden(name):
    with open(os.path.join(REAL, name)) as f:
        return json.load(f)


def record_strings(fixture):
    """The fixture's TXT strings in the record's own order (avahi-browse lists them last first)."""
    return list(reversed(fixture["txt"])) if fixture["order"] == "avahi-browse" else list(fixture["txt"])


def golden_capture(path, txt_fixture, eureka_fixture):
    """A capture file as `castline capture` writes one, holding only the identity: the whole TXT
    record (`txtComplete`) and the eureka_info document."""
    txt = dict(entry.split("=", 1) for entry in record_strings(txt_fixture))
    header = {"time": "2026-01-01T00:00:00.000000Z", "event": "capture", "offset": 0.0, "version": 1, "redacted": False,
              "device": {"id": txt["id"], "name": txt["fn"], "model": txt["md"], "host": "192.0.2.42", "port": 8009,
                         "provider": "avahi"},
              "txt": txt, "txtComplete": True, "eurekaInfo": eureka_fixture["document"]}
    end = {"time": "2026-01-01T00:00:01.000000Z", "event": "end", "offset": 1.0, "reason": "duration", "frames": 0}
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n" + json.dumps(end) + "\n")
    return txt


def fetch_json(netns, url):
    probe = netns.run(PYTHON, "-c", "import ssl,sys,urllib.request;"
                      "c=ssl.create_default_context();c.check_hostname=False;c.verify_mode=ssl.CERT_NONE;"
                      "sys.stdout.write(urllib.request.urlopen(sys.argv[1],timeout=5,context=c).read().decode())", url)
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout)


def advertised_txt(netns, env, instance):
    """The TXT strings avahi resolves for `instance` (as avahi-browse lists them), or None."""
    result = subprocess.run(netns.command("avahi-browse", "-rpt", "_googlecast._tcp"), env=env, capture_output=True,
                            text=True, timeout=20)
    for line in result.stdout.splitlines():
        fields = line.split(";")
        if line.startswith("=") and len(fields) >= 10 and fields[3] == instance:
            return re.findall(r'"((?:[^"\\]|\\.)*)"', fields[9])
    return None


@pytest.mark.parametrize("txt_name,eureka_name", GOLDEN_IDENTITIES)
def test_a_real_identity_is_replayed_exactly_and_read_by_castline_and_pychromecast(netns, workdir, txt_name, eureka_name):
    txt_fixture, eureka_fixture = golden(txt_name), golden(eureka_name)
    document = eureka_fixture["document"]
    path = os.path.join(workdir, "identity.jsonl")
    txt = golden_capture(path, txt_fixture, eureka_fixture)
    avahi, env = start_avahi(netns, workdir)
    replayed = None
    try:
        replayed = Simulator(netns, workdir, env=env, extra=["--replay", path])
        device = replayed.device
        assert device["uuid"] == txt["id"] and device["name"] == txt["fn"], replayed.ready

        # eureka_info: the recorded document on both ports, byte for byte the same JSON.
        assert fetch_json(netns, f"http://127.0.0.1:{device['httpPort']}/setup/eureka_info") == document
        assert fetch_json(netns, f"https://127.0.0.1:{device['httpsPort']}/setup/eureka_info") == document

        # mDNS: avahi resolves the recorded record, string for string, in the record's order
        # (avahi-browse lists it last first), with nothing of the simulator's own added.
        instance = f"{txt['md'].replace(' ', '-')}-{txt['id']}"
        advertised = wait_until(lambda: advertised_txt(netns, env, instance), 15, f"avahi to resolve {instance}")
        assert list(reversed(advertised)) == record_strings(txt_fixture), (advertised, txt_fixture["txt"])

        # castline's discovery (the avahi plugin's TXT parser) reads it.
        discover = netns.run(castline_binary(), "discover", "--json", "--timeout", "5", env=env, timeout=60)
        assert discover.returncode == 0, discover.stderr
        found = [json.loads(line) for line in discover.stdout.splitlines() if line.startswith("{")]
        mine = [d for d in found if d["id"] == txt["id"]]
        assert len(mine) == 1, found
        assert mine[0]["name"] == txt["fn"] and mine[0]["model"] == txt["md"], mine
        assert mine[0]["capabilities"] == int(txt["ca"]), mine
        assert mine[0].get("status_text") == txt.get("rs"), mine

        # pychromecast's discovery (python-zeroconf, its own mDNS queries) reads it.
        seen = run_client(netns, "discover.py", "1")["devices"]
        assert [(d["uuid"].replace("-", ""), d["name"], d["model"]) for d in seen] == [(txt["id"], txt["fn"], txt["md"])], seen

        # castline's eureka_info client reads the recorded document: `castline capture` of the
        # replayed device records it whole and takes the device's name and id from it.
        again = os.path.join(workdir, "again.jsonl")
        capture = netns.run(castline_binary(), "capture", "--device", f"127.0.0.1:{device['castPort']}", "--for", "1",
                            "--no-redact", again, timeout=60)
        assert capture.returncode == 0, capture.stderr
        header = read_lines(again)[0]
        assert header["eurekaInfo"] == document, header
        assert header["device"]["name"] == document["name"], header
        assert header["device"]["id"] == document["ssdp_udn"].replace("-", "").lower(), header
    finally:
        if replayed:
            assert replayed.stop() == 0, replayed.log_text()
        stop_avahi(avahi)
