"""Whether the official Python SDKs (openai, anthropic) retry the gateway's answers.

Run by test/embedded/retry-hints.test.ts with the python of scripts/ensure-python-sdks.sh:
GATEWAY_URL is the gateway's origin, API_KEY an API key of a funded account, IMAGE_KEY and
ORDER_KEY Idempotency-Keys already used (for an image of prompt "a red square", an order of
1000). Each SDK keeps its default of two retries; the requests it sends are counted by its HTTP
client's hook. Prints one JSON object: per case, the typed error raised, its status, its code
and how many requests the SDK made.
"""

import json
import os

import anthropic
import openai

BASE = os.environ["GATEWAY_URL"]
KEY = os.environ["API_KEY"]
BEARER = {"Authorization": f"Bearer {KEY}"}


def counted(sdk):
    """The SDK's client, with its default retries, whose HTTP client counts what it sends."""
    sent = []
    http = sdk.DefaultHttpxClient(event_hooks={"request": [lambda request: sent.append(request.url.path)]})
    return sdk.OpenAI(base_url=BASE, api_key=KEY, http_client=http) if sdk is openai else sdk.Anthropic(base_url=BASE, api_key=KEY, http_client=http), sent


def outcome(sdk, path, body, headers):
    client, sent = counted(sdk)
    try:
        client.post(path, cast_to=object, body=body, options={"headers": {**BEARER, **headers}})
    except (openai.APIStatusError, anthropic.APIStatusError) as error:
        # OpenAI's SDK keeps the body's error object, Anthropic's the whole body.
        body = error.body if isinstance(error.body, dict) else {}
        code = body.get("error", body).get("code")
        return {"error": type(error).__name__, "status": error.status_code, "code": code, "requests": len(sent)}
    raise AssertionError(f"{path}: the call did not fail")


IMAGE = "/api/open/v1/models/sim-image/images/generations"
print(json.dumps({
    # 409 idempotency_key_reused: the same key with another payload, which no retry changes.
    "image_reused": outcome(openai, IMAGE, {"prompt": "a blue circle", "response_format": "b64_json"}, {"Idempotency-Key": os.environ["IMAGE_KEY"]}),
    "order_reused": outcome(anthropic, "/api/consumer/orders", {"amount": 2000}, {"Idempotency-Key": os.environ["ORDER_KEY"]}),
    # 502 provider_error of a chat: the provider failed this time, a retry may succeed.
    "chat_failed": outcome(openai, "/api/open/v1/models/sim-chat/chat", {"messages": [{"role": "user", "content": "hello"}], "max_tokens": 2}, {"X-Sim-Directive": "fail-before-output"}),
}))
