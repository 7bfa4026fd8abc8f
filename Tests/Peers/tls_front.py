#!/usr/bin/env python3
"""A TLS front for the proxy tests: accepts TLS on 127.0.0.1 (the test PKI's chain given as --chain/--key) and
pipes each connection's plaintext to 127.0.0.1:TARGET (a squid), so squid is reached as an https:// proxy.

Prints "PORT <n>" once listening; exits when its standard input closes (it dies with the test process).
"""
import socket, ssl, sys, threading


def option(flag):
    return sys.argv[sys.argv.index(flag) + 1]


def pipe(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for s in (source, sink):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(listener, context, target):
    while True:
        try:
            raw, _ = listener.accept()
        except OSError:
            return
        def handle(raw=raw):
            try:
                tls = context.wrap_socket(raw, server_side=True)
            except (OSError, ssl.SSLError):
                raw.close()
                return
            upstream = socket.create_connection(("127.0.0.1", target))
            threading.Thread(target=pipe, args=(tls, upstream), daemon=True).start()
            pipe(upstream, tls)
        threading.Thread(target=handle, daemon=True).start()


def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(option("--chain"), option("--key"))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, context, int(option("--target"))), daemon=True).start()
    print("PORT %d" % listener.getsockname()[1], flush=True)
    sys.stdin.read()


main()
