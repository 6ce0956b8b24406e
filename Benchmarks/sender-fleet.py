#!/usr/bin/env python3
"""Benchmark: castline's sender framework against one `castline sim` process with many devices,
and pychromecast on the same simulator in the same run, inside a network namespace this script
creates (only `lo`: no traffic leaves it; no mDNS).

For N = 100 castline and pychromecast each connect, launch and load on N devices until every
one is PLAYING, in --rounds alternating rounds (default 5; each round on devices nobody used yet,
castline first in even rounds, pychromecast first in odd ones): one run of either is 50–700 ms
and moves by a third between runs on this VM, so the comparison is the median of each side's
rounds, with every round's figures printed. RSS per session and idle CPU come from the first
round (the later ones idle 0.1 s). Then castline does the same on 1,000 devices and cuts 20 of them off for 2 s
(the simulator's `outage`: unreachable, app kept) to measure how soon after a device is
reachable again its session has resumed. Prints every figure as a
JSON line and a summary. Needs root (ip netns), the conformance venv and release builds.

    sudo .venv/bin/python Benchmarks/sender-fleet.py --bin .build/release/castline \\
         --bench Benchmarks/.build/release/castline-sender-bench [--large 1000] [--small 100] [--idle 10] [--rounds 5]
"""
import argparse
import json
import os
import shutil
import statistics
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
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of the N = --small comparison")
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    bench = os.path.abspath(args.bench)
    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-senders-")
    os.chmod(workdir, 0o755)
    sim = None
    try:
        rounds = max(1, args.rounds)
        devices = max(args.large, 2 * args.small * rounds + 1)
        # The device side as cheap as it can be (no frame log, warnings only, no buffering delay):
        # the figures are about the senders.
        # --tls modern: the device side's TLS as when the recorded figures were taken (docs/performance.md).
        sim = conftest.Simulator(netns, workdir, extra=["--devices", str(devices), "--no-mdns", "--buffering-delay", "0", "--tls", "modern"],
                                 frame_log=False)
        listed = sim.ready["devices"]
        targets = os.path.join(workdir, "devices.json")
        with open(targets, "w") as f:
            json.dump(listed, f)

        def chunk(index):
            """The `index`-th block of --small devices, then the last device (both senders warm up
            on the last target of their list, outside the figures)."""
            path = os.path.join(workdir, f"devices-{index}.json")
            with open(path, "w") as f:
                json.dump(listed[index * args.small:(index + 1) * args.small] + [listed[-1]], f)
            return path

        print(f"sender-fleet: simulator with {devices} devices; castline {bench}; pychromecast {conftest_version()}; "
              f"{rounds} rounds of {args.small}", flush=True)
        pid = conftest.sim_pid(netns)
        python = os.path.join(REPO, "Benchmarks", "pychromecast-sessions.py")
        results = []   # per round: (castline figures, pychromecast figures)
        for index in range(rounds):
            idle = str(args.idle if index == 0 else 0.1)
            ours_targets, theirs_targets = chunk(2 * index), chunk(2 * index + 1)
            figures = {}
            order = ["castline", "pychromecast"] if index % 2 == 0 else ["pychromecast", "castline"]
            for sender in order:
                print(f"round {index + 1}/{rounds}: {sender}, {args.small} sessions:", flush=True)
                if sender == "castline":
                    figures[sender] = run(netns, [bench, "--targets", ours_targets, "--sessions", str(args.small), "--idle", idle,
                                                  "--warmup", "1"], 600, pid)
                else:
                    try:
                        figures[sender] = run(netns, [conftest.PYTHON, python, "--targets", theirs_targets,
                                                      "--sessions", str(args.small), "--idle", idle, "--warmup", "1"], 900, pid)
                    except RuntimeError as error:
                        # pychromecast's process itself died (seen: glibc "corrupted unsorted chunks"
                        # after its two-thread TLS writes): the round is reported and left out.
                        print(f"  pychromecast's process failed in this round: {str(error)[-400:]}", flush=True)
                        figures[sender] = None
            results.append((figures["castline"], figures["pychromecast"]))
        sim.control({"command": "stop-app", "device": "all"})
        print(f"castline, {args.large} sessions (+ {args.outage} devices unreachable for 2 s):", flush=True)
        large = run(netns, [bench, "--targets", targets, "--sessions", str(args.large), "--idle", str(args.idle),
                            "--control", sim.control_socket, "--outage", str(args.outage), "--down-for", "2"], 900, pid)

        small = results[0][0]
        peer_round = next((index for index, (_, theirs) in enumerate(results) if theirs), None)
        peer = results[peer_round][1] if peer_round is not None else None
        print("\nsummary", flush=True)
        valid = []
        for index, (ours_figures, theirs_figures) in enumerate(results):
            ours_run = ours_figures["sender.all_playing"]
            if theirs_figures is None:
                print(f"  round {index + 1}: castline {ours_run['value']:.3f} s; pychromecast's process failed (left out)")
                continue
            theirs_run = theirs_figures["pychromecast.all_playing"]
            failed = {"castline": ours_run.get("failed", 0), "pychromecast": theirs_run.get("failed", 0)}
            note = ""
            if any(failed.values()):
                # A failed session's time is its timeouts: such a round is not a speed figure.
                note = "  (left out: " + ", ".join(f"{count} {sender} session(s) failed" for sender, count in failed.items() if count) + ")"
            else:
                valid.append((ours_run["value"], theirs_run["value"]))
            print(f"  round {index + 1}: time to all-PLAYING, {args.small}: castline {ours_run['value']:.3f} s "
                  f"(CPU {ours_run['cpu_seconds']:.3f} s), pychromecast {theirs_run['value']:.3f} s "
                  f"(CPU {theirs_run['cpu_seconds']:.3f} s): {theirs_run['value'] / max(ours_run['value'], 1e-6):.1f}x{note}")
        if valid:
            ours = statistics.median(v[0] for v in valid)
            theirs = statistics.median(v[1] for v in valid)
            ratio = theirs / max(ours, 1e-6)
            ratios = sorted(t / max(o, 1e-6) for o, t in valid)
            print(f"  time to all-PLAYING, {args.small}, median of {len(valid)} rounds: castline {ours:.3f} s, "
                  f"pychromecast {theirs:.3f} s ({ratio:.1f}x; rounds {ratios[0]:.1f}x to {ratios[-1]:.1f}x)")
            print("  " + json.dumps({"name": "fleet.all_playing_ratio", "value": round(ratio, 2),
                                        "castline_median_s": ours, "pychromecast_median_s": theirs, "rounds": len(valid),
                                        "round_ratios": [round(r, 2) for r in ratios]}), flush=True)
        else:
            print("  NOTE: every round had failed sessions: no speed figure")
        theirs_rss = f"{peer['pychromecast.rss_per_session']['value']:.0f} KB" if peer else "?"
        theirs_idle = f"{peer['pychromecast.idle_cpu']['value']:.2f} %" if peer else "?"
        if peer_round:   # round 1's pychromecast failed: a later round's figures, measured over 0.1 s of idle
            theirs_rss += f" (round {peer_round + 1})"
            theirs_idle += f" (round {peer_round + 1}, 0.1 s)"
        print(f"  RSS per session, {args.small} (round 1): castline {small['sender.rss_per_session']['value']:.0f} KB, "
              f"pychromecast {theirs_rss}")
        print(f"  idle CPU, {args.small} (round 1):        castline {small['sender.idle_cpu']['value']:.2f} %, "
              f"pychromecast {theirs_idle}")
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
