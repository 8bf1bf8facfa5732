"""The model providers a spec may name: what each needs to run here, and where it calls.

This is the one place that knows them (the spec parser, the fail-fast check, `swarm doctor` and
the spawner's environment all read it). Nothing here imports an SDK: a check costs a few
environment reads, never the ~1 s of an SDK import.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from urllib.parse import urlsplit

from msgspec import Struct

from swarm import settings
from swarm.core.trust.secrets import bare_url
from swarm.errors import MissingExtraError

DEFAULT_OLLAMA = "http://127.0.0.1:11434"
PROBE_SECONDS = 1.0  # doctor's connect to Ollama: a local server answers in microseconds


class Provider(Struct, frozen=True):
    name: str
    needs: str  # the credentials to set, as a refusal names them
    found: Callable[[], str | None]  # the name of the credential that is set (never its value)
    endpoint: Callable[[], str]
    place: Callable[[], str | None] = lambda: None  # what else is missing (a region), or None
    module: str | None = None  # a module of the optional extra the provider's client needs
    extra: str | None = None
    # What only `swarm doctor` checks, beyond the environment: a network call (never at spawn).
    answers: Callable[[], str | None] | None = None

    def problem(self) -> str | None:
        """Why a model of this provider cannot run here (what to set), or None."""
        if self.module and self.extra and not installed(self.module):
            return str(MissingExtraError(f"the {self.name} provider", self.extra))
        if self.found() is None:
            return f"{self.name} needs credentials: set {self.needs}"
        return self.place()


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it. find_spec("google.auth") imports
    `google` first, and raises when there is no `google` at all."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def ollama_base_url() -> str:
    """`$OLLAMA_HOST` as Ollama itself reads it (a bare `host[:port]` is fine) + `/v1`."""
    host = settings.ollama_host() or DEFAULT_OLLAMA
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)
    netloc = parts.netloc if parts.port else f"{parts.netloc}:11434"
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{netloc}{path if path.endswith('/v1') else path + '/v1'}"


def _ollama_answers() -> str | None:
    """None when something listens at Ollama's address, else what to do."""
    import socket  # doctor only

    parts = urlsplit(ollama_base_url())
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 11434),
                                      timeout=PROBE_SECONDS):
            return None
    except OSError:  # refused, unreachable, or a name that does not resolve
        root = _shown(ollama_base_url()).removesuffix("/v1")
        return f"nothing answers at {root} (start `ollama serve`, or set OLLAMA_HOST)"


def _bedrock_place() -> str | None:
    return None if settings.aws_region() else "bedrock needs a region: set AWS_REGION"


def _vertex_place() -> str | None:
    if not settings.vertex_region():
        return "vertex needs a region: set CLOUD_ML_REGION (e.g. us-east5 or global)"
    if not settings.vertex_project():
        return "vertex needs a project: set ANTHROPIC_VERTEX_PROJECT_ID"
    return None


def _bedrock_endpoint() -> str:
    region = settings.aws_region() or "REGION"
    return settings.bedrock_base_url() or f"https://bedrock-runtime.{region}.amazonaws.com"


def _vertex_endpoint() -> str:
    region = settings.vertex_region() or "REGION"
    default = ("https://aiplatform.googleapis.com/v1" if region == "global"
               else f"https://{region}-aiplatform.googleapis.com/v1")
    return settings.vertex_base_url() or default


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("anthropic", "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway)",
             lambda: ("ANTHROPIC_API_KEY" if settings.api_key() else
                      "ANTHROPIC_AUTH_TOKEN" if settings.anthropic_credentials() else None),
             lambda: settings.anthropic_base_url() or "https://api.anthropic.com"),
    Provider("bedrock", "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or"
             " AWS_BEARER_TOKEN_BEDROCK", settings.bedrock_credentials, _bedrock_endpoint,
             _bedrock_place, module="botocore", extra="bedrock"),
    Provider("vertex", "GOOGLE_APPLICATION_CREDENTIALS (or run `gcloud auth"
             " application-default login`)", settings.vertex_credentials, _vertex_endpoint,
             _vertex_place, module="google.auth", extra="vertex"),
    Provider("openai", "OPENAI_API_KEY",
             lambda: "OPENAI_API_KEY" if settings.openai_api_key() else None,
             lambda: settings.openai_base_url() or "https://api.openai.com/v1"),
    Provider("ollama", "nothing (no key)", lambda: "no key needed", ollama_base_url,
             answers=_ollama_answers),
)}

# What a teammate's process inherits from the spawner for its provider (beside ANTHROPIC_* and
# SWARM_*, which pass by prefix): the variables above, and the SDKs' own config files' names.
PASS_VARIABLES = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OLLAMA_HOST",
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE", "CLOUD_ML_REGION", "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
)


def describe() -> list[dict[str, str | bool | None]]:
    """Each provider for `swarm doctor`: whether it can run here, which credential is set (its
    name only), what is missing, and its endpoint."""
    rows: list[dict[str, str | bool | None]] = []
    for provider in PROVIDERS.values():
        problem = provider.problem() or (provider.answers() if provider.answers else None)
        rows.append({"provider": provider.name, "ready": problem is None,
                     "credentials": provider.found(), "problem": problem,
                     "endpoint": _shown(provider.endpoint())})
    return rows


def _shown(url: str) -> str:
    """An endpoint as doctor shows it: no userinfo, no query (core.trust.secrets, the one home of
    redaction)."""
    return bare_url(url)
