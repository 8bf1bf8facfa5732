"""The Messages API through the official `anthropic` SDK: Anthropic's own API, and Claude on
Bedrock and Vertex through the SDK's `AnthropicBedrock` / `AnthropicVertex` clients.

This module is the only place that imports `anthropic` (a ~1.5 s, ~40 MB import), and it does so
only when a model is built, so `shell` teammates stay light.

Retries are done here rather than by the SDK so the backoff is configurable
(`SWARM_API_RETRY_BASE` seconds, `SWARM_API_MAX_RETRIES`), honours `retry-after(-ms)` and
`x-should-retry`, and ends in one clear line instead of a traceback.
"""

from __future__ import annotations

import random
import time
from typing import Any

from swarm import settings
from swarm.big_import import big_import
from swarm.core.records.names import MODEL_ALIASES as ALIASES
from swarm.core.records.state import Usage
from swarm.core.trust.secrets import redact
from swarm.errors import ModelAPIError
from swarm.runtime.models.base import THINKING_BLOCKS, Block, ModelReply, ModelRequest
from swarm.runtime.models.effort import mapped
from swarm.runtime.models.prices import price_usage
from swarm.runtime.models.providers import PROVIDERS
from swarm.runtime.turn.budget import estimate_output

_EPHEMERAL = {"type": "ephemeral"}
_MAX_RETRY_DELAY = 30.0
# The client class of each provider that speaks the Messages API through this SDK.
CLIENTS = {"anthropic": "Anthropic", "bedrock": "AnthropicBedrock", "vertex": "AnthropicVertex"}
LABELS = {"anthropic": "Anthropic", "bedrock": "Bedrock", "vertex": "Vertex"}


def resolve_model_id(alias: str) -> str:
    """`sonnet`/`opus`/`haiku` -> the current id; any other id passes through unchanged (the
    spec was checked by models.spec, the one check)."""
    spec = alias.strip()
    return ALIASES.get(spec.lower(), spec)


def _model_id(spec: str, provider: str) -> str:
    """Aliases are Anthropic API ids: Bedrock and Vertex name their models their own way."""
    return resolve_model_id(spec) if provider == "anthropic" else spec.strip()


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def build_params(model_id: str, request: ModelRequest, provider: str = "anthropic"
                 ) -> dict[str, Any]:
    """The `messages.create` arguments, with cache breakpoints on the stable prefix.

    Breakpoints: the system prompt, the last tool (caches every tool before it), and the last
    block of the conversation, so each turn of the tool loop re-reads the history from cache;
    plus the request's `cache_marks` (a fork's parent prefix): four at most, as the API allows.
    The caller's request is never mutated.
    """
    thinking = mapped(provider, model_id, request.effort)
    if (thinking is not None and thinking.params["thinking"]["type"] == "enabled"
            and _open_cycle_without_thinking(request.messages)):
        thinking = None
    params: dict[str, Any] = {
        "model": model_id,
        # Thinking counts toward max_tokens: raised by its budget, the reply keeps its room.
        "max_tokens": request.max_tokens + (thinking.extra_tokens if thinking else 0),
        "messages": _cache_last_block(request.messages, request.cache_marks),
    }
    if thinking is not None:
        params.update(thinking.params)
    if request.system:  # the API rejects empty text blocks
        params["system"] = [
            {"type": "text", "text": request.system, "cache_control": dict(_EPHEMERAL)}
        ]
    if request.tools:
        tools = [dict(t) for t in request.tools]
        tools[-1]["cache_control"] = dict(_EPHEMERAL)
        params["tools"] = tools
    return params


def _open_cycle_without_thinking(messages: list[dict[str, Any]]) -> bool:
    """The request answers tool calls of an assistant message that has no thinking block (the
    effort was set on a respawn or resume mid-cycle): the API refuses budgeted thinking on for
    it, so that request goes without; the next input starts a cycle with it. (Adaptive thinking
    may skip a step's thinking by itself: its requests keep their fields, and so their cache.)"""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return False
    answers = any(isinstance(b, dict) and b.get("type") == "tool_result"
                  for b in messages[-1].get("content") or [])
    reply = messages[-2].get("content")
    first = reply[0] if isinstance(reply, list) and reply else None
    return answers and not (isinstance(first, dict) and first.get("type") in THINKING_BLOCKS)


def _cache_last_block(messages: list[dict[str, Any]], marks: tuple[int, ...] = ()
                      ) -> list[dict[str, Any]]:
    out = [_non_empty(m) for m in messages]
    for index in {len(out) - 1, *marks[-1:]}:  # one mark: with system, tools and last, four
        content = out[index].get("content") if 0 <= index < len(out) else None
        if not isinstance(content, list):
            continue
        # A thinking block takes no cache_control: the last other block of the message does.
        last = next((i for i in range(len(content) - 1, -1, -1) if isinstance(content[i], dict)
                     and content[i].get("type") not in THINKING_BLOCKS), None)
        if last is not None:
            content[last] = {**content[last], "cache_control": dict(_EPHEMERAL)}
    return out


def _non_empty(message: dict[str, Any]) -> dict[str, Any]:
    """A copy without the blank text blocks and empty messages the API rejects with a 400.

    The real API sometimes answers a tool result with no content at all; sent back verbatim,
    that empty assistant message would fail every later request of the conversation.
    """
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return dict(message)
    kept = [b for b in content
            if not (isinstance(b, dict) and b.get("type") == "text" and not str(b.get("text", "")).strip())]
    return {**message, "content": kept or [{"type": "text", "text": "(no content)"}]}


def reply_from_message(model_id: str, message: Any, provider: str = "anthropic",
                       stopped: str | None = None, streamed_chars: int = 0) -> ModelReply:
    """SDK `Message` -> `ModelReply` with plain-dict blocks and priced usage. `stopped`: the
    reply was cut off mid-stream (a cap): its text so far, no half-streamed tool call, and its
    output tokens estimated from `streamed_chars`."""
    blocks: list[Block] = []
    for block in message.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            blocks.append({"type": "text", "text": block.text})
        elif kind == "tool_use" and stopped is None:
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        # Kept whole: the API checks a thinking block's signature when it comes back. A reply
        # cut off mid-stream keeps none (a half-streamed one has no signature yet).
        elif kind == "thinking" and stopped is None:
            blocks.append({"type": "thinking", "thinking": block.thinking,
                           "signature": block.signature})
        elif kind == "redacted_thinking" and stopped is None:
            blocks.append({"type": "redacted_thinking", "data": block.data})
        # server-tool blocks are not part of swarm's conversation shape
    usage = _usage(model_id, provider, message.usage, streamed_chars)
    return ModelReply(content=blocks, stop_reason="budget_exhausted" if stopped
                      else message.stop_reason or "end_turn", usage=usage, stopped=stopped)


def _usage(model_id: str, provider: str, u: Any, streamed_chars: int = 0) -> Usage:
    output = estimate_output(u.output_tokens or 0, streamed_chars)
    details = getattr(u, "output_tokens_details", None)
    thinking = min(getattr(details, "thinking_tokens", 0) or 0, output)  # of output_tokens
    usage = Usage(
        input_tokens=u.input_tokens or 0,
        output_tokens=output - thinking,
        thinking_tokens=thinking,
        cache_creation_input_tokens=u.cache_creation_input_tokens or 0,
        cache_read_input_tokens=u.cache_read_input_tokens or 0,
    )
    return price_usage(provider, model_id, usage)


class AnthropicModel:
    """`Model` backed by the SDK's `messages.stream` when the request wants the text as it is
    generated (`on_text`), `messages.create` otherwise. `provider`: `anthropic`, or `bedrock` /
    `vertex` through the SDK's own clients for them (same Messages shape, prompt caching too)."""

    def __init__(self, spec: str = "sonnet", *, provider: str = "anthropic",
                 max_retries: int | None = None) -> None:
        with big_import():
            import anthropic

        self._anthropic = anthropic
        self.spec = spec
        self.provider = provider
        self.name = _model_id(spec, provider)
        self.max_retries = settings.api_max_retries() if max_retries is None else max_retries
        self.retry_base = settings.api_retry_base()
        label = LABELS[provider]
        try:
            # SDK retries off: ours below are configurable and report in one line.
            self._client = getattr(anthropic, CLIENTS[provider])(max_retries=0)
        except (anthropic.AnthropicError, TypeError, ValueError, RuntimeError) as exc:
            raise ModelAPIError(f"cannot set up the {label} client:"
                                f" {redact(_one_line(str(exc)))}") from None
        if provider == "anthropic" and (
            getattr(self._client, "api_key", None) is None
            and getattr(self._client, "auth_token", None) is None
            and getattr(self._client, "credentials", None) is None
        ):
            raise ModelAPIError(
                f"no Anthropic credentials for model {self.name}: set ANTHROPIC_API_KEY "
                "or ANTHROPIC_AUTH_TOKEN (or use --model shell)"
            )

    def sibling(self, spec: str) -> AnthropicModel:
        """Another model object (its own id and retries) over this one's HTTP connection pool:
        a new SDK client costs ~140 ms (its TLS context), a copy well under one. The SDK's
        HTTP client can be shared between threads (httpx2.Client's documented contract)."""
        twin = object.__new__(AnthropicModel)
        twin._anthropic = self._anthropic
        twin.spec = spec
        twin.provider = self.provider
        twin.name = _model_id(spec, self.provider)
        twin.max_retries = self.max_retries
        twin.retry_base = self.retry_base
        twin._client = self._client.with_options(max_retries=0)
        return twin

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def complete(self, request: ModelRequest) -> ModelReply:
        params = build_params(self.name, request, self.provider)
        attempt = 0
        wait = request.on_retry or (lambda problem, delay: time.sleep(delay))
        while True:
            try:
                # A thinking call streams: the SDK refuses a long call without it (max_tokens
                # raised by a thinking budget), and a stream's reader sees its usage as it goes.
                if request.on_text is None and "thinking" not in params:
                    return reply_from_message(self.name, self._client.messages.create(**params),
                                              self.provider)
                return self._stream(params, request)
            except Exception as exc:
                delay = self._retry_delay(exc, attempt)
                if delay is None:
                    raise self._final_error(exc, attempt + 1) from None
                problem = str(self._final_error(exc, attempt + 1))
            wait(problem, delay)  # outside the except: what it raises is its own
            attempt += 1

    def _stream(self, params: dict[str, Any], request: ModelRequest) -> ModelReply:
        """Text to `on_text` as it comes; after each event, the usage so far to `on_usage`
        (input tokens come at message_start, output tokens only at the end: estimated till
        then). A line from it cuts the reply off: leaving the `with` closes the connection."""
        on_text, on_usage = request.on_text, request.on_usage
        streamed = 0
        with self._client.messages.stream(**params) as stream:
            for event in stream:
                if event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        streamed += len(delta.text)
                        if on_text is not None:
                            on_text(delta.text)
                    elif delta.type == "input_json_delta":
                        streamed += len(delta.partial_json)
                    elif delta.type == "thinking_delta":  # spent, never shown
                        streamed += len(delta.thinking)
                if on_usage is not None and event.type != "message_stop":
                    snapshot = stream.current_message_snapshot
                    stop = on_usage(_usage(self.name, self.provider, snapshot.usage, streamed))
                    if stop:
                        return reply_from_message(self.name, snapshot, self.provider,
                                                  stopped=stop, streamed_chars=streamed)
            return reply_from_message(self.name, stream.get_final_message(), self.provider)

    def _retry_delay(self, exc: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying `exc`, or None when it must not be retried."""
        a = self._anthropic
        if attempt >= self.max_retries:
            return None
        if isinstance(exc, a.APIStatusError):
            headers = exc.response.headers
            should = headers.get("x-should-retry")
            if should == "false":
                return None
            status = exc.status_code
            if should != "true" and status not in (408, 409, 429) and status < 500:
                return None
            hinted = _retry_after(headers)
            if hinted is not None:
                return hinted
        elif not isinstance(exc, a.APIConnectionError):  # includes timeouts
            return None
        backoff = min(self.retry_base * 2**attempt, _MAX_RETRY_DELAY)
        return backoff * (1 - 0.25 * random.random())

    def _final_error(self, exc: Exception, attempts: int) -> Exception:
        """The one line a failed call ends in, redacted: neither the base URL's password or key
        nor a server's echo of them is ever shown (it lands in state, notes and logs)."""
        return ModelAPIError(redact(str(self._explain(exc, attempts))))

    def _explain(self, exc: Exception, attempts: int) -> Exception:
        a = self._anthropic
        label = LABELS[self.provider]
        if isinstance(exc, a.APIStatusError):
            kind = exc.type or "error"
            detail = _one_line(exc.api_message or exc.message)
            head = f"{label} API {exc.status_code} {kind}"
            if isinstance(exc, a.AuthenticationError):
                provider = PROVIDERS[self.provider]  # the credential that was sent
                return ModelAPIError(f"{head}: {detail} (check {provider.found() or provider.needs})")
            if isinstance(exc, a.PermissionDeniedError):
                return ModelAPIError(f"{head}: {detail} (the key may not allow {self.name})")
            if isinstance(exc, a.NotFoundError):
                return ModelAPIError(f"{head}: {detail} (model {self.name})")
            if attempts > 1:
                return ModelAPIError(f"{head} after {attempts} attempts: {detail}")
            return ModelAPIError(f"{head}: {detail}")
        if isinstance(exc, a.APIConnectionError):
            what = "timed out" if isinstance(exc, a.APITimeoutError) else "unreachable"
            return ModelAPIError(f"{label} API at {self.base_url} {what} after {attempts} attempts")
        if isinstance(exc, TypeError) and "authentication" in str(exc):
            return ModelAPIError(f"no {label} credentials for model {self.name}: set"
                                 f" {PROVIDERS[self.provider].needs}")
        return ModelAPIError(f"{label} request failed: {type(exc).__name__}: {_one_line(str(exc))}")


def _retry_after(headers: Any) -> float | None:
    """The server's requested wait (`retry-after-ms`, then `retry-after` seconds), if sane."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue
        if 0 <= value <= 60:
            return value
    return None
