"""HTTP over a Unix socket (the daemon's API socket): the one connection class the conformance
tests and the benchmarks use. No side effect on import (the benchmarks import it without a build)."""
import http.client
import socket


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=30):
        super().__init__("castline", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)
