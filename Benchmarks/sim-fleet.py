#!/usr/bin/env python3
"""Benchmark: one `castline sim` process serving many devices, advertised through a real
avahi-daemon, inside a network namespace this script creates (only `lo`; no traffic leaves it).

Prints: time to ready, time until avahi-browse sees every device, RSS (current and peak), open
file descriptors, CPU used while idle, then the same after a pychromecast session on the last
device. Needs root (ip netns) and the conformance venv (`make conformance` creates it).

    sudo .venv/bin/python Benchmarks/sim-fleet.py [--devices 1000] [--idle 20] [--no-mdns]
         [--bin .build/release/castline]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402  (Namespace, Simulator, run_client, start_avahi, stop_avahi)



def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def count_services(netns, env):
    result = subprocess.run(netns.command("avahi-browse", "-pt", "_googlecast._tcp"), env=env, capture_output=True,
                            text=True, timeout=60)
    return len({line.split(";")[3] for line in result.stdout.splitlines() if line.startswith("+")})


def snapshot(pid):
    status = proc_status(pid)
    return {"rss_mb": int(status["VmRSS"].split()[0]) / 1024, "peak_mb": int(status["VmHWM"].split()[0]) / 1024,
            "threads": int(status["Threads"]), "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=20, help="seconds to measure idle CPU")
    parser.add_argument("--no-mdns", action="store_true")
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN"))
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    binary = conftest.castline_binary()
    print(f"sim-fleet: {args.devices} devices, mDNS {'off' if args.no_mdns else 'on (avahi-daemon on lo)'}, {binary}")

    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-fleet-")
    os.chmod(workdir, 0o755)
    sim = avahi = None
    try:
        avahi, env = (None, None) if args.no_mdns else conftest.start_avahi(netns, workdir)
        started = time.monotonic()
        extra = ["--devices", str(args.devices), "--log", "*:warning"] + (["--no-mdns"] if args.no_mdns else [])
        sim = conftest.Simulator(netns, workdir, extra=extra, env=env)
        ready = time.monotonic() - started
        pid = conftest.sim_pid(netns)
        print(f"  ready after            {ready:8.2f} s")
        if env:
            deadline = time.monotonic() + 120
            seen = 0
            while time.monotonic() < deadline:
                seen = count_services(netns, env)
                if seen >= args.devices:
                    break
                time.sleep(1)
            print(f"  avahi-browse sees      {seen:8d} / {args.devices} services after {time.monotonic() - started:.1f} s")
        time.sleep(2)
        before = snapshot(pid)
        ticks = conftest.cpu_ticks(pid)
        time.sleep(args.idle)
        idle_ticks = conftest.cpu_ticks(pid) - ticks
        print(f"  RSS                    {before['rss_mb']:8.1f} MB (peak {before['peak_mb']:.1f} MB), "
              f"{before['threads']} threads, {before['fds']} fds")
        print(f"  idle CPU over {args.idle:.0f} s     {idle_ticks / conftest.CLOCK_TICKS:8.2f} s "
              f"({100 * idle_ticks / conftest.CLOCK_TICKS / args.idle:.2f} % of one core)")
        last = sim.ready["devices"][-1]
        session_started = time.monotonic()
        result = conftest.run_client(netns, "pychromecast_flow.py", last["address"], str(last["castPort"]), last["uuid"])
        ok = all(result.get(key) for key in ("connected", "reached_playing", "reached_paused", "seek_ok", "quit_ok"))
        print(f"  pychromecast session on device {args.devices} ({last['address']}): "
              f"{'ok' if ok else 'FAILED ' + str(result)} in {time.monotonic() - session_started:.1f} s")
        after = snapshot(pid)
        print(f"  RSS after the session  {after['rss_mb']:8.1f} MB (peak {after['peak_mb']:.1f} MB)")
        print(f"  per device             {1024 * before['rss_mb'] / args.devices:8.1f} KB")
    finally:
        if sim:
            sim.stop()
        if avahi:
            conftest.stop_avahi(avahi)
        netns.close()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
