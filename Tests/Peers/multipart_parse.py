"""Parses a multipart/form-data body with Python's email package (independent of Courier's encoder).

usage: multipart_parse.py CONTENT-TYPE BODY-FILE
Prints one JSON object: {"parts": [{"name", "filename", "content_type", "size", "sha256"}], "defects": [...]}.
"""
import hashlib
import json
import sys
from email import policy
from email.parser import BytesParser

content_type, path = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    body = f.read()
message = BytesParser(policy=policy.HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
parts = []
for part in message.iter_parts():
    payload = part.get_payload(decode=True) or b""
    parts.append({
        "name": part.get_param("name", header="content-disposition"),
        "filename": part.get_filename(),
        "content_type": part.get_content_type() if part.get("content-type") else None,
        "size": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    })
defects = [type(d).__name__ for d in message.defects]
print(json.dumps({"parts": parts, "defects": defects, "multipart": message.is_multipart()}))
