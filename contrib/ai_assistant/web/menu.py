"""
The dashboard's entry in the game website's menu, for builders only.

The dashboard's own pages always show it: they are drawn with the game's templates, with this
package's `website/_menu.html` first, which extends the game's menu (Evennia's, or the game's own
copy) and adds one link. For the rest of the website to show it too, a game adds one line to
`server/conf/settings.py`, after `from evennia.settings_default import *`:

    from ai_assistant.web.menu import add_menu_link; add_menu_link(TEMPLATES)

Importing this module imports nothing of Django or Evennia: it is safe in a settings file.

"""

from pathlib import Path

TEMPLATE_DIR = str(Path(__file__).parent / "templates")
CONTEXT_PROCESSOR = f"{__name__}.menu_link"
# the Evennia permission that opens the dashboard
PERMISSION = "Builder"


def add_menu_link(templates: list) -> list:
    """Show the dashboard's link in the menu of every page of the game's website.

    Puts this package's templates first in the Django template engine's folders (its
    `website/_menu.html` extends the game's own) and adds the context processor that gives
    builders the link. Calling it twice changes nothing more.

    Args:
        templates (list): The game's `TEMPLATES` setting (changed in place).

    Returns:
        list: The same list.

    """
    engine = templates[0]
    dirs = engine.setdefault("DIRS", [])
    if TEMPLATE_DIR not in dirs:
        dirs.insert(0, TEMPLATE_DIR)
    processors = engine.setdefault("OPTIONS", {}).setdefault("context_processors", [])
    if CONTEXT_PROCESSOR not in processors:
        processors.append(CONTEXT_PROCESSOR)
    return templates


def is_builder(user) -> bool:
    """Whether a web user may see the dashboard.

    Args:
        user (Account or AnonymousUser): The request's user.

    Returns:
        bool: True for a logged-in account with the Builder permission or higher.

    """
    if not getattr(user, "is_authenticated", False):
        return False
    if getattr(user, "is_superuser", False):
        return True
    check = getattr(user, "check_permstring", None)
    return bool(check and check(PERMISSION))


def menu_link(request) -> dict:
    """The context processor: the dashboard's address for a builder (none when the game's URLs
    do not include the dashboard), and the account's characters as stored.

    The menu lists an account's characters; Evennia's `account.characters` cleans the stored
    list each time it is read, a database write at every page, so the menu here reads it as
    it is stored (a deleted character shows as nothing).

    Args:
        request (HttpRequest): The request.

    Returns:
        dict: `ai_assistant_characters` for a logged-in account, `ai_assistant_menu_url` for
            builders.

    """
    from django.urls import NoReverseMatch, reverse

    user = getattr(request, "user", None)
    if not getattr(user, "is_authenticated", False):
        return {}
    attributes = getattr(user, "attributes", None)
    stored = attributes.get("_playable_characters") if attributes is not None else None
    context = {"ai_assistant_characters": [one for one in stored or [] if one]}
    if is_builder(user):
        try:
            context["ai_assistant_menu_url"] = reverse("ai_assistant:list")
        except NoReverseMatch:
            pass
    return context
