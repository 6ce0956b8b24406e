"""`castline sim` where mDNS cannot work: no D-Bus system bus, or a bus without avahi-daemon.
The simulator must start, serve its devices by address and say why it does not advertise them;
it must never crash (avahi-client's failure path once freed its poll twice: SIGSEGV)."""
import os
import signal

import pytest

from conftest import PYTHON, Simulator, start_dbus

pytestmark = pytest.mark.needs_root("a network namespace (ip netns) and a private D-Bus")

STATUS_SCRIPT = """
import sys, uuid, pychromecast
host, port, device_uuid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cast = pychromecast.get_chromecast_from_host((host, port, uuid.UUID(device_uuid), "Chromecast", "sim"), tries=1, timeout=5)
cast.wait(timeout=10)
print("status", cast.status is not None)
cast.disconnect(timeout=5)
"""


def answers_by_address(netns, device):
    """pychromecast reaches the device by its address and reads its RECEIVER_STATUS."""
    result = netns.run(PYTHON, "-c", STATUS_SCRIPT, device["address"], str(device["castPort"]), device["uuid"], timeout=60)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "status True" in result.stdout, result.stdout


def stderr_text(sim):
    with open(sim.stderr_path) as f:
        return f.read()


def stop_cleanly(sim):
    rc = sim.stop()
    assert rc == 0, f"castline sim exited {rc} (-{int(signal.SIGSEGV)}: a crash): {stderr_text(sim)[-3000:]}"


def test_sim_without_a_system_bus_runs_and_says_why(netns, tmp_path):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-such-bus")
    sim = Simulator(netns, str(tmp_path), env=env)
    try:
        assert sim.ready["mdns"].startswith("unavailable: "), sim.ready
        answers_by_address(netns, sim.device)
    finally:
        stop_cleanly(sim)
    assert "mDNS advertisement unavailable" in stderr_text(sim)


def test_sim_with_a_bus_but_no_avahi_daemon_waits_for_it(netns, tmp_path):
    dbus_pid, env, _ = start_dbus(netns, str(tmp_path / "dbus"))
    try:
        sim_dir = tmp_path / "sim"
        sim_dir.mkdir()
        sim = Simulator(netns, str(sim_dir), env=env)
        try:
            assert sim.ready["mdns"] == "waiting for avahi-daemon", sim.ready
            answers_by_address(netns, sim.device)
        finally:
            stop_cleanly(sim)
    finally:
        os.kill(dbus_pid, signal.SIGTERM)
