"""What BirthdayBuzz's test sinks (http_sink.py, smtp_sink.py) share. Standard library only."""

import os
import sys
import threading


def watch_stdin():
    """Exit the whole process once stdin is at end of file (the parent died)."""
    def run():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=run, daemon=True, name="stdin-watch").start()
