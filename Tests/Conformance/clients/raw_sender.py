"""A raw CASTV2 sender that sends bad input on purpose (garbage instead of TLS, bad frames, bad
JSON, unknown namespaces) and reports what the device did, as one JSON line on stdout.

Usage: raw_sender.py HOST PORT SCENARIO

Frames are a 4-byte big-endian length and a serialized CastMessage (pychromecast's generated
protobuf). TLS is not verified (the device certificate is self-signed). Every read has a socket
timeout and every loop is bounded in time, so a device that never answers makes a scenario
report `"timeout"`, never hang. Scenarios are listed in SCENARIOS at the bottom.
"""
import json
import os
import random
import socket
import ssl
import struct
import sys
import time

from pychromecast.generated import cast_channel_pb2 as pb

SENDER = "sender-0"
RECEIVER = "receiver-0"
NS_CONNECTION = "urn:x-cast:com.google.cast.tp.connection"
NS_HEARTBEAT = "urn:x-cast:com.google.cast.tp.heartbeat"
NS_DEVICE_AUTH = "urn:x-cast:com.google.cast.tp.deviceauth"
NS_RECEIVER = "urn:x-cast:com.google.cast.receiver"
NS_MEDIA = "urn:x-cast:com.google.cast.media"
NS_NOBODY = "urn:x-cast:com.example.nobody"
MAX_BODY = 65536  # CastFrameLimits.maxBodySize

# Bad payloads for the request namespaces (receiver, media): (label, payload); bytes go as BINARY.
BAD_PAYLOADS = [
    ("truncated-json", '{"type": "GET_STATUS", "requestId": 7'),
    ("not-json", "GET_STATUS please"),
    ("json-array", '[{"type": "GET_STATUS", "requestId": 8}]'),
    ("json-string", '"GET_STATUS"'),
    ("binary-payload", b'{"type": "GET_STATUS", "requestId": 9}'),
    ("missing-request-id", '{"type": "GET_STATUS"}'),
    ("string-request-id", '{"type": "GET_STATUS", "requestId": "10"}'),
    ("missing-type", '{"requestId": 11}'),
    ("unknown-type", '{"type": "FROBNICATE", "requestId": 12}'),
]


class Closed(Exception):
    """The device ended the connection (`how`: eof or reset)."""

    def __init__(self, how):
        super().__init__(how)
        self.how = how


def closed_how(error):
    if isinstance(error, (ssl.SSLZeroReturnError, ssl.SSLEOFError)):
        return "eof"
    if isinstance(error, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
        return "reset"
    if isinstance(error, ssl.SSLError):
        return f"tls-error:{error.reason or error}"
    return f"error:{type(error).__name__}"


def cast_message(namespace, payload, source=SENDER, destination=RECEIVER):
    message = pb.CastMessage()
    message.protocol_version = pb.CastMessage.CASTV2_1_0
    message.source_id = source
    message.destination_id = destination
    message.namespace = namespace
    if isinstance(payload, (bytes, bytearray)):
        message.payload_type = pb.CastMessage.BINARY
        message.payload_binary = bytes(payload)
    else:
        message.payload_type = pb.CastMessage.STRING
        message.payload_utf8 = payload if isinstance(payload, str) else json.dumps(payload)
    return message.SerializeToString()


def frame(body):
    return struct.pack(">I", len(body)) + body


class Channel:
    """One TLS connection to the device; keeps every message it read in `log`."""

    def __init__(self, host, port, timeout=5.0):
        raw = socket.create_connection((host, port), timeout=timeout)
        self.local_port = raw.getsockname()[1]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        self.sock = context.wrap_socket(raw)
        self.sock.settimeout(timeout)
        self.buffer = b""
        self.log = []
        self.next_request = 1000

    def request_id(self):
        self.next_request += 1
        return self.next_request

    def send_bytes(self, data):
        try:
            self.sock.sendall(data)
        except (OSError, ssl.SSLError) as error:
            raise Closed(closed_how(error))

    def send(self, namespace, payload, destination=RECEIVER):
        self.send_bytes(frame(cast_message(namespace, payload, destination=destination)))

    def connect(self, destination=RECEIVER):
        self.send(NS_CONNECTION, {"type": "CONNECT"}, destination=destination)

    def _fill(self, deadline):
        """Reads more bytes before `deadline`; False on timeout, raises Closed at the end of stream."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self.sock.settimeout(min(remaining, 1.0))
        try:
            chunk = self.sock.recv(65536)
        except (socket.timeout, TimeoutError):
            return False
        except ssl.SSLWantReadError:
            return False
        except (OSError, ssl.SSLError) as error:
            raise Closed(closed_how(error))
        if not chunk:
            raise Closed("eof")
        self.buffer += chunk
        return True

    def read_message(self, deadline):
        """The next message as a dict, or None if none arrived before `deadline`."""
        while time.monotonic() < deadline:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4:4 + length], self.buffer[4 + length:]
                    message = pb.CastMessage()
                    message.ParseFromString(body)
                    entry = {"namespace": message.namespace, "source": message.source_id,
                             "destination": message.destination_id}
                    if message.payload_type == pb.CastMessage.BINARY:
                        entry["binary"] = message.payload_binary.hex()
                    else:
                        try:
                            entry["payload"] = json.loads(message.payload_utf8)
                        except ValueError:
                            entry["text"] = message.payload_utf8
                    self.log.append(entry)
                    if message.namespace == NS_HEARTBEAT and entry.get("payload", {}).get("type") == "PING":
                        self.send(NS_HEARTBEAT, {"type": "PONG"}, destination=message.source_id)
                    return entry
            self._fill(deadline)
        return None

    def wait_for(self, predicate, timeout=3.0):
        """The first message matching `predicate` within `timeout` s, else None (never raises Closed)."""
        deadline = time.monotonic() + timeout
        for _ in range(1000):
            message = self.read_message(deadline)
            if message is None:
                return None
            if predicate(message):
                return message
        return None

    def reply_to(self, namespace, request_id, timeout=3.0):
        return self.wait_for(lambda m: m["namespace"] == namespace and isinstance(m.get("payload"), dict)
                             and m["payload"].get("requestId") == request_id, timeout)

    def next_on(self, namespace, timeout=3.0):
        return self.wait_for(lambda m: m["namespace"] == namespace, timeout)

    def drain(self, seconds):
        """Everything that arrives within `seconds` (stops early if the device closes)."""
        deadline = time.monotonic() + seconds
        seen = []
        for _ in range(1000):
            message = self.read_message(deadline)
            if message is None:
                break
            seen.append(message)
        return seen

    def receiver_status(self, timeout=3.0):
        """Sends receiver GET_STATUS; the reply's type, or `closed:<how>` / `timeout`."""
        request = self.request_id()
        try:
            self.send(NS_RECEIVER, {"type": "GET_STATUS", "requestId": request})
            reply = self.reply_to(NS_RECEIVER, request, timeout)
        except Closed as closed:
            return f"closed:{closed.how}"
        return reply["payload"]["type"] if reply else "timeout"

    def wait_closed(self, timeout=5.0):
        """How and when (s) the device ended the connection, or ("timeout", None)."""
        started = time.monotonic()
        deadline = started + timeout
        try:
            for _ in range(1000):
                if self.read_message(deadline) is None and time.monotonic() >= deadline:
                    return "timeout", None
        except Closed as closed:
            return closed.how, round(time.monotonic() - started, 3)
        return "timeout", None

    def close(self):
        """Ends the connection with a TLS close_notify (as a well-behaved sender does), then closes."""
        try:
            self.sock.settimeout(1.0)
            self.sock.unwrap().close()
        except (OSError, ValueError, ssl.SSLError):
            self.sock.close()


def plain_tcp(host, port, data, timeout=5.0):
    """Sends `data` over plain TCP (no TLS) and reports how the device ended the connection."""
    sock = socket.create_connection((host, port), timeout=timeout)
    local_port = sock.getsockname()[1]
    started = time.monotonic()
    deadline = started + timeout
    received = 0
    how = "timeout"
    try:
        if data:
            sock.sendall(data)
    except OSError as error:
        how = closed_how(error)
    while how == "timeout" and time.monotonic() < deadline:
        sock.settimeout(max(0.05, min(1.0, deadline - time.monotonic())))
        try:
            chunk = sock.recv(65536)
        except (socket.timeout, TimeoutError):
            continue
        except OSError as error:
            how = closed_how(error)
            break
        if not chunk:
            how = "eof"
            break
        received += len(chunk)
    seconds = round(time.monotonic() - started, 3) if how != "timeout" else None
    sock.close()
    return {"closed": how, "seconds": seconds, "bytesReceived": received, "localPort": local_port}


# MARK: Scenarios


def silent_tcp(host, port):
    """A TCP connection that never starts TLS: the device must not keep it forever."""
    return plain_tcp(host, port, b"", timeout=10.0)


def partial_frame(host, port):
    """TLS and CONNECT, then 2 of a length prefix's 4 bytes and silence: dropped like a silent sender."""
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "before": channel.receiver_status()}
    channel.send_bytes(b"\x00\x00")
    started = time.monotonic()
    deadline = started + 10.0
    result["closed"], result["seconds"] = "timeout", None
    for _ in range(100):  # read raw bytes without answering the device's PINGs
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        channel.sock.settimeout(min(remaining, 1.0))
        try:
            if not channel.sock.recv(65536):
                result["closed"] = "eof"
                break
        except (socket.timeout, TimeoutError, ssl.SSLWantReadError):
            continue
        except (OSError, ssl.SSLError) as error:
            result["closed"] = closed_how(error)
            break
    if result["closed"] != "timeout":
        result["seconds"] = round(time.monotonic() - started, 3)
    channel.sock.close()
    return result


def tcp_garbage(host, port):
    data = bytearray(random.Random(8009).randbytes(4096))
    if data[0] == 0x16:  # a TLS handshake record header would make the device wait for its body
        data[0] = 0x17
    return plain_tcp(host, port, bytes(data))


def http_get(host, port):
    return plain_tcp(host, port, f"GET /setup/eureka_info HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())


def status(host, port):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "status": channel.receiver_status()}
    channel.close()
    return result


def status_abrupt_close(host, port):
    """Like `status`, but closes TCP without a TLS close_notify (as Python's ssl and many senders do)."""
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "status": channel.receiver_status()}
    channel.sock.close()
    return result


def tls_bad_record(host, port):
    """After a good exchange, a TLS application-data record whose ciphertext is random bytes,
    written past the TLS layer straight to the socket: it cannot decrypt (what a sender that
    writes one TLS connection from two threads at once produces)."""
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "before": channel.receiver_status()}
    os.write(channel.sock.fileno(), b"\x17\x03\x03\x00\x30" + os.urandom(48))
    result["closed"], result["seconds"] = channel.wait_closed(5.0)
    channel.sock.close()
    return result


def oversized(host, port, length):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "before": channel.receiver_status()}
    channel.send_bytes(struct.pack(">I", length) + b"\x00" * 64)
    result["closed"], result["seconds"] = channel.wait_closed(5.0)
    channel.close()
    return result


def max_size(host, port):
    """A valid receiver GET_STATUS padded to exactly MAX_BODY bytes of body: accepted."""
    channel = Channel(host, port)
    channel.connect()
    request = channel.request_id()
    padding = 0
    body = b""
    for _ in range(8):  # the padding changes the length varints; converges in a couple of steps
        body = cast_message(NS_RECEIVER, {"type": "GET_STATUS", "requestId": request, "padding": "x" * padding})
        if len(body) == MAX_BODY:
            break
        padding += MAX_BODY - len(body)
    result = {"localPort": channel.local_port, "bodyBytes": len(body)}
    try:
        channel.send_bytes(frame(body))
        reply = channel.reply_to(NS_RECEIVER, request, 5.0)
        result["reply"] = reply["payload"]["type"] if reply else "timeout"
    except Closed as closed:
        result["reply"] = f"closed:{closed.how}"
    result["after"] = channel.receiver_status()
    channel.close()
    return result


def garbage_body(host, port):
    """Frames whose bodies are not CastMessages, each followed by a GET_STATUS on the same connection."""
    bodies = {
        "random-bytes": bytes(random.Random(65536).randbytes(512)),
        "bad-wire-type": b"\xff\xfe\x00\x13\x37\xde\xad\xbe\xef",
        "truncated-varint": b"\x08\xff\xff\xff",
        "missing-fields": pb.CastMessage(source_id=SENDER).SerializePartialToString(),
        "string-without-payload": _without_payload(),
    }
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "cases": {}}
    for label, body in bodies.items():
        try:
            channel.send_bytes(frame(body))
        except Closed as closed:
            result["cases"][label] = f"closed:{closed.how}"
            break
        result["cases"][label] = channel.receiver_status()
    channel.close()
    return result


def _without_payload():
    message = pb.CastMessage(protocol_version=pb.CastMessage.CASTV2_1_0, source_id=SENDER, destination_id=RECEIVER,
                             namespace=NS_RECEIVER, payload_type=pb.CastMessage.STRING)
    return message.SerializePartialToString()


def zero_length(host, port):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "before": channel.receiver_status()}
    try:
        channel.send_bytes(b"\x00\x00\x00\x00")
        result["closed"], result["seconds"] = channel.wait_closed(5.0)
    except Closed as closed:
        result["closed"], result["seconds"] = closed.how, 0
    channel.close()
    return result


def bad_requests(channel, namespace, destination):
    """Sends every BAD_PAYLOADS entry; the first reply on `namespace` to each (or "timeout")."""
    replies = {}
    for label, payload in BAD_PAYLOADS:
        channel.send(namespace, payload, destination=destination)
        reply = channel.next_on(namespace, 3.0)
        replies[label] = reply.get("payload", reply) if reply else "timeout"
    return replies


def invalid_receiver(host, port):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port, "replies": bad_requests(channel, NS_RECEIVER, RECEIVER)}
    result["after"] = channel.receiver_status()
    channel.close()
    return result


def invalid_media(host, port):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port}
    launch = channel.request_id()
    channel.send(NS_RECEIVER, {"type": "LAUNCH", "appId": "CC1AD845", "requestId": launch})
    transport = None
    deadline = time.monotonic() + 10
    for _ in range(100):
        if time.monotonic() >= deadline:
            break
        reply = channel.next_on(NS_RECEIVER, max(0.05, deadline - time.monotonic()))
        if reply is None:
            break
        apps = (reply.get("payload", {}).get("status") or {}).get("applications") or []
        app = next((a for a in apps if a.get("appId") == "CC1AD845"), None)
        if app:
            transport, session = app["transportId"], app["sessionId"]
            break
    result["transportId"] = transport
    if transport is None:
        return result
    channel.connect(destination=transport)
    result["replies"] = bad_requests(channel, NS_MEDIA, transport)
    request = channel.request_id()
    channel.send(NS_MEDIA, {"type": "GET_STATUS", "requestId": request}, destination=transport)
    reply = channel.reply_to(NS_MEDIA, request, 3.0)
    result["after"] = reply["payload"]["type"] if reply else "timeout"
    stop = channel.request_id()
    channel.send(NS_RECEIVER, {"type": "STOP", "sessionId": session, "requestId": stop})
    reply = channel.reply_to(NS_RECEIVER, stop, 3.0)
    result["stopped"] = bool(reply) and not (reply["payload"].get("status") or {}).get("applications")
    channel.close()
    return result


def unknown_namespace(host, port):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port}
    channel.send(NS_NOBODY, {"type": "HELLO", "requestId": 5})
    result["after"] = channel.receiver_status()
    # Anything on the unknown namespace within ~1 s after the GET_STATUS was answered.
    result["nobodyReplies"] = [m for m in channel.log + channel.drain(1.0) if m["namespace"] == NS_NOBODY]
    channel.close()
    return result


def without_connect(host, port):
    """A receiver GET_STATUS before CONNECT: ignored; after CONNECT the same request is answered."""
    channel = Channel(host, port)
    result = {"localPort": channel.local_port, "before": channel.receiver_status(timeout=1.0)}
    channel.connect()
    result["after"] = channel.receiver_status()
    channel.close()
    return result


def heartbeat_garbage(host, port):
    channel = Channel(host, port)
    channel.connect()
    result = {"localPort": channel.local_port}
    channel.send(NS_HEARTBEAT, "PING")
    channel.send(NS_HEARTBEAT, "{\"type\": \"PING\"")
    channel.send(NS_HEARTBEAT, b"\x00PING", destination=RECEIVER)
    channel.send(NS_HEARTBEAT, {"type": "NOT_A_PING"})
    result["heartbeatReplies"] = [m for m in channel.drain(1.0) if m["namespace"] == NS_HEARTBEAT]
    result["after"] = channel.receiver_status()
    channel.send(NS_HEARTBEAT, {"type": "PING"})
    pong = channel.next_on(NS_HEARTBEAT, 3.0)
    result["pong"] = pong.get("payload") if pong else "timeout"
    channel.close()
    return result


def device_auth_garbage(host, port):
    """Bytes that are not a DeviceAuthMessage on the device-auth namespace: an AuthError reply."""
    channel = Channel(host, port)
    result = {"localPort": channel.local_port}
    channel.send(NS_DEVICE_AUTH, b"\xff\xfe\x00\x13\x37\xde\xad\xbe\xef")
    reply = channel.next_on(NS_DEVICE_AUTH, 3.0)
    if reply and "binary" in reply:
        message = pb.DeviceAuthMessage()
        message.ParseFromString(bytes.fromhex(reply["binary"]))
        result["hasError"] = message.HasField("error")
        result["errorType"] = pb.AuthError.ErrorType.Name(message.error.error_type) if message.HasField("error") else None
    else:
        result["reply"] = reply or "timeout"
    channel.connect()
    result["after"] = channel.receiver_status()
    channel.close()
    return result


SCENARIOS = {
    "silent-tcp": silent_tcp,
    "partial-frame": partial_frame,
    "tcp-garbage": tcp_garbage,
    "http-get": http_get,
    "status": status,
    "status-abrupt-close": status_abrupt_close,
    "tls-bad-record": tls_bad_record,
    "oversized": lambda host, port: oversized(host, port, MAX_BODY + 1),
    "oversized-huge": lambda host, port: oversized(host, port, 0xFFFFFFFF),
    "max-size": max_size,
    "garbage-body": garbage_body,
    "zero-length": zero_length,
    "invalid-receiver": invalid_receiver,
    "invalid-media": invalid_media,
    "unknown-namespace": unknown_namespace,
    "without-connect": without_connect,
    "heartbeat-garbage": heartbeat_garbage,
    "device-auth-garbage": device_auth_garbage,
}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[3] not in SCENARIOS:
        sys.exit(f"usage: raw_sender.py HOST PORT {{{','.join(SCENARIOS)}}}")
    outcome = SCENARIOS[sys.argv[3]](sys.argv[1], int(sys.argv[2]))
    print(json.dumps(outcome), flush=True)
