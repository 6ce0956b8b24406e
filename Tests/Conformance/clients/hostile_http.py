"""Hostile HTTP clients for test_hostile_clients.py, run inside the test's namespace:

    hostile_http.py pipeline HOST PORT PATH COUNT     one connection, COUNT pipelined GETs, never read
    hostile_http.py idle HOST PORT COUNT              COUNT connections that send nothing
    hostile_http.py bodies HOST PORT COUNT BYTES      COUNT POSTs without a token, each a body of BYTES
    hostile_http.py slowheader HOST PORT COUNT GAP    COUNT requests, one header line every GAP seconds

Each holds what it opened until SIGTERM (or 120 s at most), then prints one JSON line: how many
connections were opened, how many the server closed, how many answers began with 401. Bounded:
counts and times come from the arguments, every socket has a timeout."""
import json
import select
import signal
import socket
import sys
import time

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
stats = {"mode": mode, "opened": 0, "refused": 0, "closed_by_server": 0, "unauthorized": 0, "sent_bytes": 0}
sockets = []
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
deadline = time.monotonic() + 120


def connect():
    try:
        s = socket.create_connection((host, port), timeout=2)
        s.setblocking(False)
        stats["opened"] += 1
        sockets.append(s)
        return s
    except OSError:
        stats["refused"] += 1
        return None


def send_all(s, data):
    try:
        s.setblocking(True)
        s.settimeout(2)
        s.sendall(data)
        stats["sent_bytes"] += len(data)
        s.setblocking(False)
        return True
    except OSError:
        return False


def poll_closed():
    """Reads what the server sent; counts 401 answers and connections it closed."""
    for s in list(sockets):
        for _ in range(64):   # what is there now, to its end
            try:
                ready, _, _ = select.select([s], [], [], 0)
                if not ready:
                    break
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                stats["closed_by_server"] += 1
                sockets.remove(s)
                s.close()
                break
            if data.startswith(b"HTTP/1.1 401"):
                stats["unauthorized"] += 1


if mode == "pipeline":
    path, count = sys.argv[4], int(sys.argv[5])
    s = connect()
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    if s is not None:
        # Sent in chunks as the socket takes them; never reading the answers.
        pending = request * count
        s.setblocking(True)
        s.settimeout(1)
        while pending and not stop and time.monotonic() < deadline:
            try:
                sent = s.send(pending[:65536])
                pending = pending[sent:]
                stats["sent_bytes"] += sent
            except socket.timeout:
                pass   # the server stopped reading: it holds back, as it should
            except OSError:
                break
        stats["unsent_requests"] = len(pending) // len(request)
elif mode == "idle":
    for _ in range(int(sys.argv[4])):
        connect()
elif mode == "bodies":
    count, size = int(sys.argv[4]), int(sys.argv[5])
    head = f"POST /v1/devices/x/cast HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode()
    chunk = b"x" * 65536
    # Every connection first, each with its head: then the bodies, round after round.
    opened = [s for s in (connect() for _ in range(count)) if s is not None and send_all(s, head)]
    sent = {id(s): 0 for s in opened}
    while not stop and time.monotonic() < deadline and any(sent[id(s)] < size for s in opened if s in sockets):
        for s in [s for s in opened if s in sockets and sent[id(s)] < size]:
            if send_all(s, chunk[: min(len(chunk), size - sent[id(s)])]):
                sent[id(s)] += min(len(chunk), size - sent[id(s)])
            else:
                sent[id(s)] = size
        poll_closed()
    poll_closed()
elif mode == "slowheader":
    count, gap = int(sys.argv[4]), float(sys.argv[5])
    for _ in range(count):
        s = connect()
        if s is not None:
            send_all(s, f"GET /v1/devices HTTP/1.1\r\nHost: {host}\r\n".encode())
    line = 0
    while not stop and time.monotonic() < deadline and sockets:
        time.sleep(gap)
        line += 1
        for s in list(sockets):
            if not send_all(s, f"X-Slow-{line}: {line}\r\n".encode()):
                stats["closed_by_server"] += 1
                sockets.remove(s)
                s.close()

print(json.dumps({"ready": True, **stats}), flush=True)
while not stop and time.monotonic() < deadline:
    poll_closed()
    time.sleep(0.2)
poll_closed()
stats["still_open"] = len(sockets)
print(json.dumps(stats), flush=True)
