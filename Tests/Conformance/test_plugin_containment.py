"""Plugins that misbehave, against the real daemon (`castline run`) over its API socket and the
real simulator: a plugin cannot take castline down. Fixtures are the built TestPlugin*.so files."""
import json
import os

import pytest

from conftest import Simulator, wait_until
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
