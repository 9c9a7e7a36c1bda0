"""Stopping a command-line subprocess with a signal, as `timeout` or a service manager would."""
from __future__ import annotations

import subprocess


def signalled(proc: subprocess.Popen, sig: int, timeout: float = 30) -> tuple[str, str]:
    """Send `sig` to `proc`, then its (stdout, stderr) once it ends; killed if it has not ended in `timeout` s."""
    try:
        proc.send_signal(sig)
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
