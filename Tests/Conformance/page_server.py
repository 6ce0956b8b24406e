"""A web server for dashboards and pages, run in a test's network namespace (the conformance
tests and Benchmarks/truth-audit.py share it). Every path answers an HTML page titled
`Board <path>`, except a few with the headers or answers the site tests need. Started with
`start(netns)`: (process, base URL); stop it by its PID."""
import subprocess
import sys

SCRIPT = r"""
import http.server
HEADERS = {"/deny.html": [("X-Frame-Options", "DENY")],
           "/csp.html": [("Content-Security-Policy", "default-src 'self'; frame-ancestors 'self'")],
           "/framable.html": [("Content-Security-Policy", "frame-ancestors *")]}
class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, body):
        path = self.path.split("?")[0]
        if path == "/missing.html":
            self.send_response(404); self.end_headers(); return
        if path == "/moved":
            self.send_response(302); self.send_header("Location", "/dash.html"); self.end_headers(); return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        for name, value in HEADERS.get(path, []):
            self.send_header(name, value)
        page = f"<html><head><title>Board {path}</title></head><body>castline dashboard</body></html>".encode()
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        if body:
            self.wfile.write(page)
    def do_HEAD(self): self.answer(False)
    def do_GET(self): self.answer(True)
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def start(netns):
    """The server in `netns`: (its process, its base URL `http://127.0.0.1:PORT`)."""
    process = subprocess.Popen(netns.command(sys.executable, "-c", SCRIPT), stdout=subprocess.PIPE, text=True)
    return process, f"http://127.0.0.1:{int(process.stdout.readline())}"


def stop(process):
    process.terminate()
    process.wait(timeout=10)
