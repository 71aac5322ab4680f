-- The FTN12 API in Lua around the flow: the installed module (version,
-- hardening), error classes, callbacks without a flow, sync objects, the
-- Tool, a foreign implementation (steps_spec.lua has the flow itself,
-- misuse_spec.lua what is refused at the call site).
local H = require "helper"
local fa = H.fa

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
            -- without the sanitizer runtimes test.sh --asan preloads into
            -- lua5.4: LeakSanitizer would report bash's own leaks
            local p = io.popen(("env -u LD_PRELOAD bash '%s/tests/abi/check_hardening.sh' '%s'%s 2>&1")
                :format(H.repo, elf, fortify))
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

    it("keeps the methods of roots and step handles in one table that never grows", function()
        -- glue/lua_ctx.c fl_methods_new(): the table comes with room for
        -- FL_METHODS_SIZE (64) keys, add and success first, so that their
        -- lookups stay at their main positions under any string hash seed
        -- (a rehash would undo that): more methods need a larger size there
        local S = getmetatable(fa.AsyncSteps(fa.Tool())).__index
        local n = 0
        for _ in pairs(S) do
            n = n + 1
        end
        assert.is_true(n <= 64, "methods: " .. n .. " > FL_METHODS_SIZE (64)")
        assert.are.equal(S, fa.core.metatable("step").__index)
        assert.are.equal(S, fa.core.metatable("root").__index)
        assert.are.equal(S, fa.core.metatable("light").__index)
        local fresh = fa.core._methods()
        assert.are.equal(S.add, fresh.add)
        assert.are.equal(S.success, fresh.success)
        assert.are.equal(fa.core.add, fresh.add)
        assert.are.equal(fa.core.success, fresh.success)
        assert.is_nil(next(fresh, next(fresh, next(fresh)))) -- those two only
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
        tool = fa.Tool { virtual_time = true } -- the clock says when
        local m = fa.Mutex()
        local log = {}
        local function flow(name)
            local r = fa.AsyncSteps(tool)
            r:add(function(asi) asi:success(name) end)
            r:sync(m, function(asi, n)
                log[#log + 1] = n .. " in at " .. tool:now()
                asi:wait_external()
                tool:deferred(2, function()
                    log[#log + 1] = n .. " out at " .. tool:now()
                    asi:success(n)
                end)
            end)
            r:execute()
            return r
        end
        local a, b = flow("a"), flow("b")
        H.drive(tool)
        assert.are.same({ "a in at 0", "a out at 2", "b in at 2", "b out at 4" }, log)
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
        tool = fa.Tool { virtual_time = true } -- the clock says when
        local th = fa.Throttle(1, 10, nil, tool)
        local entered = {}
        for _ = 1, 3 do
            local r = fa.AsyncSteps(tool)
            r:sync(th, function() entered[#entered + 1] = tool:now() end)
            r:execute()
        end
        tool:run()
        assert.are.same({ 0 }, entered) -- one per period of 10 ms
        H.drive(tool)
        assert.are.same({ 0, 10, 20 }, entered)
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
