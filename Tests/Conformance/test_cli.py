"""End-to-end: the built `castline` binary, run as a user would, against `castline sim` in a
network namespace (cast a URL and a local file, status in JSON, every control command, errors
and exit codes, config check)."""
import glob
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import REPO, JSONLines, Simulator, castline_binary, wait_until
from hub import Hub

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

DEVICE = "127.0.0.1"


def castline(netns, *args, timeout=60, env=None):
    return netns.run(castline_binary(), *args, timeout=timeout, env=env)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def media_state(sim):
    return sim.control({"command": "list"})["devices"][0]["state"].get("media")


def test_cast_a_url_then_status_and_every_control_command(netns, sim):
    cast = castline(netns, "cast", "http://media.invalid/movie.mp4", "--device", DEVICE, "--title", "Big Buck",
                    "--subtitle", "A short film", "--json")
    assert cast.returncode == 0, cast.stderr
    [started] = json_lines(cast.stdout)
    assert started["state"] == "PLAYING" and started["title"] == "Big Buck" and started["subtitle"] == "A short film"
    assert started["contentType"] == "video/mp4", "the media-formats plugin fills the content type"
    assert started["appId"] == "CC1AD845"

    def run(*args):
        result = castline(netns, *args, "--device", DEVICE, "--json")
        assert result.returncode == 0, f"{args}: {result.stderr}"
        [status] = json_lines(result.stdout)
        return status

    status = run("status")
    assert status["state"] == "PLAYING" and status["sessionId"] == started["sessionId"]
    assert run("pause")["state"] == "PAUSED"
    assert media_state(sim)["playerState"] == "PAUSED", "the device itself is paused"
    assert run("seek", "1:30")["currentTime"] == pytest.approx(90, abs=0.5)
    assert run("seek", "-30")["currentTime"] == pytest.approx(60, abs=0.5)
    assert run("play")["state"] == "PLAYING"
    assert run("volume", "40")["volume"] == pytest.approx(0.4)
    assert run("volume", "+15")["volume"] == pytest.approx(0.55)
    assert run("mute")["muted"] is True
    assert run("mute", "--off")["muted"] is False
    assert run("volume", "25", "--stream")["mediaStatus"]["volume"]["level"] == pytest.approx(0.25)
    assert run("queue", "repeat", "all")["mediaStatus"]["repeatMode"] == "REPEAT_ALL"
    assert run("stop")["state"] == "IDLE"
    assert media_state(sim) is None, "the device ended the media session"

    # Nothing to pause any more: refused (4), with the device's reason.
    paused = castline(netns, "pause", "--device", DEVICE)
    assert paused.returncode == 4 and "INVALID_PLAYER_STATE" in paused.stderr, paused.stderr
    stopped = castline(netns, "stop", "--app", "--device", DEVICE)
    assert stopped.returncode == 0, stopped.stderr
    # An idle device is a normal answer, not an error.
    nothing = castline(netns, "status", "--device", DEVICE)
    assert nothing.returncode == 0 and "NO_APP" in nothing.stdout, nothing.stdout + nothing.stderr


def test_text_output_is_one_readable_line_per_device(netns, sim):
    cast = castline(netns, "cast", "http://media.invalid/show.mp4", "--device", DEVICE, "--title", "Show")
    assert cast.returncode == 0, cast.stderr
    assert cast.stdout.startswith(f"{sim.device['name']}: PLAYING \"Show\""), cast.stdout
    status = castline(netns, "status", "--device", DEVICE)
    assert status.returncode == 0 and "Show" in status.stdout and "▶ PLAYING" in status.stdout, status.stdout


def test_a_local_file_is_served_with_range_requests_the_device_fetches(netns, sim, workdir):
    path = os.path.join(workdir, "holiday clip.mp4")
    with open(path, "wb") as f:
        # An MP4 file type box first: the simulated device, like a receiver, fails media it cannot recognise.
        f.write((b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 1200)[:307200])  # 307,200 bytes
    process = subprocess.Popen(netns.command(castline_binary(), "cast", path, "--device", DEVICE, "--json"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        started = json.loads(line)
        assert started["state"] == "PLAYING", line
        # castline names the file; the URL with its token is the device's alone (the simulator's view).
        assert started["served"] == "holiday clip.mp4", line
        fetches = wait_until(lambda: sim.control({"command": "list"})["devices"][0]["mediaFetches"], 10, "the device's fetch")
        served = fetches[0]["url"]
        assert served.startswith("http://127.0.0.1:") and served.endswith("/holiday%20clip.mp4"), served
        assert served.split("/")[3] not in line, "the token never leaves castline" 
        assert fetches[0]["status"] == 206 and fetches[0]["contentRange"] == "bytes 0-65535/307200", fetches
        assert fetches[0]["bytes"] == 65536 and fetches[0]["contentType"] == "video/mp4"
        assert process.poll() is None, "castline keeps serving while the file plays"
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert media_state(sim) is None, "SIGTERM stops the media: the file is no longer served"


def test_failures_have_their_own_exit_codes_and_say_why(netns, sim, workdir):
    assert sim.control({"command": "fail-next-load", "code": 104})["ok"]
    refused = castline(netns, "cast", "http://media.invalid/a.mp4", "--device", DEVICE)
    assert refused.returncode == 4 and "LOAD" in refused.stderr, refused.stderr

    missing = castline(netns, "cast", "http://media.invalid/a.mp4", "--device", "Nowhere TV", "--timeout", "1")
    assert missing.returncode == 3 and 'no device matches "Nowhere TV"' in missing.stderr, missing.stderr

    absent = castline(netns, "cast", os.path.join(workdir, "absent.mp4"), "--device", DEVICE)
    assert absent.returncode == 64 and "No such file" in absent.stderr, absent.stderr

    closed = castline(netns, "status", "--device", "127.0.0.1:9")
    assert closed.returncode == 1 and "cannot connect" in closed.stderr, closed.stderr

    usage = castline(netns, "seek", "abc", "--device", DEVICE)
    assert usage.returncode == 64, usage.stderr


def test_a_binary_without_its_plugins_says_so_when_it_cannot_tell_the_content_type(netns, sim, workdir):
    # Copied alone (the plugins are searched next to the binary): no media-formats plugin.
    alone = os.path.join(workdir, "castline")
    shutil.copy(castline_binary(), alone)
    result = netns.run(alone, "cast", "http://media.invalid/a.mp4", "--device", DEVICE)
    assert result.returncode == 64, result.stderr
    assert "no media-format plugin is loaded (no plugin at all; searched " + workdir in result.stderr, result.stderr
    assert "Give --content-type" in result.stderr, result.stderr
    typed = netns.run(alone, "cast", "http://media.invalid/a.mp4", "--device", DEVICE, "--content-type", "video/mp4")
    assert typed.returncode == 0, typed.stderr


def test_the_simulator_stops_on_a_sigterm_sent_right_after_its_ready_line(netns, workdir):
    # The signal used to be ignored (and lost) until the simulator started waiting for it, a few
    # statements after printing ready: it then ran until SIGKILL (seen 14 times in 15).
    for _ in range(3):
        simulator = Simulator(netns, workdir, extra=["--no-mdns"])
        code = simulator.stop()  # SIGTERM at once; SIGKILL (-9) after 10 s
        with open(simulator.stderr_path) as f:
            assert code == 0, f"exit {code}: {f.read()[-2000:]}"


def test_devices_are_found_by_config_name_alias_and_glob(netns, sim, workdir):
    config = os.path.join(workdir, "devices.yaml")
    with open(config, "w") as f:
        f.write("devices:\n  - {name: Lobby TV, host: 127.0.0.1, aliases: [lobby]}\n")
    for selector in ["Lobby TV", "lobby", "Lob*"]:
        result = castline(netns, "cast", "http://media.invalid/a.mp4", "--device", selector, "--config", config,
                          "--timeout", "2", "--json")
        assert result.returncode == 0, f"{selector}: {result.stderr}"
        [status] = json_lines(result.stdout)
        assert status["state"] == "PLAYING"


def test_every_shipped_config_passes_config_check(netns):
    files = sorted(glob.glob(os.path.join(REPO, "configs", "*.yaml")))
    assert files, "configs/ has YAML files"
    result = castline(netns, "config", "check", *files)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(": ok (") == len(files), result.stdout


def test_config_errors_point_at_file_line_column_and_exit_2(netns, workdir):
    config = os.path.join(workdir, "broken.yaml")
    with open(config, "w") as f:
        f.write("devices:\n  - name: A\n    host: 10.0.0.1\n    prot: 8009\njobs:\n  - name: j\n    devices: x\n"
                "    media: {url: ftp://x}\nlogging:\n  sinks:\n    - type: nosuch\n")
    result = castline(netns, "config", "check", config)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert f'{config}:4:5: error: unknown key "prot" in devices[0] (did you mean "port"?); allowed: name, host, port, id, aliases, model' in lines
    assert any(line.startswith(f"{config}:8:18: error: jobs[0].media.url") for line in lines), lines
    assert any(line.startswith(f'{config}:11:7: error: logging sink type "nosuch"') for line in lines), lines
    # The same file given to a command that runs it: exit 2, nothing started.
    run = castline(netns, "status", "--device", DEVICE, "--config", config)
    assert run.returncode == 2 and f"{config}:4:5:" in run.stderr, run.stderr


def test_config_check_json_lists_every_diagnostic(netns, workdir):
    config = os.path.join(workdir, "typo.yaml")
    with open(config, "w") as f:
        f.write("sesion:\n  heartbeat_interval: 5\n")
    result = castline(netns, "config", "check", "--json", config)
    assert result.returncode == 2
    [report] = json_lines(result.stdout)
    assert report["file"] == config and report["ok"] is False
    [diagnostic] = report["diagnostics"]
    assert (diagnostic["line"], diagnostic["column"], diagnostic["severity"]) == (1, 1, "error")
    assert 'unknown key "sesion"' in diagnostic["message"] and '"session"' in diagnostic["message"]


def test_config_check_warns_about_unmatched_globs_and_unreadable_local_files_and_passes(netns, workdir):
    clip = os.path.join(workdir, "clip.mp4")
    locked = os.path.join(workdir, "locked.mp4")
    for path, mode in ((clip, 0o644), (locked, 0o600)):
        with open(path, "wb") as f:
            f.write(b"\0" * 64)
        os.chmod(path, mode)
    missing = os.path.join(workdir, "missing.mp4")
    config = os.path.join(workdir, "jobs.yaml")
    with open(config, "w") as f:
        f.write("devices:\n  - {name: Lobby TV, host: 127.0.0.1, aliases: [lobby]}\n"
                "discovery: {providers: [static]}\n"
                "jobs:\n"
                f"  - {{name: a, devices: [lobby, \"Kitchen*\"], media: {clip}}}\n"
                f"  - {{name: b, devices: [\"Lobby*\"], media: {missing}}}\n"
                f"  - {{name: c, devices: [\"Lobby*\"], media: {locked}}}\n")
    os.chmod(config, 0o644)
    result = castline(netns, "config", "check", "--no-plugins", config)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{config}: ok (1 device(s), 3 job(s), 0 log sink(s))", result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f'{config}:5:32: warning: jobs[0].devices[1] "Kitchen*" matches no name, alias or id under devices:'), lines
    assert "(discovery.providers: [static])" in lines[0] and "let discovery use mDNS" in lines[0], lines
    assert lines[1] == (f"{config}:6:43: warning: jobs[1].media.url: cannot read {missing} (checked as uid 0): "
                        "No such file or directory: the job cannot serve it to the device"), lines
    # As another user (the daemon's may differ): the root-only file is the one it cannot read.
    as_nobody = netns.run(castline_binary(), "config", "check", "--no-plugins", "--json", config, user="nobody")
    assert as_nobody.returncode == 0, as_nobody.stderr
    [report] = json_lines(as_nobody.stdout)
    assert report["ok"] is True
    warnings = [(d["line"], d["severity"], d["message"]) for d in report["diagnostics"]]
    assert [w[:2] for w in warnings] == [(5, "warning"), (6, "warning"), (7, "warning")], warnings
    assert f"cannot read {locked} (checked as uid " in warnings[2][2] and "Permission denied" in warnings[2][2], warnings
    # With mDNS allowed a matching device may appear later: no glob warning.
    with open(config, "w") as f:
        f.write("devices:\n  - {name: Lobby TV, host: 127.0.0.1}\n"
                f"jobs:\n  - {{name: a, devices: [\"Kitchen*\"], media: {clip}}}\n")
    quiet = castline(netns, "config", "check", "--no-plugins", config)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def test_config_check_findings_name_the_right_key_in_plain_words(netns, workdir):
    """A folder playlist is no "not a regular file"; a missing chime is pointed at announce.media;
    a duration that is not a number and a bad indent read naturally, each at file:line:column."""
    folder = os.path.join(workdir, "clips")
    empty = os.path.join(workdir, "empty")
    os.makedirs(folder)
    os.makedirs(empty)
    with open(os.path.join(folder, "a.mp4"), "wb") as f:
        f.write(b"\0" * 64)
    chime = os.path.join(workdir, "chime.wav")
    config = os.path.join(workdir, "signage.yaml")
    with open(config, "w") as f:
        f.write("jobs:\n"
                f"  - {{name: loop, devices: [\"*\"], media: {folder}}}\n"
                f"  - {{name: filtered, devices: [\"*\"], media: {{url: {folder}, extensions: [mov]}}}}\n"
                f"  - {{name: nothing, devices: [\"*\"], media: {empty}}}\n"
                "  - name: chime\n"
                "    devices: [\"*\"]\n"
                "    announce:\n"
                f"      media: {chime}\n")
    result = castline(netns, "config", "check", "--no-plugins", config)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert not any("not a regular file" in line for line in lines), lines
    assert lines == [
        f"{config}:3:51: warning: jobs[1].media.url: the folder {folder} holds no media files (mov) (checked as uid 0): "
        "the job cannot serve it to the device",
        f"{config}:4:44: warning: jobs[2].media.url: the folder {empty} holds no media files (the usual media extensions) "
        "(checked as uid 0): the job cannot serve it to the device",
        f"{config}:8:14: warning: jobs[3].announce.media: cannot read {chime} (checked as uid 0): No such file or directory: "
        "the job cannot serve it to the device",
    ], lines
    with open(config, "w") as f:
        f.write("jobs:\n  - {name: j, devices: x, media: \"http://h/a.mp4\", retry_delay: abc}\n")
    result = castline(netns, "config", "check", "--no-plugins", config)
    assert result.returncode == 2
    assert result.stderr.strip() == (f'{config}:2:65: error: jobs[0].retry_delay must be a number of seconds between 0.1 and 3600, '
                                     'not "abc"'), result.stderr
    with open(config, "w") as f:
        f.write("daemon:\n    on_stop: leave\n  jobs_file: /x\n")
    result = castline(netns, "config", "check", "--no-plugins", config)
    assert result.returncode == 2
    assert result.stderr.startswith(f'{config}:3:3: error: YAML syntax: inconsistent indentation: "jobs_file: /x" starts at column 3'), result.stderr
    assert "check that keys of one mapping line up" in result.stderr and "(libyaml: did not find expected key" in result.stderr


def test_a_plain_cast_and_a_daemon_start_print_no_error_line(netns, sim, workdir):
    """The example channel plugins beside the binary declare namespaces no default config allows:
    that is an info record, not an ERROR line at every start and every cast."""
    result = castline(netns, "cast", "http://media.invalid/movie.mp4", "--device", DEVICE)
    assert result.returncode == 0, result.stderr
    assert "ERROR" not in result.stderr and "WARN" not in result.stderr, result.stderr
    hub = Hub(netns, sim, workdir, allowed_namespaces=())
    try:
        log = hub.log()
    finally:
        hub.stop()
    plugin_lines = [line for line in log.splitlines() if "PluginHost" in line]
    assert not any("ERROR" in line or "WARN" in line for line in plugin_lines), [l for l in plugin_lines if "ERROR" in l or "WARN" in l]
    assert any("channels.allowed_namespaces" in line and "shipped with castline" in line for line in plugin_lines), plugin_lines


def test_discover_json_prints_one_object_per_device_per_line(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--devices", "2"])
    try:
        result = castline(netns, "discover", "--json", "--host", "127.0.0.1", "--host", "127.0.0.2", "--timeout", "3")
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 2, result.stdout
        devices = [json.loads(line) for line in lines]
        assert all(isinstance(d, dict) for d in devices), devices
        assert sorted(d["id"] for d in devices) == sorted(d["uuid"] for d in sim.ready["devices"])
        assert {d["host"] for d in devices} == {"127.0.0.1", "127.0.0.2"}
    finally:
        assert sim.stop() == 0


def everything(lines):
    """Every event of a stopped JSONLines (its readers have finished)."""
    while not lines.events.empty():
        lines.seen.append(lines.events.get_nowait()[1])
    return lines.seen


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_discover_follow_stopped_by_a_signal_reports_no_device_lost(netns, sim, sig):
    follow = JSONLines(netns.command(castline_binary(), "discover", "--follow", "--json", "--host", DEVICE), None)
    try:
        found = follow.wait_for(lambda e: e.get("event") == "found", 15)
        assert found, f"not found: {follow.seen} {follow.log()}"
        assert found[1]["device"]["id"] == sim.device["uuid"]
    finally:
        code = follow.stop(sig)
    events = everything(follow)
    assert code == 0, follow.log()
    assert [e for e in events if e.get("event") == "lost"] == [], events


def test_a_device_given_by_address_reports_the_id_and_name_it_gives_in_eureka_info(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--name", "Lobby TV", "--model", "Chromecast Ultra"])
    try:
        for given in [DEVICE, f"{DEVICE}:8009"]:
            result = castline(netns, "status", "--device", given, "--json", "--direct")
            assert result.returncode == 0, result.stderr
            [status] = json_lines(result.stdout)
            assert (status["id"], status["device"], status["endpoint"]) == (sim.device["uuid"], "Lobby TV", "127.0.0.1:8009"), status
        cast = castline(netns, "cast", "http://media.invalid/a.mp4", "--device", DEVICE, "--direct")
        assert cast.returncode == 0 and cast.stdout.startswith('Lobby TV: PLAYING'), cast.stdout + cast.stderr
    finally:
        assert sim.stop() == 0


def test_a_device_without_eureka_info_keeps_its_address_as_its_name(netns, workdir):
    config = os.path.join(workdir, "sim.json")
    with open(config, "w") as f:
        json.dump({"devices": [{"name": "Hidden TV", "uuid": "00112233445566778899aabbccddeeff", "address": "127.0.0.1",
                                "castPort": 8009, "httpPort": 18008, "httpsPort": 18443}]}, f)
    sim = Simulator(netns, workdir, extra=["--no-mdns", "--config", config])
    try:
        result = castline(netns, "status", "--device", DEVICE, "--json", "--direct")
        assert result.returncode == 0, result.stderr
        [status] = json_lines(result.stdout)
        assert (status["id"], status["device"]) == ("127.0.0.1:8009", "127.0.0.1:8009"), status
    finally:
        assert sim.stop() == 0
