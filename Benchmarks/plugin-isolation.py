#!/usr/bin/env python3
"""What running a channel plugin isolated costs (a plugin that is not castline's own runs so by
default): the round trip of `POST /v1/devices/{d}/channels/{ns}` through the first-party echo
channel (castline's API → the plugin → the simulator's test app → the plugin → the answer), with
the plugin in castline's process against the same plugin in its helper process
(`plugins.isolated`), in the same run, alternating, inside a network namespace this script
creates. Prints one JSON line per run and a summary: the medians of the runs' p50 and p99.

    sudo .venv/bin/python Benchmarks/plugin-isolation.py --bin .build/release/castline [--runs 5] [--requests 500]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402
from hub import ECHO_NS, Hub  # noqa: E402
from unix_http import UnixHTTPConnection  # noqa: E402


def round_trips(socket_path, path, count):
    """Seconds per request, on one kept-alive connection."""
    connection = UnixHTTPConnection(socket_path)
    samples = []
    body = json.dumps({"message": {"text": "ping"}}).encode()
    for _ in range(count):
        start = time.perf_counter()
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        samples.append(time.perf_counter() - start)
        if response.status != 200:
            raise SystemExit(f"{response.status}: {data[:300]}")
    connection.close()
    return samples


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    netns = conftest.Namespace()
    results = {"in_process": [], "isolated": []}
    try:
        workdir = tempfile.mkdtemp(prefix="castline-isolation-")
        os.chmod(workdir, 0o755)
        sim = conftest.Simulator(netns, workdir, extra=["--no-mdns", "--devices", "1"], frame_log=False)
        path = f"/v1/devices/{sim.ready['devices'][0]['uuid']}/channels/{ECHO_NS.replace(':', '%3A')}"
        for run in range(args.runs):
            for mode in ("in_process", "isolated"):
                hub_dir = os.path.join(workdir, f"{mode}-{run}")
                os.makedirs(hub_dir)
                plugins = "{isolated: [echo-channel-c]}" if mode == "isolated" else ""
                hub = Hub(netns, sim, hub_dir, plugins=plugins, log_rules="warning")
                try:
                    status, body, _ = hub.post(path, {"message": {"text": "warm"}, "app": "CA571E00"})
                    if status != 200:
                        raise SystemExit(f"warm-up: {status} {body}")
                    round_trips(hub.socket, path, 50)
                    samples = round_trips(hub.socket, path, args.requests)
                finally:
                    hub.stop()
                figure = {"mode": mode, "run": run, "requests": len(samples), "p50_ms": round(statistics.median(samples) * 1000, 3),
                          "p99_ms": round(percentile(samples, 99) * 1000, 3)}
                results[mode].append(figure)
                print(json.dumps(figure), flush=True)
        sim.stop()
    finally:
        netns.close()
    summary = {mode: {"p50_ms": round(statistics.median(r["p50_ms"] for r in runs), 3),
                      "p99_ms": round(statistics.median(r["p99_ms"] for r in runs), 3)} for mode, runs in results.items()}
    summary["isolated_over_in_process_p50"] = round(summary["isolated"]["p50_ms"] / summary["in_process"]["p50_ms"], 2)
    print(json.dumps({"summary": "channel round trip", **summary}))


if __name__ == "__main__":
    main()
