#!/usr/bin/env python3
"""The notes API of openapi.yaml, in memory, on 127.0.0.1 (an ephemeral port, printed on the first line).

    python3 server.py            # prints the port, then serves until killed

/v1/flaky answers 503 to every other request (the first included), /v1/status answers 503 always (maintenance),
so the example shows the policy's retries and a status the document does not list. Attachment uploads may come
with Content-Length or chunked; the server answers with the size and SHA-256 of what it received.
"""
import hashlib
import http.server
import json
import sys
import threading
import urllib.parse

lock = threading.Lock()
notes = []
attachments = {}
counters = {"flaky": 0, "status": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        parts = [p for p in url.path.split("/") if p]
        return parts, urllib.parse.parse_qs(url.query)

    def do_GET(self):
        parts, query = self.route()
        with lock:
            if parts == ["v1", "notes"]:
                tag = query.get("tag", [None])[0]
                return self.reply(200, [n for n in notes if tag is None or tag in n["tags"]])
            if len(parts) == 3 and parts[:2] == ["v1", "notes"] and parts[2].isdigit():
                found = [n for n in notes if n["id"] == int(parts[2])]
                if found:
                    return self.reply(200, found[0])
                return self.reply(404, {"message": "no note %s" % parts[2]})
            if len(parts) == 4 and parts[:2] == ["v1", "notes"] and parts[3] == "attachment":
                data = attachments.get(int(parts[2]))
                if data is None:
                    return self.reply(404, {"message": "no attachment"})
                return self.reply(200, data, "application/octet-stream")
            if parts == ["v1", "flaky"]:
                counters["flaky"] += 1
                if counters["flaky"] % 2 == 1:
                    return self.reply(503, {"message": "busy, try again"})
                return self.reply(200, {"requests": counters["flaky"]})
            if parts == ["v1", "status"]:
                counters["status"] += 1
                return self.reply(503, {"message": "down for maintenance"})
        self.reply(404, {"message": "no route"})

    def do_POST(self):
        parts, _ = self.route()
        body = self.read_body()
        if parts != ["v1", "notes"]:
            return self.reply(404, {"message": "no route"})
        new = json.loads(body)
        with lock:
            note = {"id": len(notes) + 1, "text": new["text"], "tags": new.get("tags", [])}
            notes.append(note)
        self.reply(201, note)

    def do_PUT(self):
        parts, _ = self.route()
        body = self.read_body()
        if len(parts) != 4 or parts[:2] != ["v1", "notes"] or parts[3] != "attachment":
            return self.reply(404, {"message": "no route"})
        with lock:
            attachments[int(parts[2])] = body
        self.reply(200, {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest()})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
