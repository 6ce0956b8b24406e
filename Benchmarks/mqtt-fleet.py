#!/usr/bin/env python3
"""Benchmark: a fleet on one broker. Inside one network namespace this script creates (only `lo`;
nothing leaves it): mosquitto on 127.0.0.1:1883 (stock: Nagle on its sockets) and on :1884
(`set_tcp_nodelay true`), N agents (`castline run` with the mqtt-bridge plugin), each over its own
`castline sim` with M devices (agent i's devices on 127.0.i+1.x). The agents form three groups, in
the same run (issue 44): "before" (stock broker, the agent's TCP_NODELAY off with
CASTLINE_MQTT_TCP_NODELAY=0: castline as it was), "agent_nodelay" (stock broker, TCP_NODELAY on)
and "after" (both sides without Nagle, as docs/fleet.md advises).

Measures, with a persistent paho-mqtt client per broker (Tests/Conformance/mqtt_latency.py), in
--rounds rounds that alternate the groups: a volume command published on a device's `set` topic →
its result, and → the retained state carrying the new volume (p50/p99 per group, ms; the median
of the rounds' p50s). Goals: result p50 ≤ 5 ms, p99 ≤ 20 ms; retained state p50 ≤ 10 ms.
And, with one `mosquitto_sub -F '%U …'` (receive time, ns) per broker:
  - state propagation: a volume command on the agent's API socket → the device's retained state
    with that volume seen by the subscriber (p50/p99, ms). Includes the command's own round trip
    to the device, so it is an upper bound of "state change → retained message";
  - command → PLAYING through MQTT: a cast published on the device's `set` topic
    (mosquitto_pub started) → its result (the API answers a cast at PLAYING) (p50/p99, ms);
  - idle CPU of every agent and of the broker over --idle seconds (% of one core; per agent and
    per 100 devices).
Goals (issue 28): p99 propagation ≤ 100 ms; idle agent CPU ≤ 1 % of a core per 100 devices.
Needs root (ip netns) and the conformance venv.

    sudo .venv/bin/python Benchmarks/mqtt-fleet.py --bin .build/debug/castline [--agents 10] [--devices 100]
         [--samples 100] [--idle 20]
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402
from hub import api  # noqa: E402


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")


class Watch:
    """mosquitto_sub on a filter, every message with its receive time (Unix seconds, ns precision)."""

    def __init__(self, ns, port, topic, path):
        self.path = path
        self.out = open(path, "w")
        self.process = subprocess.Popen(ns.command("mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", topic, "-F", "%U\t%t\t%p", "-q", "1"),
                                        stdout=self.out, stderr=subprocess.DEVNULL)
        self.offset = 0

    def new(self):
        """Messages since the last call: [(time, topic, payload)]."""
        self.out.flush()
        with open(self.path) as f:
            f.seek(self.offset)
            data = f.read()
        complete = data[:data.rfind("\n") + 1]
        self.offset += len(complete.encode())
        out = []
        for line in complete.splitlines():
            parts = line.split("\t", 2)
            if len(parts) == 3:
                out.append((float(parts[0]), parts[1], parts[2]))
        return out

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=5)
        self.out.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(REPO, ".build", "debug", "castline"))
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--devices", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--idle", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of MQTT command samples, groups alternating")
    parser.add_argument("--baseline", action="store_true", help="agents without the mqtt: section: idle CPU of the hub alone")
    args = parser.parse_args()
    os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    # The mqtt-bridge plugin is found next to the binary.
    assert os.path.exists(os.path.join(os.path.dirname(os.path.abspath(args.bin)), "libCastlinePluginMQTTBridge.so"))
    work = tempfile.mkdtemp(prefix="castline-mqtt-bench-")
    ns = conftest.Namespace()
    procs, sims, watches = [], [], {}
    try:
        brokers = {}
        for port, nodelay in ((1883, False), (1884, True)):
            conf = os.path.join(work, f"mosquitto-{port}.conf")
            with open(conf, "w") as f:
                f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\nmax_queued_messages 100000\n"
                        + ("set_tcp_nodelay true\n" if nodelay else ""))
            brokers[port] = subprocess.Popen(ns.command("mosquitto", "-c", conf), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(brokers[port])
            conftest.wait_until(lambda: subprocess.run(ns.command("mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "$SYS/broker/version",
                                                                  "-C", "1", "-W", "1"), capture_output=True).returncode == 0, 10, "mosquitto up")
            watches[port] = Watch(ns, port, "castline/#", os.path.join(work, f"watch-{port}.tsv"))
        broker = brokers[1883]
        # Agent i's group: before (stock broker, no TCP_NODELAY), agent_nodelay (stock broker), after (both).
        groups = ["before", "agent_nodelay", "after"]
        group_of = {f"agent{i}": groups[i % 3] for i in range(args.agents)}
        port_of = {name: 1884 if group == "after" else 1883 for name, group in group_of.items()}
        agents = []
        started = time.monotonic()
        for i in range(args.agents):
            folder = os.path.join(work, f"agent{i}")
            os.makedirs(folder)
            sim = conftest.Simulator(ns, folder, extra=["--no-mdns", "--devices", str(args.devices), "--address", f"127.0.{i + 1}.1",
                                                        "--seed", str(1000 + i)], frame_log=False)
            sims.append(sim)
            entries = "\n".join(f"  - {{name: \"a{i} {d['name']}\", host: {d['address']}, port: {d['castPort']}}}" for d in sim.ready["devices"])
            config = os.path.join(folder, "castline.yaml")
            with open(config, "w") as f:
                f.write(f"devices:\n{entries}\ndiscovery: {{providers: [static]}}\nlogging: {{rules: \"warning\"}}\n"
                    f"api: {{socket: {folder}/api.sock}}\ndaemon: {{jobs_file: {folder}/jobs.json}}\n"
                        + ("" if args.baseline else f"mqtt: {{url: \"mqtt://127.0.0.1:{port_of[f'agent{i}']}\", agent: agent{i}, keepalive: 30, home_assistant: false}}\n"))
            env = dict(os.environ, CASTLINE_MQTT_TCP_NODELAY="0" if group_of[f"agent{i}"] == "before" else "1")
            agent = subprocess.Popen(ns.command(args.bin, "run", "--config", config), env=env,
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(folder, "agent.stderr"), "w"))
            procs.append(agent)
            agents.append((f"agent{i}", folder, agent))
        if args.baseline:
            # Every device connected: the API lists each one's link as connected.
            def connected():
                for _, folder, _ in agents:
                    try:
                        status, body, _ = api(os.path.join(folder, "api.sock"), "GET", "/v1/devices")
                    except OSError:  # not listening yet
                        return False
                    if status != 200 or sum(d.get("link") == "connected" for d in body["devices"]) < args.devices:
                        return False
                return True
            conftest.wait_until(connected, 300, "every device connected", interval=1)
            time.sleep(3)
            before = {name: cpu_seconds(p.pid) for name, _, p in agents}
            time.sleep(args.idle)
            agent_cpu = [(cpu_seconds(p.pid) - before[name]) / args.idle * 100 for name, _, p in agents]
            print(json.dumps({"metric": "baseline_idle_cpu_percent_of_a_core_without_mqtt", "agent_mean": round(statistics.mean(agent_cpu), 2),
                              "per_100_devices": round(statistics.mean(agent_cpu) * 100 / args.devices, 2), "seconds": args.idle}))
            return
        # Every device's retained state, and its id.
        ids = {}
        total = args.agents * args.devices
        deadline = time.monotonic() + 300
        while len(ids) < total and time.monotonic() < deadline:
            for _, topic, payload in watches[1883].new() + watches[1884].new():
                parts = topic.split("/")
                if len(parts) == 5 and parts[2] == "device" and parts[4] == "state" and payload:
                    ids[(parts[1], parts[3])] = json.loads(payload)
            time.sleep(0.2)
        ready = time.monotonic() - started
        print(json.dumps({"metric": "fleet_ready", "agents": args.agents, "devices": total, "seen": len(ids), "seconds": round(ready, 1)}))
        if len(ids) < total:
            raise SystemExit(f"only {len(ids)} of {total} device states arrived")

        # Idle CPU: nothing casts, nothing changes.
        time.sleep(3)
        for w in watches.values():
            w.new()
        before = {name: cpu_seconds(p.pid) for name, _, p in agents}
        broker_before = cpu_seconds(broker.pid)
        time.sleep(args.idle)
        agent_cpu = [(cpu_seconds(p.pid) - before[name]) / args.idle * 100 for name, _, p in agents]
        broker_cpu = (cpu_seconds(broker.pid) - broker_before) / args.idle * 100
        print(json.dumps({"metric": "idle_cpu_percent_of_a_core", "agent_mean": round(statistics.mean(agent_cpu), 2),
                          "agent_max": round(max(agent_cpu), 2), "per_100_devices": round(statistics.mean(agent_cpu) * 100 / args.devices, 2),
                          "broker": round(broker_cpu, 2), "seconds": args.idle}))

        # MQTT command → result and → retained state, per group, rounds alternating the groups.
        keys = list(ids)
        random.seed(7)
        latency = {g: {"result": [], "state": [], "p50s": [], "lost": 0} for g in groups}
        for round_ in range(args.rounds):
            for group in groups:
                targets = [f"{a}/{d}" for a, d in keys if group_of[a] == group]
                random.shuffle(targets)
                run = subprocess.run(ns.command(os.path.join(REPO, ".venv", "bin", "python"),
                                                os.path.join(REPO, "Tests", "Conformance", "mqtt_latency.py"),
                                                "--port", "1884" if group == "after" else "1883", "--samples", str(args.samples),
                                                *targets[:args.samples]), capture_output=True, text=True, timeout=600)
                figures = json.loads(run.stdout.strip().splitlines()[-1])
                latency[group]["result"] += [x["result_ms"] for x in figures["samples"]]
                latency[group]["state"] += [x["state_ms"] for x in figures["samples"]]
                latency[group]["p50s"].append((percentile([x["result_ms"] for x in figures["samples"]], 50),
                                               percentile([x["state_ms"] for x in figures["samples"]], 50)))
                latency[group]["lost"] += figures["lost"]
        for group in groups:
            g = latency[group]
            print(json.dumps({"metric": "mqtt_command_latency_ms", "group": group, "rounds": args.rounds, "samples": len(g["result"]),
                              "lost": g["lost"],
                              "result_p50_median_of_rounds": round(statistics.median(p for p, _ in g["p50s"]), 2),
                              "result_p50": round(percentile(g["result"], 50), 2), "result_p99": round(percentile(g["result"], 99), 2),
                              "state_p50_median_of_rounds": round(statistics.median(p for _, p in g["p50s"]), 2),
                              "state_p50": round(percentile(g["state"], 50), 2), "state_p99": round(percentile(g["state"], 99), 2),
                              "rounds_p50": [[round(a, 2), round(b, 2)] for a, b in g["p50s"]]}))

        # State propagation: volume via the API → retained state with that volume.
        propagation = []
        for n in range(args.samples):
            agent_name, device = random.choice(keys)
            folder = os.path.join(work, agent_name)
            level = 10 + (n % 80)
            watch = watches[port_of[agent_name]]
            watch.new()
            t0 = time.time()
            status, body, _ = api(os.path.join(folder, "api.sock"), "POST", f"/v1/devices/{device}/volume", {"level": level})
            if status != 200:
                continue
            end = time.monotonic() + 5
            seen = None
            while seen is None and time.monotonic() < end:
                for t, topic, payload in watch.new():
                    if topic == f"castline/{agent_name}/device/{device}/state" and payload and json.loads(payload).get("volume") == level / 100:
                        seen = t
                        break
                time.sleep(0.002)
            if seen:
                propagation.append((seen - t0) * 1000)
        print(json.dumps({"metric": "api_volume_to_retained_state_ms", "samples": len(propagation),
                          "p50": round(percentile(propagation, 50), 1), "p99": round(percentile(propagation, 99), 1),
                          "max": round(max(propagation), 1) if propagation else None}))

        # Command → PLAYING through MQTT.
        playing = []
        for n in range(min(args.samples, 50)):
            agent_name, device = random.choice(keys)
            correlation = f"bench-{n}"
            watch = watches[port_of[agent_name]]
            payload = json.dumps({"id": correlation, "command": "cast", "media": f"http://media.invalid/bench-{n}.mp4", "content_type": "video/mp4"})
            watch.new()
            t0 = time.time()
            subprocess.run(ns.command("mosquitto_pub", "-h", "127.0.0.1", "-p", str(port_of[agent_name]), "-q", "1",
                                      "-t", f"castline/{agent_name}/device/{device}/set",
                                      "-m", payload), check=True, timeout=10)
            end = time.monotonic() + 20
            seen = None
            while seen is None and time.monotonic() < end:
                for t, topic, body in watch.new():
                    if topic.endswith("/result") and correlation in body:
                        result = json.loads(body)
                        seen = t if result.get("ok") and result["result"].get("state") == "PLAYING" else -1
                        break
                time.sleep(0.002)
            if seen and seen > 0:
                playing.append((seen - t0) * 1000)
        print(json.dumps({"metric": "mqtt_cast_to_playing_ms", "samples": len(playing),
                          "p50": round(percentile(playing, 50), 1), "p99": round(percentile(playing, 99), 1)}))
    finally:
        for w in watches.values():
            w.stop()
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for sim in sims:
            sim.stop()
        ns.close()


if __name__ == "__main__":
    main()
