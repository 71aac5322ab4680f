-- The FTN12 API in Lua around the flow: the installed module (version,
-- hardening), error classes, callbacks without a flow, sync objects, the
-- Tool, misuse refused at the call site, a foreign implementation
-- (steps_spec.lua has the flow itself).
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
