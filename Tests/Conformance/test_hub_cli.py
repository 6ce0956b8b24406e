"""The built `castline` through a running daemon, as a user runs it: casts that a job yields to and
takes back, two casts and a job that never fight, jobs/channel/log-level commands, reloads that add a
device and keep the CASTLINE_LOG layer, the start-up yield, on_stop that stops only castline's own
casts, and the direct-mode details (idle device status and volume, usage errors, status --follow
--json, a glob over configured hosts that does not wait out the timeout)."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import Simulator, castline_binary, wait_until
from hub import ECHO_NS, Hub, api, sim_devices

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

JOB_URL = "http://media.invalid/job.mp4"


@pytest.fixture
def sim3(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "3"])
    yield simulator
    assert simulator.stop() == 0


def cli(netns, hub, *args, timeout=60):
    return netns.run(castline_binary(), *args, "--api-socket", hub.socket, timeout=timeout)


def media(sim, index):
    return sim_devices(sim)[index]["state"].get("media") or {}


def loads(sim, index, url):
    """How many LOADs of `url` the device's frame log has seen."""
    uuid = sim.ready["devices"][index]["uuid"]
    return sum(1 for f in sim.frames() if f.get("event") == "frame" and f.get("device") == uuid and f.get("direction") == "in"
               and f.get("type") == "LOAD" and ((f.get("payload") or {}).get("media") or {}).get("contentId") == url)


def job_config(name, device, takeover="yield", extra=""):
    return f"""jobs:
  - name: {name}
    devices: ["{device}"]
    media: {{url: {JOB_URL}, title: Job}}
    takeover: {takeover}
{extra}"""


def job_state(hub, name):
    status, body, _ = hub.get(f"/v1/jobs/{name}")
    return body["devices"][0]["state"] if status == 200 and body["devices"] else None


def test_a_cli_cast_makes_the_job_yield_and_the_job_takes_the_device_back_when_it_ends(netns, sim3, workdir):
    name = sim3.ready["devices"][0]["name"]
    hub = Hub(netns, sim3, workdir, jobs=job_config("lobby", name))
    try:
        wait_until(lambda: media(sim3, 0).get("contentId") == JOB_URL and job_state(hub, "lobby") == "playing", 15, "the job's cast")
        cast = cli(netns, hub, "cast", "http://media.invalid/visitor.mp4", "--device", name, "--json")
        assert cast.returncode == 0, cast.stderr
        assert json.loads(cast.stdout)["owner"] == "command"
        wait_until(lambda: job_state(hub, "lobby") == "yielding", 10, "the job to yield")
        assert media(sim3, 0)["contentId"] == "http://media.invalid/visitor.mp4"
        stop = cli(netns, hub, "stop", "--device", name)
        assert stop.returncode == 0, stop.stderr
        wait_until(lambda: media(sim3, 0).get("contentId") == JOB_URL and job_state(hub, "lobby") == "playing", 15,
                   "the job's cast after the command's media ended")
    finally:
        assert hub.stop() == 0


def test_two_cli_casts_and_a_reclaiming_job_never_fight(netns, sim3, workdir):
    name = sim3.ready["devices"][0]["name"]
    hub = Hub(netns, sim3, workdir, jobs=job_config("lobby", name, takeover="reclaim"))
    try:
        wait_until(lambda: job_state(hub, "lobby") == "playing", 15, "the job's cast")
        job_loads = loads(sim3, 0, JOB_URL)
        first = cli(netns, hub, "cast", "http://media.invalid/first.mp4", "--device", name)
        second = cli(netns, hub, "cast", "http://media.invalid/second.mp4", "--device", name)
        assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
        assert media(sim3, 0)["contentId"] == "http://media.invalid/second.mp4", "the last command wins"
        wait_until(lambda: job_state(hub, "lobby") == "yielding", 10, "the job to yield even with takeover: reclaim")
        # Whatever the job sees while a command's cast plays, it casts nothing (a status poke included).
        assert cli(netns, hub, "status", "--device", name).returncode == 0
        assert loads(sim3, 0, JOB_URL) == job_loads, "the job cast over a command's media"
        assert media(sim3, 0)["contentId"] == "http://media.invalid/second.mp4"
        assert cli(netns, hub, "stop", "--device", name).returncode == 0
        wait_until(lambda: job_state(hub, "lobby") == "playing", 15, "the job back once the command's cast ended")
        assert loads(sim3, 0, JOB_URL) == job_loads + 1, "one cast to take the device back"
    finally:
        assert hub.stop() == 0


def test_jobs_channel_and_log_level_commands(netns, sim3, workdir):
    hub = Hub(netns, sim3, workdir)
    device = sim3.ready["devices"][1]["name"]
    try:
        added = cli(netns, hub, "jobs", "add", "kitchen", "--device", device, "--media", JOB_URL)
        assert added.returncode == 0 and "job kitchen added" in added.stdout, added.stderr
        wait_until(lambda: media(sim3, 1).get("contentId") == JOB_URL, 15, "the added job's cast")
        listed = cli(netns, hub, "jobs", "list", "--json")
        assert json.loads(listed.stdout.splitlines()[0])["name"] == "kitchen"
        bad = cli(netns, hub, "jobs", "add", "bad", "--device", device, "--media", "ftp://x")
        assert bad.returncode == 64 and "http:// or https://" in bad.stderr, bad.stderr
        removed = cli(netns, hub, "jobs", "rm", "kitchen")
        assert removed.returncode == 0
        wait_until(lambda: sim_devices(sim3)[1]["state"]["app"] is None, 10, "the removed job's cast to stop")
        assert cli(netns, hub, "jobs", "rm", "kitchen").returncode == 3, "no such job: exit 3"

        reply = cli(netns, hub, "channel", "request", "--device", device, "--namespace", ECHO_NS, "--app", "CA571E00", '{"text": "hi"}')
        assert reply.returncode == 0, reply.stderr
        assert json.loads(reply.stdout)["text"] == "hi"
        listen = subprocess.Popen(netns.command(castline_binary(), "channel", "listen", "--device", device, "--namespace",
                                                "urn:x-cast:org.castline.test", "--for", "20", "--api-socket", hub.socket),
                                  stdout=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: hub.get("/metrics")[1].count("castline_event_subscribers 1") == 1, 10, "the listener's subscription")
            sent = cli(netns, hub, "channel", "send", "--device", device, "--namespace", "urn:x-cast:org.castline.test",
                       '{"type": "NOTE", "n": 7}')
            assert sent.returncode == 0, sent.stderr
            line = listen.stdout.readline()
            assert json.loads(line) == {"type": "NOTE", "n": 7}, line
        finally:
            listen.terminate()
            listen.wait(timeout=10)
        # A plugin's namespace is listened to beside the plugin: the app's answer reaches the
        # plugin (the request is answered) and the listener alike.
        listen = subprocess.Popen(netns.command(castline_binary(), "channel", "listen", "--device", device, "--namespace",
                                                ECHO_NS, "--for", "20", "--api-socket", hub.socket),
                                  stdout=subprocess.PIPE, text=True)
        try:
            wait_until(lambda: hub.get("/metrics")[1].count("castline_event_subscribers 1") == 1, 10, "the plugin listener's subscription")
            reply = cli(netns, hub, "channel", "request", "--device", device, "--namespace", ECHO_NS, '{"text": "both"}')
            assert reply.returncode == 0 and json.loads(reply.stdout)["text"] == "both", reply.stdout + reply.stderr
            heard = json.loads(listen.stdout.readline())
            assert heard["type"] == "ECHO" and heard["text"] == "both", heard
        finally:
            listen.terminate()
            listen.wait(timeout=10)

        shown = cli(netns, hub, "log-level", "info,CastSession:debug")
        assert shown.returncode == 0 and "api: info,CastSession:debug" in shown.stdout, shown.stdout
        explained = cli(netns, hub, "log-level", "--explain", "CastSession")
        assert "CastSession: debug" in explained.stdout and "from api" in explained.stdout, explained.stdout
        # One explain: after a runtime change, `logs explain` asks the daemon and agrees with
        # `log-level --explain` class by class, naming the layer that decided (issue 42).
        assert cli(netns, hub, "log-level", "info,CastSession:debug,Plugin*:trace").returncode == 0
        for name, level, layer in (("PluginChannel", "verbose", "runtime change"), ("CastSession", "debug", "runtime change"),
                                   ("JobDriver", "info", "runtime change")):
            daemon_side = json.loads(cli(netns, hub, "log-level", "--explain", name, "--json").stdout)
            asked = netns.run(castline_binary(), "logs", "explain", name, "--json", "--config", hub.config)
            assert asked.returncode == 0, asked.stderr
            logs_side = json.loads(asked.stdout)
            assert logs_side["from"] == "daemon", logs_side
            assert (logs_side["level"], logs_side["rule"], logs_side["minimumLevel"]) == \
                (daemon_side["level"], daemon_side["rule"], daemon_side["minimumLevel"]), (logs_side, daemon_side)
            assert logs_side["level"] == level, logs_side
            assert (logs_side["rule"] or {}).get("layer", logs_side.get("minimumLayer")) == layer, logs_side
        text = netns.run(castline_binary(), "logs", "explain", "PluginChannel", "--config", hub.config).stdout
        assert "PluginChannel: verbose" in text and "from api (runtime change" in text, text
        # Replayed without the daemon, the runtime change is unknown, and it says so.
        offline = netns.run(castline_binary(), "logs", "explain", "PluginChannel", "--offline", "--config", hub.config)
        assert "PluginChannel: verbose" not in offline.stdout and "replayed here" in offline.stdout, offline.stdout
        not_a_class = netns.run(castline_binary(), "logs", "explain", hub.config)
        assert not_a_class.returncode == 64 and "is a file, not a class" in not_a_class.stderr, not_a_class.stderr
        assert cli(netns, hub, "log-level", "info,CastSession:debug").returncode == 0
        assert cli(netns, hub, "log-level", "info,CastSession:verbos").returncode == 64
        version = netns.run(castline_binary(), "--version")
        assert version.returncode == 0 and version.stdout.strip().count(".") == 2
    finally:
        assert hub.stop() == 0


def test_a_reload_adds_a_device_and_keeps_the_environment_log_layer(netns, sim3, workdir):
    env = dict(os.environ, CASTLINE_LOG="info,JobDriver:debug")
    hub = Hub(netns, sim3, workdir, env=env)
    try:
        with open(hub.config) as f:
            text = f.read()
        # One more device (the third) under a new name, and a job on it.
        third = sim3.ready["devices"][2]
        text = text.replace("discovery:", f"  - {{name: Patio, host: {third['address']}, port: {third['castPort']}}}\ndiscovery:", 1)
        text += job_config("patio", "Patio").replace("jobs:\n", "jobs:\n", 1)
        with open(hub.config, "w") as f:
            f.write(text)
        hub.process.send_signal(signal.SIGHUP)
        wait_until(lambda: media(sim3, 2).get("contentId") == JOB_URL, 20, "the reloaded config's new device to play its job")
        status, logging, _ = hub.get("/v1/logging")
        assert [layer["source"] for layer in logging["layers"]][-1] == "CASTLINE_LOG", logging
        assert "JobDriver:debug" in logging["rules"]
        explained = hub.get("/v1/logging/explain?class=JobDriver")[1]
        assert explained["level"] == "debug" and explained["rule"]["source"] == "CASTLINE_LOG", explained
    finally:
        assert hub.stop() == 0


def test_at_start_a_yielding_job_leaves_another_senders_media_and_on_stop_stop_leaves_it_too(netns, sim3, workdir):
    name = sim3.ready["devices"][0]["name"]
    other = netns.run(castline_binary(), "cast", "http://media.invalid/other.mp4", "--device", sim3.ready["devices"][0]["address"],
                      "--direct")
    assert other.returncode == 0, other.stderr
    jobs = job_config("lobby", name) + job_config("bar", sim3.ready["devices"][1]["name"]).replace("jobs:\n", "")
    hub = Hub(netns, sim3, workdir, jobs=jobs)
    try:
        wait_until(lambda: job_state(hub, "lobby") == "yielding", 15, "the job to yield at start")
        wait_until(lambda: job_state(hub, "bar") == "playing", 15, "the other job to play")
        assert media(sim3, 0)["contentId"] == "http://media.invalid/other.mp4", "the job did not cast over it"
        assert loads(sim3, 0, JOB_URL) == 0
    finally:
        # on_stop: stop, by SIGHUP'd config: castline's own cast (bar) stops, the other sender's stays.
        with open(hub.config) as f:
            text = f.read()
        with open(hub.config, "w") as f:
            f.write(text.replace("daemon: {jobs_file:", "daemon: {on_stop: stop, jobs_file:"))
        hub.process.send_signal(signal.SIGHUP)
        wait_until(lambda: "config reloaded" in hub.log(), 10, "the reload")
        assert hub.stop() == 0
    assert sim_devices(sim3)[1]["state"]["app"] is None, "castline's own cast stopped"
    assert media(sim3, 0).get("contentId") == "http://media.invalid/other.mp4", "another sender's media is never stopped"


def test_direct_mode_idle_device_status_volume_and_usage_errors(netns, sim3):
    address = sim3.ready["devices"][2]["address"]
    status = netns.run(castline_binary(), "status", "--device", address, "--json", "--direct")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["state"] == "NO_APP"
    volume = netns.run(castline_binary(), "volume", "35", "--device", address, "--direct")
    assert volume.returncode == 0, volume.stderr
    assert abs(sim_devices(sim3)[2]["state"]["volume"]["level"] - 0.35) < 0.001
    mute = netns.run(castline_binary(), "mute", "--device", address, "--direct")
    assert mute.returncode == 0 and sim_devices(sim3)[2]["state"]["volume"]["muted"] is True
    fraction = netns.run(castline_binary(), "volume", "0.5", "--device", address, "--direct")
    assert fraction.returncode == 64 and "did you mean 50" in fraction.stderr
    seek = netns.run(castline_binary(), "seek", "99:99:99", "--device", address, "--direct")
    assert seek.returncode == 64 and "0-59" in seek.stderr


def test_status_follow_json_prints_the_state_now_first(netns, sim3):
    address = sim3.ready["devices"][0]["address"]
    follow = subprocess.Popen(netns.command(castline_binary(), "status", "--device", address, "--json", "--follow", "--for", "30",
                                            "--direct"), stdout=subprocess.PIPE, text=True)
    try:
        first = json.loads(follow.stdout.readline())
        assert first["state"] == "NO_APP", "the state now, before any change"
        assert netns.run(castline_binary(), "cast", "http://media.invalid/a.mp4", "--device", address, "--direct").returncode == 0
        deadline = time.monotonic() + 15
        seen = []
        while time.monotonic() < deadline:
            seen.append(json.loads(follow.stdout.readline()))
            if seen[-1]["state"] == "PLAYING":
                break
        assert seen[-1]["state"] == "PLAYING", seen
    finally:
        follow.terminate()
        follow.wait(timeout=10)


def test_a_glob_over_configured_devices_returns_once_they_answered(netns, sim3, workdir):
    config = os.path.join(workdir, "static.yaml")
    devices = "\n".join(f"  - {{name: \"TV {i}\", host: {d['address']}, port: {d['castPort']}}}" for i, d in enumerate(sim3.ready["devices"]))
    with open(config, "w") as f:
        f.write(f"devices:\n{devices}\ndiscovery: {{providers: [static], timeout: 20}}\n")
    started = time.monotonic()
    status = netns.run(castline_binary(), "status", "--device", "TV*", "--json", "--direct", "--config", config, timeout=60)
    elapsed = time.monotonic() - started
    assert status.returncode == 0, status.stderr
    assert len(status.stdout.splitlines()) == 3
    assert elapsed < 10, f"waited {elapsed:.1f} s of the 20 s discovery timeout"


def test_run_and_the_cli_read_the_config_from_castline_config(netns, sim3, workdir):
    """`castline run` with no --config takes CASTLINE_CONFIG (its devices and api.socket), and a
    command with the same environment finds the daemon through the config's api.socket."""
    hub = Hub(netns, sim3, workdir, config_from_env=True)
    try:
        env = dict(os.environ, CASTLINE_CONFIG=hub.config)
        device = sim3.ready["devices"][1]
        opened = sum(1 for f in sim3.frames() if f["event"] == "opened" and f["device"] == device["uuid"])
        status = netns.run(castline_binary(), "volume", "35", "--device", device["name"], "--json", env=env)
        assert status.returncode == 0, status.stderr
        assert abs(json.loads(status.stdout)["volume"] - 0.35) < 0.001
        # Through the daemon: its session did it; the command opened no connection of its own.
        assert sum(1 for f in sim3.frames() if f["event"] == "opened" and f["device"] == device["uuid"]) == opened
    finally:
        assert hub.stop() == 0


def test_a_cli_cast_beside_the_daemon_leaves_its_lanes_and_sessions_intact(netns, sim3, workdir):
    """The daemon writes its JSON log; a CLI command with the same config writes there only when
    asked (CASTLINE_LOG_SINKS=1), and then every record names its process, so the timeline keeps
    one lane per TV and the daemon's sessions as they were (issue 42)."""
    import re
    log = os.path.join(workdir, "hub.jsonl")
    hub = Hub(netns, sim3, workdir, json_log=log)
    first = sim3.ready["devices"][0]
    address = f"{first['address']}:{first['castPort']}"
    try:
        def records():
            with open(log) as f:
                return [json.loads(line) for line in f if line.strip().endswith("}")]
        wait_until(lambda: sum(1 for r in records() if r.get("attributes", {}).get("event") == "didStart") >= 3, 15,
                   "the daemon's three sessions in its log")
        quiet = netns.run(castline_binary(), "cast", "http://media.invalid/quiet.mp4", "--device", address, "--direct",
                          "--config", hub.config)
        assert quiet.returncode == 0, quiet.stderr
        wait_until(lambda: media(sim3, 0).get("contentId") == "http://media.invalid/quiet.mp4", 10, "the first CLI cast")
        asked = netns.run(castline_binary(), "cast", "http://media.invalid/asked.mp4", "--device", address, "--direct",
                          "--config", hub.config, env=dict(os.environ, CASTLINE_LOG_SINKS="1"))
        assert asked.returncode == 0, asked.stderr
        wait_until(lambda: any(r.get("attributes", {}).get("role") == "cli" and r.get("attributes", {}).get("event") == "didEnd"
                               for r in records()), 10, "the asked CLI's records, through its end, in the daemon's log")
    finally:
        assert hub.stop() == 0
    everything = records()
    roles = {(r["attributes"]["role"], r["attributes"]["pid"]) for r in everything}
    daemon = {(role, pid) for role, pid in roles if role == "daemon"}
    cli_processes = {(role, pid) for role, pid in roles if role == "cli"}
    assert daemon == {("daemon", hub.process.pid)}, roles
    # One CLI process wrote: the one asked to (the first, not asked, wrote nothing).
    assert len(cli_processes) == 1 and roles == daemon | cli_processes, roles
    from_cli = [r for r in everything if r["attributes"]["role"] == "cli"]
    assert any(r["attributes"].get("event") == "willStart" for r in from_cli)
    assert any("asked.mp4" in json.dumps(r) for r in from_cli)
    page = os.path.join(workdir, "timeline.html")
    drawn = netns.run(castline_binary(), "logs", "timeline", log, "--html", page)
    assert drawn.returncode == 0, drawn.stderr
    with open(page) as f:
        html = f.read()
    lanes = re.findall(r'<g class="lane" data-device="([^"]*)"', html)
    assert sorted(lanes) == sorted(d["uuid"] for d in sim3.ready["devices"]), lanes   # one lane per TV, no address lane
    sessions = re.findall(r'<g class="session( open)?" data-session="[^"]*" data-state="[^"]*"(?: data-app="[^"]*")?'
                          r' data-process="([a-z]+) (\d+)" data-end-reason="([^"]*)"', html)
    by_process = {}
    for _, role, pid, end in sessions:
        by_process.setdefault((role, int(pid)), []).append(end)
    assert "unknown" not in by_process[("daemon", hub.process.pid)], by_process   # not cut by the CLI's session #1
    # The daemon's three sessions are still there, one per TV, ended with its stop; the CLI's is its own.
    assert len(by_process[("daemon", hub.process.pid)]) == 3, by_process
    assert [k for k in by_process if k[0] == "cli"] and all(len(v) == 1 for k, v in by_process.items() if k[0] == "cli"), by_process
