-- What steps and roots give back (rules 1 and 2 of the cross-language
-- contract):
--  - a step's return values are its result, as if it had called
--    success(...) last; the handle add() and its kin return for chaining
--    is no value; a value returned after the step completed, waited or
--    added sub-steps is an InternalError saying so;
--  - root:run() returns the final values, raises the unhandled error, and
--    raises fa.CancelledError for a cancelled root; root:cancel() says
--    whether it cancelled an execution; root:result() and execute()'s
--    on_done give the same outcome without run().
local H = require "helper"
local fa = H.fa

describe("a step's return value", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("is the step's result (several values: several results)", function()
        local root = fa.AsyncSteps(tool)
        root:add(function() return 1, "two", 3.5, true end)
        root:add(function(_, a, b, c, d)
            assert.are.same({ 1, "two", 3.5, true }, { a, b, c, d })
            return { a }
        end)
        root:add(function(_, t) return t[1] + 41 end)
        assert.are.equal(42, root:run())
    end)

    it("is the result of error handlers and loop bodies too", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("Denied") end,
            function(_, code) return "recovered from " .. code end)
        root:add(function(asi, v)
            asi:repeat_loop(2, function(_, i) return i * 10 end)
            asi:add(function(a) a:success(v) end)
        end)
        assert.are.equal("recovered from Denied", root:run())
    end)

    it("is the result of a step another flow runs by name (the same trampoline)", function()
        -- a Lua step function returning instead of calling success()
        local function double(_, v) return v * 2 end
        local root = fa.AsyncSteps(tool)
        root:add(function() return 21 end)
        root:add(double)
        assert.are.equal(42, root:run())
    end)

    it("nothing, nil and trailing nils are no result; a nil before a value is one", function()
        local got = {}
        local root = fa.AsyncSteps(tool)
        root:add(function() return end)
        root:add(function(_, ...) got[1] = select("#", ...); return nil end)
        root:add(function(_, ...) got[2] = select("#", ...); return 5, nil, nil end)
        root:add(function(_, ...) got[3] = select("#", ...); return nil, 6 end)
        root:add(function(_, a, b) got[4] = tostring(a) .. "," .. b end)
        root:run()
        assert.are.same({ 0, 0, 1, "nil,6" }, got)
    end)

    it("`return asi:success(v)` works: success() inside the callback returns nothing", function()
        local inside
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) inside = table.pack(asi:success(7)) end)
        assert.are.equal(7, root:run())
        assert.are.equal(0, inside.n)
        root = fa.AsyncSteps(tool)
        root:add(function(asi) return asi:success(8) end)
        assert.are.equal(8, root:run())
    end)

    it("the handle add() and its kin return is no value", function()
        local log = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            return asi:add(function(a) log[#log + 1] = "sub"; a:success("from sub") end)
        end)
        root:add(function(asi, v)
            log[#log + 1] = v
            return asi:parallel():add(function(a) log[#log + 1] = "branch" end)
        end)
        root:add(function(asi)
            return asi:repeat_loop(1, function() log[#log + 1] = "loop" end)
        end)
        root:add(function(asi) return asi:success_step("last") end)
        assert.are.equal("last", root:run())
        assert.are.same({ "sub", "from sub", "branch", "loop" }, log)
    end)

    local after = {
        ["success()"] = function(asi) asi:success(1) end,
        ["error()"] = function(asi) pcall(asi.error, asi, "Mine") end,
        ["add()"] = function(asi) asi:add(function() end) end,
        ["set_cancel()"] = function(asi) asi:set_cancel(function() end) end,
        ["set_timeout()"] = function(asi) asi:set_timeout(3600000) end,
        ["wait_external()"] = function(asi) asi:wait_external() end,
    }
    for what, did in pairs(after) do
        it("returned after " .. what .. " is an InternalError saying so, never dropped", function()
            local code, info, last
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                asi:add(function(a)
                    did(a)
                    return "a value"
                end)
            end, function(asi, c)
                code, info, last = c, asi:error_info(), asi:last_exception()
                asi:success()
            end)
            root:add(function(asi) asi:success("next") end)
            assert.are.equal("next", root:run())
            if what == "error()" then
                -- the step's own error came first and stands
                assert.are.equal("Mine", code)
            else
                assert.are.equal("InternalError", code)
                -- the runtime may say it in its own words for a completed
                -- step; the exception object always says why
                local why = fa.is_error(last) and last.info or info
                assert.truthy(why:find("returned a value (string) after it called", 1, true), why)
            end
        end)
    end

    it("more than 4 returned values is an InternalError", function()
        local info
        local root = fa.AsyncSteps(tool)
        root:add(function() return 1, 2, 3, 4, 5 end, function(asi)
            info = asi:error_info()
            asi:success()
        end)
        root:run()
        assert.truthy(info:find("returned 5 values: at most 4", 1, true), info)
    end)

    it("a coroutine step's return values are its result, with the same rules", function()
        local root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi) return asi:add(function(a) a:success(20) end) end))
        root:add(fa.async(function(_, v) return v + 1 end))
        root:add(fa.async(function(asi, v)
            local f = fa.Future()
            tool:immediate(function() f:resolve(v * 2) end)
            return fa.await(asi, f)
        end))
        assert.are.equal(42, root:run())
        local info
        root = fa.AsyncSteps(tool)
        root:add(fa.async(function(asi)
            asi:set_cancel(function() end)
            return "too late"
        end), function(asi) info = asi:error_info(); asi:success() end)
        root:run()
        assert.truthy(info:find("after it called set_cancel()", 1, true), info)
    end)
end)

describe("a root's outcome", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("run() returns the final values; result() says true and them", function()
        local root = fa.AsyncSteps(tool)
        assert.is_nil(root:result()) -- never ran
        root:add(function(asi) asi:success(1, nil, "three") end)
        local a, b, c = root:run()
        assert.are.same({ 1, nil, "three" }, { a, b, c })
        local r = table.pack(root:result())
        assert.are.equal(4, r.n)
        assert.are.same({ true, 1, nil, "three" }, { r[1], r[2], r[3], r[4] })
    end)

    it("execute()'s on_done gets (true, values...) without run()", function()
        local got
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            tool:immediate(function() asi:success("late", 2) end)
            asi:wait_external()
        end)
        root:execute(nil, function(...) got = table.pack(...) end)
        assert.is_nil(root:result()) -- running
        tool:run()
        assert.are.same({ true, "late", 2, n = 3 }, got)
        assert.are.equal("idle", root:status())
    end)

    it("an unhandled error: run() raises it; result() and on_done give it", function()
        local order = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("NotFound", "no such order") end)
        root:execute(function(code) order[#order + 1] = "unhandled " .. code end,
            function(ok, e) order[#order + 1] = tostring(ok) .. " " .. e.code end)
        tool:run()
        assert.are.same({ "unhandled NotFound", "false NotFound" }, order)
        local ok, e = root:result()
        assert.is_false(ok)
        assert.are.equal(fa.errors.NotFound, getmetatable(e))
        assert.are.equal("no such order", e.info)
        assert.truthy(e.async_stack)
        root:add(function(asi) asi:error("NotFound", "again") end)
        local raised = H.raises(root.run, root)
        assert.are.equal("NotFound", raised.code)
        assert.are.equal("again", raised.info)
    end)

    it("a cancelled root: cancel() returns true, run() raises fa.CancelledError", function()
        local root = fa.AsyncSteps(tool)
        local was, done
        root:add(function(asi)
            asi:wait_external()
            tool:immediate(function() was = root:cancel() end)
        end)
        root:add(function() error("never") end)
        local e = H.raises(root.run, root)
        assert.is_true(was)
        assert.is_true(fa.is_cancelled(e))
        assert.is_true(fa.is_error(e, "Cancelled"))
        assert.are.equal(fa.CancelledError, getmetatable(e))
        assert.are.equal(fa.errors.Cancelled, fa.CancelledError)
        assert.is_true(e:is(fa.CancelledError))
        local ok, e2 = root:result()
        assert.is_false(ok)
        assert.is_true(fa.is_cancelled(e2))
        -- not executing: false; on_done says cancelled once
        assert.is_false(root:cancel())
        root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:wait_external() end)
        root:execute(nil, function(ok3, e3) done = { ok3, fa.is_cancelled(e3) } end)
        assert.is_true(root:cancel())
        assert.are.same({ false, true }, done)
        assert.is_false(root:cancel())
    end)

    it("a root runs again after an unhandled error and after a cancel", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("First") end)
        root:add(function(asi) asi:success("left over") end) -- not run: the error
        assert.are.equal("First", H.raises(root.run, root).code)
        -- an unhandled error drops the root's unrun steps, as a cancel does
        -- and as the reference does (tests/expected/q14_unhandled_rerun)
        root:add(function(asi, v) asi:success(tostring(v) .. ", second") end)
        assert.are.equal("nil, second", root:run())
        root:add(function(asi) asi:wait_external() end)
        root:add(function() error("never") end)
        root:execute()
        assert.is_true(root:cancel())
        root:add(function(asi) asi:success("third") end)
        assert.are.equal("third", root:run())
        local ok, v = root:result()
        assert.are.same({ true, "third" }, { ok, v })
    end)

    it("free() of an executing root ends it as cancelled", function()
        local done
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:wait_external() end)
        root:execute(nil, function(ok, e) done = { ok, fa.is_cancelled(e) } end)
        root:free()
        assert.are.same({ false, true }, done)
        assert.are.equal(0, tool:executing())
    end)

    it("on_done runs as the flow ends: executing again works from a later callback", function()
        local runs, refused = 0, nil
        local root = fa.AsyncSteps(tool)
        local function again(ok, v)
            runs = runs + 1
            assert.is_true(ok)
            assert.are.equal(runs - 1, v)
            assert.are.equal("idle", root:status())
            if runs == 1 then
                refused = H.raises(root.execute, root)
            end
            if runs < 3 then
                tool:immediate(function()
                    root:add(function(asi) asi:success(runs) end)
                    root:execute(nil, again)
                end)
            else
                error("in on_done: printed, the root still ends")
            end
        end
        root:add(function(asi) asi:success(0) end)
        root:execute(nil, again)
        tool:run()
        assert.are.equal(3, runs)
        assert.truthy(tostring(refused):find("the root is ending", 1, true), tostring(refused))
        assert.are.equal("idle", root:status())
        assert.are.equal(0, tool:executing())
    end)

    it("refuses a bad on_done and on_done on a handle that is no root of a Tool", function()
        local root = fa.AsyncSteps(tool)
        assert.truthy(tostring(H.raises(root.execute, root, nil, 5)):find("on_done must be a function", 1, true))
        assert.truthy(tostring(H.raises(root.result, fa.wrap(root:binary()))):find("only a root", 1, true))
    end)
end)
