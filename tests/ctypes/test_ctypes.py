#!/usr/bin/python3
"""A no-glue consumer: drive libfutoin_async from Python through ctypes only.

Nothing is compiled for Python: the FTN12 section 2.7 structures are declared
here with ctypes.Structure / ctypes.Union (the spec's anonymous unions via
``_anonymous_``), every callback is a ``CFUNCTYPE`` object, and the runtime is
reached only through the 25-slot ``FutoInAsyncStepsAPI`` table plus the C
functions that create a tool and a root.

Run with Debian's interpreter and the standard library only::

    FUTOIN_LIB=build/runtime/libfutoin_async.so.0 /usr/bin/python3 tests/ctypes/test_ctypes.py

``FUTOIN_LIB`` defaults to ``build/runtime/libfutoin_async.so.0`` in this
repository. The last line printed is ``ctypes: N passed, M failed``; the exit
status is non-zero when anything failed.

THE KEEP-ALIVE RULE
-------------------
The runtime stores raw C pointers: the function pointer of every callback
given to ``add``/``parallel``/``setCancel``/``loop``/``repeat``/``execute``/
``sched_*``/``stateVariable``/``stack``, and every ``data`` pointer. It cannot
hold a Python reference. A ctypes caller must therefore keep every
``CFUNCTYPE`` object, and every ctypes object whose address it passes as
``void*``, alive until the runtime is done with it: in general, until the root
is freed (``api.free(root)``), since a queued step, a cancel handler or a
state variable's cleanup may run as late as that. Likewise a buffer that a
``FutoInBinaryValue`` given to ``success()`` points at (a ``cstr``) must live
until the step receiving it has returned. Dropping the last Python
reference earlier frees the libffi trampoline and the next call into it
crashes or, worse, runs something else.

The pattern used here: one ``Flow`` object owns the tool, the root and a
``keep`` list. Every callback is created through ``Flow.cb()`` and every
buffer through ``Flow.keep_data()``, which append to ``keep``;
``Flow.close()`` frees the root and the tool first and only then clears
``keep``.
"""
import ctypes
import os
import sys
import unittest
from ctypes import (CFUNCTYPE, POINTER, Structure, Union, byref, c_bool,
                    c_char_p, c_double, c_float, c_int, c_int8, c_int16,
                    c_int32, c_int64, c_size_t, c_ssize_t, c_uint8, c_uint16,
                    c_uint32, c_uint64, c_void_p, cast)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB_PATH = os.environ.get(
    "FUTOIN_LIB", os.path.join(REPO, "build", "runtime", "libfutoin_async.so.0"))

# ---- section 2.7.1 binary data ------------------------------------------------

FTN_TYPE_CUSTOM_OBJECT = 0x01
FTN_TYPE_STRING = 0x02
FTN_TYPE_INT64 = 0x09
FTN_TYPE_DOUBLE = 0x0F


class FutoInBinaryValue(Structure):
    pass


class FutoInType(Structure):
    pass


BinvalCleanup = CFUNCTYPE(None, POINTER(FutoInBinaryValue))
FutoInType._fields_ = [
    ("flags", c_uint8),
    ("cleanup", BinvalCleanup),
]


class _BinvalPayload(Union):
    _fields_ = [
        ("p", c_void_p),
        ("cstr", c_char_p),
        ("cstr16", c_void_p),
        ("cstr32", c_void_p),
        ("b", c_bool),
        ("i8", c_int8),
        ("i16", c_int16),
        ("i32", c_int32),
        ("i64", c_int64),
        ("u8", c_uint8),
        ("u16", c_uint16),
        ("u32", c_uint32),
        ("u64", c_uint64),
        ("f", c_float),
        ("d", c_double),
    ]


FutoInBinaryValue._anonymous_ = ("_u",)
FutoInBinaryValue._fields_ = [
    ("type", POINTER(FutoInType)),
    ("_u", _BinvalPayload),
    ("custom_data", c_void_p),
    ("length", c_uint32),
]

# ---- section 2.7.2 binary AsyncSteps interface ---------------------------------


class _Args4(Structure):
    _fields_ = [("arg0", FutoInBinaryValue), ("arg1", FutoInBinaryValue),
                ("arg2", FutoInBinaryValue), ("arg3", FutoInBinaryValue)]


class _ArgsUnion(Union):
    _anonymous_ = ("_s",)
    _fields_ = [("_s", _Args4), ("args", FutoInBinaryValue * 4)]


class FutoInArgs(Structure):
    _anonymous_ = ("_u",)
    _fields_ = [("_u", _ArgsUnion)]


class FutoInHandle(Structure):
    _fields_ = [("data1", c_void_p), ("data2", c_void_p), ("data3", c_ssize_t)]


class FutoInAsyncSteps(Structure):
    pass


class FutoInSync(Structure):
    pass


AS = POINTER(FutoInAsyncSteps)
ExecuteCB = CFUNCTYPE(None, AS, c_void_p, POINTER(FutoInArgs))
ErrorCB = CFUNCTYPE(None, AS, c_void_p, c_char_p)
CancelCB = CFUNCTYPE(None, AS, c_void_p)
LoopCB = CFUNCTYPE(None, AS, c_void_p)
RepeatCB = CFUNCTYPE(None, AS, c_void_p, c_size_t)
AllocateCB = CFUNCTYPE(c_void_p, c_void_p)
StateCleanupCB = CFUNCTYPE(None, c_void_p, c_void_p)
StackCleanupCB = CFUNCTYPE(None, c_void_p)
SchedCB = CFUNCTYPE(None, c_void_p)

_SLOTS = [
    ("add", CFUNCTYPE(None, AS, c_void_p, ExecuteCB, ErrorCB)),                # 0
    ("parallel", CFUNCTYPE(AS, AS, c_void_p, ErrorCB)),                        # 1
    ("stateVariable", CFUNCTYPE(c_void_p, AS, c_void_p, c_char_p,
                                AllocateCB, StateCleanupCB)),                  # 2
    ("stack", CFUNCTYPE(c_void_p, AS, c_size_t, StackCleanupCB)),              # 3
    ("success", CFUNCTYPE(None, AS, POINTER(FutoInArgs))),                     # 4
    ("handle_error", CFUNCTYPE(None, AS, c_char_p, c_char_p)),                 # 5
    ("setTimeout", CFUNCTYPE(None, AS, c_uint32)),                             # 6
    ("setCancel", CFUNCTYPE(None, AS, c_void_p, CancelCB)),                    # 7
    ("waitExternal", CFUNCTYPE(None, AS)),                                     # 8
    ("loop", CFUNCTYPE(None, AS, c_void_p, LoopCB, c_char_p)),                 # 9
    ("repeat", CFUNCTYPE(None, AS, c_void_p, c_size_t, RepeatCB, c_char_p)),   # 10
    ("breakLoop", CFUNCTYPE(None, AS, c_char_p)),                              # 11
    ("continueLoop", CFUNCTYPE(None, AS, c_char_p)),                           # 12
    ("execute", CFUNCTYPE(None, AS, c_void_p, ErrorCB)),                       # 13
    ("cancel", CFUNCTYPE(None, AS)),                                           # 14
    ("addSync", CFUNCTYPE(None, AS, POINTER(FutoInSync), c_void_p,
                          ExecuteCB, ErrorCB)),                                # 15
    ("rootId", CFUNCTYPE(c_ssize_t, AS)),                                      # 16
    ("isValid", CFUNCTYPE(c_int, AS)),                                         # 17
    ("newInstance", CFUNCTYPE(AS, AS)),                                        # 18
    ("free", CFUNCTYPE(None, AS)),                                             # 19
    ("sched_immediate", CFUNCTYPE(FutoInHandle, AS, c_void_p, SchedCB)),       # 20
    ("sched_deferred", CFUNCTYPE(FutoInHandle, AS, c_uint32, c_void_p,
                                 SchedCB)),                                    # 21
    ("sched_cancel", CFUNCTYPE(None, AS, POINTER(FutoInHandle))),              # 22
    ("sched_is_valid", CFUNCTYPE(c_int, AS, POINTER(FutoInHandle))),           # 23
    ("is_same_thread", CFUNCTYPE(c_int, AS)),                                  # 24
]


class _ApiSlots(Structure):
    _fields_ = _SLOTS


class _ApiUnion(Union):
    _anonymous_ = ("_s",)
    _fields_ = [("_s", _ApiSlots), ("funcs", c_void_p * 25)]


class FutoInAsyncStepsAPI(Structure):
    _anonymous_ = ("_u",)
    _fields_ = [("_u", _ApiUnion)]


FutoInAsyncSteps._fields_ = [("api", POINTER(FutoInAsyncStepsAPI))]

# The layout must be the header's, byte for byte (x86-64 / LP64 figures).
assert ctypes.sizeof(FutoInBinaryValue) == 4 * ctypes.sizeof(c_void_p)
assert ctypes.sizeof(FutoInArgs) == 4 * ctypes.sizeof(FutoInBinaryValue)
assert ctypes.sizeof(FutoInHandle) == 3 * ctypes.sizeof(c_void_p)
assert ctypes.sizeof(FutoInAsyncStepsAPI) == 25 * ctypes.sizeof(c_void_p)
assert FutoInAsyncStepsAPI.is_same_thread.offset == 24 * ctypes.sizeof(c_void_p)
assert FutoInArgs.arg3.offset == 3 * ctypes.sizeof(FutoInBinaryValue)

# Static type descriptors: module globals, alive as long as the module.
TYPE_I64 = FutoInType(FTN_TYPE_INT64, BinvalCleanup())

NULL_ERROR_CB = ErrorCB()  # a NULL function pointer of that type


def api(as_p):
    """The 25-slot table behind a handle."""
    return as_p.contents.api.contents


# ---- the library -----------------------------------------------------------------

lib = ctypes.CDLL(LIB_PATH)
lib.futoin_async_version.restype = c_char_p
lib.futoin_async_version.argtypes = []
lib.futoin_tool_new.restype = c_int
lib.futoin_tool_new.argtypes = [POINTER(c_void_p), c_void_p]
lib.futoin_tool_free.restype = c_int
lib.futoin_tool_free.argtypes = [c_void_p]
lib.futoin_tool_run.restype = c_int
lib.futoin_tool_run.argtypes = [c_void_p]
lib.futoin_root_new.restype = AS
lib.futoin_root_new.argtypes = [c_void_p]


class Flow:
    """A tool, one root, and everything the runtime points at (see the
    keep-alive rule in the module docstring)."""

    def __init__(self):
        self.keep = []      # CFUNCTYPE objects and void* buffers, until close()
        self.trace = []     # what the callbacks saw
        self.errors = []    # exceptions raised inside callbacks
        self.tool = c_void_p()
        if lib.futoin_tool_new(byref(self.tool), None) != 0:
            raise RuntimeError("futoin_tool_new failed")
        self.root = lib.futoin_root_new(self.tool)
        if not self.root:
            raise RuntimeError("futoin_root_new failed")

    def cb(self, cftype, fn):
        """Wrap a Python function as a C callback owned by this flow.

        ctypes cannot propagate an exception out of a callback into C (it
        prints it and returns), so it is recorded and re-raised by run()."""
        def guarded(*a):
            try:
                return fn(*a)
            except BaseException as e:  # noqa: B902 - recorded, not lost
                self.errors.append(e)
                return None
        f = cftype(guarded)
        self.keep.append(f)
        return f

    def keep_data(self, obj):
        """Pin a ctypes object and return its address for a void* argument."""
        self.keep.append(obj)
        return cast(ctypes.pointer(obj), c_void_p)

    def add(self, as_p, step, onerror=None, data=None):
        api(as_p).add(as_p, data, self.cb(ExecuteCB, step),
                      self.cb(ErrorCB, onerror) if onerror else NULL_ERROR_CB)

    def run(self):
        def unhandled(as_p, data, code):
            self.trace.append("unhandled " + code.decode())
        api(self.root).execute(self.root, None, self.cb(ErrorCB, unhandled))
        rc = lib.futoin_tool_run(self.tool)
        if self.errors:
            raise self.errors[0]
        return rc

    def close(self):
        if self.root:
            api(self.root).free(self.root)
            self.root = None
        rc = lib.futoin_tool_free(self.tool)
        # Only now is the runtime done with every pointer we gave it.
        self.keep.clear()
        return rc


def success_i64(as_p, value):
    args = FutoInArgs()
    args.arg0.type = ctypes.pointer(TYPE_I64)
    args.arg0.i64 = value
    api(as_p).success(as_p, byref(args))
    # success() moves the values: our copy is reset
    assert not args.arg0.type, "success() must reset the caller's copy"


def arg_i64(args_p):
    a = args_p.contents.arg0
    if not a.type:
        return None
    assert a.type.contents.flags == FTN_TYPE_INT64
    return a.i64


def state_str(as_p, name):
    p = api(as_p).stateVariable(as_p, None, name, AllocateCB(), StateCleanupCB())
    return ctypes.string_at(p).decode() if p else None


class CtypesFlows(unittest.TestCase):

    def setUp(self):
        self.flow = Flow()

    def tearDown(self):
        self.assertEqual(self.flow.close(), 0, "tool not freed")

    def test_version(self):
        self.assertTrue(lib.futoin_async_version().startswith(b"0."))

    def test_success_value_reaches_next_step(self):
        fl = self.flow

        def first(as_p, data, args):
            fl.trace.append("first")
            success_i64(as_p, 1 << 40)

        def second(as_p, data, args):
            fl.trace.append("second %d" % arg_i64(args))

        def third(as_p, data, args):  # implicit success passes nothing
            fl.trace.append("third %r" % arg_i64(args))

        fl.add(fl.root, first)
        fl.add(fl.root, second)
        fl.add(fl.root, third)
        fl.run()
        self.assertEqual(fl.trace, ["first", "second %d" % (1 << 40),
                                    "third None"])

    def test_handle_error_and_error_handler(self):
        fl = self.flow

        def failing(as_p, data, args):
            fl.trace.append("step")
            api(as_p).handle_error(as_p, b"MyError", b"my info")

        def onerror(as_p, data, code):
            fl.trace.append("onerror %s info=%s" % (
                code.decode(), state_str(as_p, b"error_info")))
            success_i64(as_p, 5)

        def after(as_p, data, args):
            fl.trace.append("after %d" % arg_i64(args))

        def unrecovered(as_p, data, args):
            api(as_p).handle_error(as_p, b"Second", None)

        fl.add(fl.root, failing, onerror)
        fl.add(fl.root, after)
        fl.add(fl.root, unrecovered)
        fl.add(fl.root, after)  # never runs
        fl.run()
        self.assertEqual(fl.trace, ["step", "onerror MyError info=my info",
                                    "after 5", "unhandled Second"])
        self.assertIsNone(state_str(fl.root, b"error_info"))
        self.assertEqual(state_str(fl.root, b"last_exception"), "Second")

    def test_wait_external_completed_from_sched_immediate(self):
        fl = self.flow
        waiting = []

        def external(data):
            fl.trace.append("external")
            success_i64(waiting[0], 7)

        def step(as_p, data, args):
            fl.trace.append("waits")
            waiting.append(as_p)
            api(as_p).waitExternal(as_p)
            h = api(as_p).sched_immediate(as_p, None, fl.cb(SchedCB, external))
            self.assertTrue(api(as_p).sched_is_valid(as_p, byref(h)))

        def after(as_p, data, args):
            fl.trace.append("after %d" % arg_i64(args))

        fl.add(fl.root, step)
        fl.add(fl.root, after)
        fl.run()
        self.assertEqual(fl.trace, ["waits", "external", "after 7"])

    def test_set_cancel_and_root_cancel(self):
        fl = self.flow
        root = fl.root

        def on_cancel(as_p, data):
            fl.trace.append("cancel")

        def cancel_root(data):
            fl.trace.append("calling cancel")
            api(root).cancel(root)
            fl.trace.append("cancel returned")

        def step(as_p, data, args):
            fl.trace.append("step")
            api(as_p).setCancel(as_p, None, fl.cb(CancelCB, on_cancel))
            api(as_p).sched_immediate(as_p, None, fl.cb(SchedCB, cancel_root))

        def onerror(as_p, data, code):
            fl.trace.append("onerror (must not run)")

        def never(as_p, data, args):
            fl.trace.append("never")

        fl.add(root, step, onerror)
        fl.add(root, never)
        fl.run()
        self.assertEqual(fl.trace, ["step", "calling cancel", "cancel",
                                    "cancel returned"])

    def test_repeat_with_break_loop(self):
        fl = self.flow

        def body(as_p, data, i):
            fl.trace.append("body %d" % i)
            if i == 3:
                api(as_p).breakLoop(as_p, None)

        def step(as_p, data, args):
            api(as_p).repeat(as_p, None, 10, fl.cb(RepeatCB, body), b"LOOP")

        def after(as_p, data, args):
            fl.trace.append("after %r" % arg_i64(args))

        fl.add(fl.root, step)
        fl.add(fl.root, after)
        fl.run()
        self.assertEqual(fl.trace, ["body 0", "body 1", "body 2", "body 3",
                                    "after None"])

    def test_parallel_two_branches(self):
        fl = self.flow
        counter = c_int(0)  # passed as void* data: pinned by keep_data()
        data = fl.keep_data(counter)

        def branch(as_p, data_p, args):
            n = cast(data_p, POINTER(c_int)).contents
            n.value += 1
            fl.trace.append("branch")

        def step(as_p, data_p, args):
            par = api(as_p).parallel(as_p, None, NULL_ERROR_CB)
            fl.add(par, branch, data=data)
            fl.add(par, branch, data=data)

        def after(as_p, data_p, args):
            fl.trace.append("after %d" % counter.value)

        fl.add(fl.root, step)
        fl.add(fl.root, after)
        fl.run()
        self.assertEqual(fl.trace, ["branch", "branch", "after 2"])

    def test_state_variable_and_stack(self):
        fl = self.flow
        box = c_int64(0)
        cleanups = []

        def allocate(data):
            return cast(ctypes.pointer(box), c_void_p).value

        def cleanup(data, value):
            cleanups.append("state")

        def stack_cleanup(value):
            cleanups.append("stack %d" % cast(value, POINTER(c_int64)).contents.value)

        fl.keep.append(box)
        alloc_cb = fl.cb(AllocateCB, allocate)
        cleanup_cb = fl.cb(StateCleanupCB, cleanup)
        stack_cb = fl.cb(StackCleanupCB, stack_cleanup)

        def step(as_p, data, args):
            p = api(as_p).stateVariable(as_p, None, b"box", alloc_cb, cleanup_cb)
            cast(p, POINTER(c_int64)).contents.value = 42
            s = api(as_p).stack(as_p, 8, stack_cb)
            cast(s, POINTER(c_int64)).contents.value = 9

        def after(as_p, data, args):
            # NULL allocate: look up only
            p = api(as_p).stateVariable(as_p, None, b"box", AllocateCB(),
                                        StateCleanupCB())
            fl.trace.append("box %d, cleanups %s" % (
                cast(p, POINTER(c_int64)).contents.value, cleanups))

        fl.add(fl.root, step)
        fl.add(fl.root, after)
        fl.run()
        self.assertEqual(fl.trace, ["box 42, cleanups ['stack 9']"])
        self.assertEqual(cleanups, ["stack 9"])
        api(fl.root).free(fl.root)
        fl.root = None
        self.assertEqual(cleanups, ["stack 9", "state"])


def main():
    print("ctypes: library %s, version %s" % (
        LIB_PATH, lib.futoin_async_version().decode()))
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(CtypesFlows)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors)
    passed = result.testsRun - failed - len(result.skipped)
    print("ctypes: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
