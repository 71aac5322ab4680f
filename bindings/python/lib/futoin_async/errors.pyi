# Type stubs of futoin_async.errors: any attribute is the class of the
# error code of that name (a FutoInError subclass).

from . import FutoInError

def __getattr__(name: str) -> type[FutoInError]: ...
