#!/usr/bin/env python3
"""Reliability: R rounds of pychromecast's 100-session benchmark (Benchmarks/pychromecast-sessions.py:
100 Chromecast objects on 100 fresh simulated devices, each launching the Default Media Receiver
and loading one media until PLAYING) against one `castline sim`, counting the rounds without a
failed session. The simulator runs with its defaults (1 s app start-up included); extra `castline
sim` arguments go after `--` (e.g. `--tls modern`, `--launch-delay 0`). Runs inside a network namespace this script creates (only `lo`, no mDNS).
Prints one JSON line per round and a summary. Needs root (ip netns), the conformance venv and a
built castline (CASTLINE_BIN or --bin).

    sudo .venv/bin/python Benchmarks/pychromecast-rounds.py --bin .build/debug/castline --rounds 20 [-- --tls modern]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN"))
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("sim_args", nargs="*", help="extra `castline sim` arguments (after --)")
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-pychromecast-rounds-")
    os.chmod(workdir, 0o755)
    sim = None
    clean = 0
    try:
        devices = args.rounds * args.sessions + 1
        sim = conftest.Simulator(netns, workdir, frame_log=False, launch_delay=None,
                                 extra=["--devices", str(devices), "--no-mdns", "--buffering-delay", "0", *args.sim_args])
        listed = sim.ready["devices"]
        python = os.path.join(REPO, "Benchmarks", "pychromecast-sessions.py")
        for index in range(args.rounds):
            targets = os.path.join(workdir, f"round-{index}.json")
            with open(targets, "w") as f:
                json.dump(listed[index * args.sessions:(index + 1) * args.sessions] + [listed[-1]], f)
            result = subprocess.run(netns.command(conftest.PYTHON, python, "--targets", targets, "--sessions",
                                                  str(args.sessions), "--idle", "0.1", "--warmup", "1" if index == 0 else "0"),
                                    capture_output=True, text=True, timeout=900)
            figures = {json.loads(line)["name"]: json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")}
            playing = figures.get("pychromecast.all_playing")
            failed = playing["failed"] if playing else args.sessions
            ok = result.returncode == 0 and playing is not None and failed == 0
            clean += ok
            record = {"round": index + 1, "ok": ok, "failed": failed,
                      "seconds": playing["value"] if playing else None}
            if not ok:
                record["errors"] = [line for line in result.stderr.splitlines() if line.startswith("session failed")][:3] \
                    or [result.stderr.strip()[-300:]]
            print(json.dumps(record), flush=True)
    finally:
        if sim:
            sim.stop()
        netns.close()
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({"summary": True, "rounds": args.rounds, "clean": clean, "sessions": args.sessions,
                      "simArgs": args.sim_args}), flush=True)


if __name__ == "__main__":
    main()
