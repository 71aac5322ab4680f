-- Lua steps on any loop thread, with Lua as the host program: a C loop
-- thread of its own (tests/threads_lua.c, its own tool) adds Lua steps by
-- name; the binding runs them in a Lua state made for that thread (this
-- program's state is never used there: its globals are its own), gives
-- them that thread's tool (timers, new roots), and closes that state as
-- the thread ends. The module named by path: tests/polyglot/host_steps.lua.
local H = require "helper"
local threads = require "threads_lua"

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local steps = here .. "polyglot/host_steps.lua"

describe("Lua steps on another loop thread of a Lua program", function()
    it("run in a Lua state of that thread, with its tool, closed as it ends", function()
        local before = threads.states()
        rawset(_G, "thread_mark", "main")
        local results, during, freed = threads.run(steps, {
            { "mark", "x" }, { "mark", "y" }, { "timers" }, { "fail", "t" },
        })
        assert.are.same({ ok = true, "none" }, results[1]) -- not this state's "main"
        assert.are.same({ ok = true, "x" }, results[2])
        assert.are.same({ ok = true, 40, "immediate,deferred,root" }, results[3])
        assert.are.equal(false, results[4].ok)
        assert.are.equal("InternalError", results[4].code)
        assert.truthy(results[4].info:find("lua failed on t", 1, true), results[4].info)
        assert.truthy(results[4].info:find("stack traceback:", 1, true), results[4].info)
        assert.are.equal("main", rawget(_G, "thread_mark"))
        assert.are.equal(before + 1, during)
        assert.is_true(freed, "the thread's tool is busy with a root Lua made on it")
        assert.are.equal(before, threads.states())
        -- a second thread gets a new state: nothing left of the first one
        results = threads.run(steps, { { "mark", "z" } })
        assert.are.same({ ok = true, "none" }, results[1])
        assert.are.equal(before, threads.states())
    end)
end)
