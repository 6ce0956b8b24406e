"""Conformance fixtures: a private network namespace with only `lo`, the built `castline sim`
running in it, and helpers to run third-party clients (pychromecast, catt, VLC) in the same
namespace. Nothing here sends traffic outside that namespace; everything started is stopped by PID.
"""
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid as uuidlib

import pytest

from clients.polling import poll

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IS_ROOT = os.geteuid() == 0
# Fixtures that only root can set up (network namespaces): a test using one must say so with
# @pytest.mark.needs_root("…") (checked at collection).
ROOT_FIXTURES = {"netns", "sim", "lan", "shared_sim", "avahi"}
PYTHON = os.environ.get("CASTLINE_CONFORMANCE_PYTHON", os.path.join(REPO, ".venv", "bin", "python"))
CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients")


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_root(reason): the test needs root (network namespaces, mounts, "
                                       "setpriv, …); skipped with `needs root: <reason>` when not run as root")


def pytest_collection_modifyitems(config, items):
    """Root-only tests are skipped with their reason when not root (CI runs as root, so they run
    there); a test that uses a root-only fixture without the marker is a collection error."""
    unmarked = []
    for item in items:
        marker = item.get_closest_marker("needs_root")
        if marker is None:
            if ROOT_FIXTURES & set(getattr(item, "fixturenames", ())):
                unmarked.append(item.nodeid)
            continue
        if not IS_ROOT:
            item.add_marker(pytest.mark.skip(reason=f"needs root: {marker.args[0]}"))
    if unmarked:
        raise pytest.UsageError("tests using a root-only fixture without @pytest.mark.needs_root: " + ", ".join(unmarked))


def castline_binary():
    path = os.environ.get("CASTLINE_BIN")
    if path:
        return path
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPO, capture_output=True, text=True, check=True)
    return os.path.join(out.stdout.strip(), "castline")


def as_user(user, group="nogroup"):
    """A command prefix that runs the rest as `user` and `group`, no supplementary groups. setpriv
    execs in place, so the PID is castline's and a signal reaches it (runuser forks and answers
    SIGTERM itself)."""
    return ["setpriv", f"--reuid={user}", f"--regid={group}", "--clear-groups", "--"]


class Namespace:
    """`ip netns` with only a loopback interface (ports 8008/8009/8443 never clash with the host)."""

    def __init__(self):
        self.name = f"castline-conf-{os.getpid()}-{uuidlib.uuid4().hex[:6]}"
        subprocess.run(["ip", "netns", "add", self.name], check=True)
        subprocess.run(["ip", "-n", self.name, "link", "set", "lo", "up"], check=True)

    def command(self, *argv):
        return ["ip", "netns", "exec", self.name, *argv]

    def run(self, *argv, timeout=60, env=None, user=None):
        cmd = [*as_user(user), *argv] if user else list(argv)
        return subprocess.run(self.command(*cmd), capture_output=True, text=True, timeout=timeout, env=env)

    def pids(self):
        return subprocess.run(["ip", "netns", "pids", self.name], capture_output=True, text=True).stdout.split()

    def close(self):
        for pid in self.pids():
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass
        poll(lambda: not self.pids(), 5, interval=0.1)
        for pid in self.pids():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "del", self.name], check=False)


class Simulator:
    """A running `castline sim` inside a namespace; stopped with SIGTERM (by PID) at teardown."""

    def __init__(self, namespace, workdir, extra=(), env=None, frame_log=True, prefix=(), launch_delay=0):
        """`frame_log=False`: no frame log and warnings only (benchmarks: the device side as cheap
        as it can be, for every sender measured). `prefix`: a command that execs castline in place
        (`as_user(...)`, `prlimit ... --`), so the PID and the signals stay castline's; with a
        user, `workdir` must be writable by it. `launch_delay`: seconds from a LAUNCH to its
        reply; 0 (instant, so tests that time or count steps are not slowed) unless `extra`
        names `--launch-delay` itself; None leaves `castline sim`'s default (1 s, a real device's
        app start-up), which the catt and pychromecast reliability tests use."""
        self.workdir = workdir
        self.frame_log = os.path.join(workdir, "frames.jsonl")
        self.control_socket = os.path.join(workdir, "control.sock")
        self.root_ca = os.path.join(workdir, "root-ca.pem")
        self.stderr_path = os.path.join(workdir, "sim.stderr")
        logging = ["--frame-log", self.frame_log, "--log", "*:info,CastChannel.*:debug"] if frame_log else ["--log", "*:warning"]
        timing = [] if launch_delay is None or "--launch-delay" in extra else ["--launch-delay", str(launch_delay)]
        argv = [castline_binary(), "sim", "--control-socket", self.control_socket, "--export-root-ca", self.root_ca,
                *logging, *timing, *extra]
        argv = [*prefix, *argv]
        self.stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(namespace.command(*argv), stdout=subprocess.PIPE, stderr=self.stderr,
                                        text=True, env=env)
        self.ready = self._wait_ready(30)

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        import selectors
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"castline sim exited with {self.process.returncode}: {self.log_text()}")
            if selector.select(timeout=0.2):
                line = self.process.stdout.readline()
                if line.startswith("{"):
                    event = json.loads(line)
                    if event.get("event") == "ready":
                        return event
        raise TimeoutError(f"castline sim not ready after {timeout}s: {self.log_text()}")

    @property
    def device(self):
        return self.ready["devices"][0]

    def log_text(self):
        self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()[-6000:]

    def control(self, command, timeout=10):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(self.control_socket)
            s.sendall((json.dumps(command) + "\n").encode())
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return json.loads(data)

    def frames(self):
        if not os.path.exists(self.frame_log):
            return []
        with open(self.frame_log) as f:
            return [json.loads(line) for line in f if line.strip()]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.stderr.close()
        return self.process.returncode


def avahi_conf(host_name="castline-conformance", interface="lo", ipv6=False, ipv4=True):
    """An avahi-daemon.conf confined to `interface` (never eth0), without wide-area DNS or a reflector."""
    return AVAHI_CONF_TEMPLATE.format(host_name=host_name, interface=interface, ipv6="yes" if ipv6 else "no",
                                      ipv4="yes" if ipv4 else "no")


AVAHI_CONF_TEMPLATE = """[server]
host-name={host_name}
allow-interfaces={interface}
use-ipv4={ipv4}
use-ipv6={ipv6}
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
[reflector]
enable-reflector=no
"""
AVAHI_CONF = avahi_conf()


def start_avahi(namespace, workdir):
    """A private system D-Bus and avahi-daemon (on `lo` only) inside `namespace`, their /run bind-mounted
    from `workdir` in a private mount namespace. Returns (process, env for D-Bus clients) once avahi is
    running; raises RuntimeError with avahi's log after 15 s. Stop with stop_avahi(process); the forked
    dbus-daemon dies with the namespace teardown (by PID, see Namespace.close)."""
    run = os.path.join(workdir, "run")
    os.makedirs(os.path.join(run, "dbus"))
    os.makedirs(os.path.join(run, "avahi-daemon"))
    conf = os.path.join(workdir, "avahi-daemon.conf")
    with open(conf, "w") as f:
        f.write(AVAHI_CONF)
    log_path = os.path.join(workdir, "avahi.log")
    with open(log_path, "w") as log:
        process = subprocess.Popen(namespace.command(
            "unshare", "-m", "--propagation", "private", "sh", "-c",
            'mount --bind "$1" /run && dbus-daemon --system --fork && '
            'exec avahi-daemon -f "$2" --no-drop-root --no-chroot --no-rlimits', "sh", run, conf),
            stdout=log, stderr=log)
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={run}/dbus/system_bus_socket")
    wait_for_avahi(process, env, log_path)
    return process, env


def wait_for_avahi(process, env, log_path, timeout=15):
    """Returns once the avahi-daemon on the bus of `env` answers RUNNING (state 2); kills `process`
    and raises RuntimeError with its log after `timeout` s."""
    def running():
        state = subprocess.run(["dbus-send", "--system", "--print-reply", "--dest=org.freedesktop.Avahi", "/",
                                "org.freedesktop.Avahi.Server.GetState"], env=env, capture_output=True, text=True)
        return "int32 2" in state.stdout
    if not poll(running, timeout, interval=0.1):
        process.kill()
        with open(log_path) as log:
            raise RuntimeError(f"avahi-daemon did not come up: {log.read()}")


def start_dbus(namespace, workdir):
    """Only the private system D-Bus (for tests that start avahi-daemon later, or restart it).
    Returns (dbus pid, env for D-Bus clients, run folder). Kill the pid at teardown."""
    run = os.path.join(workdir, "run")
    os.makedirs(os.path.join(run, "dbus"), exist_ok=True)
    os.makedirs(os.path.join(run, "avahi-daemon"), exist_ok=True)
    out = subprocess.run(namespace.command(
        "unshare", "-m", "--propagation", "private", "sh", "-c",
        'mount --bind "$1" /run && exec dbus-daemon --system --fork --print-pid', "sh", run),
        capture_output=True, text=True, timeout=15, check=True)
    pid = int(out.stdout.split()[0])
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={run}/dbus/system_bus_socket")
    return pid, env, run


def start_avahi_daemon(namespace, workdir, run, env, conf_text=AVAHI_CONF):
    """avahi-daemon (on `lo` only, unless `conf_text` says otherwise) on an already running private
    D-Bus (start_dbus). Returns the process once avahi answers RUNNING; raises RuntimeError with its
    log after 15 s."""
    conf = os.path.join(workdir, "avahi-daemon.conf")
    with open(conf, "w") as f:
        f.write(conf_text)
    log_path = os.path.join(workdir, "avahi.log")
    with open(log_path, "a") as log:
        process = subprocess.Popen(namespace.command(
            "unshare", "-m", "--propagation", "private", "sh", "-c",
            'mount --bind "$1" /run && exec avahi-daemon -f "$2" --no-drop-root --no-chroot --no-rlimits', "sh", run, conf),
            stdout=log, stderr=log)
    wait_for_avahi(process, env, log_path)
    return process


def stop_avahi(process):
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def netns():
    namespace = Namespace()
    yield namespace
    namespace.close()


@pytest.fixture
def workdir():
    path = tempfile.mkdtemp(prefix="castline-conf-")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sim(netns, workdir):
    simulator = Simulator(netns, workdir, extra=["--no-mdns"])
    yield simulator
    code = simulator.stop()
    assert code == 0, f"castline sim exited with {code} on SIGTERM: {simulator.log_text()}"


def run_client(netns, script, *args, timeout=90):
    """Runs Tests/Conformance/clients/<script> in the namespace; returns its last stdout line as JSON."""
    result = netns.run(PYTHON, os.path.join(CLIENTS, script), *args, timeout=timeout)
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0 and lines, (
        f"{script} failed (rc {result.returncode})\nstdout:\n{result.stdout[-4000:]}\nstderr:\n{result.stderr[-4000:]}")
    return json.loads(lines[-1])


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return int(parts[11]) + int(parts[12])   # utime + stime


def sim_pid(netns):
    """The castline process in the namespace (Popen's pid is `ip netns exec`, which execs it)."""
    for pid in subprocess.run(["ip", "netns", "pids", netns.name], capture_output=True, text=True).stdout.split():
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "castline":
                    return int(pid)
        except FileNotFoundError:
            continue
    raise RuntimeError("castline process not found in the namespace")


def stop_process(process, timeout=10):
    """Ends a process the test started, by its PID: SIGTERM, then SIGKILL if it has not exited
    within `timeout` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def wait_until(predicate, timeout, what, interval=0.1):
    """Polls `predicate` every `interval` s; returns its first truthy value, fails naming `what`
    after `timeout` s. What a test uses instead of sleeping for a guessed time."""
    value = poll(predicate, timeout, interval)
    if not value:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}")
    return value


class JSONLines:
    """A running command whose JSON lines are collected, with their arrival time, by a thread."""

    def __init__(self, argv, env):
        self.events = queue.Queue()
        self.seen = []
        self.stderr_lines = []
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.readers = [threading.Thread(target=self._read, daemon=True), threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read(self):
        for line in self.process.stdout:
            if line.startswith("{"):
                self.events.put((time.monotonic(), json.loads(line)))

    def _read_stderr(self):
        for line in self.process.stderr:
            self.stderr_lines.append(line)

    def wait_for(self, predicate, timeout):
        """(time, event) of the first event not yet consumed that matches; None after `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                at, event = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            self.seen.append(event)
            if predicate(event):
                return at, event
        return None

    def wait_all(self, predicates, timeout):
        """The events (seen before or arriving within `timeout` s) matching each predicate; None for those that never came."""
        deadline = time.monotonic() + timeout
        def matched():
            return [next((e for e in self.seen if p(e)), None) for p in predicates]
        while None in matched() and time.monotonic() < deadline:
            self.wait_for(lambda e: False, min(0.1, max(0.01, deadline - time.monotonic())))
        return matched()

    def drain(self, seconds):
        """Every event arriving within `seconds`."""
        self.wait_for(lambda e: False, seconds)
        return self.seen

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        for reader in self.readers:
            reader.join(timeout=5)
        return self.process.returncode

    def log(self):
        return "".join(self.stderr_lines)[-4000:]


class LanHost:
    """One end of the link: a namespace with its veth end, a private D-Bus, avahi-daemon and a state folder."""

    def __init__(self, name, namespace, interface, address, workdir, ipv4=True):
        self.name = name
        self.namespace = namespace
        self.interface = interface
        self.address = address
        self.workdir = os.path.join(workdir, name)
        self.state_dir = os.path.join(self.workdir, "state")
        os.makedirs(self.state_dir)
        self.ipv4 = ipv4
        self.dbus_pid, self.env, self.run = start_dbus(namespace, self.workdir)
        self.avahi = None
        self.start_avahi()

    def start_avahi(self):
        self.avahi = start_avahi_daemon(self.namespace, self.workdir, self.run, self.env,
                                        conf_text=avahi_conf(self.name, self.interface, ipv6=True, ipv4=self.ipv4))

    def stop_avahi(self, sig=signal.SIGTERM):
        self.avahi.send_signal(sig)
        self.avahi.wait(timeout=10)

    def castline(self, *args, **kwargs):
        return subprocess.run(self.namespace.command(castline_binary(), "nearby", *args, "--state-dir", self.state_dir),
                              capture_output=True, text=True, env=self.env, timeout=60, **kwargs)

    def start(self, *args):
        return JSONLines(self.namespace.command(castline_binary(), "nearby", *args, "--state-dir", self.state_dir, "--json"), self.env)

    def grant(self):
        result = self.castline("permission", "grant")
        assert result.returncode == 0, result.stderr

    def close(self):
        if self.avahi and self.avahi.poll() is None:
            self.stop_avahi()
        try:
            os.kill(self.dbus_pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def make_lan(workdir, ipv4=True):
    """Host A (10.79.0.1, nearby0) and host B (10.79.0.2, nearby0) on one veth link, each with its own D-Bus
    and avahi-daemon (IPv6 always; IPv4 unless `ipv4` is False). A generator: yields (a, b), then tears down."""
    a_ns, b_ns = Namespace(), Namespace()
    hosts = []
    try:
        subprocess.run(["ip", "link", "add", "nearby0", "netns", a_ns.name, "type", "veth", "peer", "name", "nearby0",
                        "netns", b_ns.name], check=True)
        for ns, address in ((a_ns, "10.79.0.1"), (b_ns, "10.79.0.2")):
            subprocess.run(ns.command("sysctl", "-qw", "net.ipv6.conf.nearby0.accept_dad=0"), check=True)
            subprocess.run(["ip", "-n", ns.name, "addr", "add", f"{address}/24", "dev", "nearby0"], check=True)
            subprocess.run(["ip", "-n", ns.name, "link", "set", "nearby0", "multicast", "on", "up"], check=True)
        hosts.append(LanHost("nearby-a", a_ns, "nearby0", "10.79.0.1", workdir, ipv4=ipv4))
        hosts.append(LanHost("nearby-b", b_ns, "nearby0", "10.79.0.2", workdir, ipv4=ipv4))
        yield hosts[0], hosts[1]
    finally:
        for host in hosts:
            host.close()
        a_ns.close()
        b_ns.close()



@pytest.fixture
def lan(workdir):
    """Two hosts on a veth link (see make_lan)."""
    yield from make_lan(workdir)
