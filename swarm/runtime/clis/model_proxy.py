"""The model API of an agent CLI teammate, served on loopback by its own `swarm agent` process:
the CLI holds a per-teammate token in place of its credential, and the proxy, which alone
holds the real one, puts it back on the way to the API. A shell the CLI runs can read the CLI's
environment and files (the same user), never the credential: the token is worthless anywhere
but at this proxy, which serves this teammate's CLI and ends with it.

Which variables hold the credential, which one names the API's base URL and where the API is
otherwise come from the kind's entry in the registry (core.kinds `ModelApi`) and, for a CLI
that names them in its own config (Codex's providers), from that config. A request that does
not carry one of its tokens is refused (401) and never forwarded; what the CLI sends is
forwarded as it is, its token replaced by the credential in whichever header or query value
carries it, and the answer streams back as it comes (server-sent events included).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import secrets
import ssl
import threading
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from swarm.core.kinds import ConfiguredApi, TeammateKind, load
from swarm.core.trust.secrets import redact, without_secrets

TOKEN_PREFIX = "swarm-teammate-"  # a token says what it is where an error shows it
# Not forwarded either way: they describe one connection, not the request.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host",
                        "content-length"})
CONNECT_TIMEOUT = 30.0
CHUNK = 65536
# How often the serving thread looks for stop(): a teammate's exit waits up to this long for
# its proxy (socketserver's default, 0.5 s, was half a second at every stop).
STOP_POLL = 0.05


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_hex(24)


def header_lines(text: str) -> list[tuple[str, str]]:
    """`Name: value` lines (ANTHROPIC_CUSTOM_HEADERS), as the CLI would have sent them."""
    found = []
    for line in text.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip():
            found.append((name.strip(), value.strip()))
    return found


class ModelProxy:
    """One teammate's model API on 127.0.0.1 (an ephemeral port), forwarding to `upstream`.

    `credentials`: variable -> the real value the CLI would have read from it; each gets a
    token (`tokens`) the CLI reads from that variable instead. `extra`: header lines added to
    every forwarded request (values the CLI would have taken from a secret variable)."""

    def __init__(self, upstream: str, credentials: Mapping[str, str],
                 extra: list[tuple[str, str]] | None = None,
                 log: Callable[[str], None] = lambda line: None) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {upstream!r}")
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.path = parts.path.rstrip("/")
        self.tokens = {name: new_token() for name in credentials}
        self._real = {self.tokens[name]: value for name, value in credentials.items()}
        self.extra = list(extra or [])
        self.log = log
        self.forwarded = 0  # requests sent upstream
        self.refused = 0  # requests without a token of this teammate
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The base URL that stands for the upstream's (its path kept)."""
        assert self._server is not None, "the proxy is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.path}"

    def start(self) -> str:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(STOP_POLL,),
                         name="model-proxy", daemon=True).start()
        return self.url

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    # -- one request ---------------------------------------------------------------------------
    def swap(self, text: str) -> tuple[str, bool]:
        """`text` with each token of this teammate replaced by its credential; whether any was."""
        found = False
        for token, real in self._real.items():
            if token in text:
                text, found = text.replace(token, real), True
        return text, found

    def outgoing(self, path: str, headers: list[tuple[str, str]]
                 ) -> tuple[str, list[tuple[str, str]]] | None:
        """The upstream URL and headers of a request, its tokens swapped; None when it carries
        none (refused: the proxy serves this teammate's CLI only)."""
        url, carried = self.swap(self.origin + path)
        sent = []
        for name, value in headers:
            if name.lower() in HOP_BY_HOP:
                continue
            value, swapped = self.swap(value)
            carried = carried or swapped
            sent.append((name, value))
        if not carried:
            return None
        return url, [*sent, *self.extra]

    @contextlib.contextmanager
    def forward(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes
                ) -> Iterator[tuple[int, list[tuple[str, str]], Iterator[bytes]]]:
        """The upstream's answer: (status, headers, its body as it comes), streamed. The
        user's HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply, as they would for the CLI."""
        parts = urlsplit(url)
        connection = _connection(parts.scheme, parts.netloc)
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.putrequest(method, target, skip_accept_encoding=True)
            for name, value in headers:
                connection.putheader(name, value)
            connection.putheader("content-length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            self.forwarded += 1
            yield response.status, response.getheaders(), iter(
                lambda: response.read1(CHUNK), b"")
        finally:
            connection.close()


def _connection(scheme: str, netloc: str) -> http.client.HTTPConnection:
    """A connection to `netloc`, through the user's proxy for it if there is one."""
    host = netloc.rsplit("@", 1)[-1]
    through = None if urllib.request.proxy_bypass(host.rsplit(":", 1)[0]) else \
        urllib.request.getproxies().get(scheme)
    connection: http.client.HTTPConnection
    if scheme == "https":
        context = ssl.create_default_context()
        if through:
            hop = urlsplit(through)
            connection = http.client.HTTPSConnection(hop.hostname or "", hop.port or 80,
                                                     timeout=CONNECT_TIMEOUT, context=context)
            connection.set_tunnel(host)
        else:
            connection = http.client.HTTPSConnection(host, timeout=CONNECT_TIMEOUT,
                                                     context=context)
    elif through:
        hop = urlsplit(through)
        connection = http.client.HTTPConnection(hop.hostname or "", hop.port or 80,
                                                timeout=CONNECT_TIMEOUT)
    else:
        connection = http.client.HTTPConnection(host, timeout=CONNECT_TIMEOUT)
    connection.connect()
    if connection.sock is not None:
        connection.sock.settimeout(None)  # a model's answer may be long in coming
    return connection


def _handler(proxy: ModelProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _body(self) -> bytes:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                parts: list[bytes] = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline().strip():
                            pass  # trailers
                        return b"".join(parts)
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("content-length") or 0))

        def _error(self, status: int, message: str) -> None:
            data = json.dumps({"type": "error", "error": {"type": "swarm_proxy_error",
                                                          "message": message}}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            body = self._body()
            route = proxy.outgoing(self.path, list(self.headers.items()))
            if route is None:
                proxy.refused += 1
                self._error(401, "swarm: this model API serves one teammate's CLI, with its"
                                 " token")
                return
            try:
                with proxy.forward(self.command, *route, body) as (status, headers, chunks):
                    self._relay(status, headers, chunks)
            except Exception as exc:  # noqa: BLE001 - the CLI gets the failure as an answer
                proxy.log(redact(f"model proxy: {type(exc).__name__}: {exc}"))
                with contextlib.suppress(OSError):
                    self._error(502, f"swarm: the model API could not be reached:"
                                     f" {type(exc).__name__}")

        def _relay(self, status: int, headers: list[tuple[str, str]],
                   chunks: Iterator[bytes]) -> None:
            self.send_response(status)
            length = None
            for key, text in headers:
                if key.lower() == "content-length":
                    length = text
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, text)
            if length is not None:
                self.send_header("content-length", length)
            else:
                self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in chunks:
                if not chunk:
                    continue
                self.wfile.write(chunk if length is not None
                                 else b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()  # server-sent events go out as they come
            if length is None:
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the CLI's own requests: nothing of them in the agent's log

    return Handler


class ModelRoute:
    """What a CLI teammate's process gives its CLI: the environment (no secret of swarm's list
    in it, its credential as a token), and the proxy serving its model API (None: the CLI
    reaches it itself, by a login or a cloud provider swarm cannot stand in for)."""

    def __init__(self, env: dict[str, str], proxy: ModelProxy | None = None,
                 provider: str | None = None) -> None:
        self.env = env
        self.proxy = proxy
        self.provider = provider  # the user's configured provider the proxy stands for

    @property
    def url(self) -> str | None:
        return self.proxy.url if self.proxy is not None else None


def model_route(kind: TeammateKind, environ: Mapping[str, str],
                log: Callable[[str], None]) -> ModelRoute:
    """Start the proxy of `kind`'s model API when its credential is one swarm can stand in for
    (a variable the registry, or the CLI's own config, names), and the CLI's environment."""
    api = kind.model_api
    env = dict(environ)
    if api is None or any(env.get(v) for v in api.other_routes):
        return ModelRoute(env)
    configured = load(api.config)(environ) if api.config else ConfiguredApi()
    names = dict.fromkeys((*api.keys, *configured.variables))
    credentials = {n: env[n] for n in names if env.get(n)}
    upstream = configured.base_url or (env.get(api.base_url_var) if api.base_url_var else None) \
        or api.default_base_url
    routed = api.base_url_var is not None or configured.base_url is not None
    if not credentials or not upstream or not routed:
        return ModelRoute(env)
    extra = [line for var in api.header_vars for line in header_lines(env.get(var, ""))]
    proxy = ModelProxy(upstream, credentials, extra, log)
    proxy.start()
    # Nothing secret by name or value reaches the CLI (its commands inherit its environment).
    cli_env = {k: v for k, v in without_secrets(env).items() if k not in names}
    cli_env.update(proxy.tokens)
    if api.base_url_var and not configured.base_url:
        cli_env[api.base_url_var] = proxy.url
    for var in ("NO_PROXY", "no_proxy"):  # the proxy is on loopback: never through another
        cli_env[var] = ",".join(p for p in (cli_env.get(var), "127.0.0.1", "localhost") if p)
    log(f"its model API is served by this process at {proxy.url} (for {upstream}): its CLI"
        " holds a token, the credential stays here")
    return ModelRoute(cli_env, proxy, configured.provider)
