#!/usr/bin/env python3
"""The pychromecast side of the sender benchmark: N Chromecast objects on N simulated devices,
each launching the Default Media Receiver and loading one media until PLAYING (one thread per
device, as pychromecast runs one socket thread per device). Prints JSON lines like
castline-sender-bench: time to all-PLAYING, RSS per session, idle CPU.

    pychromecast-sessions.py --targets devices.json --sessions 100 [--idle 10]
"""
import argparse
import json
import os
import resource
import sys
import threading
import time
import uuid

import pychromecast


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def emit(name, value, unit, **extra):
    print(json.dumps({"name": name, "value": round(value, 3), "unit": unit, **extra}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", required=True)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--idle", type=float, default=10)
    parser.add_argument("--warmup", type=int, default=0, help="1: one cast on the last target first, not measured")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with open(args.targets) as f:
        listed = json.load(f)
    devices = listed[: args.sessions]
    if len(devices) < args.sessions:
        sys.exit(f"only {len(devices)} targets for {args.sessions} sessions")

    if args.warmup:
        # The same warm-up as castline-sender-bench: one cast on the last target, stopped.
        last = listed[-1]
        cast = pychromecast.get_chromecast_from_host(
            (last["address"], last["castPort"], uuid.UUID(last["uuid"]), "Chromecast", "warm-up"), tries=1, retry_wait=1, timeout=30)
        cast.wait(timeout=60)
        cast.media_controller.play_media("https://media.example/castline/bench.mp4", "video/mp4", title="warm-up")
        cast.media_controller.block_until_active(timeout=60)
        cast.quit_app()
        cast.disconnect(timeout=5)

    baseline = rss_kb()
    casts = [None] * len(devices)
    failures = []

    def run(index, device):
        try:
            cast = pychromecast.get_chromecast_from_host(
                (device["address"], device["castPort"], uuid.UUID(device["uuid"]), "Chromecast", f"sim {index}"),
                tries=1, retry_wait=1, timeout=30)
            cast.wait(timeout=60)
            media = cast.media_controller
            media.play_media("https://media.example/castline/bench.mp4", "video/mp4", title="castline bench")
            media.block_until_active(timeout=60)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and media.status.player_state != "PLAYING":
                time.sleep(0.01)
            if media.status.player_state != "PLAYING":
                raise RuntimeError(f"state {media.status.player_state}")
            casts[index] = cast
        except Exception as error:  # noqa: BLE001 — reported, counted
            failures.append(f"{device['address']}:{device['castPort']}: {error!r}")

    cpu_at_start = sum(os.times()[:2])
    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(i, d), daemon=True) for i, d in enumerate(devices)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    all_playing = time.monotonic() - started
    live = [c for c in casts if c is not None]
    for failure in failures[:5]:
        print(f"session failed: {failure}", file=sys.stderr)
    emit("pychromecast.all_playing", all_playing, "s", sessions=len(live), failed=len(failures),
         cpu_seconds=round(sum(os.times()[:2]) - cpu_at_start, 3))
    time.sleep(2)
    after = rss_kb()
    emit("pychromecast.rss_per_session", (after - baseline) / max(1, len(live)), "KB", rss_total_kb=after, rss_baseline_kb=baseline)
    cpu_before = sum(os.times()[:2])
    idle_start = time.monotonic()
    time.sleep(args.idle)
    wall = time.monotonic() - idle_start
    cpu = sum(os.times()[:2]) - cpu_before
    emit("pychromecast.idle_cpu", 100 * cpu / wall, "% of one core", seconds=round(wall, 3), cpu_seconds=round(cpu, 3))
    for cast in live:
        try:
            cast.quit_app()
        except Exception:  # noqa: BLE001
            pass
        cast.disconnect(timeout=1)


if __name__ == "__main__":
    main()
