"""The one bounded wait of the conformance suite (conftest.wait_until) and of its client scripts
(`from polling import poll` next to them): poll a condition instead of sleeping for a guess."""
import time


def poll(predicate, timeout, interval=0.05):
    """The first truthy value of `predicate()`, called every `interval` s; None once `timeout` s
    have passed (it is called once more at the deadline). Returns as soon as the condition holds,
    so a generous bound costs nothing when it does."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)   # the poll interval, not a wait of its own
