"""A raw CASTV2 sender for the synchronisation tests (issue 45, test_sim_sync.py): it times
GET_STATUS round trips, or loads media paused and sends PLAY, and prints what it measured as one
JSON line. Instants are CLOCK_REALTIME nanoseconds (`time.time_ns()`), the clock the simulator's
ground truth is on; durations use CLOCK_MONOTONIC.

Usage: sync_sender.py HOST PORT roundtrip|play

Frames are a 4-byte big-endian length and a serialized CastMessage (pychromecast's generated
protobuf); TLS is not verified (self-signed). Every read has a socket timeout and every wait a
deadline, so a device that never answers fails the script instead of hanging it."""
import json
import socket
import ssl
import struct
import sys
import time

from pychromecast.generated import cast_channel_pb2 as pb

NS_CONNECTION = "urn:x-cast:com.google.cast.tp.connection"
NS_HEARTBEAT = "urn:x-cast:com.google.cast.tp.heartbeat"
NS_RECEIVER = "urn:x-cast:com.google.cast.receiver"
NS_MEDIA = "urn:x-cast:com.google.cast.media"


class Channel:
    def __init__(self, host, port):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        self.sock = context.wrap_socket(socket.create_connection((host, port), timeout=10))
        self.sock.settimeout(10)
        self.buffer = b""
        self.request_id = 0

    def send(self, namespace, payload, destination="receiver-0"):
        message = pb.CastMessage()
        message.protocol_version = pb.CastMessage.CASTV2_1_0
        message.source_id = "sender-0"
        message.destination_id = destination
        message.namespace = namespace
        message.payload_type = pb.CastMessage.STRING
        message.payload_utf8 = json.dumps(payload)
        data = message.SerializeToString()
        self.sock.sendall(struct.pack(">I", len(data)) + data)

    def request(self, namespace, kind, destination="receiver-0", **fields):
        self.request_id += 1
        self.send(namespace, {"type": kind, "requestId": self.request_id, **fields}, destination)
        return self.request_id

    def _read(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the device closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def wait_for(self, predicate, timeout=10.0):
        """Reads messages until `predicate(namespace, json)` holds; answers PINGs meanwhile.
        Returns (json, CLOCK_REALTIME ns, CLOCK_MONOTONIC s) of the matching message."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            (length,) = struct.unpack(">I", self._read(4))
            message = pb.CastMessage()
            message.ParseFromString(self._read(length))
            arrived_ns, arrived = time.time_ns(), time.monotonic()
            if message.payload_type != pb.CastMessage.STRING:
                continue
            body = json.loads(message.payload_utf8)
            if message.namespace == NS_HEARTBEAT and body.get("type") == "PING":
                self.send(NS_HEARTBEAT, {"type": "PONG"}, message.source_id)
                continue
            if predicate(message.namespace, body):
                return body, arrived_ns, arrived
        raise TimeoutError("no matching message within %.1f s" % timeout)


def roundtrip(channel):
    channel.send(NS_CONNECTION, {"type": "CONNECT", "origin": {}})
    times = []
    for _ in range(5):
        start = time.monotonic()
        rid = channel.request(NS_RECEIVER, "GET_STATUS")
        _, _, arrived = channel.wait_for(lambda ns, body: ns == NS_RECEIVER and body.get("requestId") == rid)
        times.append((arrived - start) * 1000)
    return {"round_trips_ms": times}


def play(channel):
    channel.send(NS_CONNECTION, {"type": "CONNECT", "origin": {}})
    rid = channel.request(NS_RECEIVER, "LAUNCH", appId="CC1AD845")
    status, _, _ = channel.wait_for(lambda ns, body: ns == NS_RECEIVER and body.get("requestId") == rid
                                    and body.get("status", {}).get("applications"))
    transport = status["status"]["applications"][0]["transportId"]
    channel.send(NS_CONNECTION, {"type": "CONNECT", "origin": {}}, transport)
    media = {"contentId": "http://media.invalid/castline/wall.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
             "duration": 600}
    channel.request(NS_MEDIA, "LOAD", transport, media=media, autoplay=False)

    def state(body):
        return (body.get("status") or [{}])[0].get("playerState")

    paused, _, _ = channel.wait_for(lambda ns, body: ns == NS_MEDIA and state(body) == "PAUSED")
    session = paused["status"][0]["mediaSessionId"]
    sent_ns = time.time_ns()
    rid = channel.request(NS_MEDIA, "PLAY", transport, mediaSessionId=session)
    reply, reply_ns, _ = channel.wait_for(lambda ns, body: ns == NS_MEDIA and body.get("requestId") == rid)
    return {"media_session_id": session, "play_sent_ns": sent_ns, "reply_received_ns": reply_ns,
            "reply_state": state(reply), "reply_current_time": reply["status"][0]["currentTime"]}


def main():
    host, port, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    channel = Channel(host, port)
    result = {"roundtrip": roundtrip, "play": play}[scenario](channel)
    channel.sock.close()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
