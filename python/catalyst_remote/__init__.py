"""catalyst_remote: run Catalyst kernels in other processes and on other
machines, on NumPy arrays.

    import numpy as np
    from catalyst_remote import Executor, Session

    with Executor() as ex, Session(ex.address) as s:
        s.send_binary("kernels.o")
        (y,) = s.launch("_catalyst_pyface_scale", "kernels.o", np.arange(4.0),
                        outputs=[("float64", 1)])

Session talks to one executor, Pool to many behind one "pool:" address,
Executor starts one here (and works where catalyst.Executor does),
mpirun_pool and srun_pool start a pool's executors with a cluster's launcher.
"""

from . import errors
from ._version import __version__
from .errors import *  # noqa: F401,F403 - the exception classes, listed in errors.__all__
from .cluster import LaunchedPool, mpirun_pool, srun_pool
from .executor import Executor
from .resident import RemoteArray
from .session import Pool, Session

__all__ = [
    "Session",
    "Pool",
    "RemoteArray",
    "Executor",
    "LaunchedPool",
    "mpirun_pool",
    "srun_pool",
    *errors.__all__,
]
