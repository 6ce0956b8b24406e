#!/usr/bin/env python3
"""A/B of two castline builds on the sender benchmark: rounds alternate the builds (each with its
own simulator, since the simulator is castline too), so the VM's drifting speed hits both alike.
Each variant is a directory holding `castline` and `castline-sender-bench`, optionally followed by
`:` and extra arguments for the benchmark (e.g. `build-a:--threads 1`). Runs in a network
namespace it creates (only `lo`, no mDNS); needs root and the conformance venv.

    sudo .venv/bin/python Benchmarks/sender-ab.py /tmp/before /tmp/after [--rounds 3] [--runs 3] \\
         [--sessions 100] [--figure all_playing|idle_cpu] [--idle 10]

Prints every run and, per variant, the medians: wall time to all-PLAYING, the sender's CPU
seconds until then and the simulator's CPU seconds during the run (or the idle CPU figure).

With --shared-simulator DIR, one simulator (DIR's `castline`) serves every run, each run on
devices nobody used yet: --rounds × --runs pairs of runs, the variants' order swapped every pair
(the README's figures: `--rounds 20 --runs 1`); for two variants it also prints the paired
figures: the median over pairs of B/A for wall time and sender CPU, and in how many pairs B was
faster (a change of a few per cent only shows this way on this VM, whose speed moves
by a third between runs).
"""
import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="+", help="DIR[:extra benchmark arguments]")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="benchmark runs per variant and round (one simulator)")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--figure", choices=["all_playing", "idle_cpu"], default="all_playing")
    parser.add_argument("--idle", type=float, default=10, help="seconds of idle measurement (--figure idle_cpu)")
    parser.add_argument("--shared-simulator", metavar="DIR", help="one simulator (DIR/castline) for every run, fresh devices per run")
    args = parser.parse_args()
    variants = []
    for spec in args.variants:
        directory, _, extra = spec.partition(":")
        directory = os.path.abspath(directory)
        for name in ("castline", "castline-sender-bench"):
            if not os.access(os.path.join(directory, name), os.X_OK):
                sys.exit(f"sender-ab: {directory} has no executable {name}")
        variants.append((spec, directory, extra.split()))
    results = {spec: [] for spec, _, _ in variants}
    idle = args.idle if args.figure == "idle_cpu" else 0.1
    if args.shared_simulator:
        shared(args, variants, results, idle)
        return
    for round_index in range(args.rounds):
        for spec, directory, extra in variants:
            with simulator(directory, args.sessions + 1) as (netns, sim, pid, workdir):
                targets = os.path.join(workdir, "devices.json")
                with open(targets, "w") as f:
                    json.dump(sim.ready["devices"], f)
                for _ in range(args.runs):
                    sim.control({"command": "stop-app", "device": "all"})
                    row = run_once(netns, pid, os.path.join(directory, "castline-sender-bench"), targets, args, idle, extra)
                    if row is None:
                        continue
                    results[spec].append(row)
                    print(f"round {round_index + 1} {spec}: " + json.dumps(row), flush=True)
    print_medians(args, results)


@contextlib.contextmanager
def simulator(directory, devices):
    """DIR's `castline sim` with `devices` devices in a namespace of its own (no mDNS, no frame
    log, warnings only, no buffering delay): (namespace, simulator, its pid, a work directory);
    all of it stopped and removed afterwards."""
    os.environ["CASTLINE_BIN"] = os.path.join(directory, "castline")
    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-ab-")
    os.chmod(workdir, 0o755)
    sim = None
    try:
        sim = conftest.Simulator(netns, workdir, frame_log=False,
                                 extra=["--devices", str(devices), "--no-mdns", "--buffering-delay", "0"])
        yield netns, sim, conftest.sim_pid(netns), workdir
    finally:
        if sim:
            sim.stop()
        netns.close()
        shutil.rmtree(workdir, ignore_errors=True)


def run_once(netns, pid, bench, targets, args, idle, extra):
    """One benchmark run; its row, or None when it failed (printed)."""
    ticks = conftest.cpu_ticks(pid)
    argv = [bench, "--targets", targets, "--sessions", str(args.sessions), "--idle", str(idle), "--warmup", "1", *extra]
    out = subprocess.run(netns.command(*argv), capture_output=True, text=True, timeout=600)
    sim_cpu = (conftest.cpu_ticks(pid) - ticks) / conftest.CLOCK_TICKS
    figures = {json.loads(line)["name"]: json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")}
    if out.returncode != 0 or "sender.all_playing" not in figures:
        print(f"  benchmark failed (rc {out.returncode}): {out.stderr[-800:]}", flush=True)
        return None
    playing = figures["sender.all_playing"]
    row = {"wall": playing["value"], "sender_cpu": playing["cpu_seconds"], "sim_cpu": sim_cpu, "failed": playing.get("failed", 0)}
    if args.figure == "idle_cpu":
        row["idle_cpu"] = figures["sender.idle_cpu"]["value"]
    return row


def shared(args, variants, results, idle):
    """Every run against one simulator, on fresh devices: --rounds × --runs pairs of runs, one run
    of each variant per pair, the order swapped every pair."""
    paired = []   # per pair: {spec: row}
    pairs = args.rounds * args.runs
    with simulator(os.path.abspath(args.shared_simulator), args.sessions * pairs * len(variants) + 1) as (netns, sim, pid, workdir):
        listed = sim.ready["devices"]
        used = 0
        for pair in range(pairs):
            rows = {}
            for spec, directory, extra in (variants if pair % 2 == 0 else list(reversed(variants))):
                targets = os.path.join(workdir, f"devices-{used}.json")
                with open(targets, "w") as f:   # fresh devices, then the last one for the warm-up
                    json.dump(listed[used * args.sessions:(used + 1) * args.sessions] + [listed[-1]], f)
                used += 1
                row = run_once(netns, pid, os.path.join(directory, "castline-sender-bench"), targets, args, idle, extra)
                if row:
                    rows[spec] = row
                    results[spec].append(row)
                    print(f"pair {pair + 1} {spec}: " + json.dumps(row), flush=True)
            paired.append(rows)
    print_medians(args, results)
    if len(variants) == 2 and args.figure == "all_playing":
        a, b = variants[0][0], variants[1][0]
        both = [rows for rows in paired if a in rows and b in rows]
        if both:
            wall = statistics.median(rows[b]["wall"] / max(rows[a]["wall"], 1e-6) for rows in both)
            cpu = statistics.median(rows[b]["sender_cpu"] / max(rows[a]["sender_cpu"], 1e-6) for rows in both)
            faster = sum(1 for rows in both if rows[b]["wall"] < rows[a]["wall"])
            print(f"paired over {len(both)} pairs of runs, {b} / {a}: wall {wall:.3f}, sender CPU {cpu:.3f}; "
                  f"{b} faster in {faster} of {len(both)}")


def print_medians(args, results):
    print("medians")
    for spec, rows in results.items():
        if not rows:
            print(f"  {spec}: no valid run")
            continue
        keys = ["idle_cpu"] if args.figure == "idle_cpu" else ["wall", "sender_cpu", "sim_cpu"]
        summary = ", ".join(f"{key} {statistics.median(row[key] for row in rows):.3f} (min {min(row[key] for row in rows):.3f})" for key in keys)
        failed = sum(row["failed"] for row in rows)
        print(f"  {spec}: {summary} over {len(rows)} runs" + (f"; {failed} failed session(s)" if failed else ""))


if __name__ == "__main__":
    main()
