"""
How an embeddings model is told a query from a document.

Most open embedding models are trained with the two marked apart, and embed a question badly
when it is marked as a document, or not marked at all: e5 wants "query: " and "passage: " before
the text, nomic-embed "search_query: " and "search_document: ", bge and mxbai an instruction
before a query only. Hosted APIs (Cohere, Voyage, NVIDIA's) take an `input_type` field instead.
`roles_for` picks the marks of the configured model's family from its name, and a game owner
sets them outright with `embedding_query_prefix`, `embedding_document_prefix`,
`embedding_query_input_type` and `embedding_document_input_type`.

When the configured name says nothing (local servers such as llama.cpp's answer whatever name
they are asked for), the name of the model the endpoint serves is tried instead
(`family_of_served`): the only one it lists, or the one listed under the configured name.

Some servers mark the roles themselves, from an `input_type` of "query" or "passage" (NVIDIA's,
and small e5 servers that put "query: " before any text sent without one): a text marked by us
would be marked twice. So when the marks are the family's (nothing configured), one short text
is embedded once as a query and once as a passage, with `input_type` and no prefix; when the
two vectors differ, the server marks by `input_type`, and that is what is sent from then on.
A server that refuses the field or ignores it gets the family's prefixes.

"""

import asyncio
import math
import re
from dataclasses import dataclass

from ..conf import AssistantConfig
from .chat import LLMError

QUERY = "query"
DOCUMENT = "document"
# what a server that marks by `input_type` is told (NVIDIA's words; e5 servers take them too)
SERVER_QUERY_TYPE = "query"
SERVER_DOCUMENT_TYPE = "passage"
# the text embedded twice to learn whether the server marks the roles itself
PROBE_TEXT = "Where is the key to the library?"
# two vectors at least this alike are one: the server ignored `input_type`
SAME_VECTOR = 0.9999
# the most characters of one text sent to be embedded, its mark included: small embedding
# models read 512 tokens, and some servers refuse a longer input instead of cutting it
MAX_EMBED_CHARS = 2000

# an instruction some families put before a query (and nothing before a document)
_SEARCH_INSTRUCTION = "Represent this sentence for searching relevant passages: "
_INSTRUCT_QUERY = "Instruct: Given a question, retrieve passages that answer it\nQuery: "

# (words in the model's name, query prefix, document prefix): the first family whose words
# are all in the lower-cased name wins, so the more specific come first. From the models'
# cards: e5 and multilingual-e5, e5-mistral and the e5 instruct models, Qwen3-Embedding,
# snowflake-arctic-embed (v1 and v2), nomic-embed-text, EmbeddingGemma, bge (en v1.5; bge-m3
# needs none), mxbai-embed-large
FAMILIES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("e5", "mistral"), _INSTRUCT_QUERY, ""),
    (("e5", "instruct"), _INSTRUCT_QUERY, ""),
    (("qwen", "embedding"), _INSTRUCT_QUERY, ""),
    (("arctic-embed", "v2"), "query: ", ""),
    (("arctic-embed",), _SEARCH_INSTRUCTION, ""),
    (("e5",), "query: ", "passage: "),
    (("nomic-embed",), "search_query: ", "search_document: "),
    (("embeddinggemma",), "task: search result | query: ", "title: none | text: "),
    (("bge-m3",), "", ""),
    (("bge",), _SEARCH_INSTRUCTION, ""),
    (("mxbai-embed",), _SEARCH_INSTRUCTION, ""),
)


@dataclass(frozen=True)
class EmbeddingRoles:
    """The marks of a query and of a document for one embeddings model.

    Attributes:
        query_prefix (str): Put before a query's text.
        document_prefix (str): Put before a document's text.
        query_input_type (str or None): Sent as `input_type` with queries.
        document_input_type (str or None): Sent as `input_type` with documents.
        family (str or None): The family the prefixes came from, if any (for `/status`).

    """

    query_prefix: str = ""
    document_prefix: str = ""
    query_input_type: str | None = None
    document_input_type: str | None = None
    family: str | None = None

    def texts(self, texts: list[str], role: str) -> list[str]:
        """`texts` marked for their role.

        Args:
            texts (list): The texts.
            role (str): `QUERY` or `DOCUMENT`.

        Returns:
            list: The texts with the role's prefix.

        """
        prefix = self.query_prefix if role == QUERY else self.document_prefix
        return [prefix + text for text in texts] if prefix else list(texts)

    def input_type(self, role: str) -> str | None:
        """The `input_type` to send for `role`, or None to send none.

        Args:
            role (str): `QUERY` or `DOCUMENT`.

        Returns:
            str or None: The value.

        """
        return self.query_input_type if role == QUERY else self.document_input_type


def family_of(name: str | None) -> tuple[str, str, str] | None:
    """The family a model name belongs to: (its name words, query prefix, document prefix).

    Args:
        name (str or None): A model's name ("intfloat/multilingual-e5-small", a GGUF's path).

    Returns:
        tuple or None: The family's words joined by "+", its query and document prefixes;
            None when no family matches.

    """
    lowered = (name or "").lower()
    tokens = set(re.split(r"[^a-z0-9]+", lowered))
    for words, query, document in FAMILIES:
        # a short word is a whole token ("e5" in "multilingual-e5-small", not in "foe5"), a
        # longer one anywhere ("qwen" in "qwen3")
        if all(word in tokens if len(word) <= 3 else word in lowered for word in words):
            return "+".join(words), query, document
    return None


def family_of_served(configured: str | None, served: list[str]) -> tuple[str, str, str] | None:
    """The family of the model an endpoint serves, when its name tells one.

    Args:
        configured (str or None): The configured model name.
        served (list): The model names the endpoint lists (`/v1/models`).

    Returns:
        tuple or None: As `family_of`: of the model listed under the configured name, else of
            the only model listed; None otherwise.

    """
    names = list(served)
    if configured in names:
        return family_of(configured)
    return family_of(names[0]) if len(names) == 1 else None


def roles_for(
    config: AssistantConfig,
    model: str | None,
    served_family: tuple | None = None,
    server_marks: bool = False,
) -> EmbeddingRoles:
    """The marks for `model`: the configuration's where it sets them, else its family's.

    Args:
        config (AssistantConfig): The assistant's configuration.
        model (str or None): The embeddings model's configured name.
        served_family (tuple, optional): The family of the model the endpoint serves
            (`family_of_served`), used when the configured name tells none.
        server_marks (bool, optional): The server marks the roles itself by `input_type`
            (`probe_server_marks`): the family's marks are sent as `input_type`, not as text.

    Returns:
        EmbeddingRoles: The marks.

    """
    family = family_of(model) or served_family
    name, query, document = family if family else (None, "", "")
    if server_marks and family:
        return EmbeddingRoles(
            query_input_type=SERVER_QUERY_TYPE,
            document_input_type=SERVER_DOCUMENT_TYPE,
            family=f"{name} (marked by the server)",
        )
    if config.embedding_query_prefix is not None:
        query = config.embedding_query_prefix
    if config.embedding_document_prefix is not None:
        document = config.embedding_document_prefix
    return EmbeddingRoles(
        query_prefix=query,
        document_prefix=document,
        query_input_type=config.embedding_query_input_type,
        document_input_type=config.embedding_document_input_type,
        family=name,
    )


def marks_left_to_family(config: AssistantConfig) -> bool:
    """Whether the configuration leaves every mark to the model's family (no prefix and no
    `input_type` set).

    Args:
        config (AssistantConfig): The assistant's configuration.

    Returns:
        bool: True when nothing is configured.

    """
    return (
        config.embedding_query_prefix is None
        and config.embedding_document_prefix is None
        and not config.embedding_query_input_type
        and not config.embedding_document_input_type
    )


def probe_server_marks(client, model: str) -> bool:
    """Whether the server marks queries and documents itself, from `input_type` (two short
    embedding calls; a worker thread's).

    Args:
        client (ChatClient): The model client.
        model (str): The embeddings model.

    Returns:
        bool: True when `PROBE_TEXT` embedded as a query and as a passage differ; False when
            they are one, or the server refuses `input_type` (or the client cannot send it).

    """
    try:
        (query,) = client.embed(model, [PROBE_TEXT], input_type=SERVER_QUERY_TYPE)
        (passage,) = client.embed(model, [PROBE_TEXT], input_type=SERVER_DOCUMENT_TYPE)
    except (LLMError, TypeError, ValueError):
        return False  # TypeError: a game's client without `input_type`
    dot = sum(a * b for a, b in zip(query, passage))
    norms = math.sqrt(sum(a * a for a in query)) * math.sqrt(sum(b * b for b in passage))
    return bool(norms) and dot / norms < SAME_VECTOR


def needs_served_family(config: AssistantConfig, model: str | None) -> bool:
    """Whether the endpoint's model list could tell the marks the configuration leaves open.

    Args:
        config (AssistantConfig): The assistant's configuration.
        model (str or None): The embeddings model's configured name.

    Returns:
        bool: True when the name tells no family and a prefix is left to the family.

    """
    open_prefix = config.embedding_query_prefix is None or config.embedding_document_prefix is None
    return bool(model) and family_of(model) is None and open_prefix


class RolesResolver:
    """The marks for one assistant's embeddings model, worked out once.

    From the configuration and the model's name at once; when the name tells no family, the
    endpoint's model list is asked, and when the marks are left to the family, whether the
    server marks by `input_type` (`probe_server_marks`): once, in the worker thread of the
    first embedding call (a failure of either is no failure of the call: the marks stay the
    configuration's and the family's).

    Args:
        config (AssistantConfig): The assistant's configuration.
        model (str or None): The embeddings model's configured name.

    """

    def __init__(self, config: AssistantConfig, model: str | None):
        self.config = config
        self.model = model
        self._served: tuple | None = None
        self._server_marks = False
        self._asked = not bool(model) or not (
            needs_served_family(config, model) or marks_left_to_family(config)
        )

    def roles(self, client=None) -> EmbeddingRoles:
        """The marks; given a client (in a worker thread), the endpoint's list is asked first
        if it may tell what the name does not.

        Args:
            client (ChatClient, optional): The model client.

        Returns:
            EmbeddingRoles: The marks.

        """
        if not self._asked and client is not None:
            self._asked = True
            lister = getattr(client, "served_models", None)
            if callable(lister) and needs_served_family(self.config, self.model):
                try:
                    self._served = family_of_served(self.model, list(lister()))
                except LLMError:
                    pass  # an endpoint without a model list: the name's marks (none) stand
            family = family_of(self.model) or self._served
            if family and (family[1] or family[2]) and marks_left_to_family(self.config):
                self._server_marks = probe_server_marks(client, self.model)
        return roles_for(self.config, self.model, self._served, self._server_marks)


def embed_texts(client, model: str, texts: list[str], role: str, resolver: RolesResolver):
    """Embed `texts` for `role` with a client, marked as the model needs (a worker thread's
    call).

    Args:
        client (ChatClient): The model client.
        model (str): The embeddings model.
        texts (list): The texts.
        role (str): `QUERY` or `DOCUMENT`.
        resolver (RolesResolver): The assistant's marks.

    Returns:
        list: One vector per text.

    Raises:
        LLMError: If the call fails.

    """
    marked, extra = _marked(resolver.roles(client), texts, role)
    return client.embed(model, marked, **extra)


def _marked(roles: EmbeddingRoles, texts: list[str], role: str) -> tuple[list[str], dict]:
    """The texts as sent (marked, clipped) and the call's `input_type`, if one is sent."""
    marked = [text[:MAX_EMBED_CHARS] for text in roles.texts(texts, role)]
    input_type = roles.input_type(role)
    return marked, ({"input_type": input_type} if input_type else {})


async def aembed_texts(client, model: str, texts: list[str], role: str, resolver: RolesResolver):
    """`embed_texts` as a coroutine (the model call queue's event loop).

    Args:
        client (ChatClient): The model client.
        model (str): The embeddings model.
        texts (list): The texts.
        role (str): `QUERY` or `DOCUMENT`.
        resolver (RolesResolver): The assistant's marks.

    Returns:
        list: One vector per text.

    Raises:
        LLMError: If the call fails.

    """
    if not resolver._asked:
        await asyncio.to_thread(resolver.roles, client)
    if not hasattr(client, "aembed"):
        return await asyncio.to_thread(embed_texts, client, model, texts, role, resolver)
    marked, extra = _marked(resolver.roles(), texts, role)
    return await client.aembed(model, marked, **extra)
