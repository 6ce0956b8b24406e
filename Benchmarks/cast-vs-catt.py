#!/usr/bin/env python3
"""Benchmark: `castline cast URL` from process start to PLAYING on the simulator, against
`catt -d HOST cast URL` casting the same URL to the same simulator in the same run.

Inside a network namespace this script creates (only `lo`; no mDNS), one `castline sim` device on
127.0.0.1 and a Python http.server with a small clip (catt's yt-dlp needs a direct link). Each
round stops the receiver app first (the simulator's `stop-app`), so both senders launch the app,
load and wait for PLAYING. PLAYING is observed on the device (the simulator's control socket,
polled every 2 ms), and the process's exit is timed too. Rounds alternate castline/catt.
Prints one JSON line per tool and a summary. Needs root (ip netns), the conformance venv, and a
release build of castline.

    sudo .venv/bin/python Benchmarks/cast-vs-catt.py --bin .build/release/castline [--rounds 10]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402

URL = "http://127.0.0.1:8099/clip.mp4"


def playing(sim, started_after):
    media = sim.control({"command": "list"})["devices"][0]["state"].get("media") or {}
    return media.get("playerState") == "PLAYING" and media.get("contentId", "").startswith(URL)


def one(netns, sim, argv, timeout=60):
    sim.control({"command": "stop-app"})
    deadline = time.monotonic() + 5
    while (sim.control({"command": "list"})["devices"][0]["state"].get("app")) and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.monotonic()
    process = subprocess.Popen(netns.command(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    played = None
    while time.monotonic() - start < timeout:
        if played is None and playing(sim, start):
            played = time.monotonic() - start
        if process.poll() is not None and played is not None:
            break
        time.sleep(0.002)
    out, err = process.communicate(timeout=timeout)
    exited = time.monotonic() - start
    if process.returncode != 0 or played is None:
        raise RuntimeError(f"{argv[0]} rc={process.returncode} played={played}: {out[-800:]} {err[-1500:]}")
    return played, exited


def summary(name, samples):
    playing_times = sorted(s[0] for s in samples)
    exit_times = sorted(s[1] for s in samples)
    figure = {
        "name": name, "rounds": len(samples),
        "to_playing_median_ms": round(statistics.median(playing_times) * 1000, 1),
        "to_playing_min_ms": round(playing_times[0] * 1000, 1),
        "to_playing_max_ms": round(playing_times[-1] * 1000, 1),
        "to_exit_median_ms": round(statistics.median(exit_times) * 1000, 1),
    }
    print(json.dumps(figure), flush=True)
    return figure


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN"))
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    catt = os.path.join(os.path.dirname(conftest.PYTHON), "catt")
    workdir = tempfile.mkdtemp(prefix="castline-bench-catt-")
    os.chmod(workdir, 0o755)
    media = os.path.join(workdir, "media")
    os.makedirs(media)
    with open(os.path.join(media, "clip.mp4"), "wb") as f:
        f.write(b"\x00\x00\x00\x18ftypmp42" + bytes(65536))
    netns = conftest.Namespace()
    server = sim = None
    try:
        server = subprocess.Popen(netns.command(sys.executable, "-m", "http.server", "8099", "--bind", "127.0.0.1",
                                                "--directory", media), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # --tls modern: the device side's TLS as when the recorded figures were taken (docs/performance.md).
        sim = conftest.Simulator(netns, workdir, extra=["--no-mdns", "--buffering-delay", "0", "--tls", "modern"], frame_log=False)
        castline_argv = [conftest.castline_binary(), "cast", URL, "--device", "127.0.0.1"]
        catt_argv = [catt, "-d", "127.0.0.1", "cast", URL]
        one(netns, sim, castline_argv)  # warm the page cache for both binaries
        one(netns, sim, catt_argv)
        castline_samples, catt_samples = [], []
        for _ in range(args.rounds):
            castline_samples.append(one(netns, sim, castline_argv))
            catt_samples.append(one(netns, sim, catt_argv))
        ours = summary("castline cast", castline_samples)
        theirs = summary("catt cast", catt_samples)
        ratio = theirs["to_playing_median_ms"] / ours["to_playing_median_ms"]
        print(f"castline cast → PLAYING: median {ours['to_playing_median_ms']} ms; catt: median "
              f"{theirs['to_playing_median_ms']} ms → castline is {ratio:.1f}x faster (goal ≥ 10x)", flush=True)
    finally:
        if sim:
            sim.stop()
        if server:
            server.terminate()
            server.wait(timeout=5)
        netns.close()


if __name__ == "__main__":
    main()
