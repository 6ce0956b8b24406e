#!/usr/bin/env python3
"""Benchmark: castline's sender framework against one `castline sim` process with many devices,
and pychromecast on the same simulator in the same run, inside a network namespace this script
creates (only `lo`: no traffic leaves it; no mDNS).

For N = 100 castline and pychromecast each connect, launch and load on N devices until every
one is PLAYING; then castline does the same on 1,000 devices and cuts 20 of them off for 2 s
(the simulator's `outage`: unreachable, app kept) to measure how soon after a device is
reachable again its session has resumed. Prints every figure as a
JSON line and a summary. Needs root (ip netns), the conformance venv and release builds.

    sudo .venv/bin/python Benchmarks/sender-fleet.py --bin .build/release/castline \\
         --bench Benchmarks/.build/release/castline-sender-bench [--large 1000] [--small 100] [--idle 10]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402


def run(netns, argv, timeout, sim_pid=None):
    """Runs one benchmark process in the namespace; its JSON lines by name. With `sim_pid`, also
    the simulator's CPU seconds during the run (the device side's share of the work)."""
    ticks = conftest.cpu_ticks(sim_pid) if sim_pid else 0
    result = subprocess.run(netns.command(*argv), capture_output=True, text=True, timeout=timeout)
    if sim_pid:
        used = (conftest.cpu_ticks(sim_pid) - ticks) / conftest.CLOCK_TICKS
        print(f"  simulator CPU during the run: {used:.2f} s", flush=True)
    figures = {}
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            print("  " + line, flush=True)
            figure = json.loads(line)
            figures[figure["name"]] = figure
    if result.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed (rc {result.returncode}): {result.stderr[-3000:]}")
    if result.stderr.strip():
        print("  stderr: " + result.stderr.strip()[-1500:], flush=True)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN"))
    parser.add_argument("--bench", required=True)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10)
    parser.add_argument("--outage", type=int, default=20, help="devices made unreachable for 2 s")
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    bench = os.path.abspath(args.bench)
    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-senders-")
    os.chmod(workdir, 0o755)
    sim = None
    try:
        devices = max(args.large, 2 * args.small)
        # The device side as cheap as it can be (no frame log, warnings only, no buffering delay):
        # the figures are about the senders.
        sim = conftest.Simulator(netns, workdir, extra=["--devices", str(devices), "--no-mdns", "--buffering-delay", "0"],
                                 frame_log=False)
        targets = os.path.join(workdir, "devices.json")
        with open(targets, "w") as f:
            json.dump(sim.ready["devices"], f)
        second_half = os.path.join(workdir, "devices-b.json")
        with open(second_half, "w") as f:
            json.dump(sim.ready["devices"][args.small:], f)
        print(f"sender-fleet: simulator with {devices} devices; castline {bench}", flush=True)

        print(f"castline, {args.small} sessions:", flush=True)
        pid = conftest.sim_pid(netns)
        small = run(netns, [bench, "--targets", targets, "--sessions", str(args.small), "--idle", str(args.idle),
                            "--warmup", "1"], 600, pid)
        print(f"pychromecast {conftest_version()}, {args.small} sessions (other devices):", flush=True)
        peer = run(netns, [conftest.PYTHON, os.path.join(REPO, "Benchmarks", "pychromecast-sessions.py"), "--targets", second_half,
                           "--sessions", str(args.small), "--idle", str(args.idle), "--warmup", "1"], 900, pid)
        sim.control({"command": "stop-app", "device": "all"})
        print(f"castline, {args.large} sessions (+ {args.outage} devices unreachable for 2 s):", flush=True)
        large = run(netns, [bench, "--targets", targets, "--sessions", str(args.large), "--idle", str(args.idle),
                            "--control", sim.control_socket, "--outage", str(args.outage), "--down-for", "2"], 900, pid)

        ours, theirs = small["sender.all_playing"]["value"], peer["pychromecast.all_playing"]["value"]
        print("\nsummary", flush=True)
        failed = {"castline": small["sender.all_playing"].get("failed", 0), "pychromecast": peer["pychromecast.all_playing"].get("failed", 0)}
        print(f"  time to all-PLAYING, {args.small}:  castline {ours:.2f} s, pychromecast {theirs:.2f} s "
              f"({theirs / max(ours, 1e-6):.1f}x)")
        for sender, count in failed.items():
            if count:
                # A failed session's time is its timeouts: the ratio of this run means nothing.
                print(f"  NOTE: {count} {sender} session(s) failed in this run (see its stderr above); its time "
                      f"includes their timeouts, so the ratio of this run is not a speed figure")
        print(f"  sender CPU until all PLAYING, {args.small}: castline {small['sender.all_playing']['cpu_seconds']:.2f} s, "
              f"pychromecast {peer['pychromecast.all_playing']['cpu_seconds']:.2f} s")
        print(f"  RSS per session, {args.small}:      castline {small['sender.rss_per_session']['value']:.0f} KB, "
              f"pychromecast {peer['pychromecast.rss_per_session']['value']:.0f} KB")
        print(f"  idle CPU, {args.small}:             castline {small['sender.idle_cpu']['value']:.2f} %, "
              f"pychromecast {peer['pychromecast.idle_cpu']['value']:.2f} %")
        print(f"  {args.large} sessions: all PLAYING in {large['sender.all_playing']['value']:.2f} s, "
              f"{large['sender.rss_per_session']['value']:.0f} KB RSS each, idle CPU {large['sender.idle_cpu']['value']:.2f} %")
        reconnect = large.get("sender.reconnect_after_reachable.max")
        if reconnect:
            print(f"  reconnect after the device is reachable: p50 {reconnect['p50']:.3f} s, max {reconnect['value']:.3f} s "
                  f"({reconnect['resumed']}/{reconnect['unreachable']} resumed)")
    finally:
        if sim:
            sim.stop()
        netns.close()
        shutil.rmtree(workdir, ignore_errors=True)


def conftest_version():
    try:
        import pychromecast  # noqa: F401
        from importlib.metadata import version
        return version("PyChromecast")
    except Exception:  # noqa: BLE001
        return "?"


if __name__ == "__main__":
    main()
