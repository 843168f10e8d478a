#!/usr/bin/python3
"""Live clients of hrmd's HTTP front for a while, as dashboards make them: WebSocket and
Server-Sent Events streams, and the requests a page makes when it opens. Used to profile the
code the front runs (bench/hrmd-order-file.sh).

    live_clients.py --port PORT --token TOKEN [--seconds 25] [--websockets 8] [--events 8]
"""

import argparse
import asyncio
import time

import websockets


async def websocket_client(port, token, until):
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/api/v1/live", subprotocols=["hrmd", "bearer." + token], open_timeout=120, ping_interval=None
    ) as socket:
        while time.time() < until:
            try:
                await asyncio.wait_for(socket.recv(), max(0.1, until - time.time()))
            except asyncio.TimeoutError:
                break


async def request(port, token, path, accept="application/json"):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: {accept}\r\nAuthorization: Bearer {token}\r\n"
        f"Connection: close\r\n\r\n".encode())
    await writer.drain()
    return reader, writer


async def event_client(port, token, until):
    reader, writer = await request(port, token, "/api/v1/live", "text/event-stream")
    while time.time() < until:
        try:
            if not await asyncio.wait_for(reader.read(65536), max(0.1, until - time.time())):
                break
        except asyncio.TimeoutError:
            break
    writer.close()


async def page_requests(port, token):
    for path in ("/", "/api/v1/whoami", "/api/v1/settings", "/api/v1/samples?since=10m&limit=100",
                 "/api/v1/statistics?by=1m&since=1h", "/api/v1/zones?since=1h", "/api/v1/latest"):
        reader, writer = await request(port, token, path)
        await asyncio.wait_for(reader.read(), 120)
        writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--seconds", type=float, default=25)
    parser.add_argument("--websockets", type=int, default=8)
    parser.add_argument("--events", type=int, default=8)
    args = parser.parse_args()
    until = time.time() + args.seconds
    await page_requests(args.port, args.token)
    await asyncio.gather(
        *(websocket_client(args.port, args.token, until) for _ in range(args.websockets)),
        *(event_client(args.port, args.token, until) for _ in range(args.events)))


if __name__ == "__main__":
    asyncio.run(main())
