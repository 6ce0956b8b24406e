#!/usr/bin/env python3
"""Chaos soak of the daemon: `castline run` keeps one job playing on every device of `castline sim`
while random faults come from the simulator's control socket and an isolated channel plugin
segfaults every minute. Inside a network namespace this script creates (only `lo`; no mDNS).

Faults (one device at a time, at most a tenth of the devices at once): drop, ignore-pings (4 s),
delay (1 s replies for 4 s), stop-app, reboot (down 2 s), outage (down 2 s), transfer (the
device's session moves to another job device, whose app it replaces: both are timed), malformed
(a random kind), fail-next-load (then stop-app, so the job's next LOAD fails). Device 0 carries the plugin
and is never faulted: `TestPluginCrashesInChannel` runs under `plugins.isolated`, and every
`--crash-every` seconds it is made to fail in on_message through the API, in turn a segfault, a
hang (killed after plugins.call_timeout) and going over its memory limit; the soak checks its
channel answers again, and that `logs stats` counts each fault by plugin and problem.

After each fault the soak waits for the device to be back in its desired state: the daemon's link
`connected`, the job `playing`, the simulator's media PLAYING with the job's URL (for the faults
that disrupt, only after the disruption was seen). It reports, as JSON lines:
- `recovery`: per fault class, count and p50/p99/max seconds from injection to desired state;
- `lost`: devices not back in their desired state 60 s after the last fault (goal 0);
- `resources`: the daemon's CPU seconds, fd count (and its fds by kind: TCP sockets by state, Unix sockets,
  event fds, files), RSS and live heap (its `castline_heap_bytes{state="in_use"}`) once every
  device played, each minute, and at the end (goal ±5 %);
- `dropped`: records the log sinks dropped (the API's /v1/logging);
- `plugin`: crashes injected, and the helper's restarts seen in the log;
- `probes`: the static provider's probes (a TLS connection each) over the soak: one per device at
  start-up, then only for a device whose session is down when its recheck comes;
- `stats`: what `castline logs stats` says over the soak's JSON log, next to the soak's own
  count of each fault (the truth): LOAD → LOAD_FAILED against fail-next-load, app stopped
  against stop-app + fail-next-load + transfer, app replaced (its sessions' app changes) against
  transfer, suspends against the faults that end a connection.

    sudo .venv/bin/python Benchmarks/chaos_soak.py --bin .build/release/castline --devices 1000 --seconds 600
    (--faults drop,stop-app: only those classes; --no-faults: the control run, nothing injected.)
    (CI: Tests/Conformance/test_chaos_soak.py runs it with 100 devices for 2 minutes.)
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402
from unix_http import UnixHTTPConnection  # noqa: E402

URL = "http://media.invalid/soak.mp4"   # never fetched: the simulator checks loopback media only
TEST_NS = "urn:x-cast:org.castline.test"
# Faults whose effect the views show (link, job or media state); the soak waits to see it before
# it times the recovery. ignore-pings and delay are over when their later undo ran.
DISRUPTING = {"drop", "stop-app", "reboot", "outage", "fail-next-load", "transfer"}
CLASSES = ["drop", "ignore-pings", "delay", "stop-app", "reboot", "outage", "transfer", "malformed", "fail-next-load"]


def api(path, method, url, body=None, timeout=30):
    """(status, parsed JSON, or the text of a non-JSON answer such as /metrics; None when empty)."""
    connection = UnixHTTPConnection(path, timeout)
    try:
        data = json.dumps(body) if body is not None else None
        connection.request(method, url, body=data, headers={"Content-Type": "application/json"} if data else {})
        response = connection.getresponse()
        text = response.read().decode()
        if not text:
            return response.status, None
        return response.status, (json.loads(text) if (response.getheader("Content-Type") or "").startswith("application/json") else text)
    finally:
        connection.close()


def percentiles(values):
    if not values:
        return None
    ordered = sorted(values)
    rank = lambda p: ordered[min(len(ordered) - 1, max(0, int(p * len(ordered) + 0.999999) - 1))]
    return {"count": len(values), "p50_s": round(rank(0.5), 3), "p99_s": round(rank(0.99), 3), "max_s": round(ordered[-1], 3)}


TRIM_INTERVAL = 30


def resources(pid, socket):
    """The daemon's fds, RSS and CPU seconds used so far from /proc, and what its malloc holds in
    live objects (its /metrics): RSS growth with a flat heap is memory freed but kept resident,
    not a leak."""
    kinds = fd_kinds(pid)
    fds = sum(kinds.values())
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    _, text = api(socket, "GET", "/metrics")
    heap = next((float(line.split()[-1]) for line in text.splitlines() if line.startswith('castline_heap_bytes{state="in_use"}')), 0)
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()   # after the command's name: state is field 3
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime + stime
    return {"fds": fds, "rss_kb": rss, "heap_in_use_kb": round(heap / 1024), "cpu_s": round(cpu, 2), "fd_kinds": kinds}


TCP_STATES = {"01": "established", "02": "syn-sent", "03": "syn-recv", "04": "fin-wait-1", "05": "fin-wait-2", "06": "time-wait",
              "07": "close", "08": "close-wait", "09": "last-ack", "0A": "listen", "0B": "closing"}


def fd_kinds(pid):
    """The daemon's fds by kind: each TCP socket by its state (from /proc/PID/net/tcp*, which is
    the daemon's namespace), Unix sockets, pipes, event/timer fds, files. What a changed count is made of."""
    tcp = {}
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                for line in list(f)[1:]:
                    fields = line.split()
                    tcp[fields[9]] = "tcp " + TCP_STATES.get(fields[3], fields[3])
        except OSError:
            pass
    kinds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            target = None   # closed since the listing: still counted, as the listing's length would
        if target is None:
            kind = "closed while read"
        elif target.startswith("socket:["):
            kind = tcp.get(target[8:-1], "unix or other socket")
        elif target.startswith("anon_inode:"):
            kind = target[len("anon_inode:"):].strip("[]")
        elif target.startswith("pipe:"):
            kind = "pipe"
        else:
            kind = "file"
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))


ON_DEVICE = "stopped on the device while showing media (another sender, or the app ended)"


class Soak:
    def __init__(self, binary, devices, seconds, seed, crash_every, workdir, out=print, classes=tuple(CLASSES)):
        """`classes`: the fault classes injected at random; none: the control run (no fault, no crash)."""
        self.binary = binary
        self.count = devices
        self.seconds = seconds
        self.random = random.Random(seed)
        self.crash_every = crash_every
        self.classes = list(classes)
        self.workdir = workdir
        self.out = out
        self.log_path = os.path.join(workdir, "castline.jsonl")
        self.socket = os.path.join(workdir, "api.sock")
        self.injected = {c: 0 for c in CLASSES}
        self.recovery = {c: [] for c in CLASSES}
        self.unrecovered = []
        self.crashes = 0
        self.crashed = 0
        self.crash_recovery = []
        self.crash_unrecovered = []
        self.crasher = None
        self.plugin_faults = {}

    def emit(self, kind, **fields):
        self.out(json.dumps({"figure": kind, **fields}))

    # Device views (polled together each round).

    def views(self):
        sim = {i: d["state"] for i, d in enumerate(self.sim.control({"command": "list"}, timeout=30)["devices"])}
        status, body = api(self.socket, "GET", "/v1/devices")
        links = {d.get("id"): d.get("link") for d in (body or {}).get("devices", [])} if status == 200 else {}
        status, body = api(self.socket, "GET", "/v1/jobs/soak")
        jobs = {d.get("id"): d.get("state") for d in (body or {}).get("devices", [])} if status == 200 else {}
        return sim, links, jobs

    def desired(self, index, views):
        sim, links, jobs = views
        uuid = self.devices[index]["uuid"]
        media = (sim.get(index) or {}).get("media") or {}
        return (links.get(uuid) == "connected" and jobs.get(uuid) == "playing"
                and media.get("playerState") == "PLAYING" and media.get("contentId") == URL)

    def disrupted(self, index, views):
        sim, links, jobs = views
        uuid = self.devices[index]["uuid"]
        media = (sim.get(index) or {}).get("media") or {}
        return links.get(uuid) != "connected" or jobs.get(uuid) != "playing" or media.get("playerState") != "PLAYING"

    # Faults.

    def inject(self, index, fault, now, partner=None):
        control = self.sim.control
        if fault == "ignore-pings":
            control({"command": "ignore-pings", "device": index, "enabled": True})
            self.later.append((now + 4, {"command": "ignore-pings", "device": index, "enabled": False}))
        elif fault == "delay":
            control({"command": "delay", "device": index, "seconds": 1})
            self.later.append((now + 4, {"command": "delay", "device": index, "seconds": 0}))
        elif fault in ("reboot", "outage"):
            control({"command": fault, "device": index, "downFor": 2})
        elif fault == "malformed":
            control({"command": "malformed", "device": index,
                     "kind": self.random.choice(["garbage", "oversized", "zero-length", "invalid-json", "unknown-namespace"])})
        elif fault == "transfer":
            # The device's session moves to `partner` (another job device, as a phone's stream
            # transfer would): the source's app stops, the partner's app is replaced by one playing
            # the same media in a session castline did not start.
            control({"command": "transfer", "device": index, "to": partner})
        elif fault == "fail-next-load":
            control({"command": "fail-next-load", "device": index, "code": 104})
            control({"command": "stop-app", "device": index})
        else:
            control({"command": fault, "device": index})
        self.injected[fault] += 1

    def plugin_path(self):
        return f"/v1/devices/{self.devices[0]['uuid']}/channels/{TEST_NS.replace(':', '%3A')}"

    #: The plugin's faults, in turn: the command, and what the failed command's answer says.
    PLUGIN_FAULTS = (("crash", "SIGSEGV"), ("hang", "hung"), ("limit", "over its limit memory_mb"))

    def crash_plugin(self):
        """Makes the isolated plugin fail (the next of PLUGIN_FAULTS), then waits (45 s at most)
        until its channel answers again. Runs on its own thread: the fault loop keeps polling
        meanwhile, so a slow plugin recovery does not stretch the recovery times of the faults
        pending then."""
        path = self.plugin_path()
        started = time.monotonic()
        at = round(started - self.soak_started, 2)
        kind, sign = self.PLUGIN_FAULTS[self.crashes % len(self.PLUGIN_FAULTS)]
        command = {"crash": "crash", "hang": "hang", "limit": "eat"}[kind]
        status, body = api(self.socket, "POST", path, {"message": {"do": command}, "timeout": 15})
        self.crashes += 1
        crashed = status != 200 and sign in json.dumps(body)
        self.crashed += int(crashed)
        self.plugin_faults.setdefault(kind, {"injected": 0, "seen": 0})
        self.plugin_faults[kind]["injected"] += 1
        self.plugin_faults[kind]["seen"] += int(crashed)
        deadline = started + 45   # the restart backoff's cap (30 s), the reopen, and a margin
        answers = []
        while time.monotonic() < deadline:
            status, body = api(self.socket, "POST", path, {"message": {"do": "pid"}, "timeout": 5})
            if status == 200:
                self.crash_recovery.append(time.monotonic() - started)
                return
            answers.append(f"{round(time.monotonic() - started, 1)} s: {status} {json.dumps(body)[:200]}")
            time.sleep(0.2)
        self.crash_unrecovered.append({"at": at, "crashed": crashed, "answers": answers[-3:]})

    # The run.

    def config(self):
        # Device 0 runs the plugin's test app (CA571E00), not the job.
        devices = "\n".join(f"  - {{name: \"{'Plugin TV' if i == 0 else f'TV {i}'}\", host: {d['address']}, port: {d['castPort']}}}"
                            for i, d in enumerate(self.devices))
        return f"""devices:
{devices}
discovery: {{providers: [static]}}
channels: {{allowed_namespaces: ["{TEST_NS}"]}}
plugins: {{isolated: [test-crashes-in-channel], call_timeout: 5}}
logging:
  rules: "info,CastChannel.*:warning,CastChannel.com.google.cast.media:debug,ProcessMemory:debug,StaticHostProvider:debug"
  console: false
  sinks:
    - type: json
      options: {{path: {self.log_path}, max_bytes: 1073741824}}
session:
  heartbeat_interval: 1
  heartbeat_timeout: 3
  reconnect: {{initial_delay: 0.1, max_delay: 1}}
api:
  socket: {self.socket}
daemon: {{jobs_file: {self.workdir}/jobs.json}}
jobs:
  - name: soak
    devices: ["TV *"]
    media: {{url: "{URL}", title: Soak}}
    retry_delay: 0.5
    check_interval: 2
"""

    def run(self):
        conftest.castline_binary = lambda: self.binary
        self.namespace = conftest.Namespace()
        self.sim = None
        daemon = None
        try:
            self.sim = conftest.Simulator(self.namespace, self.workdir, extra=["--no-mdns", "--devices", str(self.count)],
                                          frame_log=False)
            self.devices = self.sim.ready["devices"]
            config = os.path.join(self.workdir, "castline.yaml")
            with open(config, "w") as f:
                f.write(self.config())
            plugin = os.path.join(os.path.dirname(self.binary), "libTestPluginCrashesInChannel.so")
            stderr = open(os.path.join(self.workdir, "daemon.stderr"), "w")
            daemon = subprocess.Popen(self.namespace.command(self.binary, "run", "--config", config, "--plugin-path", plugin),
                                      stdout=subprocess.DEVNULL, stderr=stderr)
            started = time.monotonic()
            while True:
                if daemon.poll() is not None:
                    raise RuntimeError(f"castline run exited {daemon.returncode}")
                if os.path.exists(self.socket):
                    views = self.views()
                    if all(self.desired(i, views) for i in range(1, self.count)):
                        break
                if time.monotonic() - started > 60 + self.count / 10:
                    views = self.views() if os.path.exists(self.socket) else ({}, {}, {})
                    uuids = [d["uuid"] for d in self.devices[1:]]
                    raise RuntimeError(
                        f"not every device played within the start-up bound ({60 + self.count / 10:.0f} s): of {len(uuids)}, "
                        f"{sum(views[1].get(u) == 'connected' for u in uuids)} connected, "
                        f"{sum(views[2].get(u) == 'playing' for u in uuids)} with the job playing, "
                        f"{sum(self.desired(i, views) for i in range(1, self.count))} in the desired state")
                time.sleep(0.5)
            self.emit("startup", devices=self.count, seconds=round(time.monotonic() - started, 2))
            # The plugin's channel on device 0, with its app launched: it answers before the soak.
            status, body = api(self.socket, "POST", self.plugin_path(), {"message": {"do": "pid"}, "app": "CA571E00", "timeout": 10})
            if status != 200:
                raise RuntimeError(f"the isolated plugin's channel does not answer: {status} {body}")
            # The daemon gives free heap pages back every 30 s (ProcessMemory.trimInterval): the
            # start is taken after its first trim, as every later sample is, so that start-up's
            # freed memory is not counted as the start.
            time.sleep(max(0.0, TRIM_INTERVAL + 2 - (time.monotonic() - started)))
            before = resources(daemon.pid, self.socket)
            self.soak(daemon)
            if self.crasher:
                self.crasher.join(timeout=40)
            # Settle: every device back in its desired state, or counted lost.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                views = self.views()
                lost = [i for i in range(1, self.count) if not self.desired(i, views)]
                if not lost:
                    break
                time.sleep(0.5)
            views = self.views()
            self.lost_views = {i: {"link": views[1].get(self.devices[i]["uuid"]), "job": views[2].get(self.devices[i]["uuid"]),
                                   "media": (views[0].get(i) or {}).get("media"), "app": (views[0].get(i) or {}).get("app")}
                               for i in lost}
            after = resources(daemon.pid, self.socket)
            status, logging = api(self.socket, "GET", "/v1/logging")
            dropped = {s["name"]: s["dropped"] for s in (logging or {}).get("sinks", [])}
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
            stderr.close()
            if os.environ.get("SOAK_KEEP"):
                # The current file as SOAK_KEEP, each rotated one with its suffix (SOAK_KEEP.1, …).
                for path in [self.log_path] + glob.glob(glob.escape(self.log_path) + ".*"):
                    shutil.copy(path, os.environ["SOAK_KEEP"] + path[len(self.log_path):])
            return self.report(lost, before, after, dropped, daemon.returncode)
        finally:
            if daemon and daemon.poll() is None:
                daemon.kill()
                daemon.wait(timeout=10)
            if self.sim:
                self.sim.stop()
            self.namespace.close()

    def soak(self, daemon):
        end = time.monotonic() + self.seconds
        next_fault = time.monotonic()
        next_crash = time.monotonic() + self.crash_every
        self.later = []
        self.history = []
        self.soak_started = time.monotonic()
        pending = {}   # device → (fault, t0, disruption seen)
        next_sample = time.monotonic()
        self.samples = []
        busy_limit = max(1, self.count // 10)
        while time.monotonic() < end or pending:
            now = time.monotonic()
            if daemon.poll() is not None:
                raise RuntimeError(f"castline run exited {daemon.returncode} during the soak")
            for item in [x for x in self.later if x[0] <= now]:
                self.later.remove(item)
                self.sim.control(item[1])
            if self.classes and now < end and now >= next_crash and not (self.crasher and self.crasher.is_alive()):
                self.crasher = threading.Thread(target=self.crash_plugin, daemon=True)
                self.crasher.start()
                next_crash = now + self.crash_every
            if self.classes and now < end and now >= next_fault and len(pending) < busy_limit:
                free = [i for i in range(1, self.count) if i not in pending]
                index = self.random.choice(free)
                fault = self.random.choice(self.classes)
                # A transfer needs a second free device; without one, this round injects nothing.
                partners = [i for i in free if i != index] if fault == "transfer" else []
                partner = self.random.choice(partners) if partners else None
                if fault != "transfer" or partner is not None:
                    self.inject(index, fault, now, partner)
                    self.history.append({"device": index, "fault": fault, "at": round(now - self.soak_started, 2),
                                         **({"to": partner} if partner is not None else {})})
                    pending[index] = (fault, now, False)
                    if partner is not None:
                        pending[partner] = (fault, now, False)
                next_fault = now + max(0.2, 60 / max(self.count, 1))
            if now >= next_sample:
                self.samples.append({"minute": round((now - self.soak_started) / 60, 1), **resources(daemon.pid, self.socket)})
                next_sample = now + 60
            views = self.views()
            now = time.monotonic()
            for index, (fault, t0, seen) in list(pending.items()):
                seen = seen or self.disrupted(index, views)
                # A fault that disrupts is over once the disruption was seen (or 8 s passed without one).
                ready = seen or fault not in DISRUPTING or now - t0 > 8
                if ready and self.desired(index, views) and not any(x[1].get("device") == index for x in self.later):
                    self.recovery[fault].append(now - t0)
                    del pending[index]
                elif now - t0 > 90:
                    self.unrecovered.append({"device": index, "fault": fault})
                    del pending[index]
                else:
                    pending[index] = (fault, t0, seen)
            time.sleep(0.1)

    def report(self, lost, before, after, dropped, code):
        recovery = {c: percentiles(v) for c, v in self.recovery.items()}
        self.emit("recovery", faults=self.injected, classes=recovery, unrecovered=self.unrecovered)
        self.emit("lost", devices=lost, count=len(lost), views=self.lost_views,
                  faults=[f for f in self.history if f["device"] in lost])
        self.emit("resources", start=before, end=after, each_minute=getattr(self, "samples", []),
                  cpu_s_used=round(after["cpu_s"] - before["cpu_s"], 1),
                  fd_change_pct=round(100 * (after["fds"] - before["fds"]) / before["fds"], 1),
                  rss_change_pct=round(100 * (after["rss_kb"] - before["rss_kb"]) / before["rss_kb"], 1),
                  heap_change_pct=round(100 * (after["heap_in_use_kb"] - before["heap_in_use_kb"]) / max(1, before["heap_in_use_kb"]), 1))
        self.emit("dropped", sinks=dropped)
        # Over the sink's rotated set too (a long soak writes more than one file's worth): the
        # log reader expands it.
        restarts = self.count_records("IsolatedPlugin", "helper process restarted")
        self.emit("plugin", crashes=self.crashes, crashed=self.crashed, faults=self.plugin_faults, restarts=restarts,
                  recovered=percentiles(self.crash_recovery), unrecovered=self.crash_unrecovered)
        stats_run = subprocess.run([self.binary, "logs", "stats", "--json", self.log_path], capture_output=True, text=True, timeout=300)
        stats = json.loads(stats_run.stdout) if stats_run.returncode == 0 else {}
        errors = stats.get("errors", {})
        suspends = stats.get("suspends", {})
        replaced = sum(1 for session in stats.get("sessions", []) for change in session.get("appChanges", [])
                       if change.get("change") == "replaced")
        truth = {
            # A transfer replaces the app on the device it moves to; nothing else in the soak does.
            "app replaced": {"stats": replaced, "injected": self.injected["transfer"]},
            "LOAD → LOAD_FAILED": {"stats": errors.get("LOAD → LOAD_FAILED", 0), "injected": self.injected["fail-next-load"]},
            # A transfer stops the app on the device it leaves. Each stops media that shows: stats
            # keeps those apart from castline's own stops and the device's idle closes.
            "app stopped": {"stats": stats.get("appStops", {}).get(ON_DEVICE, 0),
                            "own": stats.get("appStops", {}).get("stopped by castline", 0),
                            "injected": self.injected["stop-app"] + self.injected["fail-next-load"] + self.injected["transfer"]},
            # Each fault the plugin was made to have: one failure of the plugin in stats, by problem.
            "plugin faults": {kind: {"stats": sum(f["count"] for f in stats.get("pluginFailures", [])
                                                  if f["plugin"] == "test-crashes-in-channel"
                                                  and f["problem"].startswith({"crash": "crash", "hang": "hang", "limit": "limit"}[kind])),
                                     "injected": counts["injected"], "seen": counts["seen"]}
                              for kind, counts in self.plugin_faults.items()},
            # drop, reboot and outage each end the connection once; ignore-pings does when the
            # heartbeat times out before the device answers again (at most once per fault).
            "suspends": {"stats": suspends.get("count", 0), "resumed": suspends.get("resumed", 0),
                         "injected": sum(self.injected[c] for c in ("drop", "reboot", "outage")),
                         "ignore-pings": self.injected["ignore-pings"]},
        }
        self.emit("stats", truth=truth, exit=code)
        # The static provider probes a device with a connection of its own only while the
        # daemon's session to it is not connected: at start-up, and after a fault took it down.
        probes = self.count_records("StaticHostProvider", "probed ")
        self.emit("probes", count=probes, devices=self.count, suspends=suspends.get("count", 0))
        return {"lost": lost, "before": before, "after": after, "dropped": dropped, "truth": truth, "exit": code,
                "injected": self.injected, "recovery": recovery, "unrecovered": self.unrecovered, "crashes": self.crashes,
                "restarts": restarts, "crashed": self.crashed, "plugin_faults": self.plugin_faults, "crash_recovery": self.crash_recovery,
                "crash_unrecovered": self.crash_unrecovered, "probes": probes}

    def count_records(self, class_name, text):
        """Records of `class_name` whose message has `text`, over the soak's JSON log (its
        rotated set too: the log reader expands it)."""
        run = subprocess.run([self.binary, "logs", "query", "--class", class_name, "--grep", text, "--count", self.log_path],
                             capture_output=True, text=True, timeout=300)
        if run.returncode not in (0, 1):   # 1: no record matched
            raise RuntimeError(f"castline logs query failed ({run.returncode}): {run.stderr}")
        return int(run.stdout.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", default=os.path.join(REPO, ".build", "release", "castline"))
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--crash-every", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--faults", default=",".join(CLASSES), help="the fault classes to inject (comma-separated)")
    parser.add_argument("--no-faults", action="store_true",
                        help="inject nothing (the control run: what RSS does with the same devices and logging, undisturbed)")
    args = parser.parse_args()
    classes = [] if args.no_faults else [c.strip() for c in args.faults.split(",") if c.strip()]
    unknown = [c for c in classes if c not in CLASSES]
    if unknown:
        parser.error(f"unknown fault class {', '.join(unknown)} (known: {', '.join(CLASSES)})")
    if not classes and not args.no_faults:
        parser.error("--faults names no class (use --no-faults for a run without faults)")
    # `kill <pid>` ends the soak through its finally blocks: the daemon, the simulator and the
    # namespace are stopped and removed, as they are at the end of a run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = tempfile.mkdtemp(prefix="castline-soak-")
    os.chmod(workdir, 0o755)
    try:
        Soak(os.path.abspath(args.bin), args.devices, args.seconds, args.seed, args.crash_every, workdir, classes=classes).run()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
