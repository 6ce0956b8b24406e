#!/usr/bin/env python3
"""The truth audit: does every view of a TV say what the TV really shows, and does each TV show
what its job wants? `castline run` keeps 20 simulated TVs busy with four kinds of jobs while
scripted faults arrive; every second the audit samples four things and compares them:

- the simulator's own view (control socket `list`): the truth;
- the API's view (`GET /v1/devices`);
- the retained MQTT view (the bridge's `state` and `availability` topics, read from mosquitto);
- what the config wants each TV to show.

TVs 0-4 show a dashboard (DashCast, takeover yield), 5-9 a playlist (yield), 10-14 a schedule
(an entry for the middle of the run, a dashboard fallback), 15-19 one media (15-17 reclaim,
18-19 yield). An announce job covers all 20. Faults, at fixed shares of the run: pychromecast
casts to a yielding dashboard TV and to a reclaiming TV; a reboot; an outage; a stop-app; a
SIGHUP that changes the dashboard's URL; 10 concurrent API casts to one TV; the announcement; a
TV killed for good (its simulator device down to the end); a second pychromecast cast to a
yielding playlist TV.

Reports (JSON lines, then a summary), each against its goal:
- agreement: the share of TV-samples in which the API and MQTT say what the simulator shows
  (a TV that cannot be reached counts as agreeing when the views say unknown/offline). Goal
  >= 99.5 %; every disagreement must lie within 2 s of a change of the simulator's view, and each
  one is listed;
- fidelity: the share of TV-samples in which the TV shows what its job wants, leaving out the
  fault windows and the legitimate yields. Goal >= 99 %;
- needless launches: LAUNCHes (castline's) in the simulator's frame log that no fault, config
  change, schedule switch or owner change explains. Goal 0;
- yield respected: samples in which another sender's media on a yielding TV was replaced before
  its session ended. Goal 0.

Inside a network namespace this script creates (only lo; no mDNS). Exit 0 when every goal is met.

    sudo .venv/bin/python Benchmarks/truth-audit.py --bin .build/release/castline [--seconds 900]
    (CI: Tests/Conformance/test_truth_audit.py runs it for 180 s.)
"""
import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "Tests", "Conformance"))

import conftest  # noqa: E402
import page_server  # noqa: E402
from hub import Hub, api  # noqa: E402

TVS = 20
AGENT = "audit"
DASH, LOOP, SCHED, MEDIA = range(0, 5), range(5, 10), range(10, 15), range(15, 20)
RECLAIM = range(15, 18)
MEDIA_URL = "http://media.invalid/signage.mp4"
ITEMS = [f"http://media.invalid/item-{i}.mp4" for i in range(1, 4)]
SCHED_URL = "http://media.invalid/noon-special.mp4"
VISITOR = "http://media.invalid/visitor.mp4"
BURST = "http://media.invalid/burst-{}.mp4"
CHIME = "http://media.invalid/chime.mp3"
RULES = [{"contentId": "*chime*", "duration": 3}, {"contentId": "*burst-*", "duration": 12},
         {"contentId": "*item-*", "duration": 40}, {"contentId": "*", "duration": 100000}]
WARMUP = 25.0
#: Seconds after a fault's end during which the TV may still be settling (fidelity and
#: launches leave them out).
SETTLE = 20.0



def sim_view(device):
    """What the TV shows, from the simulator: unreachable, nothing, (page, url), (media, id, state) or (app, id)."""
    if device.get("down"):
        return ("unreachable",)
    state = device["state"]
    app = state.get("app")
    if not app or app.get("isIdleScreen"):
        return ("nothing",)
    media = state.get("media")
    if media and media.get("contentId"):
        return ("media", media["contentId"], media.get("playerState"))
    page = (app.get("page") or {}).get("url")
    if page:
        return ("page", page)
    return ("app", app.get("appId"))


def api_view(device):
    """The same from a castline device object (the API's, or the MQTT state's)."""
    if device is None:
        return ("missing",)
    state = device.get("state")
    if state == "UNKNOWN" or device.get("link") not in (None, "connected"):
        return ("unreachable",)
    if state == "NO_APP":
        return ("nothing",)
    if state == "PAGE":
        return ("page", (device.get("page") or {}).get("url"))
    if state == "NO_MEDIA":
        return ("app", device.get("appId"))
    return ("media", device.get("contentId"), state)


class MQTTView:
    """The retained state and availability of every device, as mosquitto_sub hears them."""

    def __init__(self, netns):
        self.states = {}
        self.availability = {}
        self.lock = threading.Lock()
        self.process = subprocess.Popen(netns.command("mosquitto_sub", "-h", "127.0.0.1", "-t", f"castline/{AGENT}/device/#", "-v"),
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.process.stdout:
            topic, _, payload = line.rstrip("\n").partition(" ")
            parts = topic.split("/")
            if len(parts) < 5:
                continue
            device, kind = parts[3], parts[4]
            with self.lock:
                if kind == "state":
                    try:
                        self.states[device] = json.loads(payload) if payload else None
                    except ValueError:
                        pass
                elif kind == "availability":
                    self.availability[device] = payload

    def view(self, device_id):
        with self.lock:
            state = self.states.get(device_id)
            available = self.availability.get(device_id)
        if available == "offline":
            return ("unreachable",)
        return api_view(state)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Timeline:
    """The faults, their windows per TV (for fidelity and launches) and the yields to respect."""

    def __init__(self):
        self.windows = {i: [] for i in range(TVS)}   # (start, end) monotonic
        self.yields = []   # (tv, start, end, content): the other sender's media must stay
        self.events = []   # (time, what) for the report
        self.lock = threading.Lock()

    def window(self, tvs, start, end, what):
        with self.lock:
            for tv in tvs:
                self.windows[tv].append([start, end])
            self.events.append((round(start, 1), what))

    def opening(self, tvs, start, what):
        """A window whose end is not known yet (a fault that lasts until an answer): open until
        `close` gives its end, so samples taken meanwhile are judged in it."""
        handles = []
        with self.lock:
            for tv in tvs:
                handles.append([start, float("inf")])
                self.windows[tv].append(handles[-1])
            self.events.append((round(start, 1), what))
        return handles

    def close(self, handles, end):
        with self.lock:
            for handle in handles:
                handle[1] = end

    def excused(self, tv, t):
        with self.lock:
            return any(start <= t <= end + SETTLE for start, end in self.windows[tv])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--seconds", type=float, default=900)
    args = parser.parse_args()
    os.environ["CASTLINE_BIN"] = os.path.abspath(args.bin)
    duration = args.seconds
    netns = conftest.Namespace()
    workdir = tempfile.mkdtemp(prefix="castline-audit-")
    os.chmod(workdir, 0o755)
    processes = []
    try:
        rules = os.path.join(workdir, "sim-rules.json")
        with open(rules, "w") as f:
            json.dump({"mediaRules": RULES}, f)
        sim = conftest.Simulator(netns, workdir, extra=["--no-mdns", "--config", rules, "--devices", str(TVS)])
        pages, base = page_server.start(netns)
        processes.append(pages)
        broker_config = os.path.join(workdir, "mosquitto.conf")
        with open(broker_config, "w") as f:
            f.write(f"listener 1883 127.0.0.1\nallow_anonymous true\nlog_dest file {workdir}/mosquitto.log\n")
        broker = subprocess.Popen(netns.command("mosquitto", "-c", broker_config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(broker)
        conftest.wait_until(lambda: netns.run("mosquitto_pub", "-h", "127.0.0.1", "-t", "probe", "-m", "1", timeout=10).returncode == 0,
                            10, "mosquitto up")
        mqtt = MQTTView(netns)
        devices = sim.ready["devices"]
        names = [d["name"] for d in devices]
        ids = [d["uuid"] for d in devices]
        dash_url = [f"{base}/board-1.html"]
        started = time.time()
        # The schedule's entry covers the middle of the run; the fallback (a dashboard) the rest.
        # Whole seconds: the config names them to the second.
        entry_from, entry_to = int(started + WARMUP + 0.45 * duration) + 1, int(started + WARMUP + 0.75 * duration) + 1
        at = lambda t: time.strftime("%H:%M:%S", time.gmtime(t))
        fallback_url = f"{base}/fallback.html"

        def names_of(tvs):
            return json.dumps([names[i] for i in tvs])
        jobs = f"""jobs:
  - name: dash
    devices: {names_of(DASH)}
    site: "{dash_url[0]}"
    takeover: yield
  - name: loop
    devices: {names_of(LOOP)}
    media: {{items: {json.dumps(ITEMS)}, repeat: all}}
    takeover: yield
  - name: sched
    devices: {names_of(SCHED)}
    timezone: UTC
    schedule:
      - {{days: daily, from: "{at(entry_from)}", to: "{at(entry_to)}", media: "{SCHED_URL}"}}
    fallback: {{site: "{fallback_url}"}}
  - name: signage-reclaim
    devices: {names_of(RECLAIM)}
    media: {{url: "{MEDIA_URL}"}}
    takeover: reclaim
  - name: signage
    devices: {names_of([18, 19])}
    media: {{url: "{MEDIA_URL}"}}
    takeover: yield
  - name: chime
    devices: ["*"]
    announce: {{media: "{CHIME}", volume: 40, timeout: 20}}
"""
        extra = (f"mqtt: {{url: \"mqtt://127.0.0.1:1883\", agent: {AGENT}, keepalive: 5}}\n"
                 "session: {reconnect: {initial_delay: 0.2, max_delay: 1}}")
        hub = Hub(netns, sim, workdir, jobs=jobs, api_extra=extra, log_rules="info,CastChannel.*:warning")
        start = time.monotonic()
        timeline = Timeline()
        for tv in range(TVS):
            timeline.window([tv], start - WARMUP, start + WARMUP - SETTLE, "start-up")
        t0 = start + WARMUP

        def control(command):
            return sim.control(command)

        def visitor(tv, hold, url):
            device = devices[tv]
            return subprocess.Popen(netns.command(conftest.PYTHON, os.path.join(conftest.CLIENTS, "pychromecast_visitor.py"),
                                                  device["address"], str(device["castPort"]), device["uuid"], url, str(hold)),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def wants(tv, now_wall):
            """What the config wants TV `tv` to show now (a set of acceptable views' keys)."""
            if tv in DASH:
                return {("page", dash_url[0])}
            if tv in LOOP:
                return {("media", item) for item in ITEMS}
            if tv in SCHED:
                return {("media", SCHED_URL)} if entry_from <= now_wall < entry_to else {("page", fallback_url)}
            return {("media", MEDIA_URL)}

        # The script of faults: (share of the run, action). Each records its windows.
        def yield_visit(tv, until_share, url):
            begin = time.monotonic()
            hold = t0 + until_share * duration - begin
            processes.append(visitor(tv, max(1, hold), url))
            timeline.window([tv], begin, t0 + until_share * duration, f"pychromecast casts to TV {tv} (yield)")
            with timeline.lock:
                timeline.yields.append([tv, begin, t0 + until_share * duration, url])

            def end():
                time.sleep(max(0, t0 + until_share * duration - time.monotonic()))
                control({"command": "stop-app", "device": tv})
            threading.Thread(target=end, daemon=True).start()

        def reclaim_visit(tv):
            begin = time.monotonic()
            processes.append(visitor(tv, 3, VISITOR))
            timeline.window([tv], begin, begin + 10, f"pychromecast casts to TV {tv} (reclaim)")

        def fault(kind, tv, down=0):
            begin = time.monotonic()
            payload = {"command": kind, "device": tv}
            if down:
                payload["downFor"] = down
            control(payload)
            timeline.window([tv], begin, begin + down + 5, f"{kind} TV {tv}")

        def sighup():
            begin = time.monotonic()
            with open(hub.config) as f:
                config = f.read()
            new = f"{base}/board-2.html"
            with open(hub.config, "w") as f:
                f.write(config.replace(dash_url[0], new))
            hub.process.send_signal(signal.SIGHUP)
            timeline.window(DASH, begin, begin + 5, "SIGHUP: the dashboard's URL changed")
            dash_url[0] = new

        def burst():
            begin = time.monotonic()
            window = timeline.opening([18], begin, "10 concurrent API casts to TV 18")
            answers = []

            def one(i):
                answers.append(api(hub.socket, "POST", f"/v1/devices/{urllib.parse.quote(names[18])}/cast", {"media": BURST.format(i)})[0])
            threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            timeline.close(window, max(time.monotonic(), begin + 12) + 5)
            print(json.dumps({"burst": sorted(answers)}), flush=True)

        def announce():
            begin = time.monotonic()
            window = timeline.opening(range(TVS), begin, "announcement on all TVs")
            status, body, _ = api(hub.socket, "POST", "/v1/jobs/chime/run", {"wait": True})
            timeline.close(window, time.monotonic() + 5)
            print(json.dumps({"announcement": {"status": status, "restored": body.get("restored"), "failed": body.get("failed")}}), flush=True)

        def kill():
            begin = time.monotonic()
            control({"command": "outage", "device": 19, "downFor": duration * 4})
            timeline.window([19], begin, begin + duration * 4, "TV 19 killed")

        def schedule_switch(wall):
            # The switch is due at a wall-clock second: its window on the monotonic clock.
            begin = wall - (time.time() - time.monotonic())
            timeline.window(SCHED, begin - 1, begin + 5, "schedule switch")

        script = [
            (0.10, lambda: yield_visit(2, 0.30, VISITOR)),
            (0.10, lambda: reclaim_visit(16)),
            (0.15, lambda: fault("reboot", 6, down=3)),
            (0.20, lambda: fault("outage", 11, down=6)),
            (0.25, lambda: fault("stop-app", 17)),
            (0.35, sighup),
            (0.45, lambda: schedule_switch(entry_from)),
            (0.50, burst),
            (0.60, announce),
            (0.70, kill),
            (0.75, lambda: schedule_switch(entry_to)),
            (0.80, lambda: yield_visit(7, 0.90, "http://media.invalid/visitor-2.mp4")),
        ]

        def run_script():
            for share, action in script:
                time.sleep(max(0, t0 + share * duration - time.monotonic()))
                try:
                    action()
                except Exception as error:   # noqa: BLE001 (reported, the audit goes on)
                    print(json.dumps({"fault_error": str(error)}), flush=True)
        threading.Thread(target=run_script, daemon=True).start()

        # Sampling, once a second, to the end.
        samples = agree = agree_api = agree_mqtt = 0
        faithful = judged = 0
        disagreements, unexcused = [], []
        yield_violations, unfaithful = [], []
        last_sim = {}
        changed_at = {}
        changes = {tv: [] for tv in range(TVS)}   # monotonic times the simulator's view changed
        end_at = start + WARMUP + duration
        next_sample = time.monotonic()
        while time.monotonic() < end_at:
            next_sample += 1.0
            now = time.monotonic()
            wall = time.time()
            listing = {d["index"]: d for d in sim.control({"command": "list"})["devices"]}
            status, body, _ = api(hub.socket, "GET", "/v1/devices")
            by_id = {d["id"]: d for d in body.get("devices", [])} if status == 200 else {}
            for tv in range(TVS):
                truth = sim_view(listing[tv])
                if last_sim.get(tv) != truth:
                    changed_at[tv] = now
                    changes[tv].append(now)
                    last_sim[tv] = truth
                if now < start + WARMUP:
                    continue
                seen_api = api_view(by_id.get(ids[tv]))
                seen_mqtt = mqtt.view(ids[tv])
                ok_api, ok_mqtt = seen_api == truth, seen_mqtt == truth
                samples += 1
                agree_api += ok_api
                agree_mqtt += ok_mqtt
                agree += ok_api and ok_mqtt
                if not (ok_api and ok_mqtt):
                    since = now - changed_at.get(tv, 0)
                    entry = {"t": round(now - t0, 1), "tv": tv, "sim": truth, "api": seen_api, "mqtt": seen_mqtt,
                             "since_change_s": round(since, 1)}
                    entry["_now"] = now
                    disagreements.append(entry)
                # Yields: the other sender's media must still show.
                with timeline.lock:
                    yields = [y for y in timeline.yields if y[0] == tv and y[1] + 8 <= now < y[2] - 1]
                for _, _, _, url in yields:
                    if truth[:2] != ("media", url):
                        yield_violations.append({"t": round(now - t0, 1), "tv": tv, "sim": truth, "visitor": url})
                if not timeline.excused(tv, now) and not yields:
                    judged += 1
                    key = truth[:2]
                    if key in wants(tv, wall):
                        faithful += 1
                    else:
                        unfaithful.append({"t": round(now - t0, 1), "tv": tv, "sim": truth, "wants": sorted(wants(tv, wall))})
            time.sleep(max(0, next_sample - time.monotonic()))

        # A disagreement is excused within 2 s of a change of the simulator's view, before it (the
        # views catch up) or after it (the simulator was read an instant before the change its own
        # control command caused, the views an instant after), plus the 1 s sampling interval.
        for entry in disagreements:
            t = entry.pop("_now")
            near = [c for c in changes[entry["tv"]] if abs(c - t) <= 2.0 + 1.0]
            entry["excused"] = bool(near)
            if not near:
                unexcused.append(entry)

        # Launches: castline's (every LAUNCH but the visitors' own) that nothing explains.
        needless = []
        frames = sim.frames()
        index_of = {d["name"]: i for i, d in enumerate(devices)} | {d["uuid"]: i for i, d in enumerate(devices)}
        offset = time.time() - time.monotonic()
        for frame in frames:
            if frame.get("namespace") != "urn:x-cast:com.google.cast.receiver" or frame.get("direction") != "in":
                continue
            payload = frame.get("payload")
            payload = json.loads(payload) if isinstance(payload, str) else payload
            if not isinstance(payload, dict) or payload.get("type") != "LAUNCH":
                continue
            tv = index_of.get(frame.get("device"))
            if tv is None or not frame.get("time"):
                continue
            # Frame times are RFC 3339: onto the monotonic clock of the windows.
            t = datetime.datetime.fromisoformat(frame["time"].replace("Z", "+00:00")).timestamp() - offset
            if not timeline.excused(tv, t):
                needless.append({"t": round(t - t0, 1), "tv": tv, "app": payload.get("appId")})

        summary = {
            "seconds": duration, "tvs": TVS, "samples": samples,
            "agreement_pct": round(100 * agree / max(1, samples), 3),
            "agreement_api_pct": round(100 * agree_api / max(1, samples), 3),
            "agreement_mqtt_pct": round(100 * agree_mqtt / max(1, samples), 3),
            "disagreements": len(disagreements), "disagreements_beyond_2s": len(unexcused),
            "fidelity_pct": round(100 * faithful / max(1, judged), 3), "fidelity_samples": judged,
            "needless_launches": len(needless), "yield_violations": len(yield_violations),
        }
        for entry in disagreements:
            print(json.dumps({"disagreement": entry}), flush=True)
        for entry in needless:
            print(json.dumps({"needless_launch": entry}), flush=True)
        for entry in unfaithful:
            print(json.dumps({"unfaithful": entry}), flush=True)
        for entry in yield_violations[:50]:
            print(json.dumps({"yield_violation": entry}), flush=True)
        print(json.dumps({"timeline": timeline.events}), flush=True)
        goals = {"agreement": summary["agreement_pct"] >= 99.5 and not unexcused, "fidelity": summary["fidelity_pct"] >= 99.0,
                 "needless_launches": not needless, "yield_respected": not yield_violations}
        summary["goals_met"] = goals
        print(json.dumps({"summary": summary}), flush=True)
        mqtt.stop()
        hub.stop()
        sim.stop()
        return 0 if all(goals.values()) else 1
    finally:
        for process in processes:
            conftest.stop_process(process)
        netns.close()


if __name__ == "__main__":
    sys.exit(main())
