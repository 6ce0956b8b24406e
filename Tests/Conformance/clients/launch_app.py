"""Launches the Default Media Receiver with pychromecast and leaves it running.
Usage: launch_app.py HOST PORT UUID"""
import json
import sys
import time
import uuid

import pychromecast

host, port, device_uuid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cast = pychromecast.get_chromecast_from_host((host, port, uuid.UUID(device_uuid), "Chromecast", "sim"),
                                             tries=1, retry_wait=1, timeout=10)
cast.wait(timeout=15)
cast.start_app("CC1AD845")
deadline = time.monotonic() + 10
while time.monotonic() < deadline and (cast.status is None or cast.status.app_id != "CC1AD845"):
    time.sleep(0.05)
app_id = cast.status.app_id if cast.status else None
cast.disconnect(timeout=5)
print(json.dumps({"app_id": app_id}), flush=True)
