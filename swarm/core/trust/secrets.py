"""Secrets: which environment variables hold one (by name, and by value), and the one redaction
of any text that may quote one (errors, state, idle notes, reports, logs, `swarm doctor`).

By name: every model provider's credential variables (`PROVIDER_SECRETS`), every agent CLI's
(the registry of teammate kinds: `CLAUDE_CODE_OAUTH_TOKEN`, ...), a provider-prefixed variable
whose name says key/token/secret/password/auth/header, and `SWARM_SECRET_VARS`.
By value: a URL with a password in its userinfo (`scheme://user:pw@host`), a URL whose query
has a key/token/password/secret/signature parameter (`?key=...`), or a header line
(`X-Api-Key: ...`). The store URL (`SWARM_STORE=redis://:pw@host`) is such a value.

Those variables are kept from Bash commands (core.trust.child_env) and from command lines and a tmux
server's environment (backends.shellenv). What an agent prints goes through `redact`: each URL's
password and secret query values become `***`, and so does every fragment of a secret variable's
value (raw and percent-decoded) wherever it appears, e.g. a server's error that echoes the path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

from swarm import settings
from swarm.core.kinds import model_api_secrets

MASK = "***"
# Each provider's credentials (core cannot import runtime.models.providers: the provider table
# names these from here).
PROVIDER_SECRETS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS"),
    "bedrock": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                "AWS_BEARER_TOKEN_BEDROCK"),
    "vertex": ("GOOGLE_APPLICATION_CREDENTIALS",),
    "openai": ("OPENAI_API_KEY",),
    "ollama": (),
}
SECRET_VARS = tuple(name for names in PROVIDER_SECRETS.values() for name in names)
_PROVIDER_PREFIX = re.compile(r"(ANTHROPIC|OPENAI|AWS|GOOGLE|GEMINI|CLOUD_ML|OLLAMA)_")
_SECRET_WORD = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|HEADER", re.IGNORECASE)
# A query parameter whose name ends so (`key`, `api_key`, `access_token`, `X-Amz-Signature`).
_SECRET_PARAM = re.compile(r"(key|token|secret|pass|password|passwd|pwd|auth|sig|signature"
                           r"|credentials?)\Z", re.IGNORECASE)
# scheme://[userinfo@]rest, up to whitespace, a quote or a bracket that closes prose.
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*:/{1,3})(?P<rest>[^\s'\"<>()]*)")
_USERINFO = re.compile(r"\A(?P<user>[^/?#@:]*):(?P<password>[^/?#]*)@")
_QUERY_PAIR = re.compile(r"(?P<sep>[?&;])(?P<name>[^=&;#\s]+)=(?P<value>[^&;#\s]*)")
_HEADER = re.compile(r"^\s*(?P<name>[A-Za-z0-9-]+)\s*:\s*(?P<value>\S.*?)\s*$", re.MULTILINE)
_MIN_FRAGMENT = 6  # shorter values are not replaced in free text (they would garble it)


def _password(url_rest: str) -> str | None:
    match = _USERINFO.match(url_rest)
    return match["password"] if match and match["password"] else None


def _url_fragments(value: str) -> list[str]:
    """The secret parts of every URL in `value`: userinfo passwords, secret query values."""
    found: list[str] = []
    for url in _URL.finditer(value):
        rest = url["rest"]
        password = _password(rest)
        if password:
            found.append(password)
        found += [pair["value"] for pair in _QUERY_PAIR.finditer(rest)
                  if pair["value"] and _SECRET_PARAM.search(pair["name"])]
    return found


def _header_fragments(value: str) -> list[str]:
    return [m["value"] for m in _HEADER.finditer(value)
            if m["name"].lower() == "authorization" or _SECRET_WORD.search(m["name"])]


def secret_by_name(name: str) -> bool:
    return (name in SECRET_VARS or name in model_api_secrets() or name in settings.secret_vars()
            or bool(_PROVIDER_PREFIX.match(name) and _SECRET_WORD.search(name)))


def secret_by_value(value: str) -> bool:
    """The value holds a credential: a URL's password or secret query value, a header line."""
    return bool(_url_fragments(value) or _header_fragments(value))


def is_secret(name: str, value: str) -> bool:
    return secret_by_name(name) or secret_by_value(value)


def without_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` minus every variable that holds a secret (by name or by value)."""
    return {k: v for k, v in environ.items() if not is_secret(k, v)}


def redact_url(url: str) -> str:
    """One URL (or any text) with each URL's password and secret query values as `***`; the
    scheme, user, host, port, path and other parameters stay, so the message still says where."""
    def one(match: re.Match[str]) -> str:
        rest = _USERINFO.sub(lambda m: f"{m['user']}:{MASK}@" if m["password"] else m[0],
                             match["rest"], count=1)
        rest = _QUERY_PAIR.sub(
            lambda p: (f"{p['sep']}{p['name']}={MASK}" if p["value"]
                       and _SECRET_PARAM.search(p["name"]) else p[0]), rest)
        return match["scheme"] + rest

    return _URL.sub(one, url)


def bare_url(url: str) -> str:
    """An endpoint as `swarm doctor` shows it: scheme, host and path, no userinfo or query."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else redact_url(url)


def _fragments(environ: Mapping[str, str]) -> list[str]:
    """Every piece of a secret variable's value that must never be shown, longest first."""
    found: set[str] = set()
    for name, value in environ.items():
        parts = _url_fragments(value) + _header_fragments(value)
        if secret_by_name(name):
            parts.append(value)
        for part in parts:
            found.update((part, unquote(part)))
    return sorted((f for f in found if len(f) >= _MIN_FRAGMENT), key=len, reverse=True)


def redact(text: str, environ: Mapping[str, str] | None = None,
           also: Iterable[str] = ()) -> str:
    """`text` as it may be shown or stored: URLs redacted, and every fragment of a secret in
    `environ` (default: this process's) or in `also` replaced by `***`."""
    if not text:
        return text
    out = redact_url(text)
    extra = [f for f in also if len(f) >= _MIN_FRAGMENT]
    for fragment in [*_fragments(os.environ if environ is None else environ), *extra]:
        if fragment in out:
            out = out.replace(fragment, MASK)
    return out
