"""Fleet logs on the journal's own transport (issue 44): two site namespaces, each with a private
systemd-journald (its own mount and UTS namespaces: host name site1 / site2), a `castline run`
agent logging to it through the journald sink, and systemd-journal-upload sending that journal to
a systemd-journal-remote in a third namespace over veths. `castline logs stats --by agent
--journal-dir` over the central folder then counts each site's injected faults exactly (network
outages of its simulated TVs: one session suspend each), each record's site read from the journal's
_HOSTNAME; `logs timeline` groups its lanes per site."""
import json
import os
import signal
import subprocess

import pytest

from conftest import Namespace, Simulator, castline_binary, stop_process, wait_until
from hub import api

JOURNALD = "/lib/systemd/systemd-journald"
UPLOAD = "/lib/systemd/systemd-journal-upload"
REMOTE = "/lib/systemd/systemd-journal-remote"
FAULTS = {"site1": 2, "site2": 3}   # outages injected per site


def alive(process):
    return process.poll() is None


class Site:
    """A site: its namespace (a veth to the central one), a private journald named after it,
    `castline sim` with two TVs, castline run logging to the journald, and journal-upload."""

    def __init__(self, name, index, central, workdir):
        self.name, self.workdir = name, os.path.join(workdir, name)
        self.run_dir = os.path.join(self.workdir, "run")
        os.makedirs(os.path.join(self.run_dir, "systemd", "journald.conf.d"))
        os.makedirs(os.path.join(self.workdir, "empty"))
        with open(os.path.join(self.run_dir, "systemd", "journald.conf.d", "test.conf"), "w") as f:
            f.write("[Journal]\nStorage=volatile\nRateLimitBurst=0\nRuntimeMaxUse=64M\n")
        self.ns = Namespace()
        subprocess.run(["ip", "link", "add", f"jr{index}", "netns", central.name, "type", "veth", "peer", "name", "uplink",
                        "netns", self.ns.name], check=True)
        subprocess.run(["ip", "-n", central.name, "addr", "add", f"10.81.{index}.1/24", "dev", f"jr{index}"], check=True)
        subprocess.run(["ip", "-n", central.name, "link", "set", f"jr{index}", "up"], check=True)
        subprocess.run(["ip", "-n", self.ns.name, "addr", "add", f"10.81.{index}.2/24", "dev", "uplink"], check=True)
        subprocess.run(["ip", "-n", self.ns.name, "link", "set", "uplink", "up"], check=True)
        self.central_address = f"10.81.{index}.1"
        self.processes = []
        # journald in the host's network namespace (it needs none), its own mount and UTS namespaces.
        self.journald = subprocess.Popen(
            ["unshare", "-m", "-u", "--propagation", "private", "sh", "-c",
             'hostname "$1" && mount --bind "$2" /run && { [ ! -d /var/log/journal ] || mount --bind "$3" /var/log/journal; } && exec "$4"',
             "sh", name, self.run_dir, os.path.join(self.workdir, "empty"), JOURNALD],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.workdir, "journald.log"), "w"))
        self.processes.append(self.journald)
        wait_until(lambda: os.path.exists(os.path.join(self.run_dir, "systemd", "journal", "socket")), 10, f"{name}'s journald socket")
        self.sim = Simulator(self.ns, self.workdir, extra=["--no-mdns", "--devices", "2", "--seed", str(700 + index),
                                                         "--name", f"{name} TV"], frame_log=False)
        devices = "\n".join(f"  - {{name: \"{d['name']}\", host: {d['address']}, port: {d['castPort']}}}" for d in self.sim.ready["devices"])
        self.config = os.path.join(self.workdir, "castline.yaml")
        with open(self.config, "w") as f:
            f.write(f"""devices:
{devices}
discovery: {{providers: [static]}}
logging:
  rules: "info,CastChannel.*:warning"
  sinks: [{{type: journald}}]
api: {{socket: {self.workdir}/api.sock}}
daemon: {{jobs_file: {self.workdir}/jobs.json}}
""")
        self.agent = self.in_site(castline_binary(), "run", "--config", self.config, log="agent.log")
        self.upload = None

    def in_site(self, *argv, log):
        """A process in the site's network namespace that sees the site's /run (its journald)."""
        process = subprocess.Popen(self.ns.command("sh", "-c", 'mount --bind "$1" /run && shift && exec "$@"', "sh", self.run_dir, *argv),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=open(os.path.join(self.workdir, log), "w"))
        self.processes.append(process)
        return process

    def connected(self):
        """How many of its TVs the agent's session is connected to (its API over the Unix socket)."""
        try:
            status, body, _ = api(os.path.join(self.workdir, "api.sock"), "GET", "/v1/devices")
        except OSError:
            return 0
        return sum(d.get("link") == "connected" for d in body.get("devices", [])) if status == 200 else 0

    def start_upload(self):
        state = os.path.join(self.workdir, "upload.state")
        self.upload = self.in_site(UPLOAD, f"--url=http://{self.central_address}:19532", "--directory=/run/log/journal",
                                   f"--save-state={state}", log="upload.log")

    def stop(self):
        for process in reversed(self.processes):
            stop_process(process, timeout=15)
        self.sim.stop()
        self.ns.close()


def journal_records(folder, identifier="castline"):
    """journalctl's view of the central folder: {host: records from castline}."""
    result = subprocess.run(["journalctl", "-D", folder, "-o", "json", "--no-pager", f"SYSLOG_IDENTIFIER={identifier}"],
                            capture_output=True, text=True, timeout=60)
    hosts = {}
    for line in result.stdout.splitlines():
        entry = json.loads(line)
        hosts[entry.get("_HOSTNAME")] = hosts.get(entry.get("_HOSTNAME"), 0) + 1
    return hosts


@pytest.mark.needs_root("network namespaces, private journalds, mounts")
def test_logs_stats_by_agent_over_a_journal_remote_folder_counts_each_sites_faults(workdir):
    for tool in (JOURNALD, UPLOAD, REMOTE):
        assert os.access(tool, os.X_OK), f"{tool} missing (systemd-journal-remote)"
    central = Namespace()
    subprocess.run(["ip", "-n", central.name, "link", "set", "lo", "up"], check=True)
    remote_dir = os.path.join(workdir, "remote")
    os.makedirs(remote_dir)
    sites, remote = [], None
    try:
        remote = subprocess.Popen(central.command(REMOTE, "--listen-http=19532", f"--output={remote_dir}/", "--split-mode=host"),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(workdir, "remote.log"), "w"))
        sites = [Site(name, index, central, workdir) for index, name in enumerate(FAULTS, start=1)]
        for site in sites:
            wait_until(lambda: site.connected() == 2 or not alive(site.agent), 30, f"{site.name}'s agent connected")
            assert alive(site.agent), open(os.path.join(site.workdir, "agent.log")).read()[-3000:]
        # The faults: each outage closes a TV's connections for 1 s (one suspend, then a resume);
        # the next one once the agent saw it and is connected again, so that none overlap.
        for site in sites:
            for n in range(FAULTS[site.name]):
                device = site.sim.ready["devices"][n % 2]["name"]
                assert site.sim.control({"command": "outage", "device": device, "downFor": 1})["ok"]
                wait_until(lambda: site.connected() < 2, 10, f"{site.name}'s agent to see outage {n + 1}", interval=0.02)
                wait_until(lambda: site.connected() == 2, 30, f"{site.name}'s TVs back after outage {n + 1}")
        for site in sites:
            site.start_upload()
        # Everything each site's journal holds from castline reaches the central folder.
        expected = {}
        for site in sites:
            local = subprocess.run(["journalctl", "-D", os.path.join(site.run_dir, "log", "journal"), "-o", "json", "--no-pager",
                                    "SYSLOG_IDENTIFIER=castline"], capture_output=True, text=True, timeout=60)
            expected[site.name] = len(local.stdout.splitlines())
            assert expected[site.name] > 0, f"{site.name}'s journal holds nothing from castline"
        wait_until(lambda: all(journal_records(remote_dir).get(s.name, 0) >= expected[s.name] for s in sites), 60,
                   f"the central folder to hold every site's records ({expected})")
        assert sorted(f for f in os.listdir(remote_dir) if f.endswith(".journal"))

        stats = subprocess.run([castline_binary(), "logs", "stats", "--by", "agent", "--journal-dir", remote_dir, "--json"],
                               capture_output=True, text=True, timeout=120)
        assert stats.returncode == 0, stats.stderr
        report = json.loads(stats.stdout)
        assert report["by"] == "agent" and sorted(report["groups"]) == ["site1", "site2"], report.get("groups", {}).keys()
        for site in sites:
            suspends = report["groups"][site.name]["suspends"]
            assert suspends["count"] == FAULTS[site.name], (site.name, suspends)
            assert suspends["resumed"] == FAULTS[site.name], (site.name, suspends)
        text = subprocess.run([castline_binary(), "logs", "stats", "--by", "agent", "--journal-dir", remote_dir],
                              capture_output=True, text=True, timeout=120).stdout
        assert "== agent site1 ==" in text and "== agent site2 ==" in text
        by_device = json.loads(subprocess.run([castline_binary(), "logs", "stats", "--by", "device", "--journal-dir", remote_dir, "--json"],
                                              capture_output=True, text=True, timeout=120).stdout)
        assert sum(g["suspends"]["count"] for g in by_device["groups"].values()) == sum(FAULTS.values())
        # The timeline's lanes, grouped per site.
        page = os.path.join(workdir, "timeline.html")
        timeline = subprocess.run([castline_binary(), "logs", "timeline", "--journal-dir", remote_dir, "--html", page],
                                  capture_output=True, text=True, timeout=120)
        assert timeline.returncode == 0, timeline.stderr
        html = open(page).read()
        positions = [html.find(f"site1 · site1 TV"), html.find(f"site2 · site2 TV")]
        assert all(p >= 0 for p in positions) and positions[0] < positions[1], positions
    finally:
        for site in sites:
            site.stop()
        if remote and alive(remote):
            remote.send_signal(signal.SIGTERM)
            remote.wait(timeout=15)
        central.close()
