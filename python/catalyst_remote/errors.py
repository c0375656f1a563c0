"""The exceptions catalyst_remote raises.

Every failure of the library arrives as an :class:`Error` carrying the
library's own message, which says what failed and why. Its subclasses name
the kinds a program may want to treat apart; anything else is an
:class:`Error` itself. :class:`Error` derives from :class:`RuntimeError`, as
Catalyst's own executor errors do, so code that catches those keeps working.
"""


class Error(RuntimeError):
    """A failure of the library: its message says what failed and why."""


class BadArgument(Error, ValueError):
    """An argument the library refused: an address, an option, a file, an
    array or output kind that cannot be a memref."""


class AuthenticationError(Error):
    """A secret was missing, wrong, or not proved by the other end."""


class ExecutorUnreachable(Error, ConnectionError):
    """No executor answered at the address."""


class ExecutorLost(Error, ConnectionError):
    """The executor, or this session's connection process, went away.
    Calls on the session raise it from then on, except close(), which
    succeeds: nothing is left on the executor to free."""


class KernelCrashed(ExecutorLost):
    """A kernel killed its connection process (the message names the
    signal). The executor itself goes on serving new sessions."""


class Timeout(Error, TimeoutError):
    """A deadline passed: the handshake, a launch's, the executor's
    liveness, or a pool's wait for its members."""


class SessionClosed(Error):
    """The session or pool was closed before or during the call."""


class ExecutorBusy(Error):
    """The executor turned the session away for now; later may work."""


__all__ = [
    "Error",
    "BadArgument",
    "AuthenticationError",
    "ExecutorUnreachable",
    "ExecutorLost",
    "KernelCrashed",
    "Timeout",
    "SessionClosed",
    "ExecutorBusy",
]
