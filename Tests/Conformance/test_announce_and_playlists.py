"""Announcements and playlists, end to end. Announcements: another sender (pychromecast) puts the
simulator in a state, `castline announce` plays a chime, and the simulator's own state (control
socket `list`, never castline's view) shows the chime at its volume during, and the media,
position, subtitle track, pause, queue and volume afterwards. Playlists: a folder job loops in
order, a long M3U moves a window along, the CLI casts several files as one queue."""
import json
import os
import subprocess
import time

import pytest

from conftest import Simulator, castline_binary, run_client, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

BASE = "http://media.invalid"   # never fetched: the simulator checks loopback media only
CHIME = f"{BASE}/chime.mp3"
RULES = {"mediaRules": [{"contentId": "*chime*", "duration": 3}, {"contentId": "*.mp4", "duration": 600}]}


def simulator(netns, workdir, devices=1):
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump(RULES, f)
    return Simulator(netns, workdir, extra=["--no-mdns", "--config", config, "--devices", str(devices)])


def state(sim, index=0):
    return sim.control({"command": "list"})["devices"][index]["state"]


def setup(netns, sim, mode, index=0):
    device = sim.ready["devices"][index]
    return run_client(netns, "media_setup.py", device["address"], str(device["castPort"]), device["uuid"], mode, BASE)


class Shown:
    """What a device shows, read from the simulator at each poll: the media statuses seen, and the
    content names in order, each change once."""

    def __init__(self, sim):
        self.sim = sim
        self.names = []
        self.statuses = []

    def poll(self):
        media = state(self.sim).get("media") or {}
        self.statuses.append(media)
        name = media.get("contentId", "").rsplit("/", 1)[-1]
        if name and (not self.names or self.names[-1] != name):
            self.names.append(name)
        return self.names


def announce(netns, *args):
    return subprocess.Popen(netns.command(castline_binary(), "announce", CHIME, *args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process):
    out, err = process.communicate(timeout=90)
    return process.returncode, out, err


@pytest.fixture
def sim(netns, workdir):
    simulator_ = simulator(netns, workdir)
    yield simulator_
    assert simulator_.stop() == 0


def test_a_movie_with_subtitles_comes_back_at_its_place_tracks_and_volume(netns, sim):
    before = setup(netns, sim, "movie")
    assert before["tracks"] == [1] and before["time"] >= 90, before
    process = announce(netns, "--device", "127.0.0.1", "--volume", "70")
    during = wait_until(lambda: (lambda s: s if (s.get("media") or {}).get("contentId") == CHIME else None)(state(sim)), 20,
                        "the chime playing")
    assert abs(during["volume"]["level"] - 0.70) < 0.005, during["volume"]
    code, out, err = finish(process)
    assert code == 0, (out, err)
    assert "restored" in out and "not restored" not in out, out
    after = state(sim)
    media = after["media"]
    assert media["contentId"] == f"{BASE}/movie.mp4" and media["playerState"] == "PLAYING", media
    assert media["currentTime"] >= 90, media
    assert media["activeTrackIds"] == [1], media
    assert abs(after["volume"]["level"] - 0.35) < 0.005 and after["app"]["appId"] == "CC1AD845", after


def test_paused_media_comes_back_paused(netns, sim):
    setup(netns, sim, "paused")
    position = state(sim)["media"]["currentTime"]
    code, out, err = finish(announce(netns, "--device", "127.0.0.1", "--volume", "70", "--json"))
    assert code == 0, (out, err)
    answer = json.loads(out.splitlines()[-1])
    assert answer["restored"] is True and answer["seconds"] >= 3, answer
    media = state(sim)["media"]
    assert media["playerState"] == "PAUSED" and abs(media["currentTime"] - position) < 1 and media["activeTrackIds"] == [1], media


def test_a_queue_comes_back_at_its_item_with_its_repeat_mode(netns, sim):
    setup(netns, sim, "queue")
    code, out, err = finish(announce(netns, "--device", "127.0.0.1"))
    assert code == 0, (out, err)
    media = state(sim)["media"]
    assert media["itemCount"] == 3 and media["contentId"] == f"{BASE}/two.mp4", media
    assert media["repeatMode"] == "REPEAT_ALL" and media["playerState"] == "PLAYING", media


def test_an_app_without_media_status_is_not_restored_exit_5_and_the_volume_is(netns, sim):
    setup(netns, sim, "app")
    code, out, err = finish(announce(netns, "--device", "127.0.0.1", "--volume", "80"))
    assert code == 5, (code, out, err)
    assert "not restored" in out and "reports no media status" in out, out
    after = state(sim)
    assert abs(after["volume"]["level"] - 0.35) < 0.005, after["volume"]
    assert after["app"] is None or after["app"]["isIdleScreen"], "the device is left idle, not in the chime's app"


def test_an_idle_device_is_left_idle_with_its_volume(netns, sim):
    device = sim.ready["devices"][0]
    code, out, err = finish(announce(netns, "--device", "127.0.0.1", "--volume", "60"))
    assert code == 0, (out, err)
    after = state(sim)
    assert after["media"] is None or after["media"]["playerState"] == "IDLE", after
    assert after["app"] is None or after["app"]["isIdleScreen"], after
    assert abs(after["volume"]["level"] - 1.0) < 0.005, after["volume"]


def test_five_devices_one_dropped_mid_announcement_the_other_four_restore(netns, workdir):
    sim = simulator(netns, workdir, devices=5)
    try:
        names = [d["name"] for d in sim.ready["devices"]]
        addresses = [f"{d['address']}:{d['castPort']}" for d in sim.ready["devices"]]
        for address in addresses:
            cast = netns.run(castline_binary(), "cast", f"{BASE}/movie.mp4", "--device", address, "--start", "120", timeout=60)
            assert cast.returncode == 0, cast.stderr
        config = os.path.join(workdir, "devices.yaml")
        with open(config, "w") as f:
            f.write("devices:\n" + "".join(f"  - {{name: \"{d['name']}\", host: {d['address']}, port: {d['castPort']}}}\n"
                                           for d in sim.ready["devices"]))
        process = announce(netns, "--config", config, "--device", "castline sim*", "--volume", "70", "--json")
        try:
            wait_until(lambda: all((state(sim, i).get("media") or {}).get("contentId") == CHIME for i in range(5)), 20,
                       "the chime on all five")
        except AssertionError:
            process.kill()
            raise AssertionError(process.communicate(timeout=10))
        assert sim.control({"command": "drop", "device": names[2]})["ok"]
        code, out, err = finish(process)
        answers = {a["device"]: a for a in map(json.loads, out.splitlines()) if a.get("device")}
        for i in (0, 1, 3, 4):
            media = state(sim, i)["media"]
            assert media["contentId"] == f"{BASE}/movie.mp4" and media["currentTime"] >= 120, (i, media, out, err)
            assert answers[names[i]]["restored"] is True, answers[names[i]]
    finally:
        assert sim.stop() == 0


def media_files(workdir, folder, names):
    """Real (tiny) audio files, written at test time: a second of silence as 8 kHz mono WAV, so
    whatever the simulator checks of a file it fetches, these are media."""
    import wave
    path = os.path.join(workdir, folder)
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o755)
    for name in names:
        with wave.open(os.path.join(path, name), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(b"\0\0" * 8000)
    return path


def test_a_playlist_job_of_a_folder_loops_in_order(netns, workdir):
    from hub import Hub
    folder = media_files(workdir, "loop", ["b.wav", "a.wav", "c.wav"])
    with open(os.path.join(folder, "notes.txt"), "w") as f:
        f.write("not media: left out of the playlist")
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"mediaRules": [{"contentId": "*.wav", "duration": 2}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: loop
    devices: ["*"]
    media: {{url: "{folder}", repeat: all}}
""")
    try:
        shown = Shown(sim)
        wait_until(lambda: len(shown.poll()) >= 4, 30, "four items played")
        seen = shown.names
        assert seen[:4] == ["1-a.wav", "2-b.wav", "3-c.wav", "1-a.wav"], seen
        assert state(sim)["media"]["itemCount"] == 3 and state(sim)["media"]["repeatMode"] == "REPEAT_ALL"
    finally:
        hub.stop()
        assert sim.stop() == 0


def test_a_long_m3u_playlist_is_loaded_a_window_at_a_time(netns, workdir):
    """60 items, 50 on the device at most: the window moves along as the device plays, and the
    playlist wraps to its first item."""
    from hub import Hub
    folder = media_files(workdir, "long", ["tone.wav"])
    playlist = os.path.join(folder, "long.m3u")
    with open(playlist, "w") as f:
        f.write("#EXTM3U\n" + "".join(f"#EXTINF:1,item {i}\ntone.wav\n" for i in range(60)))
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"mediaRules": [{"contentId": "*.wav", "duration": 0.3}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: long
    devices: ["*"]
    media: {{url: "{playlist}", repeat: all}}
""")
    try:
        shown = Shown(sim)
        wait_until(lambda: len(shown.poll()) > 61, 60, "the playlist played round once", interval=0.05)
        counts, seen = [media.get("itemCount", 0) for media in shown.statuses], shown.names
        assert max(counts) <= 50, (max(counts), [l for l in hub.log().splitlines() if "playlist" in l][:10])
        assert seen[:3] == ["1-tone.wav", "2-tone.wav", "3-tone.wav"] and "60-tone.wav" in seen, seen
        assert seen[seen.index("60-tone.wav") + 1] == "1-tone.wav", seen
        assert "playlist window extended" in hub.log()
    finally:
        hub.stop()
        assert sim.stop() == 0


def test_a_playlist_job_from_an_m3u_url_resolves_its_entries_against_the_url(netns, workdir):
    """An M3U served over HTTP (relative and absolute entries, comments): the job fetches it, loads
    its three items as one queue, and the simulator fetches each item from the resolved URL."""
    import sys
    from hub import Hub
    folder = media_files(workdir, "served", ["a.wav", "b.wav"])
    os.makedirs(os.path.join(folder, "more"), exist_ok=True)
    media_files(os.path.join(workdir, "served"), "more", ["c.wav"])
    with open(os.path.join(folder, "list.m3u"), "w") as f:
        f.write("#EXTM3U\n#EXTINF:1,first\na.wav\n\n# a comment\nmore/c.wav\nhttp://127.0.0.1:8097/b.wav\n")
    server = subprocess.Popen(netns.command(sys.executable, "-m", "http.server", "8097", "--bind", "127.0.0.1", "--directory", folder),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"mediaRules": [{"contentId": "*.wav", "duration": 2}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    try:
        wait_until(lambda: netns.run("curl", "-sf", "-o", "/dev/null", "http://127.0.0.1:8097/list.m3u", timeout=5).returncode == 0,
                   10, "the playlist server")
        hub = Hub(netns, sim, workdir, jobs="""jobs:
  - name: remote
    devices: ["*"]
    media: {url: "http://127.0.0.1:8097/list.m3u", repeat: all}
""")
        try:
            shown = Shown(sim)
            wait_until(lambda: len(shown.poll()) >= 3, 30, "three items played")
            media = state(sim)["media"]
            assert media["itemCount"] == 3 and media["repeatMode"] == "REPEAT_ALL", media
            assert shown.names[:3] == ["a.wav", "c.wav", "b.wav"], shown.names
            ids = [s.get("contentId") for s in shown.statuses if s.get("contentId")]
            assert "http://127.0.0.1:8097/more/c.wav" in ids, sorted(set(ids))
        finally:
            hub.stop()
    finally:
        server.terminate()
        server.wait(timeout=10)
        assert sim.stop() == 0


def test_cast_several_files_as_one_queue_with_repeat(netns, workdir):
    """`castline cast a b c --repeat all`: one QUEUE_LOAD, the files served by the command until
    Ctrl-C, which stops the media; the API takes a folder the same way."""
    import signal as signals
    from hub import Hub
    folder = media_files(workdir, "three", ["a.wav", "b.wav", "c.wav"])
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"mediaRules": [{"contentId": "*.wav", "duration": 1}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    try:
        files = [os.path.join(folder, n) for n in ("c.wav", "a.wav", "b.wav")]
        process = subprocess.Popen(netns.command(castline_binary(), "cast", *files, "--repeat", "all", "--device", "127.0.0.1", "--direct"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        shown = Shown(sim)
        wait_until(lambda: len(shown.poll()) >= 4, 20, "the queue going round")
        seen = shown.names
        assert seen[:4] == ["1-c.wav", "2-a.wav", "3-b.wav", "1-c.wav"], seen
        assert state(sim)["media"]["repeatMode"] == "REPEAT_ALL"
        process.send_signal(signals.SIGINT)
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0, (out, err)
        wait_until(lambda: (state(sim).get("media") or {}).get("playerState") in (None, "IDLE"), 10, "the media stopped")

        hub = Hub(netns, sim, workdir)
        try:
            status, body, _ = hub.post(f"/v1/devices/{sim.ready['devices'][0]['uuid']}/cast", {"media": folder, "repeat": "off"})
            assert status == 200, body
            media = state(sim)["media"]
            assert media["itemCount"] == 3 and media["contentId"].endswith("1-a.wav") and media["repeatMode"] == "REPEAT_OFF", media
        finally:
            hub.stop()
    finally:
        assert sim.stop() == 0


def test_a_schedule_switches_at_its_boundaries(netns, workdir):
    """Two entries a few seconds ahead (UTC, to the second): each switch lands within a second of
    its boundary, read from the simulator's own state; after the last one the device is idle."""
    from hub import Hub
    folder = media_files(workdir, "day", ["morning.wav", "noon.wav"])
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"mediaRules": [{"contentId": "*.wav", "duration": 600}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    start = int(time.time()) + 6
    at = lambda t: time.strftime("%H:%M:%S", time.gmtime(t))
    hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: day
    devices: ["*"]
    timezone: UTC
    schedule:
      - {{days: daily, from: "{at(start)}", to: "{at(start + 5)}", media: "{folder}/morning.wav"}}
      - {{days: daily, from: "{at(start + 5)}", to: "{at(start + 10)}", media: "{folder}/noon.wav"}}
""")
    try:
        changes = []

        def watch():
            media = state(sim).get("media") or {}
            app = state(sim).get("app")
            shown = media.get("contentId", "").rsplit("/", 1)[-1] if app and not app.get("isIdleScreen") else None
            if shown == "":
                return False   # an app launched, its media not loaded yet: not a change of what shows
            if not changes or changes[-1][1] != shown:
                changes.append((time.time(), shown))
            return len(changes) >= 4

        try:
            wait_until(watch, 30, "three switches", interval=0.05)
        except AssertionError:
            raise AssertionError((changes, start, hub.log()[-3000:]))
        shown = [name for _, name in changes]
        assert shown[:4] == [None, "morning.wav", "noon.wav", None], changes
        for (when, _), boundary in zip(changes[1:4], (start, start + 5, start + 10)):
            assert abs(when - boundary) <= 1.0, (when - boundary, changes)
        status, body, _ = hub.get("/v1/jobs/day")
        assert status == 200 and body["schedule"]["entry"] is None, body
    finally:
        hub.stop()
        assert sim.stop() == 0


def test_an_announce_job_runs_on_demand_and_at_its_time(netns, workdir):
    """An announce job over two devices, each playing a movie with subtitles at 35 %: `castline
    jobs run` plays the chime on both at 70 % and restores each (read from the simulator); its
    `at:` time a little ahead plays it again on its own within 2 s of the boundary, and the job's
    state shows that run's outcome and the next time."""
    from hub import Hub
    sim = simulator(netns, workdir, devices=2)
    try:
        for index in (0, 1):
            before = setup(netns, sim, "movie", index=index)
            assert before["tracks"] == [1], before
        due = int(time.time()) + 25
        at = time.strftime("%H:%M:%S", time.gmtime(due))
        hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: bell
    devices: ["*"]
    timezone: UTC
    announce: {{media: "{CHIME}", volume: 70, timeout: 30, at: ["{at}"]}}
""")
        try:
            volumes = []
            run = subprocess.Popen(netns.command(castline_binary(), "jobs", "run", "bell", "--api-socket", hub.socket),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            wait_until(lambda: all((state(sim, i).get("media") or {}).get("contentId") == CHIME
                                   and volumes.append(state(sim, i)["volume"]["level"]) is None for i in (0, 1)), 20, "the chime on both")
            assert all(abs(v - 0.70) < 0.005 for v in volumes[-2:]), volumes
            out, err = run.communicate(timeout=60)
            assert run.returncode == 0, (out, err, hub.log()[-3000:])
            assert out.count(": announced ") == 2 and "not restored" not in out, out
            for i in (0, 1):
                after = state(sim, i)
                media = after["media"]
                assert media["contentId"] == f"{BASE}/movie.mp4" and media["currentTime"] >= 90 and media["activeTrackIds"] == [1], media
                assert abs(after["volume"]["level"] - 0.35) < 0.005, after["volume"]

            # The timed run: the chime appears within 2 s of its time, then both come back.
            assert time.time() < due - 1, "the on-demand run took too long for the timed one to be checked"
            seen = wait_until(lambda: time.time() if (state(sim, 0).get("media") or {}).get("contentId") == CHIME else None,
                              due - time.time() + 10, "the timed chime", interval=0.05)
            assert abs(seen - due) <= 2.0, (seen - due, hub.log()[-3000:])

            def last_run():
                status, body, _ = hub.get("/v1/jobs/bell")
                assert status == 200, body
                last = body["announcement"].get("last")
                return body if last and last["at"].endswith(at + "Z") else None
            body = wait_until(last_run, 30, "the timed run's outcome in the job's state")
            assert body["announcement"]["last"]["restored"] == 2 and body["announcement"]["last"]["failed"] == 0, body
            assert body["announcement"]["next"].endswith(at + "Z") and body["announcement"]["next"] > body["announcement"]["last"]["at"], body
            assert sorted(d["device"] for d in body["devices"]) == sorted(d["name"] for d in sim.ready["devices"]), body
            for i in (0, 1):
                assert state(sim, i)["media"]["contentId"] == f"{BASE}/movie.mp4", state(sim, i)

            # An unknown job is 404.
            status, body, _ = hub.post("/v1/jobs/nothing/run")
            assert status == 404 and body["error"]["code"] == "unknown_job", body
        finally:
            hub.stop()
    finally:
        assert sim.stop() == 0
