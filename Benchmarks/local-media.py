#!/usr/bin/env python3
"""Benchmark: time from `castline cast FILE` to PLAYING for the four local-media paths, and the
CPU a transcode takes against realtime.

A `castline sim` in a network namespace this script creates (loopback only), with the model each
path needs; the media is made first with ffmpeg (lavfi testsrc2/sine):
- direct:    1080p30 H.264/AAC MP4, 10 s, to a `Chromecast` (served as is);
- remux:     4K HEVC Main 10 HDR10 MKV, 2 s at 5 fps, to a `Chromecast Ultra` (ffmpeg copies into HLS);
- transcode: the same MKV to a `Chromecast` (ffmpeg decodes 4K HEVC, writes H.264 1080p);
- audio:     FLAC, 10 s, to a `Google Nest Mini`.
Each round runs `castline cast FILE --direct --json` and takes the time until its first line (the
device PLAYING); the process is then stopped. For the transcode: a 60 s 360p H.264 4:4:4 source
(what no Cast device decodes) transcoded to the end, its ffmpeg child's CPU seconds (utime+stime
from /proc, read just before it exits) against the media's 60 s. Prints one JSON line per measure.
Needs root (ip netns), ffmpeg and the conformance venv.

    sudo .venv/bin/python Benchmarks/local-media.py --bin .build/release/castline [--rounds 5]
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402

X265 = ("log-level=error:hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:"
        "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400")


def ffmpeg(*argv):
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *argv], check=True, timeout=300)


def make_media(folder):
    paths = {k: os.path.join(folder, v) for k, v in
             {"direct": "h264.mp4", "hdr": "hdr10.mkv", "audio": "tone.flac", "long": "long444.mp4"}.items()}
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=10", "-f", "lavfi", "-i", "sine=duration=10",
           "-c:v", "libx264", "-preset", "ultrafast", "-crf", "30", "-c:a", "aac", "-shortest", "-movflags", "+faststart", paths["direct"])
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=3840x2160:rate=5:duration=2", "-f", "lavfi", "-i", "sine=duration=2",
           "-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p10le", "-x265-params", X265,
           "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", "-c:a", "aac", "-shortest", paths["hdr"])
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=10", "-c:a", "flac", paths["audio"])
    ffmpeg("-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30:duration=60", "-f", "lavfi", "-i", "sine=duration=60",
           "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv444p", "-c:a", "aac", "-shortest", paths["long"])
    return paths


def cast_to_playing(netns, binary, path):
    started = time.monotonic()
    process = subprocess.Popen(netns.command(binary, "cast", path, "--device", "127.0.0.1", "--direct", "--json"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    elapsed = time.monotonic() - started
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    state = json.loads(line).get("state") if line.startswith("{") else None
    if state != "PLAYING":
        raise RuntimeError(f"{path}: not PLAYING: {line!r} {err[-2000:]}")
    return elapsed


def ffmpeg_child(netns):
    for pid in netns.pids():
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "ffmpeg":
                    return int(pid)
        except FileNotFoundError:
            pass
    return None


def transcode_cpu(netns, binary, path):
    """CPU seconds of the transcode's ffmpeg over the whole 60 s source, and its wall time."""
    process = subprocess.Popen(netns.command(binary, "cast", path, "--device", "127.0.0.1", "--direct", "--json"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    process.stdout.readline()
    pid = ffmpeg_child(netns)
    cpu, last = 0, None
    while pid and os.path.exists(f"/proc/{pid}") and time.monotonic() - started < 300:
        try:
            with open(f"/proc/{pid}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            if parts[0] == "Z":
                break
            cpu = (int(parts[11]) + int(parts[12])) / conftest.CLOCK_TICKS
            last = time.monotonic()
        except (FileNotFoundError, IndexError):
            break
        time.sleep(0.05)
    wall = (last or time.monotonic()) - started
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    return cpu, wall


def report(name, values, unit="s"):
    line = {"name": f"local_media.{name}", "unit": unit, "median": round(statistics.median(values), 3),
            "min": round(min(values), 3), "max": round(max(values), 3), "rounds": len(values)}
    print(json.dumps(line), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(REPO, ".build", "release", "castline"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    folder = tempfile.mkdtemp(prefix="castline-media-bench-")
    os.chmod(folder, 0o755)
    made = time.monotonic()
    media = make_media(folder)
    print(json.dumps({"name": "local_media.make_media", "unit": "s", "value": round(time.monotonic() - made, 1)}), flush=True)
    paths = [("direct", "Chromecast", media["direct"]), ("remux", "Chromecast Ultra", media["hdr"]),
             ("transcode", "Chromecast", media["hdr"]), ("audio", "Google Nest Mini", media["audio"])]
    try:
        for name, model, path in paths:
            netns = conftest.Namespace()
            work = tempfile.mkdtemp(prefix="castline-media-bench-sim-")
            sim = conftest.Simulator(netns, work, extra=["--no-mdns", "--model", model], frame_log=False)
            try:
                cast_to_playing(netns, binary, path)  # warm-up: page cache, the plugin scan
                report(f"cast_to_playing.{name}", [cast_to_playing(netns, binary, path) for _ in range(args.rounds)])
                if name == "transcode":
                    cpu, wall = transcode_cpu(netns, binary, media["long"])
                    print(json.dumps({"name": "local_media.transcode_360p_60s", "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                                      "cpu_per_media_second": round(cpu / 60, 3), "speed_x_realtime": round(60 / wall, 2)}), flush=True)
            finally:
                sim.stop()
                netns.close()
                shutil.rmtree(work, ignore_errors=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
