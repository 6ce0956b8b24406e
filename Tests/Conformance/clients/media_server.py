"""A media server for failure tests, on 127.0.0.1:PORT inside the test's namespace:
/ok.mp4 an MP4 start, /missing.mp4 404, /broken.mp4 500, /page.mp4 an HTML page (200),
/live/missing.m3u8 404. Usage: media_server.py PORT"""
import http.server
import sys

MP4 = b"\x00\x00\x00\x18ftypmp42" + bytes(4096)
ROUTES = {
    "/ok.mp4": (200, "video/mp4", MP4),
    "/broken.mp4": (500, "text/plain", b"internal error"),
    "/page.mp4": (200, "text/html", b"<!doctype html><html><body>Please log in</body></html>"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status, kind, body = ROUTES.get(self.path, (404, "text/plain", b"not found"))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
