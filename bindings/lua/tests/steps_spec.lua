-- The FTN12 API in Lua, the flow itself: steps, values (every kind, both
-- ways), errors, timeouts, cancel, parallel, loops and labels, names,
-- state (the same as the accessors), the Tool of a step.
local H = require "helper"
local fa = H.fa

local THIS = "steps_spec.lua"

describe("steps", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("run in order and pass values on; run() returns the last ones", function()
        local seen = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) seen[#seen + 1] = "a"; asi:success(1, "two") end)
        root:add(function(asi, a, b)
            seen[#seen + 1] = "b"
            assert.are.equal(1, a)
            assert.are.equal("two", b)
            asi:add(function(asi2) seen[#seen + 1] = "b.1"; asi2:success(a + 1) end)
        end)
        root:add(function(asi, v) seen[#seen + 1] = "c"; asi:success(v, v * 10) end)
        local x, y = root:run()
        assert.are.same({ "a", "b", "b.1", "c" }, seen)
        assert.are.equal(2, x)
        assert.are.equal(20, y)
    end)

    it("hold a step function added many times until its last step ends", function()
        -- one function in many steps is anchored once and counted
        -- (lua_ctx.c, FL_H_SHARED); another function meanwhile takes its
        -- record's own slot; all are let go when their steps end
        local refs0 = H.settle()
        local weak = setmetatable({}, { __mode = "k" })
        local count, last = 0, nil
        do
            local f = function(asi, v) count = count + 1; asi:success((v or 0) + 1) end
            local g = function(asi, v) count = count + 1; asi:success(v + 100) end
            weak[f], weak[g] = true, true
            local root = fa.AsyncSteps(tool)
            for _ = 1, 100 do root:add(f) end
            root:add(g)
            root:add(f)
            root:add(function(asi, v) last = v end)
            f, g = nil, nil
            collectgarbage()
            collectgarbage()
            local n = 0
            for _ in pairs(weak) do n = n + 1 end
            assert.are.equal(2, n) -- the queued steps hold both
            root:execute()
            tool:run()
        end
        assert.are.equal(102, count)
        assert.are.equal(201, last)
        collectgarbage()
        collectgarbage()
        assert.is_nil(next(weak))
        assert.are.equal(refs0, (H.settle()))
    end)

    it("report where a step function added many times failed", function()
        local refs0 = H.settle()
        do
            local line = debug.getinfo(1, "l").currentline + 1
            local f = function(asi, v) if v == 3 then asi:error("Mine", "at 3") end asi:success((v or 0) + 1) end
            local root = fa.AsyncSteps(tool)
            for _ = 1, 5 do root:add(f) end
            local ok, e = pcall(root.run, root)
            assert.is_false(ok)
            assert.are.equal("Mine", e.code)
            assert.are.equal("at 3", e.info)
            assert.truthy(e.async_stack, "an async stack")
            assert.are.equal("lua", e.async_stack[1].language)
            assert.are.equal(line, e.async_stack[1].line)
        end
        assert.are.equal(refs0, (H.settle())) -- nothing anchored after the flow
    end)

    -- Async stacks: a frame of a function a loaded module's table holds is
    -- named "module.field" (as Lua's own tracebacks name it), with the
    -- function's file:line; a coroutine step (fa.async) is the user's
    -- function, never the Lua layer's wrapper in futoin_async/async.lua.
    it("name a step a loaded module holds module.field in async stacks", function()
        local line = debug.getinfo(1, "l").currentline + 2
        local mod = {
            apply = function(asi) asi:error("Mine", "price") end,
            later = fa.async(function(asi)
                fa.await(asi, function(cb) tool:immediate(function() cb(nil) end) end)
                error("after await")
            end),
        }
        package.loaded["pricing_test"] = mod
        rawset(_G, "global_step", function(asi) asi:error("Mine", "global") end)
        local function frames_of(step)
            local root = fa.AsyncSteps(tool)
            root:add(function(asi) asi:add(step) end)
            local ok, e = pcall(root.run, root)
            assert.is_false(ok)
            return e.async_stack, e
        end
        local f = frames_of(mod.apply)
        assert.are.same({ language = "lua", ["function"] = "pricing_test.apply",
                          file = THIS, line = line }, f[1])
        assert.are.equal("lua", f[2].language)
        assert.is_nil(f[2]["function"]) -- an anonymous function: its file:line
        local e
        f, e = frames_of(mod.later)
        assert.are.same({ language = "lua", ["function"] = "pricing_test.later",
                          file = THIS, line = line + 1 }, f[1])
        assert.truthy(e:async_traceback():find("\n\t[lua] " .. THIS .. ":" .. (line + 1)
            .. ": in function 'pricing_test.later'\n", 1, true), e:async_traceback())
        f = frames_of(global_step)
        assert.are.equal("global_step", f[1]["function"]) -- "_G." left out
        -- an anonymous coroutine step: the user's function, not the wrapper
        local cline = debug.getinfo(1, "l").currentline + 1
        f, e = frames_of(fa.async(function() error("in a coroutine") end))
        assert.are.same({ language = "lua", file = THIS, line = cline }, f[1])
        assert.falsy(e:async_traceback():find("futoin_async/", 1, true), e:async_traceback())
        package.loaded["pricing_test"] = nil
        rawset(_G, "global_step", nil)
    end)

    it("keep integers, floats, booleans, binary strings, arrays and tables", function()
        local t = { name = "obj" }
        local f = function() end
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(2.0, -7, false, 1e300) end)
        root:add(function(asi, f, i, b, d)
            -- numbers and booleans take the binding's fast path both ways
            assert.are.equal("float", math.type(f))
            assert.are.equal(2.0, f)
            assert.are.equal("integer", math.type(i))
            assert.are.equal(-7, i)
            assert.are.equal(false, b)
            assert.are.equal(1e300, d)
            asi:success()
        end)
        root:add(function(asi) asi:success(42, 1.5, true, "a\0b\0") end)
        root:add(function(asi, i, d, b, s)
            assert.are.equal("integer", math.type(i))
            assert.are.equal(42, i)
            assert.are.equal("float", math.type(d))
            assert.are.equal(1.5, d)
            assert.are.equal(true, b)
            assert.are.equal("a\0b\0", s)
            assert.are.equal(4, #s)
            asi:success({ 1, 2, 3 }, { 0.5, 2 }, t, f)
        end)
        root:add(function(asi, ints, floats, tt, ff)
            assert.are.same({ 1, 2, 3 }, ints)
            assert.are.equal("integer", math.type(ints[1]))
            assert.are.same({ 0.5, 2.0 }, floats)
            assert.are.equal("float", math.type(floats[2]))
            assert.are.equal(t, tt) -- the same table, not a copy
            assert.are.equal(f, ff)
            asi:success(nil, fa.bytes("\1\0\2"), false)
        end)
        root:add(function(asi, n, bytes, no)
            assert.is_nil(n)
            -- binary data stays binary: an fa.bytes() value, not a string
            assert.is_true(fa.is_bytes(bytes))
            assert.are.equal(fa.bytes("\1\0\2"), bytes)
            assert.are.equal("\1\0\2", tostring(bytes))
            assert.are.equal(3, #bytes)
            assert.are.equal("010002", bytes:hex())
            assert.are.equal(false, no)
        end)
        root:run()
    end)

    it("convert every value kind through FutoInBinaryValue", function()
        local function rt(v)
            local back, flags = fa.roundtrip(v)
            return back, flags
        end
        local v, fl = rt(7)
        assert.are.equal(0x09, fl); assert.are.equal(7, v)
        v, fl = rt(math.maxinteger)
        assert.are.equal(0x09, fl); assert.are.equal(math.maxinteger, v)
        v, fl = rt(2.5)
        assert.are.equal(0x0F, fl); assert.are.equal(2.5, v)
        v, fl = rt(true)
        assert.are.equal(0x05, fl); assert.are.equal(true, v)
        v, fl = rt("x\0y")
        assert.are.equal(0x02, fl); assert.are.equal("x\0y", v)
        v, fl = rt({ 1, 2 })
        assert.are.equal(0x19, fl); assert.are.same({ 1, 2 }, v)
        v, fl = rt({ 1, 2.5 })
        assert.are.equal(0x1F, fl); assert.are.same({ 1.0, 2.5 }, v)
        v, fl = rt(fa.bytes("ab\0"))
        assert.are.equal(0x1A, fl); assert.are.equal(fa.bytes("ab\0"), v)
        v, fl = rt(v)
        assert.are.equal(0x1A, fl); assert.are.equal("ab\0", v[1])
        local mixed = { 1, 2, x = 3 }
        v, fl = rt(mixed)
        assert.are.equal(0x01, fl); assert.are.equal(mixed, v)
        local withmt = setmetatable({ 1, 2 }, {})
        v, fl = rt(withmt)
        assert.are.equal(0x01, fl); assert.are.equal(withmt, v)
        local empty = {}
        v, fl = rt(empty)
        assert.are.equal(0x01, fl); assert.are.equal(empty, v)
        local strs = { "a", "b" }
        v, fl = rt(strs)
        assert.are.equal(0x01, fl); assert.are.equal(strs, v)
        v, fl = rt(nil)
        assert.are.equal(0x01, fl); assert.is_nil(v)
        local co = coroutine.create(function() end)
        v, fl = rt(co)
        assert.are.equal(co, v)
    end)

    it("accept every base type and array kind of other languages", function()
        local core = fa.core
        assert.are.equal("h\xc3\xa9\xf0\x9f\x98\x80", core._test_value("string16"))
        assert.are.equal("h\xc3\xa9\xf0\x9f\x98\x80", core._test_value("string32"))
        assert.are.equal("no length", core._test_value("string_nolen"))
        assert.are.equal(-5, core._test_value("int8"))
        assert.are.equal(4000000000, core._test_value("uint32"))
        local big = core._test_value("uint64max")
        assert.are.equal("float", math.type(big))
        assert.is_true(big > math.maxinteger)
        assert.are.equal(0.5, core._test_value("float"))
        assert.are.same({ true, false }, core._test_value("arr_bool"))
        assert.are.same({ -1, 0, 127 }, core._test_value("arr_int8"))
        assert.are.same({ 1, 65535 }, core._test_value("arr_uint16"))
        assert.are.same({ 0.25, -2.0 }, core._test_value("arr_float"))
        local u = core._test_value("arr_uint64")
        assert.are.equal(7, u[1])
        assert.is_true(u[2] > math.maxinteger)
        local strs = core._test_value("arr_string")
        assert.are.equal("userdata", type(strs))
        assert.truthy(tostring(strs):find("Opaque", 1, true))
    end)

    it("carry values of another language as Opaque, moved once, cleaned once", function()
        local core = fa.core
        local before = core._test_cleanups()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(core._test_value("custom"), 5) end)
        root:add(function(asi, o, n)
            assert.are.equal("userdata", type(o))
            assert.are.equal(5, n)
            asi:success(o) -- passed on: moved back out
            -- a spent Opaque is refused, nothing else moved
            local e = H.raises(fa.roundtrip, o)
            assert.truthy(tostring(e):find("already passed on", 1, true))
        end)
        root:add(function(asi, o)
            assert.are.equal("userdata", type(o))
        end)
        root:run()
        root = nil
        collectgarbage(); collectgarbage()
        assert.are.equal(before + 1, core._test_cleanups())
        -- dropped without being passed on: its __gc cleans it up
        do local _ = core._test_value("custom") end
        collectgarbage(); collectgarbage()
        assert.are.equal(before + 2, core._test_cleanups())
    end)

    it("repeat the error handler's values after recovery", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("MyError", "why") end,
            function(asi, code)
                assert.are.equal("MyError", code)
                assert.are.equal("why", asi:state().error_info)
                assert.is_true(fa.is_error(asi:state().last_exception, "MyError"))
                asi:success("recovered", 3)
            end)
        root:add(function(asi, v, n) asi:success(v .. n) end)
        assert.are.equal("recovered3", root:run())
    end)

    it("error() ends the step's code; the error handler may add steps", function()
        local after, order = false, {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:error("Boom")
            after = true
        end, function(asi, code)
            order[#order + 1] = "eh " .. code
            asi:add(function(a2) order[#order + 1] = "from eh"; a2:success("ok") end)
        end)
        root:add(function(asi, v) order[#order + 1] = v end)
        root:run()
        assert.is_false(after)
        assert.are.same({ "eh Boom", "from eh", "ok" }, order)
    end)

    it("turn a Lua error into InternalError with the traceback", function()
        local thrown = { reason = "a table error" }
        local info, last, code
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            local x = nil
            return x.field -- a runtime error
        end, function(asi, c)
            code = c
            info = asi:state().error_info
            asi:success()
        end)
        root:add(function(asi) error(thrown) end, function(asi, c)
            last = asi:state().last_exception
            asi:success()
        end)
        root:run()
        assert.are.equal("InternalError", code)
        assert.truthy(info:find("attempt to index", 1, true))
        assert.truthy(info:find("stack traceback:", 1, true))
        assert.truthy(info:find(THIS, 1, true))
        assert.are.equal(thrown, last)
    end)

    it("raise an unhandled error from run() as FutoInError with its cause", function()
        local root = fa.AsyncSteps(tool)
        root:add(function() error("plain") end)
        local e = H.raises(root.run, root)
        assert.is_true(fa.is_error(e, "InternalError"))
        assert.truthy(e.info:find("plain", 1, true))
        assert.truthy(tostring(e.cause):find("plain", 1, true))
        root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("NotImplemented", "later") end)
        e = H.raises(root.run, root)
        assert.are.equal("NotImplemented", e.code)
        assert.are.equal("later", e.info)
        -- a FutoInError raised by hand keeps its code and info
        root = fa.AsyncSteps(tool)
        root:add(function() error(fa.errors.Unauthorized("who?")) end)
        e = H.raises(root.run, root)
        assert.are.equal("Unauthorized", e.code)
        assert.are.equal("who?", e.info)
    end)

    it("give execute()'s callback the code, error_info and last_exception", function()
        local got
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("E1", "info1") end)
        root:execute(function(code, info, last) got = { code, info, last } end)
        tool:run()
        assert.are.equal("E1", got[1])
        assert.are.equal("info1", got[2])
        assert.is_true(fa.is_error(got[3], "E1"))
    end)

    it("wait for an external completion", function()
        tool = fa.Tool { virtual_time = true } -- the clock says when
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:wait_external()
            assert.are.equal("active", asi:status())
            tool:deferred(5, function()
                assert.are.equal("waiting", asi:status())
                assert.is_true(asi:success("late", 1))
            end)
        end)
        root:add(function(asi, v, n) asi:success(v .. n .. " at " .. tool:now()) end)
        assert.are.equal("late1 at 5", root:run())
    end)

    it("complete a waiting step with error() from outside without raising", function()
        local root = fa.AsyncSteps(tool)
        local ret
        root:add(function(asi)
            asi:wait_external()
            tool:immediate(function() ret = asi:error("ExtError", "from timer") end)
        end, function(asi, code) asi:success(code) end)
        assert.are.equal("ExtError", root:run())
        assert.is_true(ret)
    end)

    it("time out a waiting step; a late completion returns false", function()
        tool = fa.Tool { virtual_time = true } -- the clock says when
        local root = fa.AsyncSteps(tool)
        local late, step, code
        root:add(function(asi)
            step = asi
            asi:set_timeout(5)
            asi:wait_external()
        end, function(asi, c)
            code = c .. " at " .. tool:now()
            -- the timeout fired: a completion now comes late (ordered by
            -- the loop, not by a longer timer)
            tool:immediate(function() late = step:success("late") end)
            asi:success()
        end)
        root:run()
        assert.are.equal("Timeout at 5", code)
        assert.is_false(late)
        assert.are.equal("lost", step:status())
        assert.is_false(step:is_valid())
    end)

    it("call cancel handlers when a root is cancelled", function()
        local root = fa.AsyncSteps(tool)
        local log = {}
        root:add(function(asi)
            asi:set_cancel(function(a) log[#log + 1] = "cancel" end)
            asi:wait_external()
            tool:immediate(function() root:cancel() end)
        end)
        root:add(function() log[#log + 1] = "never" end)
        root:execute()
        tool:run()
        assert.are.same({ "cancel" }, log)
        assert.are.equal("idle", root:status())
    end)

    it("run parallel branches and collect their state", function()
        local root = fa.AsyncSteps(tool)
        local log = {}
        root:add(function(asi)
            local p = asi:parallel()
            p:add(function(a) log[#log + 1] = "b1"; a:state().r1 = 1 end)
            p:add(function(a)
                log[#log + 1] = "b2"
                a:add(function(a2) log[#log + 1] = "b2.1"; a2:state().r2 = 2 end)
            end)
        end)
        root:add(function(asi) asi:success(asi:state().r1 + asi:state().r2) end)
        assert.are.equal(3, root:run())
        assert.are.same({ "b1", "b2", "b2.1" }, log)
    end)

    it("cancel the other branches when one fails", function()
        local root = fa.AsyncSteps(tool)
        local log = {}
        root:add(function(asi)
            asi:parallel(function(a, code) log[#log + 1] = "par " .. code end)
                :add(function(a)
                    a:set_cancel(function() log[#log + 1] = "cancel 1" end)
                    a:wait_external()
                end)
                :add(function(a) a:error("Fail2") end)
        end, function(asi, code) log[#log + 1] = "outer " .. code end)
        root:execute()
        tool:run()
        assert.are.same({ "cancel 1", "par Fail2", "outer Fail2" }, log)
    end)

    it("loop with break and continue by label", function()
        local root = fa.AsyncSteps(tool)
        local log, outer = {}, 0
        root:add(function(asi)
            asi:loop(function(a)
                outer = outer + 1
                if outer > 3 then a:break_loop() end
                local inner = 0
                a:loop(function(b)
                    inner = inner + 1
                    if inner == 2 then b:continue_loop("OUTER") end
                    log[#log + 1] = outer .. "." .. inner
                end, "INNER")
            end, "OUTER")
        end)
        root:add(function(asi) log[#log + 1] = "after" end)
        root:run()
        assert.are.same({ "1.1", "2.1", "3.1", "after" }, log)
    end)

    it("repeat with a 1-based index, and for_each in a deterministic order", function()
        local root = fa.AsyncSteps(tool)
        local log = {}
        root:add(function(asi)
            asi:repeat_loop(3, function(a, i) log[#log + 1] = "r" .. i end)
            asi:for_each({ "x", "y" }, function(a, k, v) log[#log + 1] = k .. "=" .. v end)
            asi:for_each({ b = 2, a = 1, [10] = "n" }, function(a, k, v)
                log[#log + 1] = k .. ":" .. v
            end)
            asi["repeat"](asi, 2, function(a, i)
                if i == 2 then a["break"](a) end
                log[#log + 1] = "kw" .. i
            end)
            asi:repeat_loop(0, function() log[#log + 1] = "never" end)
        end)
        root:run()
        assert.are.same({ "r1", "r2", "r3", "1=x", "2=y", "10:n", "a:1", "b:2", "kw1" }, log)
    end)

    it("offer FTN12 names and aliases for Lua keywords", function()
        local root = fa.AsyncSteps(tool)
        local mt = getmetatable(root).__index
        assert.are.equal(mt.repeat_loop, mt["repeat"])
        assert.are.equal(mt.repeat_loop, mt.repeatLoop)
        assert.are.equal(mt.break_loop, mt["break"])
        assert.are.equal(mt.break_loop, mt.breakLoop)
        assert.are.equal(mt.continue_loop, mt["continue"])
        assert.are.equal(mt.continue_loop, mt.continueLoop)
        assert.are.equal(mt.for_each, mt.forEach)
        assert.are.equal(mt.for_each, mt.loopForEach)
        assert.are.equal(mt.loop, mt.makeLoop)
        assert.are.equal(mt.set_timeout, mt.setTimeout)
        assert.are.equal(mt.set_cancel, mt.setCancel)
        assert.are.equal(mt.wait_external, mt.waitExternal)
        assert.are.equal(mt.sync, mt.addSync)
        assert.are.equal(mt.success_step, mt.successStep)
        assert.are.equal(mt.new_instance, mt.newInstance)
        assert.are.equal(mt.root_id, mt.rootId)
    end)

    it("share the state table across steps and report it per root", function()
        local r1, r2 = fa.AsyncSteps(tool), fa.AsyncSteps(tool)
        r1:state().who = "r1"
        r2:state().who = "r2"
        r1:add(function(asi) asi:success(asi:state().who) end)
        assert.are.equal("r1", r1:run())
        assert.are.equal("r2", r2:state().who)
        assert.are_not.equal(r1:root_id(), r2:root_id())
    end)

    it("success_step() adds a step that succeeds with the values", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success_step(1, "a") end)
        local a, b = root:run()
        assert.are.equal(1, a)
        assert.are.equal("a", b)
    end)

    it("keep an executing root alive when the program drops it", function()
        local done = false
        do
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                asi:wait_external()
                tool:deferred(5, function() asi:success() end)
            end)
            root:add(function() done = true end)
            root:execute()
        end
        collectgarbage(); collectgarbage()
        assert.are.equal(1, tool:executing())
        tool:run()
        assert.is_true(done)
        assert.are.equal(0, tool:executing())
    end)

    it("new_instance() is a new root on the same tool", function()
        local root = fa.AsyncSteps(tool)
        local other = root:new_instance()
        assert.are.equal(tool, other:tool())
        other:add(function(asi) asi:success("other") end)
        assert.are.equal("other", other:run())
    end)

    -- tests/ref_js/q13_loop_unwind.js, scenarios a and b: a break passes an
    -- error handler; once the loop is reached, last_exception and
    -- error_info read as nil again, in the state table as through the
    -- accessors (and the runtime).
    it("show the flow's last error the same in state() and the accessors", function()
        local function st(asi)
            local t = asi:state()
            local e, i = t.last_exception, t.error_info
            assert.are.equal(asi:last_exception(), e) -- one value, one answer
            assert.are.equal(asi:error_info(), i)
            return " last_exception=" .. (e == nil and "null" or tostring(fa.is_error(e) and e.code or e))
                .. " error_info=" .. (i == nil and "null" or i)
        end
        local trace = H.trace()
        trace("== a: a break passes an intermediate handler ==")
        local r = fa.AsyncSteps(tool)
        r:loop(function(asi)
            asi:add(function(a)
                a:add(function(b) trace("body"); b:break_loop() end)
            end, function(a, err) trace("mid onerror " .. err .. st(a)) end)
        end)
        r:add(function(asi) trace("after loop" .. st(asi)) end)
        r:run()
        trace("== b: the breaking step sees its own break ==")
        r = fa.AsyncSteps(tool)
        r:loop(function(asi)
            asi:add(function(a) trace("body"); a:break_loop() end,
                function(_, err) trace("own onerror " .. err) end)
        end)
        r:add(function(asi) trace("after loop" .. st(asi)) end)
        r:run()
        -- the reference's trace, its sections a and b
        local f = assert(io.open(H.expected_dir .. "q13_loop_unwind.trace"))
        local want = {}
        for l in f:lines() do
            if l:find("^== c:") then break end
            want[#want + 1] = l
        end
        f:close()
        assert.are.same(want, trace.lines)
        -- and error_info / last_exception are the flow's: read-only in state()
        r = fa.AsyncSteps(tool)
        r:add(function(asi) asi:state().error_info = "mine" end)
        local e = H.raises(r.run, r)
        assert.truthy(tostring(e.info):find("'error_info' is the flow's own", 1, true), tostring(e.info))
    end)

    it("tool(): the Tool of a root or step; new_instance() from a step", function()
        local seen = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) seen.par_tool = asi:parallel():tool() end)
        root:add(function(asi)
            seen.step_tool = asi:tool()
            local sub = asi:new_instance()
            seen.sub_tool = sub:tool()
            sub:add(function(a) a:success(21) end)
            -- a step waiting for another root, through set_cancel() alone
            asi:set_cancel(function() sub:cancel() end)
            sub:execute(nil, function(ok, v) asi:success(ok and v * 2) end)
        end)
        assert.are.equal(42, root:run())
        assert.are.equal(tool, seen.step_tool)
        assert.are.equal(tool, seen.par_tool)
        assert.are.equal(tool, seen.sub_tool)
        assert.are.equal(tool, root:tool())
        -- a handle of another FTN12 implementation has no Tool
        local has, foreign = pcall(require, "foreign_as")
        if has then
            local loop = foreign.loop_new()
            local w = fa.wrap(foreign.root_new(loop), true)
            assert.is_nil(w:tool())
            assert.truthy(tostring(H.raises(w.new_instance, w)):find("has no Tool", 1, true))
            w:free()
            foreign.loop_free(loop)
        end
    end)

    it("run a root again after it finished", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:success(1) end)
        assert.are.equal(1, root:run())
        root:add(function(asi) asi:success(2) end)
        assert.are.equal(2, root:run())
    end)
end)
