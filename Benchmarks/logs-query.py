#!/usr/bin/env python3
"""Benchmark: `castline logs query` over 1 GB of castline JSON Lines against `jq` with the same
filter, in the same run.

The file is made from records a real castline run wrote (a cast, controls and a stop against
`castline sim` in a network namespace, logging at verbose so traffic records carry payloads),
repeated with rising timestamps, device ids and session numbers until it reaches the size.
Three queries, each printing the matching records as JSON Lines to /dev/null:
  A: warnings and worse from CastSession            (--class CastSession --level warning)
  B: LOAD requests to one device                    (--type LOAD --device dev-0042)
  C: a device glob (--device 'dev-004*'): the glob's literal run narrows the lines to parse
  D: a local session number (--session 1): more than half of all records match
  E: a message substring found on nearly every line (--grep e): the prefilter cannot narrow it,
     every line is parsed and most are printed: the floor
Each tool runs on a warm page cache; wall time, CPU time (user+sys: one core) and MB/s are
printed, castline's as the median of 3 runs, jq's once (it is slow). Needs root (ip netns), the
conformance venv and a release build of castline.

    sudo .venv/bin/python Benchmarks/logs-query.py --bin .build/release/castline [--size-mb 1024]
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402


def real_records(workdir):
    """Records from a real run: cast, pause, seek, play, stop --app against the simulator."""
    netns = conftest.Namespace()
    sim = None
    log = os.path.join(workdir, "seed.jsonl")
    config = os.path.join(workdir, "seed.yaml")
    with open(config, "w") as f:
        f.write(f"logging:\n  rules: verbose\n  console: false\n  sinks:\n    - type: json\n      options: {{path: {log}}}\n")
    try:
        sim = conftest.Simulator(netns, workdir, extra=["--no-mdns", "--buffering-delay", "0"], frame_log=False)
        binary = conftest.castline_binary()
        for args in (["cast", "http://127.0.0.1:9/a.mp4"], ["pause"], ["seek", "30"], ["play"], ["volume", "40"], ["stop", "--app"],
                     ["status"]):  # the last one: nothing casts, a CastSession warning
            subprocess.run(netns.command(binary, *args, "--device", "127.0.0.1", "--config", config), check=args != ["status"],
                           capture_output=True, timeout=60)
    finally:
        if sim:
            sim.stop()
        netns.close()
    with open(log) as f:
        return [line.rstrip() for line in f if line.strip()]


def build_file(path, seeds, size):
    """Repeats the seed records with rising times and rotating device ids until `size` bytes."""
    templates = []
    for line in seeds:
        record = json.loads(line)
        record.setdefault("attributes", {})
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        text = re.sub(r'"time":"[^"]*"', '"time":"@T@"', text)
        text = re.sub(r'"time_unix_nano":\d+', '"time_unix_nano":@N@', text)
        text = text.replace("127.0.0.1:8009", "@D@")
        templates.append(text.split("@"))
    t = 1_795_000_000_000_000_000
    written = 0
    round_number = 0
    with open(path, "w", buffering=1 << 22) as out:
        while written < size:
            device = f"dev-{round_number % 500:04d}"
            chunk = []
            for parts in templates:
                t += 1_000_000
                seconds = t // 1_000_000_000
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{t % 1_000_000_000:09d}Z"
                fields = {"T": stamp, "N": str(t), "D": device}
                chunk.append("".join(fields.get(p, p) for p in parts))
            block = "\n".join(chunk) + "\n"
            out.write(block)
            written += len(block.encode())
            round_number += 1
    return written


def timed(argv, stdout):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"{argv[0]} failed: {result.stderr[-2000:]}")
    return wall, cpu


def count(argv):
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    return out.stdout.count("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("CASTLINE_BIN"))
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--keep", help="keep the generated file here (reused when it exists)")
    args = parser.parse_args()
    if args.bin:
        os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    binary = conftest.castline_binary()
    jq = shutil.which("jq")
    workdir = tempfile.mkdtemp(prefix="castline-bench-logs-")
    os.chmod(workdir, 0o755)
    try:
        path = args.keep or os.path.join(workdir, "castline.jsonl")
        if not (args.keep and os.path.exists(path)):
            seeds = real_records(workdir)
            started = time.monotonic()
            size = build_file(path, seeds, args.size_mb << 20)
            print(f"  built {size / 1e6:.0f} MB from {len(seeds)} real records in {time.monotonic() - started:.0f} s", flush=True)
        size = os.path.getsize(path)
        with open(path, "rb") as f:  # warm the page cache
            while f.read(1 << 24):
                pass
        queries = [
            ("A warnings from CastSession", ["--class", "CastSession", "--level", "warning"],
             'select(.class == "CastSession" and .severity_number >= 13)'),
            ("B LOAD requests to one device", ["--type", "LOAD", "--device", "dev-0042"],
             'select(.attributes.type == "LOAD" and (.attributes.device == "dev-0042" or .attributes.peer == "dev-0042" or .attributes.endpoint == "dev-0042" or .attributes.deviceName == "dev-0042"))'),
            ("C a device glob", ["--device", "dev-004*"],
             'select([.attributes.device, .attributes.deviceName, .attributes.endpoint, .attributes.peer] | map(select(. != null and startswith("dev-004"))) | length > 0)'),
            ("D local session 1 (most records match: every line parsed, most printed)", ["--session", "1"],
             'select(.attributes.session == "1" or .attributes.sessionId == "1" or ((.attributes.localSession // "") | tostring) == "1")'),
            ("E parse-bound: message text \"e\" (on nearly every line: every line parsed and most printed)", ["--grep", "e"],
             'select(.body | contains("e"))'),
        ]
        for name, castline_args, jq_filter in queries:
            argv = [binary, "logs", "query", "--no-rotated", "--json", path, *castline_args]
            ours_matches = count(argv)
            theirs_matches = count([jq, "-c", jq_filter, path])
            runs = []
            with open(os.devnull, "w") as null:
                for _ in range(3):
                    runs.append(timed(argv, null))
                jq_wall, jq_cpu = timed([jq, "-c", jq_filter, path], null)
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            figure = {"name": name, "bytes": size, "matches": ours_matches, "jq_matches": theirs_matches,
                      "castline_wall_s": round(wall, 2), "castline_cpu_s": round(cpu, 2),
                      "castline_MBps": round(size / 1e6 / wall), "castline_MBps_per_cpu_s": round(size / 1e6 / cpu),
                      "jq_wall_s": round(jq_wall, 2), "jq_MBps": round(size / 1e6 / jq_wall, 1),
                      "speedup": round(jq_wall / wall, 1)}
            print(json.dumps(figure), flush=True)
            print(f"{name}: castline {figure['castline_MBps']} MB/s ({wall:.2f} s wall, {cpu:.2f} s CPU), "
                  f"jq {figure['jq_MBps']} MB/s ({jq_wall:.1f} s) → {figure['speedup']}x; matches {ours_matches} / jq {theirs_matches}"
                  f" (goals: ≥ 200 MB/s, ≥ 5x jq)", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
