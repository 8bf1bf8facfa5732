"""Local fakes of Claude on AWS Bedrock and Google Vertex, real enough for the anthropic SDK's
own `AnthropicBedrock` / `AnthropicVertex` clients (pointed here by ANTHROPIC_BEDROCK_BASE_URL
and ANTHROPIC_VERTEX_BASE_URL), with the same scripting as the fake Messages API.

Bedrock: `POST /model/{id}/invoke` (JSON) and `/invoke-with-response-stream` (the Messages
stream's events, each in an AWS event-stream frame as `{"bytes": base64(event)}`), requests
signed with SigV4 or an `AWS_BEARER_TOKEN_BEDROCK` bearer. Vertex:
`POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{id}:rawPredict` or
`:streamRawPredict` (SSE), with a Google access token minted by this server's `/token` (the
`token_uri` of the service-account file `service_account_file` writes).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.support.fake_anthropic import ApiHandler, FakeAnthropic, sse_body, sse_events

BEDROCK_PATH = re.compile(r"^/model/(?P<model>[^/]+)/(?P<kind>invoke|invoke-with-response-stream)$")
VERTEX_PATH = re.compile(r"^/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers"
                         r"/anthropic/models/(?P<model>[^:/]+):(?P<kind>rawPredict|streamRawPredict)$")
ACCESS_TOKEN = "ya29.fake-access-token"


def event_frame(payload: bytes, headers: dict[str, str]) -> bytes:
    """One AWS event-stream message: prelude (lengths + CRC), string headers, payload, CRC."""
    encoded = b"".join(bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v))
                       + v.encode() for k, v in headers.items())
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


def bedrock_stream(message: dict[str, Any]) -> bytes:
    return b"".join(event_frame(
        json.dumps({"bytes": base64.b64encode(json.dumps(e).encode()).decode()}).encode(),
        {":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"})
        for e in sse_events(message))


class FakeClouds(FakeAnthropic):
    """Bedrock's and Vertex's Claude endpoints on one local server (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._server.RequestHandlerClass = _make_handler(self)  # the same server, its own routes
        self.tokens_minted = 0

    def _serves(self, path: str) -> bool:
        path = path.split("?")[0]
        return bool(BEDROCK_PATH.match(path) or VERTEX_PATH.match(path))

    def messages_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests if self._serves(r.path)]

    def service_account_file(self, directory: Path) -> Path:
        """A Google service-account key whose token_uri is this server's `/token`."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        path = directory / "service-account.json"
        path.write_text(json.dumps({
            "type": "service_account", "project_id": "fake-project", "private_key_id": "k1",
            "private_key": pem, "client_email": "swarm-test@fake-project.iam.gserviceaccount.com",
            "client_id": "1", "token_uri": f"{self.base_url}/token"}))
        return path


def _make_handler(api: FakeClouds) -> type[BaseHTTPRequestHandler]:
    class Handler(ApiHandler):
        def do_POST(self) -> None:
            request = self.received()
            if self.path == "/token":  # Google's OAuth token endpoint, for the service account
                with api._lock:
                    api.tokens_minted += 1
                self._send(200, "application/json", json.dumps({
                    "access_token": ACCESS_TOKEN, "expires_in": 3600,
                    "token_type": "Bearer"}).encode())
                return
            reply = api._answer(request)
            path = self.path.split("?")[0]
            bedrock, vertex = BEDROCK_PATH.match(path), VERTEX_PATH.match(path)
            found = bedrock or vertex
            streamed = reply.status == 200 and found is not None and found["kind"] in (
                "invoke-with-response-stream", "streamRawPredict")
            if not streamed:
                self._send(reply.status, "application/json", json.dumps(reply.body).encode(),
                           reply.headers)
            elif bedrock:
                self._send(200, "application/vnd.amazon.eventstream", bedrock_stream(reply.body))
            else:
                self._send(200, "text/event-stream", sse_body(reply.body))

        def _send(self, status: int, kind: str, data: bytes,
                  extra: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler

