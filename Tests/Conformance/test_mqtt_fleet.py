"""A fleet over MQTT: a real mosquitto in a broker namespace, three "sites" (namespaces), each with
its own `castline run` agent (the mqtt-bridge plugin) and its own `castline sim` devices, linked
to the broker by veths. Only mosquitto_sub / mosquitto_pub (run in the broker's namespace) and
`castline fleet status` look at the broker; every command goes through it.

One module-scoped fleet, tests in order: state, HA discovery, commands, bad input, ACLs, then
the destructive ones (kill -9 of an agent, broker restart)."""
import json
import os
import signal
import statistics
import subprocess
import time

import pytest

import ha_schema
from conftest import PYTHON, Namespace, Simulator, castline_binary, wait_until

BUILD = os.path.dirname(castline_binary())
# The mqtt-bridge plugin is found next to the castline binary (the default search path).
PLUGIN = os.path.join(BUILD, "libCastlinePluginMQTTBridge.so")
SITES = {"site1": 2, "site2": 3, "site3": 2}
KEEPALIVE = 5
#: mqtt.device_unavailable_after: seconds a TV's link may be down before its availability says offline.
UNAVAILABLE_AFTER = 2
ADMIN = ("admin", "admin-secret")


def broker_config(workdir, addresses):
    listeners = "\n".join(f"listener 1883 {a}" for a in ["127.0.0.1", *addresses])
    # set_tcp_nodelay: the broker's side without Nagle too, as docs/fleet.md advises (each small
    # publish it forwards would otherwise wait for the receiver's delayed ACK of the one before).
    return f"""per_listener_settings false
user root
{listeners}
set_tcp_nodelay true
allow_anonymous false
password_file {workdir}/passwords
acl_file {workdir}/acl
persistence true
persistence_location {workdir}/
autosave_interval 1
log_dest file {workdir}/mosquitto.log
log_type error
log_type warning
log_type notice
"""


class Broker:
    def __init__(self, ns, workdir, addresses):
        self.ns, self.workdir = ns, workdir
        with open(os.path.join(workdir, "mosquitto.conf"), "w") as f:
            f.write(broker_config(workdir, addresses))
        passwords = os.path.join(workdir, "passwords")
        open(passwords, "w").close()
        for user, password in [ADMIN, *((s, f"{s}-secret") for s in SITES)]:
            subprocess.run(["mosquitto_passwd", "-b", passwords, user, password], check=True)
        acl = ["user admin", "topic readwrite #", ""]
        for site in SITES:
            acl += [f"user {site}", f"topic readwrite castline/{site}/#", f"topic readwrite homeassistant/+/castline_{site}/#", ""]
        with open(os.path.join(workdir, "acl"), "w") as f:
            f.write("\n".join(acl))
        os.chmod(passwords, 0o600)
        self.process = None
        self.start()

    def start(self):
        self.process = subprocess.Popen(self.ns.command("mosquitto", "-c", os.path.join(self.workdir, "mosquitto.conf")),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self.sub("$SYS/broker/version", wait=1, count=1) is not None, 10, "mosquitto up")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=10)

    def sub(self, topic, wait=3, count=None, user=ADMIN):
        """Retained (and live) messages on `topic` within `wait` s: [(retained, topic, payload)], None when it cannot connect."""
        argv = ["mosquitto_sub", "-h", "127.0.0.1", "-p", "1883", "-u", user[0], "-P", user[1], "-t", topic,
                "-F", "%r\t%t\t%p", "-W", str(wait)]
        if count:
            argv += ["-C", str(count)]
        result = subprocess.run(self.ns.command(*argv), capture_output=True, text=True, timeout=wait + 10)
        if result.returncode not in (0, 27) and not result.stdout:  # 27: -W timed out
            return None
        lines = [line.split("\t", 2) for line in result.stdout.splitlines() if line.count("\t") >= 2]
        return [(r == "1", t, p) for r, t, p in lines]

    def pub(self, topic, payload, user=ADMIN, retain=False):
        argv = ["mosquitto_pub", "-h", "127.0.0.1", "-p", "1883", "-u", user[0], "-P", user[1], "-t", topic, "-q", "1", "-m", payload]
        if retain:
            argv.append("-r")
        return subprocess.run(self.ns.command(*argv), capture_output=True, text=True, timeout=15)

    def follow(self, topic):
        """A mosquitto_sub that keeps running; read lines with .lines(); stop with .stop()."""
        return Follower(self.ns, topic)


class Follower:
    def __init__(self, ns, topic):
        self.path = f"/tmp/castline-mqtt-follow-{os.getpid()}-{time.monotonic_ns()}"
        self.out = open(self.path, "w")
        self.process = subprocess.Popen(ns.command("mosquitto_sub", "-h", "127.0.0.1", "-p", "1883", "-u", ADMIN[0], "-P", ADMIN[1],
                                                   "-t", topic, "-F", "%r\t%t\t%p", "-q", "1"),
                                        stdout=self.out, stderr=subprocess.DEVNULL)

    def lines(self):
        self.out.flush()
        with open(self.path) as f:
            return [line.rstrip("\n").split("\t", 2) for line in f if line.count("\t") >= 2]

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=5)
        self.out.close()
        os.unlink(self.path)


class Site:
    def __init__(self, name, index, ns, workdir, devices):
        self.name, self.ns = name, ns
        self.workdir = os.path.join(workdir, name)
        os.makedirs(self.workdir)
        # Media whose URL says "short" plays 1 s and ends (IDLE, FINISHED): HA's media-finished trigger.
        rules = os.path.join(self.workdir, "sim.json")
        with open(rules, "w") as f:
            json.dump({"mediaRules": [{"contentId": "*short*", "duration": 1}]}, f)
        self.sim = Simulator(ns, self.workdir, extra=["--no-mdns", "--devices", str(devices), "--seed", str(100 + index),
                                                    "--name", f"{name} TV", "--config", rules], frame_log=False)
        self.devices = self.sim.ready["devices"]
        with open(os.path.join(self.workdir, "password"), "w") as f:
            f.write(f"{name}-secret\n")
        os.chmod(os.path.join(self.workdir, "password"), 0o600)
        entries = "\n".join(f"  - {{name: \"{d['name']}\", host: {d['address']}, port: {d['castPort']}}}" for d in self.devices)
        self.config = os.path.join(self.workdir, "castline.yaml")
        with open(self.config, "w") as f:
            f.write(f"""devices:
{entries}
discovery: {{providers: [static]}}
logging: {{rules: "info,CastChannel.*:warning"}}
api: {{socket: {self.workdir}/api.sock}}
daemon: {{jobs_file: {self.workdir}/jobs.json}}
mqtt:
  url: mqtt://10.80.{index}.1:1883
  agent: {name}
  username: {name}
  password_file: {self.workdir}/password
  keepalive: {KEEPALIVE}
  device_unavailable_after: {UNAVAILABLE_AFTER}
""")
        self.stderr_path = os.path.join(self.workdir, "agent.stderr")
        self.stderr = open(self.stderr_path, "w")
        self.agent = subprocess.Popen(ns.command(castline_binary(), "run", "--config", self.config),
                                      stdout=subprocess.DEVNULL, stderr=self.stderr)

    def log(self):
        self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()

    def agent_pid(self):
        """castline's own PID (Popen's is `ip netns exec`, which execs it: the same)."""
        return self.agent.pid

    def stop(self):
        if self.agent.poll() is None:
            self.agent.send_signal(signal.SIGTERM)
            try:
                self.agent.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.agent.kill()
                self.agent.wait(timeout=5)
        self.sim.stop()
        self.stderr.close()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    assert os.path.exists(PLUGIN), f"{PLUGIN} is not built"
    workdir = str(tmp_path_factory.mktemp("mqtt-fleet"))
    broker_ns = Namespace()
    site_ns = {name: Namespace() for name in SITES}
    sites, broker = {}, None
    try:
        addresses = []
        for index, (name, ns) in enumerate(site_ns.items(), start=1):
            link = f"mq{index}"
            subprocess.run(["ip", "link", "add", link, "netns", broker_ns.name, "type", "veth", "peer", "name", "uplink",
                            "netns", ns.name], check=True)
            subprocess.run(["ip", "-n", broker_ns.name, "addr", "add", f"10.80.{index}.1/24", "dev", link], check=True)
            subprocess.run(["ip", "-n", broker_ns.name, "link", "set", link, "up"], check=True)
            subprocess.run(["ip", "-n", ns.name, "addr", "add", f"10.80.{index}.2/24", "dev", "uplink"], check=True)
            subprocess.run(["ip", "-n", ns.name, "link", "set", "uplink", "up"], check=True)
            addresses.append(f"10.80.{index}.1")
        broker = Broker(broker_ns, workdir, addresses)
        for index, (name, count) in enumerate(SITES.items(), start=1):
            sites[name] = Site(name, index, site_ns[name], workdir, count)
        yield broker, sites
    finally:
        for site in sites.values():
            site.stop()
        if broker:
            broker.stop()
        for ns in [*site_ns.values(), broker_ns]:
            ns.close()


def retained_states(broker, wait=3):
    messages = broker.sub("castline/+/device/+/state", wait=wait) or []
    return {t: json.loads(p) for r, t, p in messages if r and p}


def wait_for_states(broker, expected, timeout=40, sites=None):
    """The retained device states once `expected` are there; with `sites`, each simulated device
    gets its castline device id (`id`) from the state whose agent and name match."""
    states = {}

    def all_there():
        nonlocal states
        states = retained_states(broker, wait=2)
        return len(states) >= expected
    wait_until(all_there, timeout, f"{expected} retained device states")
    for name, site in (sites or {}).items():
        for device in site.devices:
            for topic, state in states.items():
                if topic.startswith(f"castline/{name}/device/") and state.get("device") == device["name"]:
                    device["id"] = state["id"]
    return states


def test_every_device_state_is_retained_and_every_agent_online(fleet):
    broker, sites = fleet
    states = wait_for_states(broker, sum(SITES.values()), sites=sites)
    for name, site in sites.items():
        for device in site.devices:
            topic = f"castline/{name}/device/{device['id']}/state"
            assert topic in states, (topic, sorted(states), site.log()[-3000:])
            # The same object as GET /v1/devices/{id}.
            assert states[topic]["id"] == device["id"]
            assert states[topic]["device"] == device["name"]
            assert "state" in states[topic] and "link" in states[topic]
    statuses = {t: p for r, t, p in broker.sub("castline/+/status", wait=2) if r}
    assert statuses == {f"castline/{name}/status": "online" for name in SITES}
    # The password is never logged.
    for site in sites.values():
        assert f"{site.name}-secret" not in site.log()


def test_home_assistant_discovery_payloads_follow_the_schema(fleet):
    """Every retained discovery payload against the key table transcribed from HA's pages
    (ha_schema.py): required keys, no unknown or deprecated key (object_id), valid values
    (availability_mode), default_entity_id in its domain, device and origin blocks. Each TV is
    one device of 19 entities (the screen's binary sensor with them) behind its agent's named
    device, available only while the agent and the TV both are."""
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    messages = [(t, json.loads(p)) for r, t, p in broker.sub("homeassistant/#", wait=3) if r and p]
    unique_ids = [payload["unique_id"] for _, payload in messages if "unique_id" in payload]
    assert len(unique_ids) == len(set(unique_ids)), "unique_id must be unique per entity"
    for topic, payload in messages:
        prefix, component, node, obj, config = topic.split("/")
        assert (prefix, config) == ("homeassistant", "config")
        for part in (node, obj):
            assert all(c.isalnum() or c in "_-" for c in part), topic
        assert ha_schema.problems(component, payload) == [], (topic, payload)
        agent = node.removeprefix("castline_")
        assert payload["origin"]["name"] == "castline"
        if component == "binary_sensor" and obj == "agent":   # the agent's own device
            assert payload["state_topic"] == f"castline/{agent}/status" and payload["device"]["name"] == f"castline {agent}"
            continue
        if component == "binary_sensor":   # a TV's screen: ON, OFF, or None (HA's unknown) where castline cannot tell
            assert obj.endswith("_screen") and payload["state_topic"].endswith("/state"), (topic, payload)
            render = lambda state: ha_schema.render_value(payload["value_template"], state)
            assert render({"screen": {"visible": True, "reason": None, "source": "device"}}) == "ON"
            assert render({"screen": {"visible": False, "reason": "standby", "source": "device"}}) == "OFF"
            assert render({"screen": {"visible": None, "reason": None, "source": None}}) == "None"
            assert render({"state": "UNKNOWN"}) == "None"
        assert payload["device"]["via_device"] == node and "suggested_area" not in payload["device"]
        if component != "device_automation":
            topics = [a["topic"] for a in payload["availability"]]
            assert payload["availability_mode"] == "all"
            assert topics[0] == f"castline/{agent}/status" and topics[1].startswith(f"castline/{agent}/device/"), topics
        for key in ("state_topic", "command_topic", "topic"):
            if key in payload:
                assert payload[key].startswith(f"castline/{agent}/device/"), (topic, payload[key])
        if component == "select":
            assert payload["options"][0] == "none"
    agents = {t.split("/")[2] for t, p in messages if t.split("/")[1] == "binary_sensor" and t.split("/")[3] == "agent"}
    assert agents == {f"castline_{name}" for name in SITES}
    for name, site in sites.items():
        for device in site.devices:
            kinds = sorted(t.split("/")[1] for t, p in messages if p["device"]["name"] == device["name"] and f"castline_{name}" in t)
            assert kinds == sorted(["sensor"] * 6 + ["number", "switch"] + ["button"] * 5 + ["text"] * 2 + ["select"]
                                   + ["device_automation"] * 2 + ["binary_sensor"]), (device["name"], kinds)
            # Every TV's own availability topic says online while its session is connected.
            availability = broker.sub(f"castline/{name}/device/{device['id']}/availability", wait=1)
            assert availability and availability[0][2] == "online", availability


def test_a_url_with_quotes_and_backslashes_casts_from_the_ha_text_entity(fleet):
    """The Cast URL text entity's command_template rendered with Jinja2 as HA renders it: a URL
    holding `"` and `\\` must become valid JSON whose media is that URL, and cast (before, the
    template put the value between quotes unescaped: bad_json)."""
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    site, target = "site2", sites["site2"].devices[0]
    config = [json.loads(p) for r, t, p in broker.sub(f"homeassistant/text/castline_{site}/+/config", wait=2) if r and p
              and json.loads(p)["unique_id"].endswith("_cast_url") and json.loads(p)["device"]["name"] == target["name"]]
    assert len(config) == 1, config
    url = 'http://media.invalid/say"hi"\\back\\slash.mp4?q="x"'
    rendered = ha_schema.render_command(config[0]["command_template"], url)
    assert json.loads(rendered) == {"command": "cast", "media": url}
    follower = broker.follow(f"castline/{site}/device/{target['id']}/result")
    try:
        time.sleep(0.3)   # mosquitto_sub says nothing once subscribed
        assert broker.pub(config[0]["command_topic"], rendered).returncode == 0
        found = {}

        def answered():
            for _, _, p in follower.lines():
                found.update(json.loads(p))
                return True
            return False
        wait_until(answered, 30, "the cast's result")
    finally:
        follower.stop()
    assert found["ok"] is True, found
    assert found["result"]["state"] == "PLAYING" and found["result"]["contentId"] == url, found


def command(broker, site, device_id, payload, timeout=30):
    """Publishes a command and waits for its result (matched by correlation id)."""
    follower = broker.follow(f"castline/{site}/device/{device_id}/result")
    try:
        time.sleep(0.3)   # mosquitto_sub says nothing once subscribed: give it the time to, or the result is missed
        published = broker.pub(f"castline/{site}/device/{device_id}/set", json.dumps(payload) if not isinstance(payload, str) else payload)
        assert published.returncode == 0, published.stderr
        result = {}

        def answered():
            for _, _, p in follower.lines():
                message = json.loads(p)
                if not isinstance(payload, dict) or message.get("id") == payload.get("id"):
                    result.update(message)
                    return True
            return False
        wait_until(answered, timeout, f"result of {payload if isinstance(payload, dict) else 'command'}")
        return result
    finally:
        follower.stop()


def test_a_command_from_the_broker_casts_on_the_right_tv_at_the_right_site(fleet):
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    target = sites["site2"].devices[1]
    url = "http://media.invalid/fleet.mp4"
    result = command(broker, "site2", target["id"], {"id": "cast-1", "command": "cast", "media": url, "content_type": "video/mp4"})
    assert result["ok"] is True, result
    assert result["status"] == 200 and result["result"]["state"] == "PLAYING"

    def playing():
        states = retained_states(broker, wait=2)
        return states.get(f"castline/site2/device/{target['id']}/state", {}).get("contentId") == url
    wait_until(playing, 10, "the retained state shows the cast")
    states = retained_states(broker)
    others = [t for t, s in states.items() if s.get("contentId") == url]
    assert others == [f"castline/site2/device/{target['id']}/state"], others
    # The TV itself (site 2's simulator) has it, and no other TV of any site.
    holders = [(name, d["name"]) for name, site in sites.items() for d in site.sim.control({"command": "list"})["devices"]
               if url in json.dumps(d)]
    assert holders == [("site2", target["name"])], holders


def test_media_that_plays_to_its_end_fires_the_media_finished_trigger(fleet):
    """HA's device trigger "media finished": a cast of media that plays 1 s (a simulator rule)
    publishes `media_finished` on the TV's trigger topic when it ends (IDLE, FINISHED), once."""
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    target = sites["site1"].devices[0]
    triggers = broker.follow(f"castline/site1/device/{target['id']}/trigger")
    try:
        time.sleep(0.3)   # mosquitto_sub says nothing once subscribed
        result = command(broker, "site1", target["id"], {"id": "short-1", "command": "cast", "media": "http://media.invalid/short.mp4",
                                                        "content_type": "video/mp4"})
        assert result["ok"] is True, result
        wait_until(lambda: [p for _, _, p in triggers.lines()] == ["media_finished"], 15, "the media_finished trigger")
        time.sleep(1)   # behaviour: nothing more comes (one trigger per end)
        assert [p for _, _, p in triggers.lines()] == ["media_finished"]
    finally:
        triggers.stop()


def test_bad_input_gets_an_error_result_and_reaches_no_device(fleet):
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    device = sites["site1"].devices[0]
    assert command(broker, "site1", device["id"], "{not json")["error"]["code"] == "bad_json"
    assert command(broker, "site1", device["id"], {"id": "x1", "command": "explode"})["error"]["code"] == "unknown_command"
    assert command(broker, "site1", "no-such-tv", {"id": "x2", "command": "play"})["error"]["code"] == "unknown_device"
    big = json.dumps({"id": "x3", "command": "play", "pad": "x" * (70 * 1024)})
    assert command(broker, "site1", device["id"], big)["error"]["code"] == "payload_too_large"
    # Logged at most once a minute per topic: two bad commands on one topic, one log line.
    command(broker, "site1", device["id"], "{still not json")
    lines = [l for l in sites["site1"].log().splitlines() if "command refused on castline/site1/device/" + device["id"] in l]
    assert len(lines) == 1, lines
    state = retained_states(broker)[f"castline/site1/device/{device['id']}/state"]
    assert state["state"] in ("NO_APP", "NO_MEDIA", "IDLE"), state


def test_a_command_to_a_suspended_device_fails_with_a_clear_result(fleet):
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    site = sites["site1"]
    device = site.devices[1]
    topic = f"castline/site1/device/{device['id']}/state"
    availability = f"castline/site1/device/{device['id']}/availability"
    triggers = broker.follow(f"castline/site1/device/{device['id']}/trigger")
    try:
        assert site.sim.control({"command": "outage", "device": device["name"], "downFor": 25})["ok"]
        wait_until(lambda: retained_states(broker, wait=1).get(topic, {}).get("link") in ("reconnecting", "connecting"), 20,
                   "the retained state shows the session suspended")
        # Home Assistant's availability for the TV follows (availability_mode all: its entities unavailable).
        wait_until(lambda: (broker.sub(availability, wait=1) or [(0, 0, "")])[0][2] == "offline", UNAVAILABLE_AFTER + 5,
                   "the TV's availability offline")
        result = command(broker, "site1", device["id"], {"id": "while-down", "command": "volume", "level": 30}, timeout=40)
        assert result["ok"] is False and result["id"] == "while-down", result
        assert result["error"]["code"] == "device_unreachable" and device["name"] in result["error"]["message"], result
        # The failed command fired HA's "command failed" device trigger.
        wait_until(lambda: any(p == "command_failed" for _, _, p in triggers.lines()), 5, "the command_failed trigger")
    finally:
        triggers.stop()
    # Back after the outage: the state says connected again (the later tests use this device).
    wait_until(lambda: retained_states(broker, wait=1).get(topic, {}).get("link") == "connected", 60, "the device back")
    wait_until(lambda: (broker.sub(availability, wait=1) or [(0, 0, "")])[0][2] == "online", 5, "the TV's availability online")


def test_a_command_and_its_state_reach_a_fleet_client_at_network_speed(fleet):
    """A persistent MQTT client's volume commands: the result and the retained state with the new
    volume come back in milliseconds (TCP_NODELAY on the bridge's connection; the first change
    published at once). With Nagle's algorithm each took ~45–90 ms: a small publish waited for
    the broker's delayed ACK of the one before (issue 44). The bounds leave room for a debug
    build on a loaded machine; make bench-mqtt holds the release goals (5 and 10 ms)."""
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    targets = [f"{name}/{d['id']}" for name, site in sites.items() for d in site.devices]
    run = broker.ns.run(PYTHON, os.path.join(os.path.dirname(__file__), "mqtt_latency.py"), "--user", ADMIN[0],
                        "--password", ADMIN[1], "--samples", "40", *targets, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    samples = figures["samples"]
    assert figures["lost"] <= 2 and len(samples) >= 38, figures
    result = statistics.median(s["result_ms"] for s in samples)
    state = statistics.median(s["state_ms"] for s in samples)
    print(f"command → result p50 {result:.1f} ms; command → retained state p50 {state:.1f} ms ({len(samples)} samples)")
    assert result <= 20, figures
    assert state <= 25, figures


def job_command(broker, site, name, payload, timeout=30):
    follower = broker.follow(f"castline/{site}/job/{name}/result")
    try:
        time.sleep(0.3)   # mosquitto_sub says nothing once subscribed: give it the time to, or the result is missed
        assert broker.pub(f"castline/{site}/job/{name}/set", json.dumps(payload)).returncode == 0
        found = {}

        def answered():
            for _, _, p in follower.lines():
                message = json.loads(p)
                if message.get("id") == payload.get("id"):
                    found.update(message)
                    return True
            return False
        wait_until(answered, timeout, f"result of job command {payload['id']}")
        return found
    finally:
        follower.stop()


def test_a_job_is_put_and_deleted_over_mqtt_and_its_state_is_retained(fleet):
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    device = sites["site1"].devices[0]
    url = "http://media.invalid/signage.mp4"
    put = job_command(broker, "site1", "signage", {"id": "j1", "op": "put", "job": {"devices": [device["name"]], "media": {"url": url}}})
    assert put["ok"] is True and put["status"] == 201, put
    state_topic = "castline/site1/job/signage/state"

    def retained_job():
        return {t: json.loads(p) for r, t, p in broker.sub(state_topic, wait=1) if r and p}.get(state_topic)
    job = wait_until(retained_job, 15, "the job's retained state")
    assert job["name"] == "signage" and job["source"] == "api"
    # The device plays it, and Home Assistant's select now offers the job.
    wait_until(lambda: retained_states(broker, wait=1).get(f"castline/site1/device/{device['id']}/state", {}).get("contentId") == url,
               30, "the job's media on its device")
    selects = [json.loads(p) for r, t, p in broker.sub(f"homeassistant/select/castline_site1/#", wait=2) if r and p]
    assert selects and all(s["options"] == ["none", "signage"] for s in selects), selects
    deleted = job_command(broker, "site1", "signage", {"id": "j2", "op": "delete"})
    assert deleted["ok"] is True, deleted
    wait_until(lambda: retained_job() is None, 15, "the job's retained state cleared")
    bad = job_command(broker, "site1", "signage", {"id": "j3", "op": "explode"})
    assert bad["ok"] is False and bad["error"]["code"] == "bad_op"


def test_the_acl_keeps_an_agent_off_another_agents_topics(fleet):
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    victim = sites["site1"].devices[0]
    watcher = broker.follow("castline/site1/#")
    try:
        time.sleep(1)   # the watcher subscribed and got the retained messages before the attempts
        before = len(watcher.lines())
        site2 = ("site2", "site2-secret")
        broker.pub(f"castline/site1/device/{victim['id']}/set", json.dumps({"id": "evil", "command": "cast", "media": "http://media.invalid/evil.mp4"}), user=site2)
        broker.pub("castline/site1/status", "offline", user=site2, retain=True)
        time.sleep(3)   # behaviour: nothing the ACL refused arrives within this window (there is no event to wait on)
        seen = watcher.lines()[before:]
        assert not [l for l in seen if "evil" in l[2] or l[1] == "castline/site1/status"], seen
    finally:
        watcher.stop()
    statuses = {t: p for r, t, p in broker.sub("castline/site1/status", wait=2) if r}
    assert statuses == {"castline/site1/status": "online"}
    assert retained_states(broker)[f"castline/site1/device/{victim['id']}/state"].get("contentId") != "http://media.invalid/evil.mp4"


def test_kill_9_of_an_agent_turns_it_offline_and_fleet_status_says_so(fleet):
    broker, sites = fleet
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    killed = sites["site3"]
    started = time.monotonic()
    os.kill(killed.agent_pid(), signal.SIGKILL)
    killed.agent.wait(timeout=5)

    def offline():
        return {t: p for r, t, p in broker.sub("castline/site3/status", wait=1) if r} == {"castline/site3/status": "offline"}
    wait_until(offline, KEEPALIVE * 1.5 + 3, "site3 offline (last will)")
    elapsed = time.monotonic() - started
    assert elapsed <= KEEPALIVE * 1.5 + 3, elapsed
    result = subprocess.run(broker.ns.command(castline_binary(), "fleet", "status", "--broker", "mqtt://127.0.0.1:1883",
                                              "--username", "admin", "--password-file", os.path.join(broker.workdir, "admin.pw"), "--json")
                            if _write_admin_password(broker) else [], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    view = json.loads(result.stdout)
    agents = {a["agent"]: a for a in view["agents"]}
    assert sorted(agents) == ["site1", "site2", "site3"]
    assert agents["site3"]["status"] == "offline" and agents["site3"]["online"] is False
    assert agents["site1"]["online"] and agents["site2"]["online"]
    for name, count in SITES.items():
        assert len(agents[name]["devices"]) == count, agents[name]
    assert all(d["current"] is False for d in agents["site3"]["devices"])


def _write_admin_password(broker):
    with open(os.path.join(broker.workdir, "admin.pw"), "w") as f:
        f.write(ADMIN[1] + "\n")
    return True


def test_broker_restart_every_agent_reconnects_republishes_and_no_command_is_lost(fleet):
    broker, sites = fleet
    live = [s for s in sites.values() if s.agent.poll() is None]
    assert [s.name for s in live] == ["site1", "site2"]
    wait_for_states(broker, sum(SITES.values()), sites=sites)
    broker.stop()
    # Persistence keeps the agents' sessions: commands sent before they are back wait for them.
    time.sleep(6)   # behaviour: the broker stays down 6 s, so every agent's backoff reaches its cap
    broker.start()
    back = time.monotonic()
    results, first_result = {}, {}
    follower = broker.follow("castline/+/device/+/result")
    time.sleep(0.3)   # mosquitto_sub says nothing once subscribed: give it the time to, or a fast result is missed
    try:
        sent = []
        for site in live:
            for i, device in enumerate(site.devices):
                correlation = f"after-restart-{site.name}-{i}"
                assert broker.pub(f"castline/{site.name}/device/{device['id']}/set",
                                  json.dumps({"id": correlation, "command": "volume", "level": 25})).returncode == 0
                sent.append(correlation)

        def all_answered():
            for _, t, p in follower.lines():
                message = json.loads(p)
                results[message.get("id")] = message
                first_result.setdefault(t.split("/")[1], time.monotonic() - back)
            return all(c in results for c in sent)
        wait_until(all_answered, 40, f"results for {sent}", interval=0.02)
    finally:
        follower.stop()
    assert all(results[c]["ok"] for c in sent), {c: results[c] for c in sent}
    # Each agent was back within 2 s of the broker (the backoff's cap is 1.5 s; it was 30 s, and a
    # reconnect took 18 s). Its first result is the proof: it answers only once reconnected.
    assert all(first_result[s.name] <= 2.0 for s in live), first_result

    def republished():
        statuses = {t: p for r, t, p in broker.sub("castline/+/status", wait=1) if r}
        return all(statuses.get(f"castline/{s.name}/status") == "online" for s in live)
    wait_until(republished, 30, "every live agent online again")
    states = retained_states(broker)
    for site in live:
        for device in site.devices:
            assert f"castline/{site.name}/device/{device['id']}/state" in states
    # The volume commands took effect: the retained state says so.
    wait_until(lambda: all(retained_states(broker, wait=1).get(f"castline/{s.name}/device/{d['id']}/state", {}).get("volume") == 0.25
                           for s in live for d in s.devices), 15, "every live device at 25 %")


def test_a_tv_whose_simulator_is_killed_turns_unavailable_in_home_assistant(fleet):
    """kill -9 of a site's simulator: each of its TVs' states says UNKNOWN at once (the TCP
    connection breaks; castline's session turns reconnecting), and its availability topic reads
    offline once `device_unavailable_after` has passed (within 5 s more), so HA shows their
    entities unavailable while the agent stays online."""
    broker, sites = fleet
    site = sites["site2"]
    topics = [f"castline/site2/device/{d['id']}/availability" for d in site.devices]
    assert all((broker.sub(t, wait=1) or [(0, 0, "")])[0][2] == "online" for t in topics)
    killed = time.monotonic()
    os.kill(site.sim.process.pid, signal.SIGKILL)

    def all_offline():
        values = {t: p for r, t, p in broker.sub("castline/site2/device/+/availability", wait=1) if r}
        return all(values.get(t) == "offline" for t in topics)
    state_topics = [f"castline/site2/device/{d['id']}/state" for d in site.devices]
    wait_until(lambda: all(retained_states(broker, wait=1).get(t, {}).get("state") == "UNKNOWN" for t in state_topics), 5,
               "every killed TV's state UNKNOWN")
    unknown_after = time.monotonic() - killed
    wait_until(all_offline, UNAVAILABLE_AFTER + 5, "every killed TV offline")
    offline_after = time.monotonic() - killed
    print(f"after kill -9 of the simulator: state UNKNOWN in {unknown_after:.2f} s, availability offline in {offline_after:.2f} s "
          f"(device_unavailable_after {UNAVAILABLE_AFTER} s)")
    assert offline_after >= UNAVAILABLE_AFTER, "offline before the bound: a reconnect of a moment would flicker HA's entities"
    statuses = {t: p for r, t, p in broker.sub("castline/site2/status", wait=1) if r}
    assert statuses == {"castline/site2/status": "online"}


def test_an_agent_connects_over_tls_with_its_ca_file(tmp_path):
    """mqtts://: the broker's certificate is checked against ca_file (a fresh CA made here); the
    agent comes online and publishes its device's state through TLS only."""
    workdir = str(tmp_path)
    ns = Namespace()
    broker = site = None
    try:
        ca_key, ca, key, csr, cert = (os.path.join(workdir, n) for n in ("ca.key", "ca.pem", "server.key", "server.csr", "server.pem"))
        ext = os.path.join(workdir, "san.ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        for argv in (["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=castline test CA"],
                     ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
                     ["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext]):
            subprocess.run(argv, check=True, capture_output=True)
        conf = os.path.join(workdir, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"user root\nlistener 8883 127.0.0.1\ncafile {ca}\ncertfile {cert}\nkeyfile {key}\nallow_anonymous true\npersistence false\n")
        broker = subprocess.Popen(ns.command("mosquitto", "-c", conf), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def sub(wait=2):
            result = subprocess.run(ns.command("mosquitto_sub", "-h", "localhost", "-p", "8883", "--cafile", ca, "-t", "castline/#",
                                               "-F", "%r\t%t\t%p", "-W", str(wait)), capture_output=True, text=True, timeout=wait + 10)
            return [line.split("\t", 2) for line in result.stdout.splitlines() if line.count("\t") >= 2]
        sim = Simulator(ns, workdir, extra=["--no-mdns"], frame_log=False)
        device = sim.ready["devices"][0]
        config = os.path.join(workdir, "castline.yaml")
        with open(config, "w") as f:
            f.write(f"""devices:
  - {{name: "{device['name']}", host: {device['address']}, port: {device['castPort']}}}
discovery: {{providers: [static]}}
api: {{socket: {workdir}/api.sock}}
daemon: {{jobs_file: {workdir}/jobs.json}}
mqtt: {{url: "mqtts://localhost:8883", agent: tls-site, ca_file: {ca}, home_assistant: false}}
""")
        stderr = open(os.path.join(workdir, "agent.stderr"), "w")
        site = subprocess.Popen(ns.command(castline_binary(), "run", "--config", config),
                                stdout=subprocess.DEVNULL, stderr=stderr)

        def online():
            messages = {t: p for r, t, p in sub() if r == "1"}
            return messages.get("castline/tls-site/status") == "online" and any(t.endswith("/state") for t in messages)
        wait_until(online, 30, "the TLS agent online with its device state")
        # The same agent trusting another CA never gets on: the certificate check is real.
        other_key, other_ca = os.path.join(workdir, "other.key"), os.path.join(workdir, "other.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", other_key, "-out", other_ca, "-days", "2",
                        "-subj", "/CN=another CA"], check=True, capture_output=True)
        wrong = os.path.join(workdir, "wrong.yaml")
        with open(config) as f, open(wrong, "w") as g:
            g.write(f.read().replace("agent: tls-site", "agent: tls-wrong").replace(f"ca_file: {ca}", f"ca_file: {other_ca}")
                    .replace(f"{workdir}/api.sock", f"{workdir}/wrong.sock"))
        wrong_log = os.path.join(workdir, "wrong.stderr")
        impostor = subprocess.Popen(ns.command(castline_binary(), "run", "--config", wrong),
                                    stdout=subprocess.DEVNULL, stderr=open(wrong_log, "w"))
        try:
            wait_until(lambda: "cannot reach the broker" in open(wrong_log).read() or "lost" in open(wrong_log).read(), 20,
                       "the agent with the wrong CA reports the broker unreachable")
            assert "castline/tls-wrong/status" not in {t for _, t, _ in sub()}
        finally:
            impostor.send_signal(signal.SIGTERM)
            impostor.wait(timeout=15)
        sim.stop()
    finally:
        for process in (site, broker):
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=15)
        ns.close()


@pytest.mark.needs_root("a network namespace (ip netns)")
def test_fleet_status_follow_prints_every_change_until_its_time_is_up(netns, workdir):
    """`castline fleet status --follow --json` against a plain broker on loopback (no agents: the
    retained messages are published by hand): the first object is what the broker retained, then
    one object per change (a device state, an agent going offline), and it exits after --for."""
    config = os.path.join(workdir, "mosquitto.conf")
    with open(config, "w") as f:
        f.write("listener 18830 127.0.0.1\nallow_anonymous true\npersistence false\n")
    broker = subprocess.Popen(netns.command("mosquitto", "-c", config), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def pub(topic, payload):
        result = subprocess.run(netns.command("mosquitto_pub", "-h", "127.0.0.1", "-p", "18830", "-t", topic, "-r", "-q", "1",
                                              "-m", payload), capture_output=True, text=True, timeout=15)
        return result.returncode == 0
    try:
        wait_until(lambda: pub("castline/lobby/status", "online"), 10, "the broker up")
        assert pub("castline/lobby/device/tv1/state", json.dumps({"device": "Lobby TV", "id": "tv1", "state": "IDLE"}))
        watcher = subprocess.Popen(netns.command(castline_binary(), "fleet", "status", "--broker", "mqtt://127.0.0.1:18830",
                                                 "--json", "--follow", "--wait", "1", "--for", "6"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Each change is published once the view before it was printed (the watcher bounds the
        # wait: it exits after --for).
        lines = [json.loads(watcher.stdout.readline())]
        assert pub("castline/lobby/device/tv1/state", json.dumps({"device": "Lobby TV", "id": "tv1", "state": "PLAYING", "title": "Loop"}))
        lines.append(json.loads(watcher.stdout.readline()))
        assert pub("castline/lobby/status", "offline")
        lines.append(json.loads(watcher.stdout.readline()))
        out, err = watcher.communicate(timeout=30)
        assert watcher.returncode == 0, err
        assert not out.strip(), f"nothing changed after the last publish: {out}"
        [agent] = lines[0]["agents"]
        assert agent["agent"] == "lobby" and agent["online"] is True and agent["devices"][0]["state"] == "IDLE", lines[0]
        states = [(view["agents"][0]["online"], view["agents"][0]["devices"][0]["state"]) for view in lines]
        assert states == [(True, "IDLE"), (True, "PLAYING"), (False, "PLAYING")], states
        assert lines[-1]["agents"][0]["devices"][0]["current"] is False, lines[-1]
    finally:
        broker.terminate()
        broker.wait(timeout=10)
