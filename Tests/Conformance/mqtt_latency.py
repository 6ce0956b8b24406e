#!/usr/bin/env python3
"""MQTT command latencies as a fleet client sees them: one persistent paho-mqtt client (no process
start in the figure) publishes volume commands on devices' `set` topics and times, on its own
monotonic clock, each command's result on `…/result` and the retained state that carries the new
volume on `…/state`. Used by test_mqtt_fleet.py and Benchmarks/mqtt-fleet.py; run it inside the
broker's namespace (it connects to HOST:PORT there).

    mqtt_latency.py --host 127.0.0.1 --port 1883 [--user U --password P] --samples N AGENT/DEVICE_ID ...

Prints one JSON object: {"samples": [{"target", "result_ms", "state_ms"}], "lost": n}. A sample whose
result or state did not come within --timeout seconds is counted in "lost", not timed. Each
command waits for the last one's answers (one in flight), so a sample is never queued behind
another."""
import argparse
import json
import threading
import time

import paho.mqtt.client as mqtt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=1883)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--base", default="castline")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=5)
    parser.add_argument("targets", nargs="+", help="AGENT/DEVICE_ID (device id as its topic level)")
    args = parser.parse_args()

    lock = threading.Condition()
    waiting = {}   # correlation → {"sent", "result", "state", "topic", "level"}
    volume = {}    # device root topic → its volume as the last state said (retained ones included)
    subscribed = threading.Event()

    def on_connect(client, userdata, flags, reason, properties):
        client.subscribe([(f"{args.base}/+/device/+/result", 1), (f"{args.base}/+/device/+/state", 1)])

    def on_subscribe(client, userdata, mid, reasons, properties):
        subscribed.set()

    def on_message(client, userdata, message):
        now = time.monotonic()
        try:
            payload = json.loads(message.payload) if message.payload else None
        except ValueError:
            return
        with lock:
            if message.topic.endswith("/state") and isinstance(payload, dict) and payload.get("volume") is not None:
                volume[message.topic.rsplit("/", 1)[0]] = payload["volume"]
            for correlation, entry in waiting.items():
                root = entry["root"]
                if message.topic == f"{root}/result" and isinstance(payload, dict) and payload.get("id") == correlation:
                    entry.setdefault("result", now)
                    entry["ok"] = payload.get("ok")
                elif (message.topic == f"{root}/state" and not message.retain and isinstance(payload, dict)
                      and payload.get("volume") is not None and abs(payload["volume"] - entry["level"] / 100) < 1e-6):
                    entry.setdefault("state", now)
            lock.notify_all()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"castline-latency-{time.monotonic_ns()}")
    if args.user:
        client.username_pw_set(args.user, args.password)
    client.on_connect, client.on_subscribe, client.on_message = on_connect, on_subscribe, on_message
    # The client's own socket without Nagle too: the figure is castline's, not this client's.
    client.connect(args.host, args.port, keepalive=30)
    client.socket().setsockopt(6, 1, 1)   # IPPROTO_TCP, TCP_NODELAY
    client.loop_start()
    samples, lost = [], 0
    try:
        if not subscribed.wait(10):
            raise SystemExit("no SUBACK from the broker")
        # The targets' retained states (their volumes now), bounded: 5 s.
        roots = {f"{args.base}/{t.split('/', 1)[0]}/device/{t.split('/', 1)[1]}" for t in args.targets}
        deadline = time.monotonic() + 5
        with lock:
            while not roots <= set(volume) and time.monotonic() < deadline:
                lock.wait(0.05)
        for n in range(args.samples):
            target = args.targets[n % len(args.targets)]
            agent, device = target.split("/", 1)
            correlation = f"latency-{n}-{time.monotonic_ns()}"
            # A level other than the device's own now, so that every command changes the state (and
            # a retained message follows).
            root = f"{args.base}/{agent}/device/{device}"
            with lock:
                now = volume.get(root)
            level = 20 + (n % 2) * 30 + n % 7
            if now is not None and abs(now - level / 100) < 1e-6:
                level += 1
            entry = {"root": root, "level": level}
            with lock:
                waiting.clear()
                waiting[correlation] = entry
                entry["sent"] = time.monotonic()
            client.publish(f"{entry['root']}/set", json.dumps({"id": correlation, "command": "volume", "level": level}), qos=1)
            deadline = entry["sent"] + args.timeout
            with lock:
                while not ("result" in entry and "state" in entry) and time.monotonic() < deadline:
                    lock.wait(max(0.0, deadline - time.monotonic()))
            if "result" in entry and "state" in entry and entry.get("ok"):
                samples.append({"target": target, "result_ms": round((entry["result"] - entry["sent"]) * 1000, 3),
                                "state_ms": round((entry["state"] - entry["sent"]) * 1000, 3)})
            else:
                lost += 1
    finally:
        client.loop_stop()
        client.disconnect()
    print(json.dumps({"samples": samples, "lost": lost}))


if __name__ == "__main__":
    main()
