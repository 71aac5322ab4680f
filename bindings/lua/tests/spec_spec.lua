-- The spec's examples (FTN12 §1.1, §1.2, §1.2.1, §1.3, §1.4, §1.8,
-- §3.1–§3.5, unhandled errors) in Lua, compared whole with the reference
-- traces in tests/expected/ (the same files tests/test_spec.c replays):
-- EVERY s*.trace there, which the last test checks.
--
-- Deliberate Lua differences, applied when printing so that the traces stay
-- the reference's: repeat_loop() counts from 1 and for_each() over a
-- sequence gives Lua's 1-based keys, so the 0-based index of the reference
-- is printed as i - 1. An error no handler recovers is recorded through
-- execute()'s callback, not printed (as in the C suite). The two places
-- where the C suite compares with an edited reference trace are the same
-- here (the synchronous §1.4 variant, which the reference gets wrong, and
-- the uncaught JS exception of s_unhandled).
local H = require "helper"
local fa = H.fa

-- The traces the tests below compared with, by name.
local replayed = {}

-- The lines of tests/expected/<name>.trace.
local function load_trace(name)
    local f = assert(io.open(H.expected_dir .. name .. ".trace", "rb"))
    local lines = {}
    for line in f:lines() do lines[#lines + 1] = line end
    f:close()
    return lines
end

-- The lines of the section "== <name> ==" of a trace (header included),
-- up to the next section.
local function section(lines, name)
    local out, on = {}, false
    for _, l in ipairs(lines) do
        if l:match("^== .* ==$") then
            on = l == "== " .. name .. " =="
        end
        if on then out[#out + 1] = l end
    end
    assert(#out > 0, "no section " .. name)
    return out
end

local function fmt(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    return "[" .. table.concat(t, ",", 1, t.n) .. "]"
end

describe("spec examples", function()
    local tool, trace, unhandled
    before_each(function()
        tool = fa.Tool()
        trace = H.trace()
        unhandled = {}
    end)

    -- On a virtual-time tool: what is due now, then timer by timer until
    -- no timer is left.
    local function run(root)
        root:execute(function(code) unhandled[#unhandled + 1] = code end)
        tool:run()
        while tool:is_virtual() and tool:next_due() do
            tool:advance(tool:next_due())
        end
    end

    -- The examples with a timer run on both clocks: the same trace on a
    -- virtual-time Tool, whose clock then says when the flow ended.
    local clocks = { "wall", "virtual" }
    local function use_clock(clock)
        if clock == "virtual" then
            tool:close()
            tool = fa.Tool { virtual_time = true }
        end
    end

    -- compare the whole trace with tests/expected/<name>.trace
    local function expect(name)
        trace:expect(name)
        replayed[name] = true
    end

    -- §1.1: every parallel() has one branch printing its name, or two
    -- branches that each add a sub-step (s1_1_levels_2br)
    for _, two in ipairs({ false, true }) do
        it("§1.1 levels" .. (two and " (two branches each)" or ""), function()
            local function par(asi, lvl)
                local p = asi:parallel()
                if not two then
                    p:add(function() trace("Level " .. lvl .. " parallel #2") end)
                    return
                end
                for k = 1, 2 do
                    local name = "Level " .. lvl .. " parallel #2 branch " .. k
                    p:add(function(b)
                        trace(name)
                        b:add(function() trace(name .. " sub") end)
                    end)
                end
            end
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                trace("Level 0 add #1")
                asi:add(function(asi1)
                    trace("Level 1 add #1")
                    asi1:add(function() trace("Level 2 add #1") end)
                    par(asi1, 2)
                    asi1:add(function() trace("Level 2 add #3") end)
                end)
                par(asi, 1)
                asi:add(function() trace("Level 1 add #3") end)
            end)
            par(root, 0)
            root:add(function() trace("Level 0 add #3") end)
            run(root)
            expect(two and "s1_1_levels_2br" or "s1_1_levels")
            assert.are.same({}, unhandled)
        end)
    end

    it("§1.2 error handlers", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            trace("Level 0 func")
            asi:add(function(asi1)
                trace("Level 1 func")
                asi1:error("myerror")
            end, function(asi1, err)
                trace("Level 1 onerror: " .. err)
                asi1:error("newerror")
            end)
        end, function(asi, err)
            trace("Level 0 onerror: " .. err)
            asi:success("Prm")
        end)
        root:add(function(asi, prm) trace("Level 0 func2: " .. prm) end)
        run(root)
        expect("s1_2")
        assert.are.same({}, unhandled)
    end)

    it("§1.2.1 steps added by an error handler", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            trace("Level 0 func")
            asi:add(function(asi1)
                trace("Level 1 func")
                asi1:error("first")
            end, function(asi1, err)
                trace("Level 1 onerror: " .. err)
                asi1:add(function(asi2)
                    trace("Level 2 func")
                    asi2:error("second")
                end, function(_, e) trace("Level 2 onerror: " .. e) end)
            end)
        end, function(_, e) trace("Level 0 onerror: " .. e) end)
        run(root)
        expect("s1_2_1")
        assert.are.same({ "second" }, unhandled)
    end)

    -- §1.3: the step waits through set_cancel() and set_timeout() alone
    -- (no wait_external()); socket.read() completes from an immediate with
    -- data or an error, or never (the step's 20 ms timeout fires).
    for _, mode in ipairs({ "data", "error", "timeout" }) do
      for _, clock in ipairs(clocks) do
        it("§1.3 wait for external resources (" .. mode .. ", " .. clock .. " clock)", function()
            use_clock(clock)
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                trace("socket.read")
                if mode == "data" then
                    tool:immediate(function()
                        trace("data arrives")
                        asi:success("payload")
                    end)
                elseif mode == "error" then
                    tool:immediate(function()
                        trace("read fails")
                        -- JS: extError() swallows what error() throws; from
                        -- outside the callback Lua's error() returns
                        asi:error("ReadError")
                    end)
                end
                asi:set_cancel(function() trace("socket.cancel_read") end)
                -- the spec's 20 ms where the timeout is meant to fire; where
                -- the immediate is meant to win, an hour, so that no stall of
                -- the machine can let the timeout fire first (the trace
                -- does not show the value). A virtual clock cannot be
                -- outrun: 20 ms there.
                asi:set_timeout((mode == "timeout" or tool:is_virtual()) and 20
                    or 3600 * 1000)
            end, function(_, code)
                trace(code == "Timeout" and "Timeout" or "Read Error")
            end)
            root:add(function(_, ...) trace("next " .. fmt(...)) end)
            run(root)
            expect("s1_3_" .. mode)
            assert.are.same(({ data = {}, error = { "ReadError" },
                timeout = { "Timeout" } })[mode], unhandled)
            if tool:is_virtual() then
                assert.are.equal(mode == "timeout" and 20 or 0, tool:now())
            end
        end)
      end
    end

    for _, variant in ipairs({ { "abort", false }, { "onerror", false }, { "recover", false },
        { "abort", true }, { "onerror", true }, { "recover", true } }) do
        local mode, sync = variant[1], variant[2]
        it("§1.4 parallel abort (" .. mode .. (sync and ", synchronous error" or "") .. ")", function()
            local root = fa.AsyncSteps(tool)
            local onerror
            if mode ~= "abort" then
                onerror = function(asi, err)
                    trace("parallel onerror: " .. err)
                    if mode == "recover" then asi:success() end
                end
            end
            local b1err
            if mode == "onerror" then
                b1err = function(_, err) trace("branch 1 onerror: " .. err) end
            end
            root:parallel(onerror)
                :add(function(asi)
                    trace("branch 1 start")
                    asi:set_cancel(function() trace("branch 1 cancel") end)
                    asi:state().result1 = "r1"
                end, b1err)
                :add(function(asi)
                    trace("branch 2 start")
                    asi:set_cancel(function() trace("branch 2 cancel") end)
                    asi:state().result2 = "r2"
                end)
                :add(function(asi)
                    trace("branch 3 start")
                    if sync then
                        asi:error("Some Error") -- literally as in §1.4
                    end
                    asi:wait_external()
                    tool:immediate(function()
                        trace("branch 3 raises Some Error")
                        asi:error("Some Error")
                    end)
                end)
            root:add(function(asi)
                trace("final step: " .. asi:state().result1 .. " " .. asi:state().result2)
            end)
            run(root)
            local name = ({ abort = "s1_4_abort", onerror = "s1_4_abort_onerror",
                recover = "s1_4_abort_recover" })[mode]
            if not sync then
                expect(name)
            else
                -- As tests/test_spec.c: the reference swallows the
                -- synchronous error while the parallel starts and hangs
                -- (s1_4_refbug_sync_abort: its trace ends after the three
                -- starts, REFERENCE-NOTES.md); here it aborts the parallel
                -- as the asynchronous error does, so the trace is the
                -- asynchronous one without the asynchronous raiser's line,
                -- and it begins with the reference's lines.
                local want = {}
                for _, l in ipairs(load_trace(name)) do
                    if l ~= "branch 3 raises Some Error" then want[#want + 1] = l end
                end
                assert.are.same(want, trace.lines)
                local ref = load_trace("s1_4_refbug_sync_abort")
                assert.are.same(ref, { table.unpack(trace.lines, 1, #ref) })
                replayed.s1_4_refbug_sync_abort = true
            end
            assert.are.same(mode == "recover" and {} or { "Some Error" }, unhandled)
        end)
    end

    it("§1.8 loop with break", function()
        local n = 0
        local function call_some_library(asi)
            asi:add(function(a)
                n = n + 1
                trace("call_some_library " .. n)
                a:success(n < 3)
            end)
        end
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:loop(function(a)
                call_some_library(a)
                a:add(function(b, result)
                    trace("result " .. tostring(result))
                    if not result then b:break_loop() end
                end)
            end)
        end)
        root:add(function(_, ...) trace("after loop " .. fmt(...)) end)
        run(root)
        expect("s1_8_loop_break")
    end)

    it("§1.8 nested loops with labels", function()
        local o = 0
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:loop(function(a)
                local oi = o
                o = o + 1
                local i = 0
                trace("outer " .. oi)
                if oi == 3 then a:break_loop() end
                a:loop(function(b)
                    b:add(function(c)
                        local ii = i
                        i = i + 1
                        trace("call_some_library " .. oi .. "." .. ii)
                        c:success(ii < 2)
                    end)
                    b:add(function(c, result)
                        trace("result " .. tostring(result))
                        if not result then c:continue_loop("OUTER") end
                        c:success(result)
                    end)
                end)
                a:add(function(b, result)
                    trace("use " .. tostring(result))
                    b:success()
                end)
            end, "OUTER")
        end)
        root:add(function(_, ...) trace("after loop " .. fmt(...)) end)
        run(root)
        expect("s1_8_nested")
    end)

    it("§1.8 repeat", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:repeat_loop(3, function(_, i) trace("Iteration: " .. (i - 1)) end)
        end)
        run(root)
        expect("s1_8_repeat")
    end)

    it("§1.8 forEach", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:for_each({ "apple", "banana" }, function(_, k, v)
                trace((k - 1) .. " = " .. v)
            end)
        end)
        run(root)
        expect("s1_8_foreach")
    end)

    for _, something in ipairs({ true, false }) do
        it("§3.1 inner step, error or success (" .. tostring(something) .. ")", function()
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                asi:add(function(a)
                    if something then a:success(1, 2) else a:error("NotImplemented") end
                end)
            end, function(_, e) trace("externalError " .. e) end)
            root:add(function(_, a, b) trace("externalSuccess " .. a .. " " .. b) end)
            run(root)
            expect(something and "s3_1_ok" or "s3_1_err")
        end)

        it("§3.2 inner error handler (" .. tostring(something) .. ")", function()
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                asi:add(function(a)
                    if something then a:success(1, 2) else a:error("NotImplemented") end
                end, function(_, e) trace("Spotted error " .. e) end)
            end, function(_, e) trace("externalError " .. e) end)
            root:add(function(_, a, b) trace("externalSuccess " .. a .. " " .. b) end)
            run(root)
            expect(something and "s3_2_ok" or "s3_2_err")
        end)
    end

    for _, fail in ipairs({ 0, 1, 2 }) do
        it("§3.3 parallel and state (fail " .. fail .. ")", function()
            local root = fa.AsyncSteps(tool)
            local function fail_later(asi)
                asi:wait_external()
                tool:immediate(function() asi:error("NotImplemented") end)
            end
            root:add(function(asi)
                asi:parallel()
                    :add(function(a)
                        if fail == 1 then return fail_later(a) end
                        a:state().parallel_1 = 1
                    end, function(_, e) trace("Spotted error " .. e) end)
                    :add(function(a)
                        if fail == 2 then return fail_later(a) end
                        a:state().parallel_2 = 2
                    end, function(a, e)
                        trace("parallel_2 onerror " .. e)
                        a:state().parallel_2 = 0
                    end)
            end, function(_, e) trace("externalError " .. e) end)
            root:add(function()
                trace("externalSuccess " .. tostring(root:state().parallel_1) .. " "
                    .. tostring(root:state().parallel_2))
            end)
            run(root)
            expect(({ [0] = "s3_3_ok", "s3_3_err1", "s3_3_err2" })[fail])
        end)
    end

    for _, with_state in ipairs({ false, true }) do
        it("§3.4 loops over state (" .. tostring(with_state) .. ")", function()
            local root = fa.AsyncSteps(tool)
            if with_state then
                root:state().x = "X"
                root:state().y = "Y"
            end
            root:add(function(asi)
                asi:repeat_loop(3, function(_, i) trace(i - 1) end)
                asi:for_each({ 1, 3, 3 }, function(_, k, v) trace((k - 1) .. "=" .. v) end)
                asi:for_each(asi:state(), function(_, k, v) trace(k .. "=" .. v) end)
            end)
            run(root)
            expect(with_state and "s3_4_state" or "s3_4")
        end)
    end

    for _, via in ipairs({ "immediate", "timer" }) do
        for _, case in ipairs({ "ok", "err", "err_onerror" }) do
          for _, clock in ipairs(clocks) do
            it("§3.5 external event wait (" .. case .. ", " .. via .. ", " .. clock
                .. " clock)", function()
                use_clock(clock)
                local err = case ~= "ok" and "ExtError" or nil
                local function call_some_external(cb)
                    trace("callSomeExternal")
                    if via == "immediate" then
                        tool:immediate(function() cb(err) end)
                    else
                        tool:deferred(5, function() cb(err) end)
                    end
                end
                local root = fa.AsyncSteps(tool)
                local onerror
                if case == "err_onerror" then
                    onerror = function(_, e) trace("step 1 onerror: " .. e) end
                end
                root:add(function(asi)
                    trace("step 1")
                    asi:wait_external()
                    call_some_external(function(e)
                        if e then
                            trace("external callback err=" .. e)
                            -- the spec's try/catch still works; from outside
                            -- the step's callback error() does not raise
                            local ok, r = pcall(asi.error, asi, e)
                            assert.is_true(ok)
                            assert.is_true(r)
                        else
                            trace("external callback ok")
                            asi:success()
                        end
                    end)
                end, onerror)
                root:add(function(_, ...) trace("step 2 args=" .. fmt(...)) end)
                run(root)
                expect("s3_5_" .. case .. "_" .. via)
                assert.are.same(case == "ok" and {} or { "ExtError" }, unhandled)
                if tool:is_virtual() then
                    assert.are.equal(via == "timer" and 5 or 0, tool:now())
                end
            end)
          end
        end
    end

    -- s_unhandled.js: an error no handler takes.
    local function unhandled_root()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            trace("step 1")
            asi:add(function(a)
                trace("step 1.1")
                a:error("MyError", "my info")
            end)
        end)
        root:add(function() trace("step 2") end)
        return root
    end
    local s_unhandled = {}

    it("unhandled error: execute() (s_unhandled a_execute)", function()
        trace("== a_execute ==")
        local root = unhandled_root()
        run(root)
        -- as in JS, once the flow ended: the root keeps its last error
        local st = root:state()
        local last = st.last_exception
        trace("after: error_info=" .. tostring(st.error_info) .. " last_exception="
            .. tostring(fa.is_error(last) and last.code or last))
        assert.are.same(section(load_trace("s_unhandled"), "a_execute"), trace.lines)
        assert.are.same({ "MyError" }, unhandled)
        s_unhandled.a = true
    end)

    it("unhandled error: a promise (s_unhandled b_promise: execute()'s on_done)", function()
        trace("== b_promise ==")
        local root = unhandled_root()
        root:execute(nil, function(ok, e)
            trace(ok and "promise resolved" or ("promise rejected: " .. e.code))
        end)
        tool:run()
        assert.are.same(section(load_trace("s_unhandled"), "b_promise"), trace.lines)
        s_unhandled.b = true
    end)

    it("unhandled error: error() from an external callback (s_unhandled c_external_error)", function()
        -- JS: error() throws out of the external callback, and the
        -- exception reaches the event loop ("uncaughtException: ExtError").
        -- From outside the step's callback Lua's error() returns (raising
        -- would reach luv, which ends the process): the flow fails and
        -- execute()'s callback gets the code, printed in place of the
        -- uncaught exception, as in tests/test_spec.c.
        trace("== c_external_error_uncaught ==")
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            trace("step 1")
            asi:wait_external()
            tool:immediate(function()
                trace("external calls as.error(ExtError)")
                asi:error("ExtError")
            end)
        end)
        root:add(function() trace("step 2") end)
        root:execute(function(code) trace("unhandled " .. code) end)
        tool:run()
        local want = section(load_trace("s_unhandled"), "c_external_error_uncaught")
        for i, l in ipairs(want) do
            if l == "uncaughtException: ExtError" then want[i] = "unhandled ExtError" end
        end
        assert.are.same(want, trace.lines)
        s_unhandled.c = true
    end)

    it("replays every spec trace of tests/expected (s*.trace)", function()
        if s_unhandled.a and s_unhandled.b and s_unhandled.c then
            replayed.s_unhandled = true
        end
        local files = {}
        local p = assert(io.popen("ls '" .. H.expected_dir .. "'"))
        for name in p:lines() do
            local base = name:match("^(s[%w_]*)%.trace$")
            if base then files[#files + 1] = base end
        end
        p:close()
        local done = {}
        for name in pairs(replayed) do done[#done + 1] = name end
        table.sort(files)
        table.sort(done)
        assert.is_true(#files >= 30, "the spec traces were not found")
        assert.are.same(files, done)
    end)
end)
