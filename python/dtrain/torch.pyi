# Types of `import dtrain.torch` (python/dtrain/torch.py and the compiled dtrain._torch), checked
# against the module by tests/unit/python/stubs_test.py. docs/torch.md describes the behaviour.
from datetime import timedelta
from typing import Any, Optional

import torch.distributed as dist

import dtrain

BACKEND: str

class ProcessGroupDtrain(dist.ProcessGroup):
    def __init__(self, store: dist.Store, rank: int, size: int,
                 timeout: Optional[timedelta] = None,
                 context: Optional[dtrain.Context] = None) -> None: ...
    @property
    def context(self) -> dtrain.Context: ...
    @property
    def backend(self) -> str: ...
    @property
    def allreduce_transport(self) -> str: ...
    @property
    def hostname(self) -> str: ...
    @property
    def number(self) -> Optional[int]: ...

def init_process_group(**kwargs: Any) -> None: ...
