"""The official Python SDKs (openai, anthropic) against the gateway's compatibility routes.

Run by test/contract/compat.suite.ts on both actor hosts, with the python of
scripts/ensure-python-sdks.sh: GATEWAY_URL is the gateway's origin, COMPAT_KEY an API key with
the compat scope on a funded account. Prints one JSON object of what the SDKs returned; the
suite checks it (and the account's charges). An SDK that fails to parse an answer raises here,
and the non-zero exit fails the test.
"""

import base64
import json
import os
import struct

import anthropic
import openai

BASE = os.environ["GATEWAY_URL"]
KEY = os.environ["COMPAT_KEY"]
HELLO = [{"role": "user", "content": "hello"}]


def status_of(call):
    """The HTTP status of the typed error a call raises, with its class name."""
    try:
        call()
    except (openai.APIStatusError, anthropic.APIStatusError) as error:
        return {"error": type(error).__name__, "status": error.status_code, "body": error.body}
    raise AssertionError("the call did not fail")


def openai_calls():
    client = openai.OpenAI(base_url=f"{BASE}/v1", api_key=KEY, max_retries=0)
    # n=None is sent as null, OpenAI's "not given": one completion.
    raw = client.chat.completions.with_raw_response.create(model="sim-chat", messages=HELLO, max_tokens=4, n=None)
    completion = raw.parse()
    stream = client.chat.completions.create(
        model="sim-chat", messages=HELLO, max_tokens=3, stream=True, stream_options={"include_usage": True}
    )
    text, usage = "", None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.usage:
            usage = chunk.usage.model_dump(exclude_none=True)
    stranger = openai.OpenAI(base_url=f"{BASE}/v1", api_key="sk-payg-unknown", max_retries=0)
    embedded = client.embeddings.with_raw_response.create(model="sim-embed", input=["hello", "world"])
    embeddings = embedded.parse()
    # Named encodings: float comes as numbers, base64 is handed over undecoded (float32, little-endian).
    floats = client.embeddings.create(model="sim-embed", input="a lighthouse", encoding_format="float", dimensions=8)
    packed = client.embeddings.create(model="sim-embed", input="a lighthouse", encoding_format="base64", dimensions=8)
    packed_bytes = base64.b64decode(packed.data[0].embedding)
    token_arrays = client.embeddings.with_raw_response.create(model="sim-embed", input=[[1, 2, 3], [4]])
    arrays = token_arrays.parse()
    return {
        "models": [model.id for model in client.models.list()],
        "model": client.models.retrieve("sim-chat").model_dump(exclude_none=True),
        "completion": {
            "content": completion.choices[0].message.content,
            "usage": completion.usage.model_dump(exclude_none=True),
            "charged": raw.headers.get("x-payg-charged"),
        },
        "stream": {"text": text, "usage": usage},
        "embeddings": {
            "count": len(embeddings.data),
            "dimensions": len(embeddings.data[0].embedding),
            "prompt_tokens": embeddings.usage.prompt_tokens,
            "charged": embedded.headers.get("x-payg-charged"),
        },
        "embedding_encodings": {
            "float": floats.data[0].embedding,
            "base64": list(struct.unpack(f"<{len(packed_bytes) // 4}f", packed_bytes)),
            "prompt_tokens": [floats.usage.prompt_tokens, packed.usage.prompt_tokens],
        },
        "token_arrays": {
            "count": len(arrays.data),
            "prompt_tokens": arrays.usage.prompt_tokens,
            "charged": token_arrays.headers.get("x-payg-charged"),
        },
        "not_found": status_of(lambda: client.models.retrieve("no-such-model")),
        "unauthenticated": status_of(lambda: stranger.models.list()),
    }


def anthropic_calls():
    client = anthropic.Anthropic(base_url=BASE, api_key=KEY, max_retries=0)
    raw = client.messages.with_raw_response.create(model="sim-chat", max_tokens=4, messages=HELLO)
    message = raw.parse()
    with client.messages.stream(model="sim-chat", max_tokens=3, messages=HELLO) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    return {
        "models": [model.id for model in client.models.list()],
        "message": {
            "text": message.content[0].text,
            "usage": message.usage.model_dump(exclude_none=True),
            # The SDK reads the request's id from request-id: the gateway's x-request-id.
            "request_id": message._request_id,
            "x_request_id": raw.headers.get("x-request-id"),
        },
        "stream": {"text": text, "stop_reason": final.stop_reason, "output_tokens": final.usage.output_tokens},
        "count_tokens": client.messages.count_tokens(model="tokenized-chat", messages=HELLO).input_tokens,
        "bad_request": status_of(lambda: client.messages.create(model="sim-chat", max_tokens=8193, messages=HELLO)),
        "not_eligible": status_of(lambda: client.messages.create(model="unpriced-chat", max_tokens=4, messages=HELLO)),
    }


print(json.dumps({"openai": openai_calls(), "anthropic": anthropic_calls()}))
