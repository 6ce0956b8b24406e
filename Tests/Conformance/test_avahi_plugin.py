"""The AvahiDiscovery plugin (loaded from its .so by `castline discover`) against a real
avahi-daemon on `lo` inside a private network namespace, publishing the real `castline sim`:
found, lost when the simulator stops, waiting for an absent daemon, surviving a daemon restart."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import JSONLines, Simulator, castline_binary, start_avahi, start_avahi_daemon, start_dbus, stop_avahi

pytestmark = pytest.mark.needs_root("network namespaces with a private D-Bus and avahi-daemon (ip netns, mount --bind)")


class Discover(JSONLines):
    """`castline discover --json --follow` in the namespace; its JSON lines are collected by a thread."""

    def __init__(self, netns, env, timeout=120):
        self.started = time.monotonic()
        super().__init__(netns.command(castline_binary(), "discover", "--json", "--follow", "--timeout", str(timeout)), env)

    def stop(self):
        """(exit code, everything it wrote on stderr)."""
        return super().stop(), "".join(self.stderr_lines)


def json_lines(text):
    """`discover --json` output: one JSON object per device per line."""
    return [json.loads(line) for line in text.splitlines()]


def found(uuid):
    return lambda e: e.get("event") == "found" and e["device"]["id"] == uuid


def lost(uuid):
    return lambda e: e.get("event") == "lost" and e["device"]["id"] == uuid


def test_finds_the_simulator_with_its_txt_fields_and_loses_it_when_it_stops(netns, workdir):
    avahi, env = start_avahi(netns, workdir)
    sim = None
    discover = None
    try:
        sim = Simulator(netns, workdir, env=env, frame_log=False, extra=["--name", "Lobby TV", "--model", "Chromecast Ultra"])
        uuid = sim.device["uuid"]
        discover = Discover(netns, env)
        hit = discover.wait_for(found(uuid), 15)
        assert hit, f"not found; events: {discover.seen}"
        at, event = hit
        print(f"found after {at - discover.started:.2f} s")
        device = event["device"]
        assert device["name"] == "Lobby TV"
        assert device["model"] == "Chromecast Ultra"
        assert device["host"] == "127.0.0.1" and device["port"] == 8009
        assert device["addresses"] == ["127.0.0.1"]
        assert device["provider"] == "avahi"
        assert isinstance(device["capabilities"], int) and device["capabilities"] & 1  # video out
        assert sim.stop() == 0
        sim = None
        assert discover.wait_for(lost(uuid), 15), f"not lost; events: {discover.seen}"
    finally:
        if discover:
            code, err = discover.stop()
            assert code == 0, err
        if sim:
            sim.stop()
        stop_avahi(avahi)


def test_a_follow_ended_by_a_signal_reports_no_loss_and_one_left_running_reports_the_real_one(netns, workdir):
    avahi, env = start_avahi(netns, workdir)
    sim = None
    followers = []
    try:
        sim = Simulator(netns, workdir, env=env, frame_log=False)
        uuid = sim.device["uuid"]
        followers = [Discover(netns, env) for _ in range(3)]
        for follower in followers:
            assert follower.wait_for(found(uuid), 15), f"not found; events: {follower.seen}"
        for follower, sig in zip(followers[:2], (signal.SIGINT, signal.SIGTERM)):
            assert JSONLines.stop(follower, sig) == 0, follower.log()
            while not follower.events.empty():
                follower.seen.append(follower.events.get_nowait()[1])
            assert not [e for e in follower.seen if e.get("event") == "lost"], f"{sig!r}: {follower.seen}"
        assert sim.stop() == 0
        sim = None
        assert followers[2].wait_for(lost(uuid), 15), f"the simulator's end not reported lost; events: {followers[2].seen}"
    finally:
        for follower in followers:
            follower.stop()
        if sim:
            sim.stop()
        stop_avahi(avahi)


def test_waits_for_an_absent_daemon_and_survives_its_restart(netns, workdir):
    dbus_pid, env, run = start_dbus(netns, workdir)
    avahi = None
    sim = None
    discover = None
    try:
        discover = Discover(netns, env)
        problem = discover.wait_for(lambda e: e.get("event") == "problem", 10)
        assert problem, f"no problem reported; events: {discover.seen}"
        assert "avahi-daemon is not running" in problem[1]["reason"]
        assert problem[1]["provider"] == "avahi"

        sim = Simulator(netns, workdir, env=env, frame_log=False)
        uuid = sim.device["uuid"]
        avahi = start_avahi_daemon(netns, workdir, run, env)
        assert discover.wait_for(lambda e: e.get("event") == "recovered", 15), f"events: {discover.seen}"
        assert discover.wait_for(found(uuid), 15), f"not found after the daemon appeared; events: {discover.seen}"

        # Restart: the device is kept while the daemon is away and confirmed when it is back.
        stop_avahi(avahi)
        assert discover.wait_for(lambda e: e.get("event") == "problem", 10), f"events: {discover.seen}"
        avahi = start_avahi_daemon(netns, workdir, run, env)
        assert discover.wait_for(lambda e: e.get("event") == "recovered", 15), f"events: {discover.seen}"
        # Past the plugin's 5 s grace: nothing about the device was reported lost.
        discover.wait_for(lambda e: False, 7)
        assert not [e for e in discover.seen if e.get("event") == "lost"], f"events: {discover.seen}"

        # And removal still works after the restart.
        assert sim.stop() == 0
        sim = None
        assert discover.wait_for(lost(uuid), 15), f"not lost; events: {discover.seen}"
    finally:
        if discover:
            code, err = discover.stop()
            assert code == 0, err
        if sim:
            sim.stop()
        if avahi:
            stop_avahi(avahi)
        try:
            os.kill(dbus_pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def test_discover_explains_an_empty_result(netns, workdir):
    dbus_pid, env, _ = start_dbus(netns, workdir)
    try:
        result = netns.run(castline_binary(), "discover", "--timeout", "1", env=env, timeout=30)
        assert result.returncode == 1
        assert "no Cast device found" in result.stderr
        assert "provider avahi failed: avahi-daemon is not running" in result.stderr, result.stderr
    finally:
        os.kill(dbus_pid, signal.SIGTERM)


def test_interface_allow_list_and_bad_plugin_config(netns, workdir):
    avahi, env = start_avahi(netns, workdir)
    sim = None
    try:
        sim = Simulator(netns, workdir, env=env, frame_log=False)
        uuid = sim.device["uuid"]
        on_lo = netns.run(castline_binary(), "discover", "--json", "--timeout", "2",
                          "--plugin-config", 'avahi-discovery={"interfaces":["lo"]}', env=env, timeout=30)
        assert on_lo.returncode == 0, on_lo.stderr
        assert [d["id"] for d in json_lines(on_lo.stdout)] == [uuid]
        # The app's DNS-SD subtype (_CC1AD845._sub._googlecast._tcp) marks the device as supporting it.
        by_app = netns.run(castline_binary(), "discover", "--json", "--timeout", "2", "--app", "CC1AD845", env=env, timeout=30)
        assert by_app.returncode == 0, by_app.stderr
        assert [d.get("app_ids") for d in json_lines(by_app.stdout)] == [["CC1AD845"]]
        elsewhere = netns.run(castline_binary(), "discover", "--json", "--timeout", "2",
                              "--plugin-config", 'avahi-discovery={"interfaces":["castline-none0"]}', env=env, timeout=30)
        assert elsewhere.returncode == 1
        assert elsewhere.stdout == ""
        typo = netns.run(castline_binary(), "discover", "--timeout", "1",
                         "--plugin-config", 'avahi-discovery={"interface":["lo"]}', env=env, timeout=30)
        assert typo.returncode == 1
        assert 'unknown config key "interface" (allowed: interfaces)' in typo.stderr, typo.stderr
        garbage = netns.run(castline_binary(), "discover", "--plugin-config", "avahi-discovery={nope", env=env, timeout=30)
        assert garbage.returncode == 64, garbage.returncode  # EX_USAGE
        assert "invalid JSON" in garbage.stderr
    finally:
        if sim:
            sim.stop()
        stop_avahi(avahi)


def test_finds_a_device_over_ipv6_only_with_a_scoped_address_that_connects(workdir):
    """Two hosts on a veth link whose avahi-daemons speak IPv6 only: a device published on A
    (avahi-publish, with a TCP listener on [::]:8009) is found by `castline discover` on B with a
    link-local address scoped to B's interface, and that address connects."""
    from conftest import make_lan
    lan = make_lan(workdir, ipv4=False)
    a, b = next(lan)
    publisher = listener = None
    try:
        device_id = "6f0c1e2d3b4a59687766554433221100"
        publisher = subprocess.Popen(a.namespace.command(
            "avahi-publish", "-s", f"Chromecast-{device_id}", "_googlecast._tcp", "8009", f"id={device_id}", "fn=IPv6 TV",
            "md=Chromecast", "ca=4101", "st=0", "rs=", "ve=05"), env=a.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        listener = subprocess.Popen(a.namespace.command(
            "python3", "-c", "import socket\n"
            "s = socket.socket(socket.AF_INET6)\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('::', 8009))\ns.listen(1)\nprint('listening', flush=True)\ns.settimeout(30)\n"
            "c, _ = s.accept()\nc.sendall(b'castline-ipv6-ok')\nc.close()\n"), stdout=subprocess.PIPE, text=True)
        assert listener.stdout.readline().strip() == "listening"
        discover = Discover(b.namespace, b.env)
        try:
            hit = discover.wait_for(found(device_id), 15)
            assert hit, f"not found over IPv6: {discover.seen} {discover.log()}"
        finally:
            discover.stop()
        device = hit[1]["device"]
        print(f"found over IPv6 after {hit[0] - discover.started:.2f} s: {device['host']}")
        assert device["name"] == "IPv6 TV" and device["port"] == 8009
        assert device["host"].startswith("fe80:") and device["host"].endswith("%nearby0"), device
        assert all(":" in address for address in device["addresses"]), "IPv6 only: no IPv4 address"
        probe = subprocess.run(b.namespace.command(
            "python3", "-c", "import socket, sys\n"
            "host, port = sys.argv[1], int(sys.argv[2])\n"
            "info = socket.getaddrinfo(host, port, socket.AF_INET6, socket.SOCK_STREAM)[0]\n"
            "s = socket.socket(socket.AF_INET6)\ns.settimeout(10)\ns.connect(info[4])\nprint(s.recv(100).decode())\n",
            device["host"], str(device["port"])), capture_output=True, text=True, timeout=30)
        assert probe.stdout.strip() == "castline-ipv6-ok", probe
    finally:
        for process in (publisher, listener):
            if process and process.poll() is None:
                process.kill()
                process.wait(timeout=5)
        next(lan, None)
