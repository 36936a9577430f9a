"""
Benchmark 12: the builders' dashboard stays fast as memory and assistants grow.

Each page is requested through Django's test client as a logged-in builder, in the same process
as the game's (throwaway) database, and timed with its rendering: an assistant's page with a
small journal beside one with a large journal, the list of assistants with a few beside many,
and a filtered journal (which reads every entry, chunk by chunk).

"""

import statistics
import time

from bench.cases import Result, World, _journal_entries


def _median_ms(client, requests: list, rounds: int = 10) -> list[float]:
    """Median milliseconds of each (url, params) request, taken in turns so that whatever else
    the machine does falls on all of them alike."""
    for url, params in requests:
        client.get(url, params)  # the first request loads the caches
    samples = [[] for _ in requests]
    for _ in range(rounds):
        for index, (url, params) in enumerate(requests):
            started = time.perf_counter()
            response = client.get(url, params)
            samples[index].append(time.perf_counter() - started)
            assert response.status_code == 200, response.status_code
    return [statistics.median(one) * 1000 for one in samples]


def dashboard_pages(world: World, small=100, large=10000, few=25, many=100, rounds=10) -> Result:
    """12. Page time of an assistant with `large` vs `small` journal entries, and of the list
    with `many` vs `few` assistants (`few` a page: a full first page either way)."""
    from django.conf import settings
    from django.test import Client
    from django.urls import reverse
    from evennia.utils import create

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    settings.AI_ASSISTANT_DASHBOARD_PAGE_SIZE = few
    builder = create.create_account(
        "Overseer", None, "a-long-bench-passphrase-42", typeclass=settings.BASE_ACCOUNT_TYPECLASS
    )
    builder.permissions.add("Builder")
    client = Client()
    client.force_login(builder)

    pages = {}
    for label, size in (("small", small), ("large", large)):
        character, handler = world.assistant(name=f"Journal{size}")
        handler.brain.journal.entries.extend(_journal_entries(size))
        pages[label] = reverse("ai_assistant:detail", args=[character.id])
    small_ms, large_ms, last_page_ms, filtered_ms = _median_ms(
        client,
        [
            (pages["small"], {}),
            (pages["large"], {}),
            (pages["large"], {"page": 10**6}),
            (pages["large"], {"speaker": "Mira"}),
        ],
        rounds,
    )

    # the filter really read the whole journal: every entry from Mira is counted
    text = client.get(pages["large"], {"speaker": "Mira"}).content.decode()
    matches = sum(1 for entry in _journal_entries(large) if entry["heard_from"] == "Mira")
    assert f"({matches} in all)" in text, "the filtered journal did not count every match"

    list_url = reverse("ai_assistant:list")
    while world.count < few:
        world.assistant()
    (few_ms,) = _median_ms(client, [(list_url, {})], rounds)
    few_count = world.count
    while world.count < many:
        world.assistant()
    (many_ms,) = _median_ms(client, [(list_url, {})], rounds)
    ratio = large_ms / small_ms
    list_ratio = many_ms / few_ms
    return Result(
        f"dashboard page at {large} vs {small} entries, list at {many} vs {few_count}",
        f"{ratio:.2f}x, list {list_ratio:.2f}x",
        "<= 2x each",
        ratio <= 2.0 and list_ratio <= 2.0,
        [
            f"assistant page: {small_ms:.1f} ms at {small} entries, {large_ms:.1f} ms at {large}"
            f" (its last journal page {last_page_ms:.1f} ms)",
            f"journal filtered by speaker at {large} entries (reads them all, {matches} match): "
            f"{filtered_ms:.1f} ms",
            f"list of assistants ({few} a page): {few_ms:.1f} ms with {few_count}, "
            f"{many_ms:.1f} ms with {many}",
        ],
    )
