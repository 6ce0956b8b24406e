#!/usr/bin/env python3
"""An Alertmanager webhook receiver for tests: listens on HOST:PORT (inside the test's namespace)
and appends each notification, with its arrival time (Unix seconds), to a JSON Lines file.

    webhook_receiver.py HOST PORT OUT.jsonl"""
import http.server
import json
import sys
import time


class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        arrived = time.time()
        with open(sys.argv[3], "a") as f:
            f.write(json.dumps({"received": arrived, "notification": json.loads(body or b"{}")}) + "\n")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer((sys.argv[1], int(sys.argv[2])), Receiver).serve_forever()
