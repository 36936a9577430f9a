"""The login screen of the demo game."""

from django.conf import settings
from evennia import utils

CONNECTION_SCREEN = f"""
|b==============================================================|n
 Welcome to |g{settings.SERVERNAME}|n, an evennia-ai-assistant demo.

 Log in:         |wconnect <username> <password>|n
 New account:    |wcreate <username> <password>|n

 Then talk to Aria in the Reading Room: |wsay Hello Aria|n
|b==============================================================|n"""
