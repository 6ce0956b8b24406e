#!/usr/bin/env python3
"""Reliability: N consecutive `catt cast URL` + `catt stop` runs against one `castline sim`
device (its defaults, 1 s app start-up included, unless extra arguments say otherwise) while both
cores are kept busy by a background load (as on a loaded home server).

Inside a network namespace this script creates (only `lo`; no mDNS): `castline sim` (extra
arguments after `--`) and a Python http.server with a small clip (catt's yt-dlp needs a direct
link). The load is one busy-looping process per core, each bounded by `timeout` and killed by
PID at the end. A run succeeds when both commands exit 0. For each failure the script prints
catt's last error line and the simulator's frame errors since the run began (a torn TLS write
shows as BAD_DECRYPT / DECRYPTION_FAILED_OR_BAD_RECORD_MAC).

`--serialised` runs catt with a lock around pychromecast's SocketClient.send_message (a
test-only wrapper, Benchmarks/catt_serialised.py): if the failures disappear then, they are the
client's own race (pychromecast#1030), not the device's.

Prints one JSON line per run and a summary line. Needs root (ip netns), the conformance venv and
a built castline (CASTLINE_BIN or --bin).

    sudo .venv/bin/python Benchmarks/catt-under-load.py --bin .build/debug/castline --runs 50 [-- --tls modern]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402

URL = "http://127.0.0.1:8099/clip.mp4"
SERIALISED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catt_serialised.py")


def start_load(cores, seconds):
    """One busy loop per core, each ending by itself after `seconds` (timeout), PIDs returned."""
    return [subprocess.Popen(["timeout", str(int(seconds)), sys.executable, "-c", "while True: pass"])
            for _ in range(cores)]


def stop_load(processes):
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def frame_errors(path, since):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = f.readlines()[since:]
    return [json.loads(line).get("error", "") for line in lines if '"frameError"' in line]


def frame_count(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for _ in f)


def last_error(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][-300:] if lines else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN"))
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--no-load", action="store_true", help="no background load")
    parser.add_argument("--serialised", action="store_true", help="catt with a lock around send_message")
    parser.add_argument("sim_args", nargs="*", help="extra `castline sim` arguments (after --)")
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    venv_bin = os.path.dirname(conftest.PYTHON)
    catt = [os.path.join(venv_bin, "catt")] if not args.serialised else [conftest.PYTHON, SERIALISED]
    workdir = tempfile.mkdtemp(prefix="castline-bench-catt-load-")
    os.chmod(workdir, 0o755)
    media = os.path.join(workdir, "media")
    os.makedirs(media)
    with open(os.path.join(media, "clip.mp4"), "wb") as f:
        f.write(b"\x00\x00\x00\x18ftypmp42" + bytes(64))
    frames = os.path.join(workdir, "frames.jsonl")
    netns = conftest.Namespace()
    server = sim = None
    load = []
    ok = 0
    durations = []
    try:
        server = subprocess.Popen(netns.command(sys.executable, "-m", "http.server", "8099", "--bind", "127.0.0.1",
                                                "--directory", media),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sim = conftest.Simulator(netns, workdir, frame_log=False, launch_delay=None,
                                 extra=["--no-mdns", "--frame-log", frames, *args.sim_args])
        if not args.no_load:
            load = start_load(os.cpu_count() or 2, seconds=args.runs * 60 + 120)
        for run in range(1, args.runs + 1):
            sim.control({"command": "stop-app"})
            mark = frame_count(frames)
            started = time.monotonic()
            cast = netns.run(*catt, "-d", "127.0.0.1", "cast", URL, timeout=90)
            stop = netns.run(*catt, "-d", "127.0.0.1", "stop", timeout=90) if cast.returncode == 0 else None
            elapsed = time.monotonic() - started
            success = cast.returncode == 0 and stop is not None and stop.returncode == 0
            ok += success
            record = {"run": run, "ok": success, "seconds": round(elapsed, 2)}
            if success:
                durations.append(elapsed)
            else:
                failed = cast if cast.returncode != 0 else stop
                record["step"] = "cast" if cast.returncode != 0 else "stop"
                record["error"] = last_error(failed.stderr or failed.stdout)
                record["frameErrors"] = frame_errors(frames, mark)
            print(json.dumps(record), flush=True)
    finally:
        stop_load(load)
        if sim:
            sim.stop()
        if server:
            server.kill()
            server.wait(timeout=5)
        netns.close()
    durations.sort()
    median = durations[len(durations) // 2] if durations else None
    print(json.dumps({"summary": True, "runs": args.runs, "ok": ok, "load": not args.no_load,
                      "serialised": args.serialised, "simArgs": args.sim_args,
                      "medianSeconds": round(median, 2) if median else None}), flush=True)


if __name__ == "__main__":
    main()
