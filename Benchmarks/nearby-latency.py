#!/usr/bin/env python3
"""Benchmark: how fast `castline nearby` messages are found and lost between two hosts.

Two network namespaces this script creates, joined by a veth link, each with its own D-Bus and
avahi-daemon (allow-interfaces = its veth end; IPv4 and IPv6): the conformance tests' `make_lan`.
A `castline nearby subscribe --json` runs on host B all along. Rounds on host A:
- publish → found on B (from the publisher's `published` event), then SIGTERM → lost on B;
- publish → found, then kill -9 of the publisher (its avahi-daemon sends the goodbyes) → lost;
- publish → found, then kill -9 of the publisher and of A's avahi-daemon (power loss: no goodbye;
  the 10 s record TTL bounds it) → lost; A's avahi-daemon is started again for the next round.
Times are taken where the JSON lines arrive. Prints one JSON line per measure (median, p90, max)
and the documented bounds. Needs root (ip netns) and the conformance venv.

    sudo .venv/bin/python Benchmarks/nearby-latency.py --bin .build/release/castline [--rounds 20]
"""
import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402

BOUNDS = {"found": 2.0, "lost.unpublish": 2.0, "lost.kill9": 2.0, "lost.power_loss": 13.0}


def found(content):
    return lambda e: e.get("event") == "found" and e.get("content") == content


def lost(content):
    return lambda e: e.get("event") == "lost" and e.get("content") == content


def publish_and_find(a, sub, content):
    publisher = a.start("publish", content)
    published = publisher.wait_for(lambda e: e.get("event") == "published", 15)
    if not published:
        raise RuntimeError(f"publisher did not publish: {publisher.seen} {publisher.log()}")
    hit = sub.wait_for(found(content), 15)
    if not hit:
        raise RuntimeError(f"not found on B: {sub.seen[-5:]} {publisher.log()}")
    return publisher, hit[0] - published[0]


def summary(name, values):
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    line = {"name": f"nearby.{name}", "unit": "s", "median": round(statistics.median(values), 3), "p90": round(p90, 3),
            "min": round(ordered[0], 3), "max": round(ordered[-1], 3), "rounds": len(values), "bound": BOUNDS[name]}
    print(json.dumps(line), flush=True)
    return line


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--kill-rounds", type=int, default=5)
    parser.add_argument("--power-loss-rounds", type=int, default=2)
    args = parser.parse_args()
    os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    workdir = tempfile.mkdtemp(prefix="castline-nearby-bench-")
    os.chmod(workdir, 0o755)
    lan = conftest.make_lan(workdir)
    a, b = next(lan)
    results = {"found": [], "lost.unpublish": [], "lost.kill9": [], "lost.power_loss": []}
    sub = None
    try:
        a.grant()
        b.grant()
        sub = b.start("subscribe")
        if not sub.wait_for(lambda e: e.get("event") == "medium", 15):
            raise RuntimeError(f"subscriber: {sub.log()}")
        def power_loss(publisher):
            a.stop_avahi(signal.SIGKILL)
            publisher.stop(signal.SIGKILL)

        # (measure, rounds, how the publisher goes, how long to wait for "lost", what to do after)
        kinds = [("lost.unpublish", args.rounds, lambda p: p.stop(), 15, None),
                 ("lost.kill9", args.kill_rounds, lambda p: p.stop(signal.SIGKILL), 15, None),
                 ("lost.power_loss", args.power_loss_rounds, power_loss, 30, a.start_avahi)]
        for name, rounds, end, wait, after in kinds:
            for i in range(rounds):
                content = f"{name} round {i}"
                publisher, latency = publish_and_find(a, sub, content)
                results["found"].append(latency)
                end(publisher)
                at = time.monotonic()
                gone = sub.wait_for(lost(content), wait)
                results[name].append(gone[0] - at if gone else float("inf"))
                if after:
                    after()
        within = all(summary(name, values)["max"] <= BOUNDS[name] for name, values in results.items() if values)
        print(json.dumps({"name": "nearby.within_bounds", "value": within}), flush=True)
    finally:
        if sub:
            sub.stop()
        next(lan, None)
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
