#!/usr/bin/env python3
"""Benchmark: a video wall of simulated TVs, measured from the simulator's ground truth.

Inside a network namespace this script creates (only `lo`; no mDNS): one `castline sim` with N TVs
(default 50), each given its own one-way delay (0-300 ms), 20 ms of jitter, a first-frame time
(0-150 ms, ±5 ms) and a clock drift (±200 ppm), drawn from a fixed seed; and `castline run` over
them. It then measures, from each device's `state.playback` (when its playhead started, where it
is) and never from castline's view:

- start skew of castline's synchronised start (`POST /v1/sync`), after a calibration: the spread of
  the first frames, and of the positions 2.5-4.5 s later (the first corrections done; the median of
  five samples), over `--starts` starts;
- the same start done naively, in the same run: a parallel LOAD with autoplay (what a catt or
  pychromecast loop does: `POST /v1/devices/{d}/cast` to every TV at once), and LOAD paused
  everywhere then PLAY everywhere (the best workaround reported, node-castv2-client#41);
- drift: the largest pairwise position difference, sampled each second for `--drift-seconds`;
- rejoin: one TV rebooted mid-play (2 s down): how long until it plays within 50 ms of the others.

Prints one JSON line per measurement and a summary table. Needs root (ip netns) and the
conformance venv:

    sudo .venv/bin/python Benchmarks/video-wall.py --bin .build/release/castline [--tvs 50] [--starts 20] [--drift-seconds 600]
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402
import wall_truth  # noqa: E402

MOVIE = "http://media.invalid/wall.mp4"


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def settle_and_measure(sim, count, content):
    """The first frames' spread, and the wall's spread 2.5-4.5 s later (the median of five
    samples 0.5 s apart: where it stays once the first corrections are done)."""
    wall_truth.wait_all_playing(sim, count, 30, content)
    playing = time.monotonic()
    first = wall_truth.first_frame_skew(wall_truth.wait_all_started(sim))
    time.sleep(max(0, playing + 2.5 - time.monotonic()))  # the measure: the spread from 2.5 s on
    return first, wall_truth.settled_spread(sim)


def stop_all(hub, ids):
    with concurrent.futures.ThreadPoolExecutor(len(ids)) as pool:
        list(pool.map(lambda d: hub.post(f"/v1/devices/{d}/stop", {}), ids))


def naive_parallel(sim, hub, ids, count):
    """Every TV gets its LOAD (autoplay) at once: what a loop over pychromecast or catt does."""
    hub.delete_walls()
    stop_all(hub, ids)
    with concurrent.futures.ThreadPoolExecutor(len(ids)) as pool:
        answers = list(pool.map(lambda d: hub.post(f"/v1/devices/{d}/cast", {"media": MOVIE, "content_type": "video/mp4"}), ids))
    assert all(a[0] == 200 for a in answers), [a for a in answers if a[0] != 200][:2]
    return settle_and_measure(sim, count, "wall.mp4")


def naive_load_then_play(sim, hub, ids, count):
    """LOAD paused on every TV, wait, then PLAY on every TV at once."""
    hub.delete_walls()
    stop_all(hub, ids)
    with concurrent.futures.ThreadPoolExecutor(len(ids)) as pool:
        answers = list(pool.map(lambda d: hub.post(f"/v1/devices/{d}/cast", {"media": MOVIE, "content_type": "video/mp4", "no_autoplay": True}), ids))
        assert all(a[0] == 200 for a in answers), [a for a in answers if a[0] != 200][:2]
        list(pool.map(lambda d: hub.post(f"/v1/devices/{d}/play", {}), ids))
    return settle_and_measure(sim, count, "wall.mp4")


def synchronised(sim, hub, count):
    status, body, _ = hub.post("/v1/sync", {"devices": "Wall*", "media": MOVIE, "name": "bench"})
    assert status == 200 and not body.get("missing"), body
    first, settled = settle_and_measure(sim, count, "wall.mp4")
    return first, settled, body


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--tvs", type=int, default=50)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--naive-starts", type=int, default=5)
    parser.add_argument("--calibration-starts", type=int, default=3)
    parser.add_argument("--drift-seconds", type=int, default=600)
    parser.add_argument("--seed", type=int, default=45)
    args = parser.parse_args()
    os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    from hub import Hub, api  # noqa: E402 (after CASTLINE_BIN: hub.py reads it at import)

    class BenchHub(Hub):
        def delete_walls(self):
            _, walls, _ = self.get("/v1/sync")
            for wall in walls.get("walls", []):
                api(self.socket, "DELETE", "/v1/sync/" + wall["wall"])

    netns = conftest.Namespace()
    results = {}
    try:
        workdir = tempfile.mkdtemp(prefix="castline-wall-")
        config = os.path.join(workdir, "sim.json")
        with open(config, "w") as f:
            json.dump({"mediaRules": [{"contentId": "*wall.mp4", "duration": 3600}]}, f)
        sim = conftest.Simulator(netns, workdir, frame_log=False,
                                 extra=["--no-mdns", "--config", config, "--devices", str(args.tvs), "--name", "Wall"])
        hub = BenchHub(netns, sim, workdir, log_rules="warning")
        conditions = wall_truth.field_conditions(sim, args.tvs, seed=args.seed)
        ids = [d["id"] for d in hub.get("/v1/devices")[1]["devices"]]
        print(json.dumps({"conditions": {"tvs": args.tvs, "seed": args.seed, "delay_ms": "0-300", "jitter_ms": 20,
                                         "first_frame_ms": "0-150 ±5", "drift_ppm": "±200"}}), flush=True)

        def record(name, first, settled):
            results.setdefault(name, []).append((first, settled))
            print(json.dumps({"method": name, "first_frame_skew_ms": round(first * 1000, 1), "skew_settled_ms": round(settled * 1000, 1)}), flush=True)

        # Naive ways first (they need no calibration).
        for _ in range(args.naive_starts):
            record("parallel LOAD (catt/pychromecast loop)", *naive_parallel(sim, hub, ids, args.tvs))
        for _ in range(args.naive_starts):
            record("LOAD paused, then PLAY everywhere", *naive_load_then_play(sim, hub, ids, args.tvs))
        # Calibration: each TV's start latency learned from measured starts.
        status, learned, _ = hub.post("/v1/sync", {"devices": "Wall*", "media": MOVIE, "name": "calibration", "calibrate": args.calibration_starts})
        assert status == 200, learned
        errors = []
        # The simulator's devices in its own order, matched to the hub's by uuid.
        order = [d["uuid"] for d in sim.ready["devices"]]
        for uuid, chosen in zip(order, conditions):
            entry = learned["calibrated"].get(uuid)
            if entry:
                # The device's true start latency is its first-frame time plus half its jitter on average.
                errors.append(entry["start_latency_ms"] - chosen["first_frame_ms"] - 2.5)
        print(json.dumps({"calibration": {"starts": args.calibration_starts,
                                          "learned_minus_true_ms": {"median": round(statistics.median(errors), 1),
                                                                    "max_abs": round(max(abs(e) for e in errors), 1)}}}), flush=True)
        lateness = []
        for _ in range(args.starts):
            first, settled, answer = synchronised(sim, hub, args.tvs)
            lateness.append(max(d["lateMs"] for d in answer["devices"]))
            if os.environ.get("WALL_DEBUG"):
                print(json.dumps({d["name"]: [d["startLatencyMs"], d["oneWayMs"], d["lateMs"]] for d in answer["devices"]}), flush=True)
            record("castline --sync", first, settled)
        print(json.dumps({"play_send_lateness_ms": {"p50_of_worst": round(statistics.median(lateness), 1), "max": round(max(lateness), 1)}}), flush=True)
        # Drift: the last wall keeps playing; sample the spread each second.
        spreads = []
        began = time.monotonic()
        for second in range(args.drift_seconds):
            time.sleep(max(0, began + second + 1 - time.monotonic()))
            spreads.append(wall_truth.spread(wall_truth.playbacks(sim)))
        _, walls, _ = hub.get("/v1/sync")
        counts = {k: sum(d[k] for d in walls["walls"][0]["devices"]) for k in ("nudges", "seeks")}
        drift = {"seconds": args.drift_seconds, "p50_ms": round(percentile(spreads, 0.5) * 1000, 1),
                 "p99_ms": round(percentile(spreads, 0.99) * 1000, 1), "max_ms": round(max(spreads) * 1000, 1), **counts}
        print(json.dumps({"drift": drift}), flush=True)
        # Rejoin: one TV rebooted, 2 s down.
        rebooted = time.monotonic()
        assert sim.control({"command": "reboot", "device": args.tvs // 2, "downFor": 2})["ok"]
        back = None
        while time.monotonic() - rebooted < 60:
            entries = wall_truth.playbacks(sim)
            if all(p and p.get("playing") for p in entries) and wall_truth.spread(entries) <= 0.050 and time.monotonic() - rebooted > 2:
                back = time.monotonic() - rebooted
                break
            time.sleep(0.1)
        time.sleep(3)
        rejoin = {"took_s": round(back, 2) if back else None, "spread_after_ms": round(wall_truth.spread(wall_truth.playbacks(sim)) * 1000, 1)}
        print(json.dumps({"rejoin": rejoin}), flush=True)
        hub.stop()
        sim.stop()
    finally:
        netns.close()

    print("\n| method | starts | first-frame skew p50 / max (ms) | skew 2.5-4.5 s later p50 / max (ms) |")
    print("|---|---|---|---|")
    for name, values in results.items():
        firsts = [v[0] * 1000 for v in values]
        settled = [v[1] * 1000 for v in values]
        print(f"| {name} | {len(values)} | {statistics.median(firsts):.1f} / {max(firsts):.1f} | {statistics.median(settled):.1f} / {max(settled):.1f} |")
    print(f"\ndrift over {drift['seconds']} s: p50 {drift['p50_ms']} ms, p99 {drift['p99_ms']} ms, max {drift['max_ms']} ms "
          f"({drift['nudges']} nudges, {drift['seeks']} seeks); rejoin: {rejoin}")


if __name__ == "__main__":
    main()
