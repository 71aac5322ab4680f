-- Coroutine steps: fa.async(fn) runs a step as a coroutine; fa.await(asi, x)
-- (asi:await(x)) suspends it until the future-like x completes, while the
-- step waits (waitExternal); the coroutine then resumes where it stopped.
local H = require "helper"
local fa = H.fa

describe("coroutine steps", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    -- a future resolved by a timer of the tool
    local function later(ms, ...)
        local f = fa.Future()
        local v = table.pack(...)
        tool:deferred(ms, function() f:resolve(table.unpack(v, 1, v.n)) end)
        return f
    end

    it("await a future: the step waits, then goes on with its values", function()
        local log = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(10) end)
        root:add(fa.async(function(asi, start)
            log[#log + 1] = "begin " .. start
            local a, b = fa.await(asi, later(5, "x", 2))
            log[#log + 1] = "got " .. a .. b
            local c = asi:await(later(1, 3))
            return a, b + c -- the step's result
        end))
        root:add(function(asi, a, n)
            log[#log + 1] = "next " .. a .. n
            asi:success(n)
        end)
        assert.are.equal(5, root:run())
        assert.are.same({ "begin 10", "got x2", "next x5" }, log)
    end)

    it("await a callback starter (luv style: callback(err, ...))", function()
        local function sleep_then(ms, ...)
            local v = table.pack(...)
            return function(cb)
                tool:deferred(ms, function() cb(nil, table.unpack(v, 1, v.n)) end)
            end
        end
        local function fails(ms, err)
            return function(cb) tool:deferred(ms, function() cb(err) end) end
        end
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            local v = fa.await(asi, sleep_then(2, 41))
            local ok, e = pcall(fa.await, asi, fails(1, "ENOENT"))
            return v + 1, ok, e
        end))
        local v, ok, e = root:run()
        assert.are.equal(42, v)
        assert.is_false(ok)
        assert.are.equal("ENOENT", e)
    end)

    it("await a root AsyncSteps", function()
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            local sub = fa.AsyncSteps(tool)
            sub:add(function(a)
                a:wait_external()
                tool:deferred(1, function() a:success("from sub") end)
            end)
            return (fa.await(asi, sub))
        end))
        assert.are.equal("from sub", root:run())
    end)

    it("a future that already completed resumes at once", function()
        local f = fa.Future()
        f:resolve(7)
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi) return fa.await(asi, f) * 2 end))
        assert.are.equal(14, root:run())
    end)

    it("an error raised in the coroutine is the step's error, with its traceback", function()
        local code, info
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            fa.await(asi, later(1))
            error("after the wait")
        end), function(asi, c)
            code, info = c, asi:state().error_info
            asi:success()
        end)
        root:run()
        assert.are.equal("InternalError", code)
        assert.truthy(info:find("after the wait", 1, true))
        assert.truthy(info:find("coroutine_spec.lua", 1, true))
        -- and before any wait (inside the step's callback)
        root = fa.AsyncSteps(tool)
        root:add(fa.async(function() error("at once") end),
            function(asi, c) code = c; asi:success() end)
        root:run()
        assert.are.equal("InternalError", code)
    end)

    it("a rejected future raises in the coroutine, which may catch it", function()
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            local f = fa.Future()
            tool:deferred(1, function() f:reject(fa.errors.Timeout("slow")) end)
            local ok, e = pcall(fa.await, asi, f)
            assert.is_false(ok)
            assert.is_true(fa.is_error(e, "Timeout"))
            local g = fa.Future()
            tool:deferred(1, function() g:reject(fa.errors.Unauthorized("no")) end)
            fa.await(asi, g) -- not caught: the step fails with its code
        end), function(asi, code) asi:success(code) end)
        assert.are.equal("Unauthorized", root:run())
    end)

    it("asi:error() in a resumed coroutine ends it", function()
        local after = false
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            fa.await(asi, later(1))
            asi:error("Denied", "no way")
            after = true
        end), function(asi, code)
            asi:success(code .. ":" .. asi:state().error_info)
        end)
        assert.are.equal("Denied:no way", root:run())
        assert.is_false(after)
    end)

    it("a timeout while awaiting closes the coroutine; a late result is ignored", function()
        tool = fa.Tool { virtual_time = true } -- the clock says when
        local resumed, closed = false, false
        local f = fa.Future()
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            asi:set_timeout(5)
            local guard <close> = setmetatable({}, { __close = function() closed = true end })
            fa.await(asi, f)
            resumed = true
        end), function(asi, code)
            -- the timeout fired: the future resolves after it (ordered by
            -- the loop, not by a longer timer)
            tool:immediate(function() f:resolve("too late") end)
            asi:success(code .. " at " .. tool:now())
        end)
        assert.are.equal("Timeout at 5", root:run())
        assert.is_true(closed)
        assert.is_false(resumed)
    end)

    it("cancelling the root closes an awaiting coroutine", function()
        local closed = false
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            local guard <close> = setmetatable({}, { __close = function() closed = true end })
            fa.await(asi, fa.Future()) -- never completes
        end))
        root:execute()
        tool:immediate(function() root:cancel() end)
        tool:run()
        assert.is_true(closed)
    end)

    it("refuses await() outside a coroutine step and bad future-likes", function()
        local e1, e2
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            e1 = H.raises(function() fa.await(asi, fa.Future()) end)
        end)
        root:add(fa.async(function(asi)
            local ok, e = pcall(fa.await, asi, 42)
            e2 = e
            return ok
        end))
        assert.is_false(root:run())
        assert.truthy(tostring(e1):find("only inside a step made with fa.async", 1, true))
        assert.truthy(tostring(e2):find("must be a function(callback)", 1, true))
        assert.truthy(tostring(H.raises(fa.async, 5)):find("fn must be a function", 1, true))
    end)

    it("a plain coroutine.yield() in a step fails the step clearly", function()
        local info
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function() coroutine.yield(1) end),
            function(asi) info = asi:state().error_info; asi:success() end)
        root:run()
        assert.truthy(info:find("fa.await", 1, true))
    end)

    it("sub-steps added before the first await run after the coroutine", function()
        local log = {}
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            asi:add(function(a) log[#log + 1] = "sub"; a:success("sub done") end)
        end))
        root:add(function(asi, v) log[#log + 1] = v end)
        root:run()
        assert.are.same({ "sub", "sub done" }, log)
    end)

    it("leaves nothing behind", function()
        local refs0, recs0 = H.settle()
        for _ = 1, 200 do
            local root = fa.AsyncSteps(tool)
            root:add(fa.async(function(asi)
                local v = fa.await(asi, later(0, 1))
                return v
            end))
            root:run()
        end
        local refs, recs = H.settle()
        assert.are.equal(refs0, refs)
        assert.are.equal(recs0, recs)
    end)
end)
