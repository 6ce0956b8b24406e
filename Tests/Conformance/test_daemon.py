"""End-to-end: `castline run --config` as systemd would run it (a real NOTIFY_SOCKET the test
listens on), against `castline sim`: a job casts, the device reboots and the job casts again,
SIGHUP reloads log rules, SIGTERM leaves the cast running and exits 0."""
import json
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import JSONLines, Simulator, castline_binary, wait_until
from hub import Hub, sim_devices

NETNS = pytest.mark.needs_root("a network namespace (ip netns)")

CONFIG = """
devices:
  - name: Lobby TV
    host: 127.0.0.1
discovery:
  providers: [static]
logging:
  rules: "{rules}"
session:
  reconnect: {{initial_delay: 0.1, max_delay: 0.5}}
daemon:
  on_stop: leave
jobs:
  - name: lobby-dashboard
    devices: ["Lobby*"]
    media: {{url: "http://media.invalid/dashboard.mp4", title: Dashboard}}
    retry_delay: 0.5
    check_interval: 2
"""


class NotifyListener:
    """The service manager's side of sd_notify: a datagram socket that collects the messages."""

    def __init__(self, path):
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(path)
        self.socket.settimeout(0.2)
        self.messages = []

    def wait_for(self, key, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.messages:
                if key in message:
                    return message
            try:
                data = self.socket.recv(4096).decode()
                self.messages.append(dict(line.split("=", 1) for line in data.splitlines() if "=" in line))
            except socket.timeout:
                pass
        raise AssertionError(f"no {key} from sd_notify within {timeout}s; got {self.messages}")

    def close(self):
        self.socket.close()


def sim_state(sim):
    return sim.control({"command": "list"})["devices"][0]["state"]


def playing_session(sim):
    state = sim_state(sim)
    media = state.get("media") or {}
    if media.get("playerState") == "PLAYING" and media.get("contentId") == "http://media.invalid/dashboard.mp4":
        return state["app"]["sessionId"]
    return None


@NETNS
def test_daemon_job_recasts_after_reboot_reloads_on_sighup_and_leaves_on_sigterm(netns, sim, workdir):
    config = os.path.join(workdir, "castline.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(rules="info,CastChannel.*:warning"))
    notify = NotifyListener(os.path.join(workdir, "notify.sock"))
    env = dict(os.environ, NOTIFY_SOCKET=notify.path)
    stderr_path = os.path.join(workdir, "daemon.stderr")
    stderr = open(stderr_path, "w")
    daemon = subprocess.Popen(netns.command(castline_binary(), "run", "--config", config), stdout=subprocess.DEVNULL,
                              stderr=stderr, env=env)

    def log():
        stderr.flush()
        with open(stderr_path) as f:
            return f.read()

    try:
        ready = notify.wait_for("READY", 15)
        assert ready["STATUS"].startswith("1 job(s)"), ready
        assert int(ready["MAINPID"]) > 0
        first = wait_until(lambda: playing_session(sim), 15, "the job's first cast")
        status = notify.wait_for("STATUS", 10)
        assert "job(s)" in status["STATUS"]

        # The device reboots: down 1.5 s, back without the app. The job casts again at once (the
        # device is back; a cast that failed from there would back off).
        assert sim.control({"command": "reboot", "downFor": 1.5})["ok"]
        second = wait_until(lambda: (lambda s: s if s and s != first else None)(playing_session(sim)), 30,
                            "the cast after the reboot")
        assert second != first
        text = log()
        assert "casting to Lobby TV: the device is back without the app" in text, text[-3000:]
        assert "Lobby TV: playing → casting" in text and "playing → backing-off" not in text, text[-3000:]

        # SIGHUP with new log rules: applied without a restart, systemd told RELOADING then READY.
        assert " DEBUG " not in log(), "info rules: no debug records yet"
        with open(config, "w") as f:
            f.write(CONFIG.format(rules="debug,CastChannel.*:warning"))
        daemon.send_signal(signal.SIGHUP)
        notify.wait_for("RELOADING", 10)
        wait_until(lambda: f"log rules from {config}: debug" in log(), 10, "the new rules in the log")
        wait_until(lambda: " DEBUG " in log(), 10, "debug records after the reload")

        # A broken config on SIGHUP is refused; the daemon keeps running.
        with open(config, "w") as f:
            f.write("jobs: [\n")
        daemon.send_signal(signal.SIGHUP)
        wait_until(lambda: "config reload refused" in log(), 10, "the refusal")
        assert f"{config}:2:1" in log() or f"{config}:1:" in log(), log()[-2000:]
        assert daemon.poll() is None

        # SIGTERM: on_stop leave → exit 0, STOPPING sent, the app still runs on the device.
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0, log()[-3000:]
        notify.wait_for("STOPPING", 5)
        assert sim_state(sim)["app"]["sessionId"] == second, "on_stop: leave keeps the cast running"
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=5)
        stderr.close()
        notify.close()


def test_the_systemd_unit_verifies_and_asks_for_notify_and_a_watchdog(workdir):
    from conftest import REPO
    with open(os.path.join(REPO, "configs", "castline.service")) as f:
        unit = f.read()
    for line in ["Type=notify", "WatchdogSec=30", "ExecReload=/bin/kill -HUP $MAINPID", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "DynamicUser=yes"]:
        assert line in unit.splitlines(), line
    path = os.path.join(workdir, "castline.service")
    with open(path, "w") as f:
        f.write(unit.replace("/usr/local/bin/castline", castline_binary()))
    result = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


@NETNS
def test_daemon_yields_to_another_sender_and_casts_again_when_it_is_done(netns, sim, workdir):
    config = os.path.join(workdir, "castline.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(rules="info,CastChannel.*:warning").replace("check_interval: 2", "check_interval: 1\n    takeover: yield"))
    stderr_path = os.path.join(workdir, "daemon.stderr")
    stderr = open(stderr_path, "w")
    daemon = subprocess.Popen(netns.command(castline_binary(), "run", "--config", config), stdout=subprocess.DEVNULL,
                              stderr=stderr)

    def log():
        stderr.flush()
        with open(stderr_path) as f:
            return f.read()

    try:
        wait_until(lambda: playing_session(sim), 15, "the job's first cast")
        # Another sender (a person with `castline cast`) loads other media into the running app.
        other = netns.run(castline_binary(), "cast", "http://media.invalid/visitor.mp4", "--device", "127.0.0.1")
        assert other.returncode == 0, other.stderr
        wait_until(lambda: "playing → yielding" in log(), 10, "the job to yield")
        # While yielding the job watches the device through its one connection (no probes) and
        # leaves the other sender's media playing.
        media = sim_state(sim)["media"]
        assert media["contentId"] == "http://media.invalid/visitor.mp4", "the job leaves the other sender's media alone"
        # The other sender stops: the device is idle, the job casts its media again.
        stop = netns.run(castline_binary(), "stop", "--app", "--device", "127.0.0.1")
        assert stop.returncode == 0, stop.stderr
        wait_until(lambda: playing_session(sim), 15, "the job's cast after the other sender stopped")
        assert "yielding → casting" in log(), log()[-3000:]
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0, log()[-3000:]
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=5)
        stderr.close()


@NETNS
def test_a_stream_transferred_onto_a_job_device_is_yielded_to_until_it_stops(netns, workdir):
    """Another sender's stream moved onto a job's device (a phone's stream transfer): the device's
    app is replaced by a session of the same receiver app that reports its media only once the
    daemon has switched to it. The job yields to it from the start (it does not take the moment
    without media for the device being free) and casts again when that app stops."""
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "2"])
    phone, tv = sim.ready["devices"]
    visitor, ours = "http://media.invalid/visitor.mp4", "http://media.invalid/dashboard.mp4"
    hub = None
    try:
        hub = Hub(netns, sim, workdir, jobs=f"""jobs:
  - name: lobby
    devices: ["{tv['name']}"]
    media: {{url: "{ours}", title: Dashboard}}
    takeover: yield
    retry_delay: 0.5
    check_interval: 1
""")

        def media(index):
            return (sim_devices(sim)[index]["state"].get("media") or {})

        def job_state():
            status, body, _ = hub.get("/v1/jobs/lobby")
            assert status == 200, body
            return body["devices"][0]["state"]

        wait_until(lambda: media(1).get("contentId") == ours and job_state() == "playing", 15, "the job playing on the TV")
        # The phone casts to device 0 through the hub's API as a command would not: straight to the device.
        cast = netns.run(castline_binary(), "cast", visitor, "--device", phone["address"])
        assert cast.returncode == 0, cast.stderr
        assert sim.control({"command": "transfer", "device": 0, "to": 1})["ok"], "the simulator moved the stream"

        def daemon_sees_visitor():
            status, body, _ = hub.get(f"/v1/devices/{tv['uuid']}")
            return status == 200 and ((body.get("mediaStatus") or {}).get("media") or {}).get("contentId") == visitor
        wait_until(daemon_sees_visitor, 10, "the daemon seeing the transferred stream on the TV")
        assert job_state() == "yielding", hub.log()[-3000:]
        shown = media(1)
        assert shown.get("contentId") == visitor and shown.get("playerState") in ("PLAYING", "BUFFERING"), \
            f"the job leaves the transferred stream playing: {shown}"
        assert "the other sender's media ended" not in hub.log(), hub.log()[-3000:]
        # The transferred stream's app stops: the TV is free, the job casts again.
        stop = netns.run(castline_binary(), "stop", "--app", "--device", tv["address"])
        assert stop.returncode == 0, stop.stderr
        wait_until(lambda: media(1).get("contentId") == ours and job_state() == "playing", 15,
                   "the job playing again once the transferred stream's app stopped")
    finally:
        if hub:
            assert hub.stop() == 0, hub.log()[-3000:]
        assert sim.stop() == 0


@NETNS
def test_daemon_on_stop_stop_ends_the_cast_on_sigterm(netns, sim, workdir):
    config = os.path.join(workdir, "castline.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(rules="info,CastChannel.*:warning").replace("on_stop: leave", "on_stop: stop"))
    daemon = subprocess.Popen(netns.command(castline_binary(), "run", "--config", config), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: playing_session(sim), 15, "the job's first cast")
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=20)
        assert daemon.returncode == 0, err[-3000:]
        assert "stopping (stop castline's casts)" in err
        assert sim_state(sim).get("app") is None, "on_stop: stop ends the receiver app"
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=5)


NEARBY_CONFIG = CONFIG.replace("jobs:", """nearby:
  state_dir: {state}
  interfaces: [lo]
  announce_jobs: true
  namespace: lobby.kiosks
jobs:""")


@pytest.mark.needs_root("a network namespace with a private D-Bus and avahi-daemon (ip netns, mount --bind)")
def test_daemon_announces_job_states_as_nearby_messages_once_permitted(netns, sim, workdir):
    """`nearby.announce_jobs`: the daemon publishes each job's state per device through a real
    avahi-daemon (on lo); `castline nearby subscribe` sees it move to playing, and lose it when the
    daemon stops. Without the permission nothing is announced and the log says how to grant it."""
    from conftest import start_avahi, stop_avahi
    avahi, env = start_avahi(netns, workdir)
    state = os.path.join(workdir, "state")
    config = os.path.join(workdir, "castline.yaml")
    with open(config, "w") as f:
        f.write(NEARBY_CONFIG.format(rules="info,CastChannel.*:warning", state=state))
    stderr_path = os.path.join(workdir, "daemon.stderr")
    stderr = open(stderr_path, "w")
    daemon = subprocess.Popen(netns.command(castline_binary(), "run", "--config", config), stdout=subprocess.DEVNULL,
                              stderr=stderr, env=env)
    subscriber = None

    def log():
        stderr.flush()
        with open(stderr_path) as f:
            return f.read()

    def subscribe(*extra):
        return subprocess.run(netns.command(castline_binary(), "nearby", "subscribe", "--json", "--config", config,
                                            "--namespace", "lobby.kiosks", "--type", "castline.job", *extra),
                              capture_output=True, text=True, env=env, timeout=30)

    try:
        wait_until(lambda: playing_session(sim), 15, "the job's cast")
        wait_until(lambda: "nearby.announce_jobs is on but the nearby permission is not determined" in log(), 10,
                   "the warning about the missing permission")
        assert f"castline nearby permission grant --state-dir {state}" in log()
        granted = subprocess.run(netns.command(castline_binary(), "nearby", "permission", "grant", "--config", config),
                                 capture_output=True, text=True, env=env, timeout=30)
        assert granted.returncode == 0 and state in granted.stdout, granted
        result = subscribe("--count", "1", "--timeout", "10")
        assert result.returncode == 0, (result, log()[-3000:])
        found = [json.loads(line) for line in result.stdout.splitlines() if '"found"' in line]
        announcement = json.loads(found[0]["content"])
        assert announcement["job"] == "lobby-dashboard" and announcement["device"] == "Lobby TV"
        assert announcement["state"] == "playing" and announcement["title"] == "Dashboard"
        assert announcement["url"] == "http://media.invalid/dashboard.mp4"
        assert found[0]["namespace"] == "lobby.kiosks" and found[0]["type"] == "castline.job"

        subscriber = JSONLines(netns.command(castline_binary(), "nearby", "subscribe", "--json", "--config", config,
                                            "--namespace", "lobby.kiosks"), env)
        assert subscriber.wait_for(lambda e: e["event"] == "found", 10), f"the running subscriber: {subscriber.seen} {subscriber.log()}"
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=20) == 0, log()[-3000:]
        lost = subscriber.wait_for(lambda e: e["event"] == "lost", 10)
        assert lost and json.loads(lost[1]["content"])["job"] == "lobby-dashboard", subscriber.seen
    finally:
        if subscriber:
            subscriber.stop()
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=5)
        stderr.close()
        stop_avahi(avahi)
