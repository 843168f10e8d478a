"""A loopback TCP proxy on a thread of its own, for putting a bad network between a client and a
server in a test.

    with TcpProxy("127.0.0.1", server_port) as proxy:   # listens on 127.0.0.1:proxy.port
        ... connect the client to proxy.port ...
        proxy.blackhole()   # nothing more is forwarded either way, every socket stays open:
                            # no FIN, no RST; the client sees silence (like a cable pulled)
        proxy.resume()      # forwarding again; what was sent meanwhile arrives, as after a partition heals
        proxy.cut()         # every connection closed with RST (SO_LINGER 0), on both sides
        proxy.close()       # stops listening and closes the rest

While blackholed, new connections are still accepted (the kernel completes the handshake on the
listening socket anyway) and connected to the target, but nothing flows. An end of stream from
one side is passed on as a half close (shutdown SHUT_WR) once what it sent has been written.
Every control call is done by the proxy's thread and waited for, bounded.
"""

import collections
import errno
import selectors
import socket
import struct
import threading

CONTROL_TIMEOUT_S = 10
CONNECT_TIMEOUT_S = 5
CHUNK = 65536


class _End:
    """One socket of a connection: what is waiting to be written to it, and whether it ended."""

    def __init__(self, sock):
        self.sock = sock
        self.out = bytearray()
        self.read_eof = False      # the peer of this socket sent FIN
        self.shut_wr = False       # we passed a FIN on to this socket


class _Connection:
    def __init__(self, client, upstream):
        self.client = _End(client)
        self.upstream = _End(upstream)

    def ends(self):
        return (self.client, self.upstream)

    def other(self, end):
        return self.upstream if end is self.client else self.client


class TcpProxy:
    def __init__(self, target_host, target_port, listen_host="127.0.0.1"):
        self.target = (target_host, target_port)
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((listen_host, 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.blackholed = False
        self.accepted = 0
        self.connections = []
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._commands = collections.deque()
        self._lock = threading.Lock()
        self._stopping = False
        self._registered = {}
        self._thread = threading.Thread(target=self._loop, name="tcp-proxy:%d" % self.port, daemon=True)
        self._thread.start()

    # -- control, from any thread ------------------------------------------------------------

    def _call(self, function):
        done = threading.Event()
        box = {}

        def command():
            try:
                box["result"] = function()
            except BaseException as error:  # noqa: BLE001 - handed back to the caller
                box["error"] = error
            done.set()

        with self._lock:
            if not self._thread.is_alive():
                raise RuntimeError("the proxy's thread is not running")
            self._commands.append(command)
        self._wake_w.send(b"x")
        if not done.wait(CONTROL_TIMEOUT_S):
            raise RuntimeError("the proxy's thread did not answer in %d s" % CONTROL_TIMEOUT_S)
        if "error" in box:
            raise box["error"]
        return box.get("result")

    def blackhole(self):
        """Stops forwarding in both directions; every socket stays open (no FIN, no RST)."""
        self._call(lambda: setattr(self, "blackholed", True))

    def resume(self):
        """Forwards again, what waited included."""
        self._call(lambda: setattr(self, "blackholed", False))

    def cut(self):
        """Closes every connection with RST on both sides (SO_LINGER 0); keeps listening."""
        self._call(self._cut_all)

    def connection_count(self):
        return self._call(lambda: len(self.connections))

    def close(self):
        """Stops listening and closes every socket (RST: the proxy is gone)."""
        if self._thread.is_alive():
            try:
                self._call(self._stop)
            except RuntimeError:
                pass
            self._thread.join(CONTROL_TIMEOUT_S)
        for sock in (self._wake_r, self._wake_w):
            sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- the proxy's thread ------------------------------------------------------------------

    def _stop(self):
        self._cut_all()
        self._unregister(self.listener)
        self.listener.close()
        self._stopping = True

    def _cut_all(self):
        for connection in list(self.connections):
            self._drop(connection, reset=True)

    def _drop(self, connection, reset):
        for end in connection.ends():
            self._unregister(end.sock)
            if reset:
                try:
                    end.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            end.sock.close()
        if connection in self.connections:
            self.connections.remove(connection)

    def _unregister(self, sock):
        if sock in self._registered:
            self._selector.unregister(sock)
            del self._registered[sock]

    def _want(self, sock, events, data):
        current = self._registered.get(sock)
        if events == 0:
            self._unregister(sock)
        elif current is None:
            self._selector.register(sock, events, data)
            self._registered[sock] = events
        elif current != events:
            self._selector.modify(sock, events, data)
            self._registered[sock] = events

    def _update_interest(self):
        for connection in self.connections:
            for end in connection.ends():
                events = 0
                if not self.blackholed:
                    other = connection.other(end)
                    if not end.read_eof and not other.out and not other.shut_wr:
                        events |= selectors.EVENT_READ
                    if end.out:
                        events |= selectors.EVENT_WRITE
                self._want(end.sock, events, (connection, end))

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            try:
                upstream = socket.create_connection(self.target, timeout=CONNECT_TIMEOUT_S)
            except OSError:
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                client.close()
                continue
            for sock in (client, upstream):
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.accepted += 1
            self.connections.append(_Connection(client, upstream))

    def _on_readable(self, connection, end):
        other = connection.other(end)
        try:
            data = end.sock.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(connection, reset=True)     # a reset from one side is passed on as one
            return
        if data:
            other.out += data
            self._flush(connection, other)
        else:
            end.read_eof = True
            self._flush(connection, other)

    def _flush(self, connection, end):
        if end.out:
            try:
                sent = end.sock.send(end.out)
                del end.out[:sent]
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._drop(connection, reset=True)
                return
        if not end.out and connection.other(end).read_eof and not end.shut_wr:
            try:
                end.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            end.shut_wr = True
        if all(e.read_eof and e.shut_wr for e in connection.ends()):
            self._drop(connection, reset=False)

    def _loop(self):
        self._selector.register(self.listener, selectors.EVENT_READ, "listener")
        self._registered[self.listener] = selectors.EVENT_READ
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._registered[self._wake_r] = selectors.EVENT_READ
        try:
            while not self._stopping:
                self._update_interest()
                for key, events in self._selector.select(timeout=0.5):
                    if key.data == "listener":
                        self._accept()
                    elif key.data == "wake":
                        try:
                            self._wake_r.recv(4096)
                        except OSError as error:
                            if error.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                                raise
                    else:
                        connection, end = key.data
                        if connection not in self.connections or self.blackholed:
                            continue
                        if events & selectors.EVENT_WRITE:
                            self._flush(connection, end)
                        if connection in self.connections and events & selectors.EVENT_READ:
                            self._on_readable(connection, end)
                while True:
                    with self._lock:
                        if not self._commands:
                            break
                        command = self._commands.popleft()
                    command()
        finally:
            with self._lock:
                pending, self._commands = list(self._commands), collections.deque()
            for command in pending:
                command()
            for connection in list(self.connections):
                self._drop(connection, reset=True)
            self._selector.close()
