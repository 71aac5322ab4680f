-- Misuse refused at the call site, with a clear Lua error that points at
-- the caller's line: handles used after their step finished, calls only a
-- step's own callback may make, bad input of every type (NUL in names,
-- addresses, NaN/huge/negative numbers).
local H = require "helper"
local fa = H.fa

local THIS = "misuse_spec.lua"

describe("misuse", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    -- Run `body(asi)` as a step and return the error it raised (or nil).
    local function in_step(body)
        local err
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            local ok, e = pcall(body, asi)
            if not ok then err = e end
        end)
        root:execute(function() end) -- the flow may fail too: not the point
        tool:run()
        return err
    end

    local function says(e, text)
        assert.is_truthy(e, "expected an error mentioning " .. text)
        assert.truthy(tostring(e):find(text, 1, true), tostring(e))
        -- errors point at the caller's line, not at the binding
        assert.truthy(tostring(e):find(THIS, 1, true), tostring(e))
    end

    it("refuses more than 4 values", function()
        says(in_step(function(asi) asi:success(1, 2, 3, 4, 5) end), "at most 4 values")
        says(in_step(function(asi) asi:success_step(1, 2, 3, 4, 5) end), "at most 4 values")
    end)

    it("refuses wrong types", function()
        says(in_step(function(asi) asi:add(42) end), "step must be a function, got number")
        says(in_step(function(asi) asi:add(nil) end), "step must be a function, got nil")
        says(in_step(function(asi) asi:add(function() end, "x") end), "onerror must be a function")
        says(in_step(function(asi) asi:loop(function() end, 5) end), "label must be a string")
        says(in_step(function(asi) asi:repeat_loop(-1, function() end) end), "count must be >= 0")
        says(in_step(function(asi) asi:repeat_loop(1.5, function() end) end), "integer representation")
        says(in_step(function(asi) asi:repeat_loop("x", function() end) end), "repeat_loop")
        says(in_step(function(asi) asi:set_timeout(-5) end), "ms must be >= 0")
        says(in_step(function(asi) asi:set_timeout("soon") end), "set_timeout")
        says(in_step(function(asi) asi:error(42) end), "code must be a string, got number")
        says(in_step(function(asi) asi:error("X", {}) end), "info must be a string")
        says(in_step(function(asi) asi:set_cancel(nil) end), "handler must be a function")
        says(in_step(function(asi) asi:set_cancel() end), "set_cancel(): expected 2 to 2 arguments")
        says(in_step(function(asi) asi.add(nil, function() end) end), "expected an AsyncSteps handle as self")
        says(in_step(function(asi) asi.add({}, function() end) end), "expected an AsyncSteps handle as self")
        says(in_step(function(asi) asi:add() end), "add(): expected 2 to 3 arguments")
    end)

    it("refuses success() twice, add() after success(), success() after add()", function()
        says(in_step(function(asi) asi:success(); asi:success() end), "called twice")
        says(in_step(function(asi) asi:success(); asi:add(function() end) end), "after success()")
        says(in_step(function(asi) asi:add(function() end); asi:success() end), "after add()")
        says(in_step(function(asi) asi:success(); asi:error("X") end), "after success()")
        says(in_step(function(asi) pcall(asi.error, asi, "X"); asi:add(function() end) end), "after error()")
    end)

    it("refuses the handle of a finished step", function()
        local kept
        local root = fa.AsyncSteps(tool)
        local errs = {}
        root:add(function(asi) kept = asi end)
        root:add(function(asi)
            errs[1] = H.raises(function() kept:add(function() end) end)
            errs[2] = H.raises(function() kept:success() end)
            errs[3] = H.raises(function() kept:state() end)
        end)
        root:run()
        for i = 1, 3 do says(errs[i], "has finished") end
        says(H.raises(function() kept:success(1) end), "has finished")
        says(H.raises(function() kept:wait_external() end), "has finished")
        assert.is_false(kept:is_valid())
        assert.are.equal("finished", kept:status())
    end)

    it("refuses a kept handle long after its step finished (its slot reused)", function()
        -- A step's handle is a light userdata naming a slot that is reused
        -- only after 1,024 others were retired; a kept handle then reads as
        -- finished: every call is refused, a completion returns false.
        if os.getenv("FUTOIN_LUA_FULL_HANDLES") then
            return -- full userdata keep their exact state: nothing to reuse
        end
        local kept
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) kept = asi end)
        root:repeat_loop(3000, function(asi, i) end)
        root:run()
        local errs = {}
        errs[1] = H.raises(function() kept:add(function() end) end)
        errs[2] = H.raises(function() kept:state() end)
        errs[3] = H.raises(function() kept:wait_external() end)
        for i = 1, 3 do says(errs[i], "has finished") end
        assert.is_false(kept:success(1))
        assert.is_false(kept:error("Late"))
        assert.is_false(kept:is_valid())
        assert.are.equal("finished", kept:status())
        assert.truthy(tostring(kept):find("finished", 1, true))
    end)

    it("refuses the handle of the previous loop iteration", function()
        local prev, errs = nil, {}
        local root = fa.AsyncSteps(tool)
        root:repeat_loop(3, function(asi, i)
            if prev then
                errs[#errs + 1] = H.raises(function() prev:add(function() end) end)
                errs[#errs + 1] = H.raises(function() prev:success() end)
                assert.are_not.equal(prev, asi)
            end
            prev = asi
        end)
        root:run()
        assert.are.equal(4, #errs)
        for i = 1, 4 do says(errs[i], "has finished") end
    end)

    it("tells other light userdata apart from step handles", function()
        local lud = fa.AsyncSteps(tool):binary() -- a C address
        assert.truthy(tostring(lud):find("^userdata: "))
        says(H.raises(function() fa.core.add(lud, function() end) end),
            "expected an AsyncSteps handle as self")
        local seen, werr
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            seen = asi
            werr = H.raises(function() fa.wrap(asi) end) -- points nowhere
            assert.are.equal("userdata", type(asi))
            assert.truthy(tostring(asi):find("futoin_async.step", 1, true))
        end)
        root:run()
        assert.truthy(tostring(seen):find("(finished)", 1, true))
        if not os.getenv("FUTOIN_LUA_FULL_HANDLES") then
            assert.truthy(tostring(werr):find("got a step handle", 1, true), tostring(werr))
        end
    end)

    local run_lua = H.run_lua

    it("leaves another module's metatable of light userdata alone", function()
        if os.getenv("FUTOIN_LUA_FULL_HANDLES") then
            return -- no light handles to begin with
        end
        local script = [[
            local foreign = require "foreign_as"
            local function flow(fa)
                local tool = fa.Tool()
                local root = fa.AsyncSteps(tool)
                local mt, kept
                root:add(function(asi) mt = getmetatable(asi); kept = asi; asi:success(2.5) end)
                root:add(function(asi, v) assert(v == 2.5) end)
                root:run()
                assert(select(2, pcall(kept.add, kept, print)):find("has finished", 1, true))
                return mt
            end
            local lud = foreign.loop_new() -- a light userdata of someone else
            local theirs = { __index = { theirs = true } }
            if arg[1] == "before" then
                debug.setmetatable(lud, theirs) -- taken before the module loads
                local fa = require "futoin_async"
                assert(flow(fa) == fa.core.metatable("step"))
            else
                local fa = require "futoin_async"
                assert(flow(fa) == fa.core.metatable("light"))
                debug.setmetatable(lud, theirs) -- replaced after: execute() notices
                assert(flow(fa) == fa.core.metatable("step"))
            end
            assert(getmetatable(lud) == theirs and lud.theirs)
            foreign.loop_free(lud)
            print("metatable left alone")
        ]]
        for _, when in ipairs({ "before", "after" }) do
            local out = run_lua(script, when)
            assert.truthy(out:find("metatable left alone", 1, true), when .. ": " .. out)
        end
    end)

    it("keeps the same rules with full userdata handles (FUTOIN_LUA_FULL_HANDLES)", function()
        local script = [[
            local fa = require "futoin_async"
            local tool = fa.Tool()
            local root = fa.AsyncSteps(tool)
            local kept, waited
            root:add(function(asi) kept = asi; asi:success(2.0, 3) end)
            root:add(function(asi, f, i)
                assert(math.type(f) == "float" and math.type(i) == "integer")
                assert(getmetatable(asi) == fa.core.metatable("step"))
                waited = asi
                asi:set_timeout(5)
                asi:wait_external()
            end, function(asi, code) asi:success(code) end)
            assert(root:run() == "Timeout")
            assert(not pcall(kept.add, kept, function() end))
            assert(select(2, pcall(kept.add, kept, function() end)):find("has finished", 1, true))
            assert(waited:success() == false and waited:status() == "lost")
            print("full handles ok")
        ]]
        local out = run_lua(script, nil, "FUTOIN_LUA_FULL_HANDLES=1")
        assert.truthy(out:find("full handles ok", 1, true), out)
    end)

    it("refuses calls only the step's own callback may make while it waits", function()
        local errs = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:wait_external()
            tool:immediate(function()
                errs[1] = H.raises(function() asi:add(function() end) end)
                errs[2] = H.raises(function() asi:set_timeout(5) end)
                asi:success()
                errs[3] = H.raises(function() asi:success() end)
            end)
        end)
        root:run()
        says(errs[1], "only the step's own callback")
        says(errs[2], "only the step's own callback")
        says(errs[3], "already completed")
    end)

    it("refuses root-only calls on steps and step-only calls on roots", function()
        says(in_step(function(asi) asi:execute() end), "only a root")
        says(in_step(function(asi) asi:cancel() end), "only a root")
        local root = fa.AsyncSteps(tool)
        says(H.raises(function() root:success() end), "success()")
        says(H.raises(function() root:wait_external() end), "wait_external()")
        says(H.raises(function() root:break_loop() end), "break_loop()")
    end)

    it("refuses execute() twice and add() to a running root", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:wait_external()
            tool:immediate(function() asi:success() end)
        end)
        root:execute()
        says(H.raises(function() root:execute() end), "already running")
        says(H.raises(function() root:add(function() end) end), "while it runs")
        tool:run()
    end)

    it("refuses a parallel() handle once it started", function()
        local par, err
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) par = asi:parallel(); par:add(function() end) end)
        root:add(function(asi)
            err = H.raises(function() par:add(function() end) end)
        end)
        root:run()
        says(err, "through the handle of a finished step")
    end)

    it("refuses loop control outside a loop as InternalError", function()
        local code, info
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:break_loop() end, function(asi, c)
            code, info = c, asi:state().error_info
            asi:success()
        end)
        root:run()
        assert.are.equal("InternalError", code)
        assert.truthy(info:find("breakLoop", 1, true))
    end)

    it("refuses strings with an embedded NUL, naming the argument", function()
        local NUL = "a\0b"
        says(in_step(function(asi) asi:error(NUL) end), "code must not contain an embedded NUL")
        says(in_step(function(asi) asi:error("X", NUL) end), "info must not contain an embedded NUL")
        says(in_step(function(asi) asi:error("") end), "code must not be empty")
        says(in_step(function(asi) asi:loop(function() end, NUL) end), "label must not contain an embedded NUL")
        says(in_step(function(asi) asi:repeat_loop(1, function() end, NUL) end), "label must not contain")
        says(in_step(function(asi) asi:for_each({ 1 }, function() end, NUL) end), "label must not contain")
        says(in_step(function(asi) asi:break_loop(NUL) end), "label must not contain")
        says(in_step(function(asi) asi:continue_loop(NUL) end), "label must not contain")
        says(in_step(function(asi) asi:shared_get(NUL) end), "name must not contain an embedded NUL")
        says(in_step(function(asi) asi:shared_set(NUL, 1) end), "name must not contain an embedded NUL")
        says(in_step(function(asi) asi:state()[NUL] = 1 end), "shared name must not contain an embedded NUL")
        says(in_step(function(asi) asi:add_foreign(NUL, "m", "f") end), "language must not contain")
        says(in_step(function(asi) asi:add_foreign("lua", NUL, "f") end), "module must not contain")
        says(in_step(function(asi) asi:add_foreign("lua", "m", NUL) end), "function must not contain")
        says(in_step(function(asi) asi:add_foreign("lua", "m", NUL, function() end) end),
            "function must not contain")
        -- a value that stays in the table (language-local) may have any key
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:state()[NUL] = {} end)
        root:run()
        assert.is_table(root:state()[NUL])
        -- reading a name with a NUL: no shared variable has one
        assert.is_nil(root:state()["x\0y"])
    end)

    it("refuses bad input to Tool{}, wrap(), timeouts, counts and sync objects", function()
        local function refused(text, fn, ...)
            local e = H.raises(fn, ...)
            assert.truthy(tostring(e):find(text, 1, true), tostring(e))
        end
        -- addresses: only a light userdata is taken for one
        refused("ptr must be a uv_loop_t* (a light userdata), got number", fa.Tool, { uv_loop = 42 })
        refused("ptr must be a uv_loop_t* (a light userdata), got string", fa.Tool, { uv_loop = "x" })
        refused("expected a C address (light userdata), got userdata", fa.Tool, { uv_loop = io.stdout })
        refused("unknown option 'uvloop'", fa.Tool, { uvloop = 1 })
        refused("loop or uv_loop, not both", fa.Tool, { loop = "luv", uv_loop = tool:uv_loop() })
        refused("unknown loop", fa.Tool, { loop = "uv" })
        refused("opts must be a table or nil, got number", fa.Tool, 5)
        refused("expected a C address (light userdata), got number", fa.wrap, 42)
        refused("expected a C address (light userdata), got string", fa.wrap, "0x1234")
        -- timeouts: NaN and negative refused, huge clamped
        says(in_step(function(asi) asi:set_timeout(0 / 0) end), "ms must be >= 0")
        says(in_step(function(asi) asi:set_timeout(-1) end), "ms must be >= 0")
        refused("ms must be >= 0", tool.deferred, tool, 0 / 0, function() end)
        refused("ms must be >= 0", tool.deferred, tool, -math.huge, function() end)
        refused("fn must be a function, got nil", tool.deferred, tool, 1, nil)
        refused("fn must be a function, got nil", tool.immediate, tool, nil)
        local t = tool:deferred(math.huge, function() end) -- clamped: never, here
        assert.is_true(t:cancel())
        -- counts
        says(in_step(function(asi) asi:repeat_loop(0 / 0, function() end) end), "repeat_loop")
        says(in_step(function(asi) asi:repeat_loop(math.huge, function() end) end), "repeat_loop")
        refused("max must be an integer >= 1", fa.Mutex, 1.5)
        refused("max must be an integer >= 1", fa.Mutex, -1)
        refused("max_queue must be an integer >= 0", fa.Mutex, 1, -1)
        refused("period_ms must be an integer >= 1 and <= 4294967295", fa.Throttle, 1, 2 ^ 33 // 1, nil, tool)
        refused("period_ms must be an integer >= 1 and <= 4294967295", fa.Limiter,
            { period_ms = 1 << 40, tool = tool })
        refused("unknown option", fa.Limiter, { bogus = 1, tool = tool })
        refused("tool must be a Tool, got table", fa.Throttle, 1, 10, nil, {})
        refused("tool must be a Tool, got number", fa.Limiter, { tool = 5 })
        -- only real sync objects, open ones
        says(in_step(function(asi) asi:sync({ _ptr = 42, kind = "Mutex" }, function() end) end),
            "obj must be a Mutex, Throttle or Limiter")
        local m = fa.Mutex()
        m:close()
        says(in_step(function(asi) asi:sync(m, function() end) end), "the Mutex is closed")
        -- callbacks
        local root = fa.AsyncSteps(tool)
        refused("unhandled must be a function, got number", root.execute, root, 5)
        says(in_step(function(asi) asi:set_cancel(5) end), "handler must be a function, got number")
        refused("fn must be a function", fa.async, nil)
        refused("s must be a string", fa.bytes, 5)
        says(in_step(function(asi) asi:for_each(5, function() end) end), "t must be a table")
        says(in_step(function(asi) asi:for_each({}, nil) end), "body must be a function")
    end)

    it("survives garbage of every kind without crashing", function()
        local core = fa.core
        local junk = { nil, true, 1, 1.5, "s", {}, function() end,
            coroutine.create(function() end), io.stdout, 0 / 0, math.huge, -1,
            math.mininteger, "a\0b" }
        local names = { "add", "parallel", "error", "set_timeout", "set_cancel",
            "wait_external", "loop", "repeat_loop", "break_loop", "continue_loop",
            "execute", "cancel", "free", "state", "root_id", "is_valid", "status",
            "binary", "success", "success_step", "tool_run", "tool_close",
            "tool_immediate", "root_new", "timer_cancel", "_tool", "_result",
            "_root_tool", "shared_get", "shared_set", "add_foreign" }
        local n = 0
        for _, name in ipairs(names) do
            for i = 1, #junk + 1 do
                for j = 1, #junk + 1 do
                    local ok = pcall(core[name], junk[i], junk[j])
                    assert.is_false(ok, name)
                    n = n + 1
                end
            end
        end
        assert.is_true(n > 100)
        -- a full userdata is never taken for a C address
        assert.truthy(tostring(H.raises(fa.wrap, io.stdout)):find("C address", 1, true))
        assert.truthy(tostring(H.raises(fa.Tool, { uv_loop = io.stdout })):find("C address", 1, true))
        assert.truthy(tostring(H.raises(fa.wrap, nil)):find("NULL", 1, true))
    end)
end)
