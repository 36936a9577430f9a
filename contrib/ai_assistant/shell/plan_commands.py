"""
The `/plan` switch of `@assistant`: today's plan (where each item came from), the routine a
builder sets, and clearing today's plan.

`PlanSwitch` is a mixin of `commands.CmdAssistant`, whose docstring is the in-game help. The
work is the handler's `plans` part (`ai_assistant.shell.plans.AssistantPlans`); the routine is
checked by `ai_assistant.memory.plans.parse_routine`.

"""

from ..memory.plans import ROUTINE_FORMAT, PlanError, format_routine
from .screen import TEXT_CHARS, private_mark, render_table, shown


class PlanSwitch:
    """The `/plan` switch of `@assistant` (a mixin of `commands.CmdAssistant`)."""

    def do_plan(self):
        """Show today's plan; `<name>=<routine>` sets the routine, `<name>/routine` shows it,
        `<name>/clear` empties today's plan."""
        plans = self.handler.plans
        action = self.subkey.lower()
        if self.rhs is not None:
            if action:
                raise PlanError(f"Usage: {self.key}/plan <name>=<routine>: {ROUTINE_FORMAT}.")
            items = plans.set_routine(self.rhs)
            if not items:
                self.msg(f"{self.target.key} has no routine now.")
                return
            self.msg(f"{self.target.key}'s routine ({len(items)} items) is set:")
            self.msg(shown(format_routine(items), 4000))
        elif action == "clear":
            dropped = plans.clear_today()
            self.msg(
                f"{self.target.key}'s plan for today is cleared ({dropped} items); its routine "
                "makes tomorrow's."
            )
        elif action == "routine":
            items = plans.day_plan().routine()
            if not items:
                self.msg(f"{self.target.key} has no routine. Set one: {ROUTINE_FORMAT}.")
            else:
                self.msg(f"|w{self.target.key}'s routine|n\n{shown(format_routine(items), 4000)}")
        elif not action:
            plan, words = plans.today()
            self.msg(self.format_plan(self.target, plan, words))
        else:
            raise PlanError(
                f"Usage: {self.key}/plan <name>[/routine||/clear][=<routine>] "
                f"(not '/{shown(action, 20)}')."
            )

    @staticmethod
    def format_plan(assistant, plan: dict, words: list[str]) -> str:
        """Render today's plan: time, where, what, where it came from, what became of it.

        Args:
            assistant (Object): The assistant character.
            plan (dict): `{"day", "items"}` (`memory.plans.DayPlan.today`).
            words (list[str]): Each item's status (`memory.plans.statuses`).

        Returns:
            str: A table, or a line saying there is no plan.

        """
        title = f"|w{assistant.key}'s plan for {plan['day']} (game time)|n"
        if not plan["items"]:
            return f"{title}\nNothing planned."
        rows = [
            (
                item["at"],
                shown(item["room_name"] or "-", 40),
                shown(item["activity"] or "-", 120),
                shown(item["source"], 60) + private_mark(item.get("audience"), None),
                shown(word, TEXT_CHARS),
            )
            for item, word in zip(plan["items"], words)
        ]
        table = render_table(
            [("time", 9), ("where", 14), ("what", 22), ("from", 16), ("now", 17)], rows
        )
        return f"{title}\n{table}"
