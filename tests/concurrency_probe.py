"""Counts how many scripted LLM calls run at the same time."""

import threading
import time


class ConcurrencyProbe:
    def __init__(self, seconds: float = 0.05):
        self.seconds = seconds
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()

    def wrap(self, respond):
        """respond(prompt), held open for `seconds` while the concurrency is counted."""

        def probed(prompt):
            with self._lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
            time.sleep(self.seconds)
            with self._lock:
                self.in_flight -= 1
            return respond(prompt)

        return probed
