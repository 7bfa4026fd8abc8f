#!/usr/bin/env python3
"""An independent HTTP/1.1 peer for Courier's tests: Python's own http.server, on loopback only.

Prints "PORT <n>" once listening, serves until its standard input closes (so it dies with the test process).
Routes (all bodies are deterministic so tests can check them byte for byte):
  GET  /bytes/N              N bytes of pattern (byte i = i % 251), Content-Length
  GET  /chunked/N?size=K     the same N bytes, chunked in K-byte chunks (default 1000), with a trailer
  GET  /gzip/N, /deflate/N   the pattern, compressed, Content-Encoding set
  GET  /status/CODE          that status, body "status CODE" (no body for 204/304)
  GET  /redirect/N           302 to /redirect/N-1; /redirect/0 answers 200 "done"
  ANY  /redirect-to?status=S&location=L   S with Location L
  ANY  /echo                 JSON {method, path, headers: [[name, value]...], body_len, body_sha256}
  GET  /close                200 with Connection: close
  GET  /slow/N?delay_ms=D    N bytes, one 1-byte write every D ms
  GET  /connections          JSON {"accepted": number of connections accepted so far}
  GET  /cut/N                a head announcing N bytes, half of them, then the connection closes
  GET  /retry-after/S        429 with Retry-After: S
  GET  /sni                  the server name the last TLS handshake carried, or "none"
  GET  /close-silently       200 "bye", kept alive as far as the client can tell, then the connection closes
  GET  /close-delimited/N?notify=0|1   N pattern bytes with no length, ended by closing the connection; over
                             TLS with close_notify only when notify=1 (else a bare TCP close: a truncation)

With --tls-chain FILE --tls-key FILE it serves HTTPS (Python's ssl module over the system's OpenSSL), the chain
sent as the file lists it; --tls-min/--tls-max (1.0, 1.1, 1.2, 1.3) bound the versions and --tls-tickets N sets
the TLS 1.3 session tickets sent per connection (0: no resumption). With --tls-client-ca FILE it requires a
client certificate issued by a CA in FILE (mutual TLS), and GET /client-cert answers the common name of the
certificate the connection's client presented. With --unix PATH it listens on a Unix domain socket at PATH
instead (and prints "PORT 0"), with TLS too when --tls-chain is given.
"""
import gzip, hashlib, json, socketserver, sys, threading, time, zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

ACCEPTED = 0
LAST_SNI = [None]  # the server name the last TLS handshake carried (None: no SNI)
LOCK = threading.Lock()


def pattern(n):
    return bytes(i % 251 for i in range(n))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Head and body go out in separate writes; with Nagle on, the body waits for the client's delayed ACK
    # (about 40 ms a request on Linux).
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def setup(self):
        global ACCEPTED
        with LOCK:
            ACCEPTED += 1
        super().setup()

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if status not in (204, 304) and self.command != "HEAD":
            self.send_header("Content-Length", str(len(body)))
        elif status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status not in (204, 304) and self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(n) if n else b""

    def handle_any(self):
        url = urlparse(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        parts = [p for p in url.path.split("/") if p]
        body = self.read_body()
        head = parts[0] if parts else ""
        arg = parts[1] if len(parts) > 1 else ""
        if head == "bytes":
            return self.send_body(200, pattern(int(arg)))
        if head == "chunked":
            data, size = pattern(int(arg)), int(q.get("size", "1000"))
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Trailer", "X-Checksum")
            self.end_headers()
            for i in range(0, len(data), size):
                chunk = data[i:i + size]
                self.wfile.write(b"%x;ext=1\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\nX-Checksum: %s\r\n\r\n" % hashlib.sha256(data).hexdigest().encode())
            return
        if head in ("gzip", "deflate"):
            data = pattern(int(arg))
            enc = gzip.compress(data) if head == "gzip" else zlib.compress(data)
            return self.send_body(200, enc, [("Content-Encoding", head)])
        if head == "status":
            code = int(arg)
            return self.send_body(code, b"" if code in (204, 304) else b"status %d" % code)
        if head == "redirect":
            n = int(arg)
            if n <= 0:
                return self.send_body(200, b"done")
            return self.send_body(302, b"", [("Location", "/redirect/%d" % (n - 1))])
        if head == "redirect-to":
            return self.send_body(int(q.get("status", "302")), b"", [("Location", q.get("location", "/"))])
        if head == "echo":
            doc = {
                "method": self.command,
                "path": self.path,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body_len": len(body),
                "body_sha256": hashlib.sha256(body).hexdigest(),
            }
            return self.send_body(200, json.dumps(doc).encode(), [("Content-Type", "application/json")])
        if head == "close":
            self.close_connection = True
            return self.send_body(200, b"closing", [("Connection", "close")])
        if head == "slow":
            n, delay = int(arg), int(q.get("delay_ms", "10")) / 1000.0
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            for b in pattern(n):
                self.wfile.write(bytes([b]))
                self.wfile.flush()
                time.sleep(delay)
            return
        if head == "connections":
            with LOCK:
                n = ACCEPTED
            return self.send_body(200, json.dumps({"accepted": n}).encode())
        if head == "close-delimited":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(pattern(int(arg)))
            self.wfile.flush()
            self.close_connection = True
            if hasattr(self.connection, "unwrap"):
                if q.get("notify") == "1":
                    try:
                        self.connection.unwrap()
                    except OSError:
                        pass
                else:
                    import socket
                    raw = socket.socket(fileno=self.connection.detach())
                    raw.shutdown(socket.SHUT_RDWR)
                    raw.close()
            return
        if head == "cut":
            n = int(arg)
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            self.wfile.write(pattern(n)[: n // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if head == "client-cert":
            subject = dict(item[0] for item in self.connection.getpeercert().get("subject", ()))
            return self.send_body(200, subject.get("commonName", "none").encode())
        if head == "sni":
            return self.send_body(200, (LAST_SNI[0] or "none").encode())
        if head == "close-silently":
            self.close_connection = True  # a kept-alive response, then a close the client is not told about
            return self.send_body(200, b"bye")
        if head == "retry-after":
            return self.send_body(429, b"slow down", [("Retry-After", arg)])
        return self.send_body(404, b"no route")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients that hang up early (timeouts, cancellation tests) are expected here


def option(flag, default=None):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


class TLSServer(Server):
    """Handshakes in the handler's thread (not in the accept loop), so a client that fails one stalls nothing."""
    context = None

    def get_request(self):
        sock, address = super().get_request()
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def finish_request(self, request, client_address):
        try:
            request.do_handshake()
        except OSError:
            return  # failed handshakes are what many TLS tests are about
        super().finish_request(request, client_address)


def tls_context():
    import ssl
    import warnings
    # TLS 1.0 and 1.1 are deprecated, which is the point: the tests need a server that speaks only them.
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    versions = {"1.0": ssl.TLSVersion.TLSv1, "1.1": ssl.TLSVersion.TLSv1_1, "1.2": ssl.TLSVersion.TLSv1_2,
                "1.3": ssl.TLSVersion.TLSv1_3}
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(option("--tls-chain"), option("--tls-key"))
    low, high = option("--tls-min"), option("--tls-max")
    if low in ("1.0", "1.1") or high in ("1.0", "1.1"):
        context.set_ciphers("DEFAULT:@SECLEVEL=0")  # OpenSSL 3 refuses TLS 1.0/1.1 at its default level
    if low:
        context.minimum_version = versions[low]
    if high:
        context.maximum_version = versions[high]
    context.num_tickets = int(option("--tls-tickets", "2"))
    context.set_alpn_protocols(["http/1.1"])
    if option("--tls-client-ca"):
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(option("--tls-client-ca"))

    def record_sni(ssl_object, server_name, ctx):
        LAST_SNI[0] = server_name
    context.sni_callback = record_sni
    return context


def main():
    family_v6 = "--ipv6" in sys.argv
    if family_v6:
        import socket
        Server.address_family = socket.AF_INET6
        TLSServer.address_family = socket.AF_INET6
    server_class = Server
    if "--tls-chain" in sys.argv:
        TLSServer.context = tls_context()
        server_class = TLSServer
    if "--unix" in sys.argv:
        class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True
            request_queue_size = 128

            def handle_error(self, request, client_address):
                pass
        Handler.disable_nagle_algorithm = False  # TCP_NODELAY fails on a Unix domain socket
        if TLSServer.context is not None:
            class UnixTLSServer(UnixServer):
                def get_request(self):
                    sock, address = UnixServer.get_request(self)
                    return TLSServer.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

                def finish_request(self, request, client_address):
                    try:
                        request.do_handshake()
                    except OSError:
                        return
                    UnixServer.finish_request(self, request, client_address)
            server = UnixTLSServer(option("--unix"), Handler)
        else:
            server = UnixServer(option("--unix"), Handler)
        print("PORT 0", flush=True)
    else:
        server = server_class(("::1" if family_v6 else "127.0.0.1", 0), Handler)
        print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the test process closes our stdin or dies
    server.shutdown()


if __name__ == "__main__":
    main()
