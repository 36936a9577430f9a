"""
The demo game's command sets: Evennia's defaults plus the AI assistant contrib's commands
(`@assistant` for builders, and a `page` that also reaches assistants).

"""

from evennia import default_cmds

from ai_assistant.commands import AssistantCmdSet


class CharacterCmdSet(default_cmds.CharacterCmdSet):
    key = "DefaultCharacter"

    def at_cmdset_creation(self):
        super().at_cmdset_creation()
        self.add(AssistantCmdSet)


class AccountCmdSet(default_cmds.AccountCmdSet):
    key = "DefaultAccount"


class UnloggedinCmdSet(default_cmds.UnloggedinCmdSet):
    key = "DefaultUnloggedin"


class SessionCmdSet(default_cmds.SessionCmdSet):
    key = "DefaultSession"
