--- Lua steps for the tests of Lua under host programs written in other
-- languages, on one or several loop threads: plugin_test.c (C),
-- host_threads.py (Python), HostThreads.java (Java). Each of those adds
-- them by name (module "host_steps", on LUA_PATH), from flows of tools on
-- two loop threads at once.
local M = {}

--- mark(asi, v): set this Lua state's global `thread_mark` to v; the
-- step's result is what it held before ("none" the first time). A Lua
-- state per loop thread: each thread sees only its own marks.
function M.mark(asi, v)
    local before = rawget(_G, "thread_mark")
    rawset(_G, "thread_mark", v)
    return before == nil and "none" or before
end

--- timers(asi, v): the step waits (FTN12 §1.3, set_cancel() alone) on the
-- tool of its flow, the host program's: an immediate callback of that
-- tool schedules a deferred one, which executes a new root on that tool
-- (asi:new_instance()); that root's result completes the step with
-- v * 2 and the order things ran in, "immediate,deferred,root".
function M.timers(asi, v)
    local t = asi:tool()
    assert(t == asi:tool(), "one Tool object per tool")
    assert(t:is_same_thread(), "the tool of this flow is on this thread")
    assert(not pcall(t.run, t), "the host program runs its loop")
    local trace = {}
    local sub = asi:new_instance()
    assert(sub:tool() == t)
    sub:add(function()
        trace[#trace + 1] = "root"
        return v * 2
    end)
    asi:set_cancel(function() sub:cancel() end)
    t:immediate(function()
        trace[#trace + 1] = "immediate"
        t:deferred(1, function()
            trace[#trace + 1] = "deferred"
            sub:execute(nil, function(ok, w)
                asi:success(ok and w or -1, table.concat(trace, ","))
            end)
        end)
    end)
end

--- fail(asi, v): a Lua runtime error (InternalError in the host program,
-- with this message and the Lua traceback in error_info).
function M.fail(asi, v)
    error("lua failed on " .. tostring(v))
end

--- where(asi): where this Lua state found the binding's C module
-- (package.searchpath over package.cpath) and luv's version: luv, linked
-- to the system libuv, loaded into the host program (there must be one
-- libuv in the process, and one libfutoin_async).
function M.where(asi)
    local uv = require "luv"
    return package.searchpath("futoin_async.core", package.cpath), uv.version_string()
end

return M
