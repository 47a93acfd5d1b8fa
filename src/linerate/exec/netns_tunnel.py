"""SSH into a host only a network namespace can reach (a VM DUT's management NIC: qemu forwards
the guest's port 22 to 127.0.0.1 *inside* the lab's dut namespace, where nothing else listens).

asyncssh's `tunnel` argument takes any object with `create_connection(factory, host, port)`
(asyncssh.connect, 'tunnel' in https://asyncssh.readthedocs.io/en/latest/api.html#connect): this
one makes the TCP socket in the namespace (a socket belongs to the namespace it was made in; the
worker thread that enters the namespace ends right after), then hands it to the event loop.
"""

from __future__ import annotations

import asyncio
import socket

from linerate.lab import netns


class NetnsTunnel:
    def __init__(self, namespace: str):
        self.namespace = namespace

    def __str__(self) -> str:
        return f"network namespace {self.namespace}"

    def open_socket(self) -> socket.socket:
        sock = netns.run_in(self.namespace, lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        sock.setblocking(False)
        return sock

    async def create_connection(self, factory, host: str, port: int):
        loop = asyncio.get_running_loop()
        sock = self.open_socket()
        try:
            await loop.sock_connect(sock, (host, port))
            return await loop.create_connection(factory, sock=sock)
        except BaseException:
            sock.close()
            raise

    def close(self) -> None:  # asyncssh closes a tunnel it was given only when it made it; nothing to close
        pass
