"""
What differs between the Evennia versions the contrib supports, 5.x and 6.x, in one place.

Compared where the contrib touches Evennia (5.0.1 against 6.1.0):

- Python and Django: Evennia 6 needs Python 3.12 or newer and runs on Django 6.0; Evennia 5
  runs on Python 3.11 and newer with Django 5.2. The Django APIs the contrib uses (the ORM,
  `transaction`, `connections` and `router`, a model field's `pre_save` and
  `get_db_prep_save`, `override_settings` in the tests) are the same in both.
- Settings: Evennia 6 adds settings, and adds `evennia.server.is_typing` to the default
  `INPUT_FUNC_MODULES`. A game that writes such a list out in full drops what a newer Evennia
  adds; the demo game derives its lists from Evennia's defaults (`server/conf/settings.py`).
- The portal-server link: both versions resolve `AMP_CLIENT_PROTOCOL_CLASS` and then build
  their own class regardless (evennia#3980). `amp_client_protocol_honoured` asks the running
  Evennia, so `ai_assistant.transport` steps in only where it must.
- The ticker (`TICKER_HANDLER`), the monitors, Attribute storage and Evennia's test classes
  behave the same for the contrib in both; `AttributeProperty` only gained type parameters
  (the contrib does not use it). The test suite runs on both versions.

Differences are detected by behaviour, not by version number, so a fix in a later Evennia is
picked up without a change here.

"""

from types import SimpleNamespace

import evennia


def evennia_version() -> tuple[int, ...]:
    """The running Evennia's version as numbers, e.g. `(6, 1, 0)`.

    Returns:
        tuple: The numeric parts of the version.

    """
    release = evennia.__version__.split()[0]  # a development checkout appends its revision
    return tuple(int(part) for part in release.split(".") if part.isdigit())


def amp_client_protocol_honoured() -> bool:
    """Whether Evennia's server builds the AMP protocol class its setting names.

    Evennia's `AMPClientFactory` resolves `AMP_CLIENT_PROTOCOL_CLASS` into `factory.protocol`;
    5.0.1 to 6.1.0 then build `AMPServerClientProtocol` by name (evennia#3980). This builds one
    protocol from a factory of its own (no connection is made) and looks at its class.

    Returns:
        bool: True when the factory builds the class it was given.

    """
    from evennia.server.amp_client import AMPClientFactory, AMPServerClientProtocol

    class Probe(AMPServerClientProtocol):
        pass

    factory = AMPClientFactory(SimpleNamespace(amp_protocol=None))
    factory.protocol = Probe
    return isinstance(factory.buildProtocol(None), Probe)
