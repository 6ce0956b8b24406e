"""Plugins that misbehave, against the real daemon (`castline run`) over its API socket and the
real simulator: a plugin cannot take castline down. Fixtures are the built TestPlugin*.so files."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import Simulator, castline_binary, wait_until
from hub import BUILD, ECHO_NS, Hub, api

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")


def fixture(name):
    return os.path.join(BUILD, f"libTestPlugin{name}.so")


@pytest.fixture
def sim1(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "1"])
    yield simulator
    assert simulator.stop() == 0


def channel_path(sim, namespace):
    uuid = sim.ready["devices"][0]["uuid"]
    return f"/v1/devices/{uuid}/channels/{namespace.replace(':', '%3A')}"


def test_the_start_up_scan_leaves_out_plugins_that_crash_or_hang_in_init(netns, sim1, workdir):
    hub = Hub(netns, sim1, workdir, plugins="{call_timeout: 1}",
              plugin_paths=[fixture("CrashesInInit"), fixture("HangsInInit")])
    try:
        log = hub.log()
        crashed = [line for line in log.splitlines() if "test-crashes-in-init" in line]
        assert any("crashed with signal 11 (SIGSEGV) in its init" in line and fixture("CrashesInInit") in line
                   for line in crashed), log[-3000:]
        hung = [line for line in log.splitlines() if "test-hangs-in-init" in line]
        assert any("its init did not return within 1 s" in line and fixture("HangsInInit") in line for line in hung), log[-3000:]
        # The daemon runs, and the plugins that came through work.
        status, body, _ = hub.post(channel_path(sim1, ECHO_NS), {"message": {"text": "still here"}, "app": "CA571E00"})
        assert status == 200 and body["reply"]["text"] == "still here", body
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]


def helper_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_an_isolated_channel_plugin_that_segfaults_is_restarted_and_the_daemon_goes_on(netns, sim1, workdir):
    hub = Hub(netns, sim1, workdir, plugins="{isolated: [test-crashes-in-channel], call_timeout: 5}",
              plugin_paths=[fixture("CrashesInChannel")])
    path = channel_path(sim1, "urn:x-cast:org.castline.test")
    try:
        status, body, _ = hub.post(path, {"message": {"do": "pid"}, "app": "CA571E00"})
        assert status == 200, body
        first = body["reply"]["pid"]
        assert first != hub.process.pid and helper_alive(first)
        status, body, _ = hub.post(path, {"message": {"do": "crash"}})
        assert status != 200, body
        assert "crashed with signal 11 (SIGSEGV)" in json.dumps(body), body
        # The daemon and its session go on.
        assert hub.process.poll() is None
        assert hub.connected() == 1
        log = hub.log()
        assert any("test-crashes-in-channel" in line and "SIGSEGV" in line and " ERROR " in line for line in log.splitlines()), log[-3000:]

        def restarted():
            status, body, _ = hub.post(path, {"message": {"do": "pid"}})
            return body["reply"]["pid"] if status == 200 else None
        wait_until(restarted, 20, "the plugin restarted and its channel answering again")
        second = restarted()
        assert second != first and helper_alive(second) and not helper_alive(first)
        status, body, _ = hub.post(path, {"message": {"do": "echo"}})
        assert status == 200 and body["reply"]["type"] == "PING", body
    finally:
        assert hub.stop() == 0, hub.log()[-3000:]
    assert not helper_alive(second), "the helper process outlived the daemon"


def unit_restart_seconds():
    """RestartSec= of configs/castline.service (what systemd waits before the restart)."""
    unit = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "configs", "castline.service")
    with open(unit) as f:
        lines = f.read().splitlines()
    assert "Restart=on-failure" in lines
    return float(next(line.split("=", 1)[1] for line in lines if line.startswith("RestartSec=")))


def test_an_in_process_crash_ends_the_daemon_and_a_restart_resumes_every_session(netns, workdir):
    """No systemd here (PID 1 is not systemd): the test does what the unit says, Restart=on-failure
    after RestartSec, and measures crash → every job's device PLAYING its same app session again."""
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "4"])
    devices = sim.ready["devices"]
    config = os.path.join(workdir, "castline.yaml")
    names = ["Plugin TV"] + [f"TV {i}" for i in range(1, len(devices))]
    log = os.path.join(workdir, "castline.jsonl")
    with open(config, "w") as f:
        f.write("devices:\n" + "".join(f"  - {{name: \"{n}\", host: {d['address']}, port: {d['castPort']}}}\n" for n, d in zip(names, devices)))
        f.write(f"""discovery: {{providers: [static]}}
channels: {{allowed_namespaces: ["urn:x-cast:org.castline.test"]}}
logging: {{rules: "info,CastChannel.*:warning", sinks: [{{type: json, options: {{path: {log}}}}}]}}
plugins: {{in_process: [test-crashes-in-channel]}}   # not castline's own: in its process only when the config says so
session: {{resume_file: {workdir}/resume.json}}
api: {{socket: {workdir}/api.sock}}
daemon: {{jobs_file: {workdir}/jobs.json}}
jobs:
  - name: wall
    devices: ["TV *"]
    media: {{url: "http://media.invalid/wall.mp4", title: Wall}}
""")

    runs = []
    crashed_pid = []

    def start():
        runs.append(os.path.join(workdir, f"daemon-{len(runs)}.stderr"))
        stderr = open(runs[-1], "w")
        return subprocess.Popen(netns.command(castline_binary(), "run", "--config", config, "--plugin-path", fixture("CrashesInChannel")),
                                stdout=subprocess.DEVNULL, stderr=stderr)

    def sessions():
        """App session id per job device while its media plays the job's URL, else None."""
        state = {i: d["state"] for i, d in enumerate(sim.control({"command": "list"})["devices"])}
        found = {}
        for i in range(1, len(devices)):
            media = state[i].get("media") or {}
            playing = media.get("playerState") == "PLAYING" and media.get("contentId") == "http://media.invalid/wall.mp4"
            found[i] = (state[i].get("app") or {}).get("sessionId") if playing else None
        return found

    daemon = start()
    try:
        wait_until(lambda: all(sessions().values()), 20, "the job playing on every device")
        before = sessions()
        socket_path = os.path.join(workdir, "api.sock")
        path = f"/v1/devices/{devices[0]['uuid']}/channels/urn%3Ax-cast%3Aorg.castline.test"
        status, body, _ = api(socket_path, "POST", path, {"message": {"do": "pid"}, "app": "CA571E00"})
        assert status == 200 and body["reply"]["pid"] == daemon.pid, body   # in process: the daemon's own pid
        try:
            api(socket_path, "POST", path, {"message": {"do": "crash"}})
        except OSError:
            pass   # the daemon died under the request
        daemon.wait(timeout=20)
        crashed_at = time.monotonic()
        crashed_pid.append(daemon.pid)
        assert daemon.returncode == -signal.SIGSEGV, daemon.returncode
        time.sleep(unit_restart_seconds())   # what systemd waits (RestartSec=)
        daemon = start()
        # Resumed: the new daemon's links connected and its job `playing` on every device (the
        # devices played throughout; castline was gone).
        def resumed():
            if not os.path.exists(socket_path):
                return False
            try:
                status, jobs, _ = api(socket_path, "GET", "/v1/jobs/wall")
                _, links, _ = api(socket_path, "GET", "/v1/devices")
            except OSError:
                return False
            connected = {d["id"] for d in links.get("devices", []) if d.get("link") == "connected"}
            states = {d["id"]: d["state"] for d in jobs.get("devices", [])} if status == 200 else {}
            return all(states.get(d["uuid"]) == "playing" and d["uuid"] in connected for d in devices[1:])
        wait_until(resumed, 30, "the restarted daemon's job playing on every device")
        took = time.monotonic() - crashed_at
        print(f"crash → restart (RestartSec={unit_restart_seconds():g}) → every session resumed, PLAYING: {took:.2f} s")
        assert took < unit_restart_seconds() + 10
        assert sessions() == before, "the same app sessions play: nothing was cast again"
        with open(runs[-1]) as f:
            restarted = f.read()
        # The restarted daemon found each cast still playing and kept it: no new cast.
        assert "waiting-for-device → playing" in restarted and "→ casting" not in restarted, restarted[-3000:]
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=20)
        sim.stop()
    # The logs say so: the crash handler's one record names the signal and the plugin's library,
    # and the crashed daemon's sessions end at its crash, not open over the new daemon's.
    first_pid = crashed_pid[0]
    query = netns.run(castline_binary(), "logs", "query", "--json", "--class", "CrashReporter", log)
    assert query.returncode == 0, query.stderr
    [crash] = [json.loads(line) for line in query.stdout.splitlines()]
    attributes = crash["attributes"]
    assert attributes["pid"] == first_pid and attributes["role"] == "daemon" and attributes["signal"] == "SIGSEGV", crash
    assert attributes["library"].endswith("/libTestPluginCrashesInChannel.so"), crash
    assert "libTestPluginCrashesInChannel.so" in attributes["backtrace"], crash
    stats = netns.run(castline_binary(), "logs", "stats", "--json", log)
    assert stats.returncode == 0, stats.stderr
    ended = [x for x in json.loads(stats.stdout)["sessions"] if (x.get("endReason") or "").startswith("daemon crashed")]
    assert len(ended) == len(devices), json.loads(stats.stdout)["sessions"]   # the first daemon's, one per device
    assert all(x["endReason"] == f"daemon crashed: SIGSEGV in libTestPluginCrashesInChannel.so (pid {first_pid})" for x in ended), ended
    assert all("end" in x for x in json.loads(stats.stdout)["sessions"]), "no session left open"
