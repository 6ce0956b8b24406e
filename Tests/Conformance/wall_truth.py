"""What a video wall really shows, read from the simulator's ground truth (control `list`, each
device's `state.playback`), never from castline: the instants first frames appeared, and where
every playhead is at one common instant. Shared by test_video_wall.py and
Benchmarks/video-wall.py."""
import random
import time

from clients.polling import poll


def playbacks(sim):
    """Each device's `state.playback` (None for a device with no media), in device order."""
    return [d["state"].get("playback") for d in sim.control({"command": "list"})["devices"]]


def positions_at_one_instant(entries):
    """Every playing device's true position carried to the same instant (the latest sample's):
    `list` samples the devices one after another, microseconds apart."""
    live = [p for p in entries if p]
    if not live:
        return []
    reference = max(p["at_unix_ns"] for p in live)
    return [p["position_s"] + (reference - p["at_unix_ns"]) / 1e9 * (p["rate"] if p.get("playing") else 0) for p in live]


def spread(entries):
    """Max − min of the positions at one instant (seconds): what the viewer sees as the wall's
    largest offset now."""
    positions = positions_at_one_instant(entries)
    return max(positions) - min(positions) if len(positions) > 1 else 0.0


def first_frame_skew(entries):
    """Max − min of the instants the playheads started (seconds)."""
    starts = [p["started_at_unix_ns"] for p in entries if p]
    return (max(starts) - min(starts)) / 1e9 if len(starts) > 1 else 0.0


def wait_all_started(sim, timeout=5):
    """Once every playhead has started (its start instant is no later than its sample): the
    first frames' spread is final. Returns the entries."""
    def started():
        entries = playbacks(sim)
        return entries if all(p and p.get("started_at_unix_ns") and p["started_at_unix_ns"] <= p["at_unix_ns"] for p in entries) else None
    entries = poll(started, timeout, interval=0.02)
    if entries:
        return entries
    raise AssertionError(f"not every playhead started within {timeout} s: {playbacks(sim)}")


def wait_all_playing(sim, count, timeout, content=None):
    def playing():
        entries = playbacks(sim)
        live = [p for p in entries if p and p.get("playing") and (content is None or p.get("content_id", "").endswith(content))]
        return entries if len(live) == count else None
    entries = poll(playing, timeout, interval=0.05)
    if entries:
        return entries
    raise AssertionError(f"not every device plays after {timeout} s: {playbacks(sim)}")


def field_conditions(sim, count, seed, delay_ms=(0, 300), jitter_ms=20, first_frame_ms=(0, 150), first_frame_jitter_ms=5,
                     drift_ppm=200):
    """Gives each device its own network delay, first-frame time and clock drift (drawn with
    `seed`), through the simulator's control socket. Returns what each got."""
    rng = random.Random(seed)
    chosen = []
    for index in range(count):
        device = {"base_ms": round(rng.uniform(*delay_ms), 1), "jitter_ms": jitter_ms,
                  "first_frame_ms": round(rng.uniform(*first_frame_ms), 1), "ppm": round(rng.uniform(-drift_ppm, drift_ppm), 1)}
        for command in ({"command": "latency", "device": index, "base_ms": device["base_ms"], "jitter_ms": jitter_ms},
                        {"command": "first-frame", "device": index, "base_ms": device["first_frame_ms"], "jitter_ms": first_frame_jitter_ms},
                        {"command": "clock-drift", "device": index, "ppm": device["ppm"]}):
            answer = sim.control(command)
            assert answer.get("ok"), (command, answer)
        chosen.append(device)
    return chosen


def settled_spread(sim, samples=5, interval=0.5):
    """The median of `samples` spreads taken `interval` apart: where the wall stays, not one
    instant that may fall inside a correction."""
    spreads = []
    for index in range(samples):
        if index:
            time.sleep(interval)
        spreads.append(spread(playbacks(sim)))
    return sorted(spreads)[len(spreads) // 2]
