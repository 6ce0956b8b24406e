"""pychromecast's own mDNS discovery (CastBrowser + python-zeroconf, pinned to 127.0.0.1) inside
the test namespace. Prints the devices found as one JSON line. Usage: discover.py EXPECTED_COUNT"""
import json
import sys
import threading
import time

import zeroconf
from pychromecast.discovery import CastBrowser, SimpleCastListener

from polling import poll

expected = int(sys.argv[1])
found = threading.Event()
zc = zeroconf.Zeroconf(interfaces=["127.0.0.1"], ip_version=zeroconf.IPVersion.V4Only)
started = time.monotonic()
browser = CastBrowser(SimpleCastListener(lambda uuid, service: found.set() if len(browser.devices) >= expected else None), zc)
browser.start_discovery()
poll(lambda: len(browser.devices) >= expected, 20)
elapsed = time.monotonic() - started
devices = [{"uuid": str(info.uuid), "name": info.friendly_name, "host": info.host, "port": info.port,
            "model": info.model_name, "cast_type": info.cast_type} for info in browser.devices.values()]
browser.stop_discovery()
zc.close()
print(json.dumps({"devices": devices, "seconds": round(elapsed, 3)}), flush=True)
