"""catt with a lock around pychromecast's SocketClient.send_message: its socket thread and the
caller's thread then never write to the one TLS socket at once (pychromecast#1030). A test-only
wrapper for Benchmarks/catt-under-load.py --serialised; catt's own code is unchanged."""
import sys
import threading

import pychromecast.socket_client as socket_client

_lock = threading.RLock()
_send_message = socket_client.SocketClient.send_message


def send_message(self, *args, **kwargs):
    with _lock:
        return _send_message(self, *args, **kwargs)


socket_client.SocketClient.send_message = send_message

from catt.cli import main  # noqa: E402

sys.exit(main())
