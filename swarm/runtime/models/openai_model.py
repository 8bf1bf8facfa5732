"""`openai:` and `ollama:` models: Chat Completions with function tools, through the official
`openai` SDK (imported only when such a model is built).

The rest of swarm speaks the Anthropic Messages shape; this module maps it to Chat Completions
and back: the system prompt is a `system` message, `tool_use` blocks are `tool_calls` and each
`tool_result` a `tool` message, images become a short text note. Text is streamed (with
`stream_options.include_usage`, so the last chunk carries the usage). Retries on 408/409/429/5xx
are the SDK's (`max_retries` from SWARM_API_MAX_RETRIES; it honours `retry-after`). An
interrupt raises inside the stream's read; leaving the `with` closes the connection.

`OPENAI_BASE_URL` points `openai:` at any compatible server (vLLM, LiteLLM, OpenRouter...);
`ollama:` calls `$OLLAMA_HOST/v1` with a placeholder key.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

from swarm import settings
from swarm.big_import import big_import
from swarm.core.records.state import Usage
from swarm.core.trust.secrets import redact
from swarm.errors import ModelAPIError
from swarm.runtime.models.base import Block, ModelReply, ModelRequest
from swarm.runtime.models.effort import mapped
from swarm.runtime.models.prices import price_usage
from swarm.runtime.models.providers import ollama_base_url
from swarm.runtime.turn.budget import CHARS_PER_TOKEN, estimate_output

LABELS = {"openai": "OpenAI", "ollama": "Ollama"}
IMAGE_NOTE = "[an image was here: this model is sent text only]"
STOP_REASONS = {"tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens"}


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _texts(blocks: list[Block]) -> list[str]:
    out = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and str(block.get("text", "")).strip():
            out.append(str(block["text"]))
        elif kind in ("image", "document"):
            out.append(IMAGE_NOTE)
    return out


def _result_text(block: Block) -> str:
    content = block.get("content")
    text = content if isinstance(content, str) else "\n\n".join(_texts(content or []))
    if block.get("is_error") and not text.lower().startswith("error"):
        text = f"Error: {text}"
    return text or "(no output)"


def to_chat_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic-shaped conversation -> Chat Completions `messages`."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        content = message.get("content")
        blocks: list[Block] = ([{"type": "text", "text": content}] if isinstance(content, str)
                               else list(content or []))
        if message["role"] == "assistant":
            calls = [{"id": b["id"], "type": "function", "function": {
                "name": b["name"], "arguments": json.dumps(b.get("input", {}))}}
                for b in blocks if b.get("type") == "tool_use"]
            text = "\n\n".join(_texts(blocks))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            elif not text:
                entry["content"] = "(no content)"
            out.append(entry)
            continue
        # A tool message must follow the assistant's tool_calls at once: results first, then
        # whatever else the user message carried (arrivals during the turn).
        out += [{"role": "tool", "tool_call_id": b["tool_use_id"], "content": _result_text(b)}
                for b in blocks if b.get("type") == "tool_result"]
        texts = _texts([b for b in blocks if b.get("type") != "tool_result"])
        if texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def build_params(model_id: str, request: ModelRequest, provider: str = "openai") -> dict[str, Any]:
    """The `chat.completions.create` arguments (without the streaming ones)."""
    params: dict[str, Any] = {"model": model_id,
                              "messages": to_chat_messages(request.system, request.messages)}
    if request.tools:
        params["tools"] = [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""),
            "parameters": t.get("input_schema") or {"type": "object", "properties": {}}}}
            for t in request.tools]
    # Reasoning tokens count toward the cap: raised by the effort's budget.
    reasoning = mapped(provider, model_id, request.effort)
    if reasoning is not None:
        params.update(reasoning.params)
    # OpenAI's newer models take only max_completion_tokens; Ollama knows max_tokens.
    params["max_tokens" if provider == "ollama" else "max_completion_tokens"] = (
        request.max_tokens + (reasoning.extra_tokens if reasoning else 0))
    return params


def usage_of(model_id: str, provider: str, raw: Any) -> Usage:
    """Chat Completions usage -> ours: cached prompt tokens are cache reads, not input."""
    if raw is None:
        return price_usage(provider, model_id, Usage())
    details = getattr(raw, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
    prompt = raw.prompt_tokens or 0
    output = raw.completion_tokens or 0
    done = getattr(raw, "completion_tokens_details", None)  # reasoning: part of the completion
    reasoning = min((getattr(done, "reasoning_tokens", None) or 0) if done else 0, output)
    usage = Usage(input_tokens=max(prompt - cached, 0), output_tokens=output - reasoning,
                  thinking_tokens=reasoning, cache_read_input_tokens=cached)
    return price_usage(provider, model_id, usage)


def _tool_use(call_id: str | None, name: str, arguments: str) -> Block:
    try:
        args: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        args = arguments  # not JSON: the loop answers "tool input must be an object"
    return {"type": "tool_use", "id": call_id or f"call_{uuid.uuid4().hex[:24]}", "name": name,
            "input": args}


def _reply(text: str, uses: list[Block], finish: str | None, usage: Usage) -> ModelReply:
    content: list[Block] = [{"type": "text", "text": text}] if text else []
    content += uses
    stop = "tool_use" if uses else STOP_REASONS.get(finish or "", "end_turn")
    return ModelReply(content or [{"type": "text", "text": ""}], stop, usage)


class OpenAIModel:
    """`Model` over Chat Completions; `provider` is `openai` or `ollama`."""

    def __init__(self, model: str, *, provider: str = "openai", max_retries: int | None = None,
                 client: Any = None) -> None:
        with big_import():
            import openai

        self._openai = openai
        self.provider = provider
        self.name = model.strip()
        self.spec = f"{provider}:{self.name}"
        self.max_retries = settings.api_max_retries() if max_retries is None else max_retries
        if client is None:
            try:
                if provider == "ollama":
                    client = openai.OpenAI(api_key="ollama", base_url=ollama_base_url(),
                                           max_retries=self.max_retries)
                else:  # the SDK reads OPENAI_API_KEY and OPENAI_BASE_URL itself
                    client = openai.OpenAI(max_retries=self.max_retries)
            except openai.OpenAIError as exc:
                raise ModelAPIError(f"cannot set up the {LABELS[provider]} client:"
                                    f" {redact(_one_line(str(exc)))}") from None
        self._client = client

    def sibling(self, model: str) -> OpenAIModel:
        """Another model of the same provider over this one's HTTP connection pool."""
        return OpenAIModel(model, provider=self.provider, max_retries=self.max_retries,
                           client=self._client)

    @property
    def base_url(self) -> str:
        return str(self._client.base_url)

    def complete(self, request: ModelRequest) -> ModelReply:
        params = build_params(self.name, request, self.provider)
        try:
            if request.on_text is None:
                return self.parse_completion(self._post(params))
            return self._stream(params, request.on_text, request.on_usage)
        except self._openai.OpenAIError as exc:
            raise self._final_error(exc) from None

    def _post(self, params: dict[str, Any]) -> Any:
        """`chat.completions.create` without its argument transform: that walks every message
        and tool against the SDK's TypedDicts (~80% of a call's client time for a teammate's
        60 KB request) and changes nothing in plain JSON like ours. The client's own `post`
        keeps the rest: auth, retries, errors, response and stream parsing."""
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        return self._client.post("/chat/completions", body=params, cast_to=ChatCompletion,
                                 stream=bool(params.get("stream")),
                                 stream_cls=self._openai.Stream[ChatCompletionChunk])

    def parse_completion(self, completion: Any) -> ModelReply:
        """A whole (non-streamed) ChatCompletion -> ModelReply."""
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice is not None else None
        uses = [_tool_use(c.id, c.function.name, c.function.arguments or "")
                for c in (getattr(message, "tool_calls", None) or [])
                if getattr(c, "function", None) is not None]
        return _reply(getattr(message, "content", None) or "", uses,
                      choice.finish_reason if choice is not None else None,
                      usage_of(self.name, self.provider, completion.usage))

    def _stream(self, params: dict[str, Any], on_text: Callable[[str], None],
                on_usage: Callable[[Usage], str | None] | None = None) -> ModelReply:
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Any = None
        # Usage comes only with the last chunk: till then the input is the request's size and
        # the output what has streamed, both over four (swarm.runtime.turn.budget).
        prompt = len(json.dumps(params["messages"])) // CHARS_PER_TOKEN
        streamed = 0
        stream = self._post({**params, "stream": True, "stream_options": {"include_usage": True}})
        with stream:
            for chunk in stream:
                if on_usage is not None and usage is None:
                    so_far = price_usage(self.provider, self.name, Usage(
                        input_tokens=prompt, output_tokens=estimate_output(0, streamed)))
                    stop = on_usage(so_far)
                    if stop:  # cut off: leaving the `with` closes the connection
                        return ModelReply([{"type": "text", "text": "".join(text)}],
                                          "budget_exhausted", so_far, stopped=stop)
                usage = chunk.usage or usage
                for choice in chunk.choices[:1]:
                    delta = choice.delta
                    if delta.content:
                        streamed += len(delta.content)
                        text.append(delta.content)
                        on_text(delta.content)
                    for call in delta.tool_calls or []:
                        slot = calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                        slot["id"] = call.id or slot["id"]
                        if call.function is not None:
                            slot["name"] = call.function.name or slot["name"]
                            slot["arguments"] += call.function.arguments or ""
                            streamed += len(call.function.arguments or "")
                    finish = choice.finish_reason or finish
        uses = [_tool_use(c["id"], c["name"], c["arguments"]) for _, c in sorted(calls.items())]
        return _reply("".join(text), uses, finish, usage_of(self.name, self.provider, usage))

    def _final_error(self, exc: Exception) -> ModelAPIError:
        """The one line a failed call ends in, redacted (see AnthropicModel._final_error)."""
        return ModelAPIError(redact(str(self._explain(exc))))

    def _explain(self, exc: Exception) -> ModelAPIError:
        o = self._openai
        label = LABELS[self.provider]
        if isinstance(exc, o.APIStatusError):
            head = f"{label} API {exc.status_code}"
            body = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else None
            said = body.get("message") if isinstance(body, dict) else None
            detail = _one_line(said or exc.message)
            if isinstance(exc, o.AuthenticationError):
                return ModelAPIError(f"{head}: {detail} (check OPENAI_API_KEY)")
            if isinstance(exc, o.NotFoundError):
                pull = f"; `ollama pull {self.name}`" if self.provider == "ollama" else ""
                return ModelAPIError(f"{head}: {detail} (model {self.name}{pull})")
            retried = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            after = f" after {self.max_retries + 1} attempts" if retried and self.max_retries else ""
            return ModelAPIError(f"{head}{after}: {detail}")
        if isinstance(exc, o.APIConnectionError):
            what = "timed out" if isinstance(exc, o.APITimeoutError) else "unreachable"
            hint = " (is `ollama serve` running? OLLAMA_HOST)" if self.provider == "ollama" else ""
            return ModelAPIError(f"{label} API at {self.base_url} {what} after"
                                 f" {self.max_retries + 1} attempts{hint}")
        return ModelAPIError(f"{label} request failed: {type(exc).__name__}: {_one_line(str(exc))}")
