"""
The model calls a brain hands out as blocking work (`Brain.call_model`, `structured`, `embed`,
`semantic_search`, `rerank`, `discover_context_window`): each a blocking form, run in a worker
thread, and its coroutine twin, run on the model call queue's event loop (`driver.ModelWork`).
They do HTTP only and touch no memory: what they need is passed to them.

"""

import asyncio

from ..llm.chat import NOT_CONFIGURED, LLMError
from ..llm.embedding_roles import QUERY, aembed_texts, embed_texts
from ..llm.structured import acomplete_structured, complete_structured
from ..llm.tool_choice import acomplete_with_tools, complete_with_tools
from ..memory.vectors import nearest

# the blocking work and its coroutine twin; a client without coroutines (a game's own
# `ChatClient`, the test doubles) has its blocking call run in a thread of the event loop's


def complete(client_factory, request):
    return complete_with_tools(client_factory(), request)


async def acomplete(client_factory, request):
    return await acomplete_with_tools(client_factory(), request)


def structured(client_factory, request, output_model, mode="auto"):
    return complete_structured(client_factory(), request, output_model, mode)


async def astructured(client_factory, request, output_model, mode="auto"):
    client = client_factory()
    if hasattr(client, "acomplete"):
        return await acomplete_structured(client, request, output_model, mode)
    return await asyncio.to_thread(complete_structured, client, request, output_model, mode)


def embed(client_factory, model, texts, role, roles):
    return embed_texts(client_factory(), model, texts, role, roles)


async def aembed(client_factory, model, texts, role, roles):
    return await aembed_texts(client_factory(), model, texts, role, roles)


def embed_and_search(client_factory, model, query, snapshot, roles):
    (vector,) = embed_texts(client_factory(), model, [query], QUERY, roles)
    return nearest(snapshot, vector)


async def aembed_and_search(client_factory, model, query, snapshot, roles):
    (vector,) = await aembed_texts(client_factory(), model, [query], QUERY, roles)
    return nearest(snapshot, vector)


def rerank(client_factory, model, query, documents):
    client = client_factory()
    if not callable(getattr(client, "rerank", None)):
        raise LLMError(
            NOT_CONFIGURED, "This model client cannot rerank; set recall_rerank_model to None."
        )
    return client.rerank(model, query, documents)


async def arerank(client_factory, model, query, documents):
    # the SDK's generic POST, made in a worker thread of the queue's loop (one call a recall)
    return await asyncio.to_thread(rerank, client_factory, model, query, documents)


def served_window(client_factory, model):
    lister = getattr(client_factory(), "served_window", None)
    return lister(model) if callable(lister) else None


async def aserved_window(client_factory, model):
    # one GET, once per chat model: in a worker thread of the queue's loop
    return await asyncio.to_thread(served_window, client_factory, model)
