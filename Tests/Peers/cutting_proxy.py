#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that cuts every response at a random offset: for the resumed-download tests.

Each connection from the client is forwarded to 127.0.0.1:UPSTREAM. Bytes from the client go through untouched;
bytes back from the upstream are forwarded until the connection's cut, drawn from SplitMix64(SEED) in connection
order, uniformly between --min and --max bytes (heads included); then the connection ends one of three ways,
also drawn: a reset (SO_LINGER 0), a plain close (a FIN before Content-Length is reached), or a stall (nothing more
is sent, the connection stays open until the client gives up: its idle timeout). With --stall-every 0 no stalls.

Prints "PORT n" when it listens. Appends one line per connection to --log when it ends:
"conn <i> cut <offset> how <reset|close|stall|none> forwarded <bytes>". Exits when its standard input closes.
"""
import argparse
import socket
import struct
import sys
import threading

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--min", type=int, required=True)
    parser.add_argument("--max", type=int, required=True)
    parser.add_argument("--stall-every", type=int, default=0, help="1 in N cuts is a stall (0: none)")
    parser.add_argument("--cuts", type=int, default=-1, help="cut only the first N connections (-1: all)")
    parser.add_argument("--log", required=True)
    args = parser.parse_args()

    random = SplitMix64(args.seed)
    lock = threading.Lock()
    counter = [0]

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("PORT %d" % listener.getsockname()[1], flush=True)

    def log(line):
        with lock:
            with open(args.log, "a") as f:
                f.write(line + "\n")

    def serve(client):
        with lock:
            index = counter[0]
            counter[0] += 1
            cutting = args.cuts < 0 or index < args.cuts
            cut = args.min + random.next() % (args.max - args.min + 1)
            draw = random.next()
        if not cutting:
            how = "none"
        elif args.stall_every > 0 and draw % args.stall_every == 0:
            how = "stall"
        else:
            how = "reset" if (draw >> 8) % 2 == 0 else "close"
        try:
            upstream = socket.create_connection(("127.0.0.1", args.upstream))
        except OSError:
            client.close()
            return
        done = threading.Event()

        def upward():
            try:
                while not done.is_set():
                    data = client.recv(65536)
                    if not data:
                        break
                    upstream.sendall(data)
            except OSError:
                pass
            done.set()
            try:
                upstream.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        threading.Thread(target=upward, daemon=True).start()
        forwarded = 0
        try:
            while True:
                data = upstream.recv(65536)
                if not data:
                    break
                if how != "none" and forwarded + len(data) >= cut:
                    client.sendall(data[: cut - forwarded])
                    forwarded = cut
                    break
                client.sendall(data)
                forwarded += len(data)
        except OSError:
            pass
        upstream.close()
        if how == "stall" and forwarded == cut:
            # Nothing more: the client's idle timeout ends it (its side closes, and recv returns).
            try:
                while client.recv(65536):
                    pass
            except OSError:
                pass
        elif how == "reset" and forwarded == cut:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        log("conn %d cut %d how %s forwarded %d" % (index, cut, how, forwarded))

    def accept():
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
