-- The FTN12 API in Lua: steps, values, errors, timeouts, cancel, parallel,
-- loops, state, sync objects, tools, and misuse refused at the call site.
local H = require "helper"
local fa = H.fa

local THIS = "core_spec.lua"

describe("module", function()
    it("loads from the installed tree, not the build folder", function()
        local tree = os.getenv("FUTOIN_LUA_TREE")
        assert.is_truthy(tree, "run through test.sh (FUTOIN_LUA_TREE)")
        local lua = package.searchpath("futoin_async", package.path)
        local so = package.searchpath("futoin_async.core", package.cpath)
        assert.are.equal(tree, lua:sub(1, #tree))
        assert.are.equal(tree, so:sub(1, #tree))
        assert.is_nil(so:find("build", #tree + 1, true))
    end)

    it("carries the project's version: rock, module and library (top meson.build)", function()
        local f = assert(io.open(H.repo .. "/meson.build"))
        local top = f:read("a"):match("project%b()"):match("version:%s*'([^']+)'")
        f:close()
        assert.are.equal("0.3.0", top)
        assert.are.equal(top, fa.version())   -- the library the rock carries
        assert.are.equal(top, fa._VERSION)    -- the Lua module
        -- the installed rock (luarocks' manifest of the tree the suite runs
        -- from; the sanitizer and valgrind modes install by hand)
        if os.getenv("FUTOIN_LUA_ROCK") ~= "1" then
            return
        end
        local tree = assert(os.getenv("FUTOIN_LUA_TREE"))
        local p = io.popen("ls '" .. tree .. "/lib/luarocks/rocks-5.4/futoin_async'")
        local versions = p:read("a")
        p:close()
        assert.are.equal(top .. "-1\n", versions)
    end)

    it("is built hardened: core.so, the host plug-in and the runtime it carries", function()
        -- tests/abi/check_hardening.sh reads the flags back from each ELF
        -- file (stack protector, full RELRO + BIND_NOW, non-executable
        -- stack; _FORTIFY_SOURCE where the build is optimised)
        local dir = package.searchpath("futoin_async.core", package.cpath):match("^(.*)/core%.so$")
        local fortify = os.getenv("FUTOIN_LUA_FORTIFY") == "1" and " --fortify" or ""
        for _, elf in ipairs({ dir .. "/core.so", dir .. "/futoin-hosts/libfutoin_host_lua.so",
            dir .. "/libfutoin_async.so.0" }) do
            local p = io.popen(("bash '%s/tests/abi/check_hardening.sh' '%s'%s 2>&1"):format(
                H.repo, elf, fortify))
            local out = p:read("a")
            local ok = p:close()
            assert.is_true(ok, elf .. ":\n" .. out)
            assert.truthy(out:find("hardening: %d+ passed, 0 failed"), out)
        end
    end)

    it("reports the library version and the standard error codes", function()
        assert.are.equal("0.3.0", fa.version())
        assert.are.equal("Timeout", fa.Errors.Timeout)
        assert.are.equal("InternalError", fa.Errors.InternalError)
        local e = fa.errors.Timeout("too slow")
        assert.is_true(fa.is_error(e, "Timeout"))
        assert.is_true(e:is(fa.errors.Timeout))
        assert.are.equal("Timeout: too slow", tostring(e))
        assert.are.equal("myerror", fa.FutoInError("myerror").code)
    end)
end)

describe("errors", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("any code has a class in fa.errors, made on first use and kept", function()
        local NotFound = fa.errors.NotFound
        assert.is_table(NotFound)
        assert.are.equal(NotFound, fa.errors.NotFound)
        assert.are.equal("NotFound", NotFound.code)
        local e = NotFound("no such order")
        assert.are.equal(NotFound, getmetatable(e))
        assert.is_true(e:is(NotFound))
        assert.is_true(e:is("NotFound"))
        assert.is_false(e:is(fa.errors.Timeout))
        assert.is_true(fa.is_error(e, NotFound))
        assert.are.equal("NotFound: no such order", tostring(e))
        -- a standard code keeps its class and description
        assert.are.equal(fa.errors.Timeout, getmetatable(fa.FutoInError("Timeout")))
        assert.is_string(fa.errors.Timeout.description)
        -- codes that cannot be: refused; other keys: nil
        assert.truthy(tostring(H.raises(function() return fa.errors["Not\0Found"] end))
            :find("embedded NUL", 1, true))
        assert.truthy(tostring(H.raises(function() return fa.errors[""] end))
            :find("must not be empty", 1, true))
        assert.is_nil(fa.errors[42])
        assert.truthy(tostring(H.raises(fa.FutoInError, "a\0b")):find("embedded NUL", 1, true))
    end)

    it("an error raised with any code reaches handlers as an instance of its class", function()
        local seen = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("NotFound", "by asi:error()") end, function(asi, code)
            local last = asi:last_exception()
            seen[#seen + 1] = { code, getmetatable(last) == fa.errors.NotFound, last.info }
            asi:success()
        end)
        root:add(function() error(fa.errors.NotFound("raised by hand")) end, function(asi, code)
            local last = asi:state().last_exception
            seen[#seen + 1] = { code, last:is(fa.errors.NotFound), last.info }
            asi:success()
        end)
        root:add(function() error(fa.errors.MyOwnCode()) end)
        local e = H.raises(root.run, root)
        assert.are.same({ { "NotFound", true, "by asi:error()" },
            { "NotFound", true, "raised by hand" } }, seen)
        assert.are.equal(fa.errors.MyOwnCode, getmetatable(e))
        assert.is_true(fa.is_error(e, fa.errors.MyOwnCode))
    end)

    it("an error whose code can have no class (empty) still reaches run()", function()
        local root = fa.AsyncSteps(tool)
        root:add(function() error(setmetatable({ code = "", info = "empty" }, fa.FutoInError.class)) end)
        local e = H.raises(root.run, root)
        assert.is_true(fa.is_error(e))
        assert.are.same({ "", "empty" }, { e.code, e.info })
    end)
end)

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
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:wait_external()
            assert.are.equal("active", asi:status())
            tool:deferred(5, function()
                assert.are.equal("waiting", asi:status())
                assert.is_true(asi:success("late", 1))
            end)
        end)
        root:add(function(asi, v, n) asi:success(v .. n) end)
        assert.are.equal("late1", root:run())
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
        local root = fa.AsyncSteps(tool)
        local late, step, code
        root:add(function(asi)
            step = asi
            asi:set_timeout(5)
            asi:wait_external()
        end, function(asi, c)
            code = c
            -- the timeout fired: a completion now comes late (ordered by
            -- the loop, not by a longer timer)
            tool:immediate(function() late = step:success("late") end)
            asi:success()
        end)
        root:run()
        assert.are.equal("Timeout", code)
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

describe("callbacks without a flow", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("an error in a cancel handler is printed; the cancel goes on", function()
        local root = fa.AsyncSteps(tool)
        local after = false
        root:add(function(asi)
            asi:set_cancel(function() error("in a cancel handler") end)
            asi:wait_external()
            tool:immediate(function() root:cancel(); after = true end)
        end)
        root:execute()
        tool:run()
        assert.is_true(after)
        assert.are.equal("idle", root:status())
    end)

    it("an error in execute()'s callback is printed; the root still ends", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:error("E") end)
        root:execute(function() error("in the unhandled callback") end)
        tool:run()
        assert.are.equal("idle", root:status())
        assert.are.equal(0, tool:executing())
    end)

    it("Tool:run() from a coroutine runs the steps on that coroutine", function()
        local root = fa.AsyncSteps(tool)
        local seen, yielded
        root:add(function(asi)
            seen = coroutine.running()
            -- a yield here would cross the C call of the trampoline
            local ok, e = pcall(coroutine.yield)
            yielded = ok or tostring(e)
            asi:success(1)
        end)
        local co = coroutine.create(function() return root:run() end)
        local ok, v = coroutine.resume(co)
        assert.is_true(ok)
        assert.are.equal(1, v)
        assert.are.equal(co, seen)
        assert.truthy(tostring(yielded):find("C-call boundary", 1, true))
    end)

    it("a nested Tool:run() from a step is refused", function()
        local root = fa.AsyncSteps(tool)
        local err
        root:add(function(asi)
            local ok, e = pcall(tool.run, tool)
            err = e
        end)
        root:run()
        assert.truthy(tostring(err):find("refused", 1, true))
    end)
end)

describe("sync objects", function()
    local tool
    before_each(function() tool = fa.Tool() end)

    it("Mutex keeps critical sections apart", function()
        local m = fa.Mutex()
        local log = {}
        local function flow(name)
            local r = fa.AsyncSteps(tool)
            r:add(function(asi) asi:success(name) end)
            r:sync(m, function(asi, n)
                log[#log + 1] = n .. " in"
                asi:wait_external()
                tool:deferred(2, function()
                    log[#log + 1] = n .. " out"
                    asi:success(n)
                end)
            end)
            r:execute()
            return r
        end
        local a, b = flow("a"), flow("b")
        tool:run()
        assert.are.same({ "a in", "a out", "b in", "b out" }, log)
        a, b = nil, nil
        m:close()
    end)

    it("Limiter rejects over its queue with DefenseRejected", function()
        local lim = fa.Limiter { concurrent = 1, max_queue = 0, tool = tool }
        local codes = {}
        local roots = {}
        for i = 1, 2 do
            local r = fa.AsyncSteps(tool)
            r:add(function(asi)
                asi:sync(lim, function(a)
                    a:wait_external()
                    tool:deferred(2, function() a:success() end)
                end)
            end, function(asi, code) codes[#codes + 1] = code end)
            r:execute()
            roots[i] = r
        end
        tool:run()
        assert.are.same({ "DefenseRejected" }, codes)
        roots = nil
        collectgarbage()
        lim:close()
    end)

    it("Throttle lets max entries in per period", function()
        local th = fa.Throttle(1, 10, nil, tool)
        local n = 0
        for _ = 1, 2 do
            local r = fa.AsyncSteps(tool)
            r:sync(th, function() n = n + 1 end)
            r:execute()
        end
        tool:run()
        assert.are.equal(2, n)
        collectgarbage()
        th:close()
    end)

    it("refuse bad parameters", function()
        assert.truthy(tostring(H.raises(fa.Mutex, 0)):find("max must be an integer >= 1", 1, true))
        assert.truthy(tostring(H.raises(fa.Throttle)):find("max is required", 1, true))
        local root = fa.AsyncSteps(tool)
        local e = H.raises(root.sync, root, {}, function() end)
        assert.truthy(tostring(e):find("Mutex, Throttle or Limiter", 1, true))
    end)
end)

describe("tool", function()
    it("runs immediates and timers, and cancels them", function()
        local tool = fa.Tool()
        local log = {}
        tool:deferred(5, function() log[#log + 1] = "d5" end)
        local t = tool:deferred(1, function() log[#log + 1] = "never" end)
        tool:immediate(function() log[#log + 1] = "imm" end)
        assert.is_true(t:pending())
        assert.is_true(t:cancel())
        assert.is_false(t:cancel())
        tool:run()
        assert.are.same({ "imm", "d5" }, log)
        assert.is_true(tool:is_same_thread())
    end)

    it("prints errors of timer callbacks and goes on", function()
        local tool = fa.Tool()
        local after = false
        tool:immediate(function() error("in a timer") end)
        tool:immediate(function() after = true end)
        tool:run()
        assert.is_true(after)
    end)

    it("refuses close() while roots live, and then closes", function()
        local tool = fa.Tool()
        local root = fa.AsyncSteps(tool)
        local e = H.raises(tool.close, tool)
        assert.truthy(tostring(e):find("still alive", 1, true))
        root:free()
        tool:close()
        assert.truthy(tostring(H.raises(tool.run, tool)):find("closed", 1, true))
        assert.truthy(tostring(H.raises(fa.AsyncSteps, tool)):find("closed", 1, true))
    end)
end)

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

describe("foreign FTN12 implementation", function()
    local has, foreign = pcall(require, "foreign_as")

    it("drives a foreign handle through fa.wrap()", function()
        assert.is_true(has, "foreign_as test module (built by test.sh)")
        local loop = foreign.loop_new()
        local root = fa.wrap(foreign.root_new(loop), true)
        local log, errors = {}, {}
        root:add(function(asi)
            log[#log + 1] = "s1"
            asi:state().x = 1
            asi:add(function(a) a:success(2, "two", { 1, 2 }) end)
        end)
        root:add(function(asi, a, b, c)
            log[#log + 1] = table.concat({ "s2", a, b, c[1], c[2], asi:state().x }, " ")
            asi:error("MyError", "why")
        end, function(asi, code)
            log[#log + 1] = "eh " .. code
            asi:success("recovered")
        end)
        root:add(function(asi, v) log[#log + 1] = "s3 " .. v end)
        root:repeat_loop(2, function(asi, i) log[#log + 1] = "rep " .. i end)
        root:execute(function(code) errors[#errors + 1] = code end)
        foreign.run(loop)
        assert.are.same({ "s1", "s2 2 two 1 2 1", "eh MyError", "s3 recovered",
            "rep 1", "rep 2" }, log)
        assert.are.same({}, errors)
        root:add(function() error("boom") end)
        root:execute(function(code, info) errors[#errors + 1] = code end)
        foreign.run(loop)
        assert.are.same({ "InternalError" }, errors)
        root:free()
        assert.are.equal(0, foreign.live_roots(loop))
        foreign.loop_free(loop)
    end)
end)
