"""Per-device metrics and the shipped alerting rules, end to end with real components: castline
run over five simulated TVs (one `castline sim` each), a real Prometheus scraping its /metrics,
a real Alertmanager (Debian's prometheus-alertmanager) routing to a webhook receiver this test
runs, all inside the test's namespace. kill -9 of one TV's simulator fires CastlineTVDown at the
receiver; the TV back resolves it.

The shipped rule file is used as is except for `for:` (5 m there; a few seconds here, so that CI
waits seconds, not minutes); `promtool test rules` tests the shipped values
(configs/prometheus/castline-alerts.test.yml, test_the_shipped_rules_pass_their_unit_tests)."""
import json
import os
import re
import signal
import subprocess
import time

import pytest
import yaml

from conftest import PYTHON, Simulator, stop_process, wait_until
from hub import Hub, prometheus_query

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(REPO, "configs", "prometheus", "castline-alerts.yml")
SCRAPE = 1            # seconds: the scrape interval here
EVALUATION = 0.2      # seconds: the rules' evaluation interval here (Prometheus' default is 1 m)
DOWN_FOR = 3          # seconds: CastlineTVDown's `for:` here (5m shipped)
TVS = 5


def test_the_shipped_rules_pass_their_unit_tests():
    check = subprocess.run(["promtool", "check", "rules", RULES], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    test = subprocess.run(["promtool", "test", "rules", os.path.join(os.path.dirname(RULES), "castline-alerts.test.yml")],
                          capture_output=True, text=True, timeout=60)
    assert test.returncode == 0 and "SUCCESS" in test.stdout, test.stdout + test.stderr
    with open(RULES) as f:
        names = [r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"]]
    assert names == ["CastlineTVDown", "CastlineTVNotShowingJobContent", "CastlineRelaunchStorm", "CastlinePluginRestarting",
                     "CastlineAgentDown"]


class Fleet:
    """The devices of several simulators, in the shape Hub reads."""

    def __init__(self, sims):
        self.ready = {"devices": [d for s in sims for d in s.ready["devices"]]}


def sample(text, name, **labels):
    """The value of the series `name` whose labels include `labels` (None when absent)."""
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


@pytest.mark.needs_root("a network namespace (ip netns)")
def test_a_killed_tv_fires_tv_down_through_prometheus_and_alertmanager_and_its_return_resolves_it(netns, workdir):
    def start_sim(i):
        folder = os.path.join(workdir, f"tv{i}")
        os.makedirs(folder, exist_ok=True)
        return Simulator(netns, folder, extra=["--no-mdns", "--devices", "1", "--address", f"127.0.{i + 1}.1", "--seed", str(500 + i),
                                               "--name", f"Screen {i}"], frame_log=False)
    sims = [start_sim(i) for i in range(TVS)]
    token_file = os.path.join(workdir, "token")
    with open(token_file, "w") as f:
        f.write("alerts-token-0123456789\n")
    os.chmod(token_file, 0o600)
    hub = Hub(netns, Fleet(sims), workdir, api_extra=f"  listen: 127.0.0.1:18769\n  token_file: {token_file}")
    processes = []
    try:
        # Per-device series, labelled, and valid exposition text.
        status, text, _ = hub.get("/metrics")
        assert status == 200
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr
        for d in hub_devices(hub):
            assert sample(text, "castline_device_up", device=d["device"], id=d["id"]) == 1, text
            assert sample(text, "castline_device_reachable", id=d["id"]) == 1
            assert sample(text, "castline_device_media_state", id=d["id"], state=d["state"]) == 1
            assert sample(text, "castline_device_owner", id=d["id"], owner="nobody") == 1
            assert sample(text, "castline_device_last_seen_timestamp_seconds", id=d["id"]) > time.time() - 60
        assert len(re.findall(r'^castline_device_up\{[^}]*agent="[^"]+"', text, re.M)) == TVS

        # The shipped rules with seconds for minutes.
        with open(RULES) as f:
            rules = yaml.safe_load(f)
        for group in rules["groups"]:
            for rule in group["rules"]:
                if rule["alert"] == "CastlineTVDown":
                    rule["for"] = f"{DOWN_FOR}s"
        rule_file = os.path.join(workdir, "rules.yml")
        with open(rule_file, "w") as f:
            yaml.safe_dump(rules, f)
        received = os.path.join(workdir, "webhook.jsonl")
        open(received, "w").close()
        processes.append(subprocess.Popen(netns.command(PYTHON, os.path.join(os.path.dirname(__file__), "webhook_receiver.py"),
                                                        "127.0.0.1", "19095", received), stderr=subprocess.DEVNULL))
        with open(os.path.join(workdir, "alertmanager.yml"), "w") as f:
            f.write("""route: {receiver: test, group_by: [alertname, id], group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
receivers:
  - name: test
    webhook_configs: [{url: "http://127.0.0.1:19095/", send_resolved: true}]
""")
        log = open(os.path.join(workdir, "alerting.log"), "w")
        processes.append(subprocess.Popen(netns.command(
            "prometheus-alertmanager", f"--config.file={workdir}/alertmanager.yml", f"--storage.path={workdir}/am",
            "--web.listen-address=127.0.0.1:19093", "--cluster.listen-address="), stdout=log, stderr=log))
        with open(os.path.join(workdir, "prometheus.yml"), "w") as f:
            f.write(f"""global: {{scrape_interval: {SCRAPE}s, evaluation_interval: {int(EVALUATION * 1000)}ms}}
rule_files: [{rule_file}]
alerting:
  alertmanagers: [{{static_configs: [{{targets: ["127.0.0.1:19093"]}}]}}]
scrape_configs:
  - job_name: castline
    authorization: {{credentials_file: {token_file}}}
    static_configs: [{{targets: ["127.0.0.1:18769"]}}]
""")
        processes.append(subprocess.Popen(netns.command(
            "prometheus", f"--config.file={workdir}/prometheus.yml", f"--storage.tsdb.path={workdir}/tsdb",
            "--web.listen-address=127.0.0.1:19090"), stdout=log, stderr=log))

        def query(expression):
            return prometheus_query(netns, expression)
        def every_tv_up():
            assert all(p.poll() is None for p in processes), open(os.path.join(workdir, "alerting.log")).read()[-3000:]
            return len(query("castline_device_up == 1")) == TVS
        wait_until(every_tv_up, 60, "Prometheus sees every TV up")
        wait_until(lambda: netns.run("curl", "-sf", "http://127.0.0.1:19093/-/ready").returncode == 0, 30, "Alertmanager ready")

        def notifications(status):
            with open(received) as f:
                for line in f:
                    entry = json.loads(line)
                    for alert in entry["notification"].get("alerts", []):
                        if alert["labels"].get("alertname") == "CastlineTVDown" and alert["status"] == status:
                            yield entry["received"], alert

        victim = hub_devices(hub)[2]
        killed = time.time()
        os.kill(sims[2].process.pid, signal.SIGKILL)
        sims[2].process.wait(timeout=10)
        fired = wait_until(lambda: next(iter(notifications("firing")), None), 60, "CastlineTVDown at the receiver")
        delay = fired[0] - killed
        print(f"CastlineTVDown at the receiver {delay:.2f} s after kill -9 (for: {DOWN_FOR}s, scrape every {SCRAPE}s, "
              f"evaluation every {EVALUATION}s)")
        assert fired[1]["labels"]["device"] == victim["device"] and fired[1]["labels"]["id"] == victim["id"], fired
        assert fired[1]["labels"]["agent"] and fired[1]["labels"]["severity"] == "warning"
        # Within the rule's for plus one scrape interval (the scrape that first sees the TV down),
        # plus the evaluation that turns the alert firing and its way through Alertmanager.
        assert delay <= DOWN_FOR + SCRAPE + EVALUATION + 0.5, delay
        # Only the killed TV: no other TV's alert.
        assert {a["labels"]["id"] for _, a in notifications("firing")} == {victim["id"]}

        sims[2] = start_sim(2)
        back = time.time()
        resolved = wait_until(lambda: next(iter(notifications("resolved")), None), 90, "CastlineTVDown resolved at the receiver")
        print(f"resolved at the receiver {resolved[0] - back:.2f} s after the simulator came back")
        assert resolved[1]["labels"]["id"] == victim["id"]
    finally:
        for p in reversed(processes):
            stop_process(p, timeout=20)
        assert hub.stop() == 0
        for s in sims:
            s.stop()


def hub_devices(hub):
    status, body, _ = hub.get("/v1/devices")
    assert status == 200
    return sorted(body["devices"], key=lambda d: d["device"])
