#!/usr/bin/env python3
"""Records Kafka request frames between clients and a broker on loopback.

    proxy.py --listen PORT --broker PORT --out DIR

Each request frame body (without its 4-byte size) is written to
DIR/<api key>-v<version>-<label>-<sha1 prefix>, so a request sent twice is
kept once. Responses pass through unchanged, except that the broker's own
address in them (127.0.0.1 and its port, as Metadata, FindCoordinator and
DescribeCluster carry it) is rewritten to the proxy's, so that clients come
back through the proxy. The label is read from DIR/.label before each write,
so a capture script can name the client under way without a restart.
"""

import argparse
import asyncio
import hashlib
import os
import struct

HOST = b"127.0.0.1"


def label(out):
    try:
        with open(os.path.join(out, ".label")) as f:
            return f.read().strip() or "client"
    except FileNotFoundError:
        return "client"


async def pump_requests(reader, writer, out):
    while True:
        size_bytes = await reader.readexactly(4)
        (size,) = struct.unpack(">i", size_bytes)
        body = await reader.readexactly(size)
        if len(body) >= 4:
            key, version = struct.unpack(">hh", body[:4])
            digest = hashlib.sha1(body).hexdigest()[:12]
            name = f"{key:02d}-v{version}-{label(out)}-{digest}"
            path = os.path.join(out, name)
            if not any(f.endswith(digest) for f in os.listdir(out)):
                with open(path, "wb") as f:
                    f.write(body)
        writer.write(size_bytes + body)
        await writer.drain()


async def pump_responses(reader, writer, broker_port, listen_port):
    old = HOST + struct.pack(">i", broker_port)
    new = HOST + struct.pack(">i", listen_port)
    while True:
        size_bytes = await reader.readexactly(4)
        (size,) = struct.unpack(">i", size_bytes)
        body = await reader.readexactly(size)
        writer.write(size_bytes + body.replace(old, new))
        await writer.drain()


async def serve(args):
    os.makedirs(args.out, exist_ok=True)

    async def handle(client_reader, client_writer):
        broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", args.broker)
        pumps = [
            asyncio.create_task(pump_requests(client_reader, broker_writer, args.out)),
            asyncio.create_task(
                pump_responses(broker_reader, client_writer, args.broker, args.listen)
            ),
        ]
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for task in pumps:
            task.cancel()
        for w in (client_writer, broker_writer):
            w.close()

    server = await asyncio.start_server(handle, "127.0.0.1", args.listen)
    print(f"proxy 127.0.0.1:{args.listen} -> 127.0.0.1:{args.broker}", flush=True)
    async with server:
        await server.serve_forever()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--broker", type=int, required=True)
    parser.add_argument("--out", required=True)
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
