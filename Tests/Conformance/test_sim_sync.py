"""The simulator's side of synchronised playback (issue 45): network latency per device, the
first frame, clock drift, and the ground truth (`list`'s `state.playback`, the frame log's
`playback` events) on the host's CLOCK_REALTIME, against real processes and sockets."""
import json
import os

import pytest

from conftest import Simulator, run_client, wait_until

pytestmark = pytest.mark.needs_root("a network namespace (ip netns)")

UUID = "00112233445566778899aabbccddeeff"


def config_sim(netns, workdir, device_keys, **kwargs):
    path = os.path.join(workdir, "sync.json")
    with open(path, "w") as f:
        json.dump({"devices": [{"name": "Wall", "uuid": UUID, **device_keys}]}, f)
    return Simulator(netns, workdir, extra=["--no-mdns", "--config", path], **kwargs)


def stop(sim):
    assert sim.stop() == 0, sim.log_text()


def test_latency_command_delays_each_way(netns, workdir):
    sim = Simulator(netns, workdir, extra=["--no-mdns"])
    try:
        for bad, why in [({"base_ms": -1}, "base_ms"), ({"base_ms": "x"}, "base_ms"), ({"jitter_ms": 10001}, "jitter_ms")]:
            answer = sim.control({"command": "latency", "device": 0, **bad})
            assert answer["ok"] is False and why in answer["error"] and "0…10000" in answer["error"], answer
        assert sim.control({"command": "latency", "device": 0, "base_ms": 100, "jitter_ms": 0}) == {"ok": True}
        assert sim.control({"command": "list"})["devices"][0]["sync"]["latency"] == {"base_ms": 100, "jitter_ms": 0}
        device = sim.device
        seen = run_client(netns, "sync_sender.py", device["address"], str(device["castPort"]), "roundtrip")
        # 100 ms in, 100 ms out: never less than 200 ms; the rest is the host (< 100 ms, loopback).
        assert all(200 <= t < 300 for t in seen["round_trips_ms"]), seen
        assert sim.control({"command": "latency", "base_ms": 0}) == {"ok": True}   # every device; 0/0: off
    finally:
        stop(sim)


def test_ground_truth_after_play_with_first_frame_latency_and_drift(netns, workdir):
    sim = config_sim(netns, workdir, {"latency": {"base_ms": 50}, "first_frame": {"base_ms": 100},
                                      "clock_drift_ppm": 10000})
    try:
        device = sim.device
        seen = run_client(netns, "sync_sender.py", device["address"], str(device["castPort"]), "play")
        # The reply says PLAYING at once, with the playhead still where it was paused.
        assert seen["reply_state"] == "PLAYING" and seen["reply_current_time"] == 0, seen

        truth = sim.control({"command": "list"})["devices"][0]["state"]["playback"]
        assert truth["media_session_id"] == seen["media_session_id"] and truth["playing"] is True, truth
        assert truth["content_id"] == "http://media.invalid/castline/wall.mp4"
        assert truth["rate"] == pytest.approx(1.01, abs=1e-12)
        # The device handled PLAY at started_at - 100 ms (the first frame). That moment lies at
        # least 50 ms (inbound latency) after the client sent PLAY, and at least 50 ms (outbound
        # latency) before the client received the reply. Both bounds are floors the simulator
        # guarantees, not timings of this host, so they hold on a loaded machine too; 1 ms covers
        # the reading error of the realtime offset (µs) and clock rounding.
        handled = truth["started_at_unix_ns"] - 100_000_000
        slack = 1_000_000
        assert handled >= seen["play_sent_ns"] + 50_000_000 - slack, (truth, seen)
        assert handled <= seen["reply_received_ns"] - 50_000_000 + slack, (truth, seen)

        # The true position advances with the drift: 1.01 media seconds per second since started_at.
        def later():
            again = sim.control({"command": "list"})["devices"][0]["state"]["playback"]
            return again if again["at_unix_ns"] - truth["at_unix_ns"] > 300_000_000 else None
        second = wait_until(later, 5, "a second sample 0.3 s later")
        for sample in (truth, second):
            elapsed = max(0, sample["at_unix_ns"] - sample["started_at_unix_ns"]) / 1e9
            assert sample["position_s"] == pytest.approx(1.01 * elapsed, abs=1e-6), sample
        assert second["started_at_unix_ns"] == truth["started_at_unix_ns"]

        events = [f for f in sim.frames() if f["event"] == "playback"]
        starts = [e for e in events if e["change"] == "start"]
        assert starts and starts[-1]["started_at_unix_ns"] == truth["started_at_unix_ns"], events
        assert [e["change"] for e in events][:1] == ["item"], events
    finally:
        stop(sim)


def test_unmodified_pychromecast_under_latency_first_frame_and_drift(netns, workdir):
    sim = config_sim(netns, workdir, {"latency": {"base_ms": 50, "jitter_ms": 20},
                                      "first_frame": {"base_ms": 0, "jitter_ms": 150}, "clock_drift_ppm": 200},
                     launch_delay=None)
    try:
        device = sim.device
        seen = run_client(netns, "pychromecast_flow.py", device["address"], str(device["castPort"]), device["uuid"])
        assert seen["connected"] is True and seen["app_after_play"] == "CC1AD845", seen
        assert seen["reached_playing"] and seen["reached_paused"] and seen["seek_ok"], seen
        assert seen["volume_ok"] and seen["quit_ok"], seen
        sync = sim.control({"command": "list"})["devices"][0]["sync"]
        assert sync["latency"] == {"base_ms": 50, "jitter_ms": 20} and sync["clock_drift_ppm"] == 200, sync
        changes = [f["change"] for f in sim.frames() if f["event"] == "playback"]
        assert "start" in changes and "stop" in changes and changes[-1] == "end", changes
    finally:
        stop(sim)
