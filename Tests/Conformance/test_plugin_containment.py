"""Plugins that misbehave, against the real daemon (`castline run`) over its API socket and the
real simulator: a plugin cannot take castline down. Fixtures are the built TestPlugin*.so files."""
import os

import pytest

from conftest import Simulator
from hub import BUILD, ECHO_NS, Hub

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
