"""URLs of the assistant dashboard, included under a prefix such as `assistants/`."""

from django.urls import path, re_path

from . import lore, pages, views

app_name = "ai_assistant"

urlpatterns = [
    path("", views.assistant_list, name="list"),
    # the game's lore book: game-wide, beside the list (`lore.py`)
    path("lore/", lore.lore_list, name="lore"),
    re_path(r"^lore/(?P<entry_id>[Ll][0-9]{1,9})/$", lore.lore_entry, name="lore_entry"),
    re_path(r"^lore/(?P<entry_id>[Ll][0-9]{1,9})/remove/$", lore.lore_remove, name="lore_remove"),
    path("<int:dbid>/", views.assistant_detail, name="detail"),
    path("<int:dbid>/conversation/", pages.conversation, name="conversation"),
    path("<int:dbid>/memory/", pages.memory, name="memory"),
    path("<int:dbid>/context/", pages.context, name="context"),
    path("<int:dbid>/sleep/", pages.sleep, name="sleep"),
    path("<int:dbid>/settings/", pages.settings_page, name="settings"),
    path("<int:dbid>/confirm/", pages.confirm, name="confirm"),
    path("<int:dbid>/person/", views.assistant_person, name="person"),
    path("<int:dbid>/action/", views.assistant_action, name="action"),
    # anything else under the dashboard is its own 404 page, not the game's (see
    # views.dashboard_view); it adds a missing final slash to a real address, as Django would
    re_path(r"^(?P<rest>.+)$", views.not_found, name="not_found"),
]
