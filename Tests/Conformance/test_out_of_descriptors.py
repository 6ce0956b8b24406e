"""`castline sim` out of file descriptors: a failed accept is logged (with what to do about it),
accepting pauses instead of retrying at full speed, and once descriptors are free again the
senders are served. And the long-running commands raise their soft open-file limit to the hard
one, so a fleet does not start at 1024."""
import os
import subprocess
import textwrap
import time

import pytest

from conftest import Simulator, castline_binary

pytestmark = pytest.mark.needs_root("a network namespace (ip netns) and prlimit on the simulator")

HOLD_SECONDS = 2.5
# Opens plain TCP connections to the device until well past the limit, holds them, closes them,
# then checks that a TLS handshake succeeds again: it waits in the listen backlog until accepting
# resumes (bounded by its socket timeout), nothing else waits for the pause to end.
CLIENT = textwrap.dedent(f"""
    import socket, ssl, time
    held = [socket.create_connection(("127.0.0.1", 8009), timeout=5) for _ in range(24)]
    time.sleep({HOLD_SECONDS})   # behaviour: the descriptors stay taken for {HOLD_SECONDS} s
    for s in held:
        s.close()
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with context.wrap_socket(socket.create_connection(("127.0.0.1", 8009), timeout=15)) as tls:
        print("handshake", tls.version())
""")


def test_a_simulator_out_of_descriptors_says_so_pauses_and_recovers(netns, sim):
    pid = sim.process.pid  # `ip netns exec` execs castline
    in_use = len(os.listdir(f"/proc/{pid}/fd"))
    limit = in_use + 6
    subprocess.run(["prlimit", "--pid", str(pid), f"--nofile={limit}:{limit}"], check=True)
    started = time.monotonic()
    client = netns.run("python3", "-c", CLIENT, timeout=30)
    elapsed = time.monotonic() - started
    # TLS 1.2: the default profile, chromecast-legacy (docs/simulator.md#tls-profiles).
    assert client.returncode == 0 and "handshake TLSv1.2" in client.stdout, client.stderr[-3000:]

    sim.stderr.flush()
    with open(sim.stderr_path) as f:
        log = f.read()
    failures = [line for line in log.splitlines() if "cannot accept connections" in line]
    assert failures, f"no log line for the failed accepts: {log[-3000:]}"
    assert "Too many open files" in failures[0] and "(errno: 24)" in failures[0] and "LimitNOFILE" in failures[0], failures[0]
    # At most one line per pause (1 s) until the backlog drains; retrying at once logs thousands.
    assert len(failures) <= elapsed + 2, f"{len(failures)} lines in {elapsed:.1f} s: accepting did not pause"

    cast = netns.run(castline_binary(), "cast", "http://media.invalid/after.mp4", "--device", "127.0.0.1", "--json")
    assert cast.returncode == 0 and '"PLAYING"' in cast.stdout, cast.stderr[-3000:]


def test_the_simulator_raises_its_open_file_limit_to_the_hard_one(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns"], prefix=["prlimit", "--nofile=256:4096", "--"])
    try:
        with open(f"/proc/{sim.process.pid}/limits") as f:  # prlimit and ip netns exec exec castline
            limits = [line for line in f if line.startswith("Max open files")][0].split()
        assert limits[3:5] == ["4096", "4096"], limits
    finally:
        code = sim.stop()
    with open(sim.stderr_path) as f:
        log = f.read()
    assert code == 0, log[-3000:]
    assert "open-file limit raised from 256 to 4096" in log, log[-3000:]
