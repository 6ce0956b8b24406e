"""mDNS: the simulator advertises itself through a real avahi-daemon (private D-Bus, `lo` only,
inside the test's own network namespace) and pychromecast's CastBrowser finds it."""
import os
import subprocess
import time
import uuid

import pytest

from conftest import Simulator, run_client

AVAHI_CONF = """[server]
host-name=castline-conformance
allow-interfaces=lo
use-ipv4=yes
use-ipv6=no
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
"""


@pytest.fixture
def avahi(netns, workdir):
    run = os.path.join(workdir, "run")
    os.makedirs(os.path.join(run, "dbus"))
    os.makedirs(os.path.join(run, "avahi-daemon"))
    conf = os.path.join(workdir, "avahi-daemon.conf")
    with open(conf, "w") as f:
        f.write(AVAHI_CONF)
    log = open(os.path.join(workdir, "avahi.log"), "w")
    process = subprocess.Popen(netns.command(
        "unshare", "-m", "--propagation", "private", "sh", "-c",
        'mount --bind "$1" /run && dbus-daemon --system --fork && '
        'exec avahi-daemon -f "$2" --no-drop-root --no-chroot --no-rlimits', "sh", run, conf),
        stdout=log, stderr=log)
    bus = f"unix:path={run}/dbus/system_bus_socket"
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        state = subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.Avahi", "/",
                                "org.freedesktop.Avahi.Server.GetState"], env=env, capture_output=True, text=True)
        if "int32 2" in state.stdout:
            break
        time.sleep(0.1)
    else:
        process.kill()
        pytest.fail(f"avahi-daemon did not come up: {open(os.path.join(workdir, 'avahi.log')).read()}")
    yield env
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()   # dbus-daemon (forked) dies with the namespace teardown (by PID, see Namespace.close)


def browse(netns, env, service="_googlecast._tcp"):
    result = subprocess.run(netns.command("avahi-browse", "-rpt", service), env=env, capture_output=True,
                            text=True, timeout=20)
    return [line.split(";") for line in result.stdout.splitlines() if line.startswith("=")]


def test_pychromecast_castbrowser_finds_the_simulator_through_avahi(netns, workdir, avahi):
    sim = Simulator(netns, workdir, extra=["--devices", "2"], env=avahi)
    try:
        found = run_client(netns, "discover.py", "2")
        by_uuid = {d["uuid"].replace("-", ""): d for d in found["devices"]}
        for device in sim.ready["devices"]:
            seen = by_uuid.get(device["uuid"])
            assert seen, (found, sim.log_text())
            assert seen["name"] == device["name"]
            assert seen["host"] == device["address"]
            assert seen["port"] == 8009
            assert seen["model"] == "Chromecast"

        # One subtype per installed app; st/rs republished when an app starts.
        subtype = browse(netns, avahi, "_CC1AD845._sub._googlecast._tcp")
        assert len(subtype) >= 2, subtype
        before = {fields[3]: fields[9] for fields in browse(netns, avahi)}
        assert all('"st=0"' in txt for txt in before.values()), before
        first = sim.ready["devices"][0]
        launched = run_client(netns, "launch_app.py", first["address"], str(first["castPort"]), first["uuid"])
        assert launched["app_id"] == "CC1AD845"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            after = {fields[3]: fields[9] for fields in browse(netns, avahi)}
            busy = [name for name, txt in after.items() if '"st=1"' in txt and '"rs=Default Media Receiver"' in txt]
            if busy:
                break
        assert busy == [f"Chromecast-{first['uuid']}"], after
    finally:
        assert sim.stop() == 0, sim.log_text()
