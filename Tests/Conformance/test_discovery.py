"""mDNS: the simulator advertises itself through a real avahi-daemon (private D-Bus, `lo` only,
inside the test's own network namespace) and pychromecast's CastBrowser finds it."""
import subprocess
import time

import pytest

from conftest import Simulator, run_client, start_avahi, stop_avahi

pytestmark = pytest.mark.needs_root("a network namespace with a private D-Bus and avahi-daemon (ip netns, mount --bind)")


@pytest.fixture
def avahi(netns, workdir):
    try:
        process, env = start_avahi(netns, workdir)
    except RuntimeError as error:
        pytest.fail(str(error))
    yield env
    stop_avahi(process)   # dbus-daemon (forked) dies with the namespace teardown (by PID, see Namespace.close)


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
