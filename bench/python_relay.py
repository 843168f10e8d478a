#!/usr/bin/python3
"""The peer of hrmd's live stream: a heart-rate relay written the way its users write one.

It follows one source of heart-rate samples (here hrmd's own Server-Sent Events, standing in
for a bleak notification callback or a D-Bus signal handler) and relays each sample, as the
JSON text it arrived as, to every connected WebSocket client with `websockets.broadcast`.

    python_relay.py --source http://127.0.0.1:PORT/api/v1/live --token TOKEN --port 8765
"""

import argparse
import asyncio
import urllib.parse

import websockets

clients = set()


async def handler(websocket, path=None):
    clients.add(websocket)
    try:
        async for _ in websocket:
            pass
    finally:
        clients.discard(websocket)


async def follow(source, token):
    url = urllib.parse.urlsplit(source)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    writer.write(
        f"GET {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\nAccept: text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\n\r\n".encode())
    await writer.drain()
    # Headers, then the chunked event stream: the data lines are the samples.
    while (await reader.readline()).strip():
        pass
    event = None
    while True:
        line = await reader.readline()
        if not line:
            return
        text = line.decode().rstrip("\r\n")
        if text.startswith("event: "):
            event = text[7:]
        elif text.startswith("data: ") and event == "sample":
            websockets.broadcast(clients, '{"kind":"sample","sample":' + text[6:] + "}")


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    async with websockets.serve(handler, "127.0.0.1", args.port, max_queue=64):
        print("relay ready", flush=True)
        await follow(args.source, args.token)


if __name__ == "__main__":
    asyncio.run(main())
