"""castline as an unprivileged user, the way the shipped systemd unit runs it (DynamicUser=yes):
the simulator accepts senders, `castline cast` connects, serves a local file the device fetches,
and `status` and `stop` reach the device. Everything else in this suite runs as root, which hides
any socket option or path only root may use."""
import json
import re
import os
import signal
import subprocess

import pytest

from conftest import Simulator, as_user, castline_binary, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns) and setpriv to run as nobody")

USER, UID = "nobody", 65534    # and group nogroup (65534)


def test_sim_cast_status_and_stop_work_without_root(netns, workdir):
    os.chown(workdir, UID, UID)
    sim = Simulator(netns, workdir, extra=["--no-mdns"], prefix=as_user(USER))
    cast = None
    try:
        path = os.path.join(workdir, "clip.mp4")
        with open(path, "wb") as f:
            # An MP4 file type box first: the simulated device fails media it cannot recognise.
            f.write((b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 1200)[:307200])  # 307,200 bytes
        os.chmod(path, 0o644)

        def castline(*args, timeout=60):
            return netns.run(castline_binary(), *args, timeout=timeout, user=USER)

        cast = subprocess.Popen(netns.command(*as_user(USER), castline_binary(), "cast", path,
                                              "--device", "127.0.0.1", "--json", "--timeout", "10"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = cast.stdout.readline()
        assert line.startswith("{"), (line, cast.stderr.read() if cast.poll() is not None else "")
        started = json.loads(line)
        assert started["state"] == "PLAYING", line
        fetches = wait_until(lambda: sim.control({"command": "list"})["devices"][0]["mediaFetches"], 10,
                             "the device's fetch of the served file")
        assert fetches[0]["status"] == 206 and fetches[0]["bytes"] == 65536, fetches

        status = castline("status", "--device", "127.0.0.1", "--json")
        assert status.returncode == 0, status.stderr[-3000:]
        assert any(item.get("state") == "PLAYING" for item in map(json.loads, status.stdout.splitlines())
                   if isinstance(item, dict)), status.stdout

        stop = castline("stop", "--app", "--device", "127.0.0.1")
        assert stop.returncode == 0, stop.stderr[-3000:]
        wait_until(lambda: sim.control({"command": "list"})["devices"][0]["state"].get("media") is None, 10,
                   "the stop to end the media")
        _, err = cast.communicate(timeout=20)
        assert cast.returncode == 0, err[-3000:]
        assert "Permission denied" not in err, err[-3000:]
    finally:
        if cast and cast.poll() is None:
            cast.send_signal(signal.SIGTERM)
            cast.communicate(timeout=20)
        log = sim.log_text()
        code = sim.stop()
    assert code == 0, f"castline sim exited with {code} on SIGTERM: {log}"
    assert "Permission denied" not in log and "could not be set up" not in log and "cannot accept" not in log, log


def run_daemon_until_playing(netns, sim, workdir, prefix, config_text, wait=15, until=None):
    """`castline run` with `config_text`, started behind `prefix` (which execs castline as the
    unprivileged user), until the job's cast plays (the simulator says so, or `until()` is true),
    then SIGTERM; its stderr. The work folder becomes the user's (config, state)."""
    from test_daemon import playing_session
    os.chown(workdir, UID, UID)
    config = os.path.join(workdir, "castline.yaml")
    with open(config, "w") as f:
        f.write(config_text)
    os.chmod(config, 0o644)
    env = dict(os.environ, HOME=workdir, STATE_DIRECTORY=workdir)
    daemon = subprocess.Popen(netns.command(*prefix, castline_binary(), "run", "--config", config),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        done = until or (lambda: playing_session(sim))
        wait_until(lambda: done() or daemon.poll() is not None, wait, "the job's cast")
        assert daemon.poll() is None, f"rc {daemon.returncode} (-31: SIGSYS, a denied syscall): {daemon.stderr.read()[-3000:]}"
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=20)
        assert daemon.returncode == 0, err[-3000:]
        return err
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=5)


def test_the_daemon_casts_without_root(netns, sim, workdir):
    from test_daemon import CONFIG
    err = run_daemon_until_playing(netns, sim, workdir, as_user(USER), CONFIG.format(rules="info,CastChannel.*:warning"))
    assert "Permission denied" not in err, err[-3000:]


def test_the_daemon_casts_inside_the_shipped_units_sandbox(netns, sim, workdir):
    """configs/castline.service's sandbox, emulated (unit_sandbox.py): its user, syscall filter,
    MemoryDenyWriteExecute=, RestrictAddressFamilies= and LimitNOFILE=. A syscall the filter
    denies kills the process unless the unit sets SystemCallErrorNumber=: libdispatch's
    setpriority (in @resources) did."""
    from test_daemon import CONFIG
    import unit_sandbox
    from conftest import REPO
    unit = unit_sandbox.read_unit(REPO)
    policy = unit_sandbox.unit_policy(unit)
    assert policy["allowed"], "the unit has a syscall allow list"
    policy_path = os.path.join(workdir, "policy.json")
    unit_sandbox.write_policy(policy, policy_path)
    journal = os.path.join(workdir, "castline.jsonl")
    config = CONFIG.format(rules="info,CastChannel.*:warning").replace(
        "logging:\n", f"logging:\n  sinks:\n    - type: json\n      options: {{path: {journal}}}\n")
    prefix = [*unit_sandbox.limits_prefix(policy), *as_user(unit_sandbox.exec_start_user(unit)),
              "/usr/bin/python3", unit_sandbox.__file__, policy_path, "--"]

    def records():
        if not os.path.exists(journal):
            return []
        with open(journal) as f:
            return [json.loads(line) for line in f if line.strip().endswith("}")]

    # Until the daemon itself has seen PLAYING (its job's record), not only the simulator: a
    # SIGTERM between the two left no such record (seen once in a full run).
    err = run_daemon_until_playing(netns, sim, workdir, prefix, config, wait=20,
                                   until=lambda: any("→ playing" in r.get("body", "") for r in records()))
    assert any("→ playing" in r.get("body", "") for r in records()), ([r.get("body") for r in records()], err[-2000:])


def test_the_units_dynamic_user_reads_a_root_owned_token_as_a_credential(netns, sim, workdir):
    """A root-owned 0600 token in /etc/castline is out of a DynamicUser's reach; LoadCredential=
    (emulated here as systemd does it: a copy, 0400, owned by the service's user, in
    $CREDENTIALS_DIRECTORY) hands it over, and the config names it by its bare name."""
    from test_daemon import CONFIG
    import unit_sandbox
    from conftest import REPO
    unit = unit_sandbox.read_unit(REPO)
    assert re.search(r"^MemoryMax=\S+", unit, re.M) and re.search(r"^TasksMax=\d+", unit, re.M), "the unit bounds memory and tasks"
    creds = unit_sandbox.credentials(unit)
    assert ("api-token", "/etc/castline/api-token") in creds and ("mqtt-password", "/etc/castline/mqtt-password") in creds, creds
    etc = os.path.join(workdir, "etc")
    os.makedirs(etc)
    token = os.path.join(etc, "api-token")
    with open(token, "w") as f:
        f.write("credential-token-0123456789\n")
    os.chmod(token, 0o600)   # root's: the service's user cannot read it
    with open(os.path.join(etc, "mqtt-password"), "w") as f:
        f.write("unused\n")
    directory = unit_sandbox.credentials_directory(creds, os.path.join(workdir, "credentials"), UID, UID,
                                                   {"api-token": token, "mqtt-password": os.path.join(etc, "mqtt-password")})
    policy = unit_sandbox.unit_policy(unit)
    policy_path = os.path.join(workdir, "policy.json")
    unit_sandbox.write_policy(policy, policy_path)
    prefix = ["env", f"CREDENTIALS_DIRECTORY={directory}", *unit_sandbox.limits_prefix(policy),
              *as_user(unit_sandbox.exec_start_user(unit)), "/usr/bin/python3", unit_sandbox.__file__, policy_path, "--"]
    config = CONFIG.format(rules="info,CastChannel.*:warning") + "api: {listen: 127.0.0.1:18810, token_file: api-token}\n"

    def answers_with_the_token():
        out = netns.run("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer credential-token-0123456789",
                        "http://127.0.0.1:18810/v1/devices", timeout=10)
        return out.stdout.strip() == "200"
    run_daemon_until_playing(netns, sim, workdir, prefix, config, wait=20, until=answers_with_the_token)
    # The same token named by its path: the user cannot read it, and the daemon says so and stops.
    config_path = os.path.join(workdir, "direct.yaml")
    with open(config_path, "w") as f:
        f.write(config.replace("token_file: api-token", f"token_file: {token}"))
    os.chmod(config_path, 0o644)
    refused = netns.run(*as_user(USER), castline_binary(), "run", "--config", config_path, timeout=30)
    assert refused.returncode == 2 and "Permission denied" in refused.stderr and "LoadCredential=" in refused.stderr, refused.stderr[-2000:]
