"""The castline daemon as a hub, for the API tests: a config over a `castline sim` with several
devices, the daemon started in the test's namespace, and an HTTP client over its Unix socket."""
import json
import os
import socket
import subprocess
import threading

from conftest import castline_binary, wait_until
from unix_http import UnixHTTPConnection

BUILD = os.path.dirname(castline_binary())
ECHO_NS = "urn:x-cast:org.castline.example.echo"


def api(socket_path, method, path, body=None, raw=None, headers=None):
    """(status, parsed JSON or text, headers) of one request over the daemon's socket."""
    connection = UnixHTTPConnection(socket_path)
    payload = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    all_headers = {"Content-Type": "application/json"} if payload is not None else {}
    all_headers.update(headers or {})
    connection.request(method, path, body=payload, headers=all_headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    kind = response.getheader("Content-Type") or ""
    return response.status, (json.loads(data) if kind.startswith("application/json") else data.decode()), dict(response.getheaders())


class Hub:
    """`castline run` over the simulator's devices, its API on a socket in `workdir`."""

    def __init__(self, netns, sim, workdir, jobs="", api_extra="", log_rules="info,CastChannel.*:warning", env=None,
                 config_from_env=False, json_log=None, plugins="", plugin_paths=(),
                 allowed_namespaces=(ECHO_NS, "urn:x-cast:org.castline.test"), media_roots=("/tmp",), prefix=(),
                 devices=None, daemon_extra=""):
        """`config_from_env`: the config reaches `castline run` through CASTLINE_CONFIG, not --config.
        `media_roots`: the config's media.roots (the folders the daemon serves local files from; the
        tests make their media under /tmp); empty: none.
        `json_log`: a JSON Lines file the json-sink plugin writes the daemon's records to.
        `plugins` is the config's plugins: section (YAML text, without the key); `plugin_paths`
        come after the echo plugin's --plugin-path.
        `devices`: the config's `devices:` entries, dicts with `name`, `address`, `castPort` and
        optionally `model` (default: every simulated device, as it reports itself); the hub waits
        until it is connected to each. `daemon_extra`: more keys of the `daemon:` mapping, in
        flow style (`idle_timeouts: {"Google Nest Hub*": 15}`)."""
        self.workdir = workdir
        self.socket = os.path.join(workdir, "api.sock")
        self.config = os.path.join(workdir, "hub.yaml")
        sinks = f", sinks: [{{type: json, options: {{path: {json_log}}}}}]" if json_log else ""
        namespaces = ", ".join(json.dumps(n) for n in allowed_namespaces)
        plugins_section = "plugins: " + plugins if plugins else ""
        roots = ", ".join(json.dumps(r) for r in media_roots)
        media_section = f"media: {{roots: [{roots}]}}" if media_roots and "media:" not in api_extra else ""
        entries = sim.ready["devices"] if devices is None else devices
        devices_text = "\n".join(f"  - {{name: \"{d['name']}\", host: {d['address']}, port: {d['castPort']}"
                                 + (f", model: {json.dumps(d['model'])}" if d.get("model") else "") + "}" for d in entries)
        daemon_keys = f"jobs_file: {workdir}/jobs.json" + (f", {daemon_extra}" if daemon_extra else "")
        with open(self.config, "w") as f:
            f.write(f"""devices:
{devices_text}
discovery: {{providers: [static]}}
channels: {{allowed_namespaces: [{namespaces}]}}
logging: {{rules: "{log_rules}"{sinks}}}
{plugins_section}
{media_section}
api:
  socket: {self.socket}
{api_extra}
daemon: {{{daemon_keys}}}
{jobs}
""")
        self.stderr_path = os.path.join(workdir, "daemon.stderr")
        self.stderr = open(self.stderr_path, "w")
        config = [] if config_from_env else ["--config", self.config]
        if config_from_env:
            env = dict(env or os.environ, CASTLINE_CONFIG=self.config)
        self.process = subprocess.Popen(
            netns.command(*prefix, castline_binary(), "run", *config, "--plugin-path",
                          os.path.join(BUILD, "libCastlinePluginEchoChannelC.so"),
                          *[arg for path in plugin_paths for arg in ("--plugin-path", path)]),
            stdout=subprocess.DEVNULL, stderr=self.stderr, env=env)
        count = len(entries)
        wait_until(lambda: self.connected() == count, 20, f"the daemon connected to all {count} devices")

    def connected(self):
        if self.process.poll() is not None:
            raise AssertionError(f"castline run exited {self.process.returncode}: {self.log()[-3000:]}")
        if not os.path.exists(self.socket):
            return 0
        try:
            status, body, _ = api(self.socket, "GET", "/v1/devices")
        except OSError:
            return 0
        return sum(1 for d in body.get("devices", []) if d.get("link") == "connected") if status == 200 else 0

    def get(self, path):
        return api(self.socket, "GET", path)

    def post(self, path, body=None):
        return api(self.socket, "POST", path, body)

    def log(self):
        self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.stderr.close()
        return self.process.returncode


class EventReader:
    """Reads `GET /v1/events` in a thread; `events` holds the parsed data lines."""

    def __init__(self, socket_path, kinds=None):
        self.events = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(socket_path)
        query = f"?kinds={kinds}" if kinds else ""
        self.sock.sendall(f"GET /v1/events{query} HTTP/1.1\r\nHost: castline\r\n\r\n".encode())
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        pending = b""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.startswith(b"data: "):
                        self.events.append(json.loads(line[6:]))
        except OSError:
            return

    def close(self):
        self.sock.close()
        self.thread.join(timeout=5)


def sim_devices(sim):
    return sim.control({"command": "list"})["devices"]


def prometheus_query(netns, expression, address="127.0.0.1:19090"):
    """An instant query to the Prometheus a test runs in `netns`: the result list, [] until it answers."""
    result = netns.run("curl", "-s", "--get", "--data-urlencode", f"query={expression}", f"http://{address}/api/v1/query")
    try:
        return json.loads(result.stdout)["data"]["result"]
    except (ValueError, KeyError):
        return []
