"""The ``l3mp`` command: one root group whose commands are imported only when they run.

Exit codes: 0 done (applied, solved), 2 refused (a rejected update, an unsolved plan, a usage error),
1 errors (the message says what was wrong, never a traceback).
"""

from l3mp.cli._base import CliState, Lazy, LazyGroup, json_option, pass_state
from l3mp.cli._main import COMMANDS, main, root

__all__ = ["COMMANDS", "CliState", "Lazy", "LazyGroup", "json_option", "main", "pass_state", "root"]
