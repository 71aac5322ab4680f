-- Steps that wait (FTN12 §1.3) and completions that come late (rule 3 of
-- the cross-language contract):
--  - set_cancel() or set_timeout() alone, with no success() and no add()
--    in the callback, makes the step wait, as wait_external() does: its
--    handle stays live ("waiting") and a later success()/error() from an
--    event completes it, in plain and coroutine steps, in parallel
--    branches and under sync objects;
--  - a completion of a waiting step that lost the race to the step's
--    timeout or to a cancel of its flow returns false and never raises;
--    a second completion, or completing a step that completed normally,
--    raises.
-- Order is decided by the loop only: a completion meant to win comes from
-- a timer scheduled in the step against a timeout of an hour; one meant to
-- lose is scheduled from the error handler that the timeout ran. On a
-- virtual-time Tool: the clock says when each timer fired, and root:run()
-- (H.drive() for several roots) advances from one due timer to the next.
local H = require "helper"
local fa = H.fa

local HOUR = 3600 * 1000

describe("a step waiting through set_cancel() or set_timeout() alone (§1.3)", function()
    local tool
    before_each(function() tool = fa.Tool { virtual_time = true } end)

    -- `arm(asi)` makes the step wait in one of the two ways.
    local ways = {
        set_cancel = function(asi, log)
            asi:set_cancel(function() log[#log + 1] = "cancel handler" end)
        end,
        set_timeout = function(asi) asi:set_timeout(HOUR) end,
    }

    for way, arm in pairs(ways) do
        it(way .. " alone: the handle stays live; a timer's success() completes it", function()
            local log, kept = {}, nil
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                kept = asi
                arm(asi, log)
                tool:deferred(1, function()
                    log[#log + 1] = "timer: " .. asi:status()
                    local r = asi:success("payload", 7)
                    log[#log + 1] = "success: " .. tostring(r)
                end)
            end)
            root:add(function(asi, v, n) log[#log + 1] = "next " .. v .. " " .. n end)
            root:run()
            assert.are.same({ "timer: waiting", "success: true", "next payload 7" }, log)
            assert.are.equal("finished", kept:status())
        end)

        it(way .. " alone: a timer's error() goes to the step's error handler", function()
            local log = {}
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                arm(asi, log)
                tool:immediate(function()
                    local r = asi:error("ReadError", "eof")
                    log[#log + 1] = "error: " .. tostring(r)
                end)
            end, function(asi, code)
                log[#log + 1] = "onerror " .. code .. " " .. asi:error_info()
                asi:success("recovered")
            end)
            root:add(function(asi, v) log[#log + 1] = v end)
            root:run()
            local want = { "error: true", "onerror ReadError eof", "recovered" }
            if way == "set_cancel" then
                -- the error ends the wait the handler was set for: FTN12
                -- calls the cancel handler first
                table.insert(want, 2, "cancel handler")
            end
            assert.are.same(want, log)
        end)

        it(way .. " alone in a coroutine step (fa.async), completed by a timer", function()
            local log = {}
            local root = fa.AsyncSteps(tool)
            root:add(fa.async(function(asi)
                arm(asi, log)
                tool:deferred(1, function()
                    log[#log + 1] = "timer: " .. asi:status()
                    asi:success(41)
                end)
            end))
            root:add(function(asi, v) asi:success(v + 1) end)
            assert.are.equal(42, root:run())
            assert.are.same({ "timer: waiting" }, log)
        end)

        it(way .. " alone in parallel branches, completed by timers", function()
            local log = {}
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                local p = asi:parallel()
                for b = 1, 3 do
                    p:add(function(a)
                        arm(a, log)
                        tool:deferred(4 - b, function()
                            log[#log + 1] = "branch " .. b .. " at " .. tool:now()
                            a:state()["r" .. b] = b * 10
                            a:success()
                        end)
                    end)
                end
            end)
            root:add(function(asi)
                local st = asi:state()
                asi:success(st.r1 + st.r2 + st.r3)
            end)
            assert.are.equal(60, root:run())
            assert.are.same({ "branch 3 at 1", "branch 2 at 2", "branch 1 at 3" }, log)
        end)

        for _, kind in ipairs({ "Mutex", "Limiter" }) do
            it(way .. " alone under a " .. kind .. ": the next flow enters after the completion", function()
                local m = kind == "Mutex" and fa.Mutex()
                    or fa.Limiter { concurrent = 1, max_queue = 1, rate = 10, tool = tool }
                local log = {}
                local roots = {}
                for _, name in ipairs({ "a", "b" }) do
                    local r = fa.AsyncSteps(tool)
                    r:sync(m, function(asi)
                        log[#log + 1] = name .. " in at " .. tool:now()
                        arm(asi, log)
                        tool:deferred(1, function()
                            log[#log + 1] = name .. " out at " .. tool:now()
                            asi:success(name)
                        end)
                    end)
                    r:add(function(_, v) log[#log + 1] = "after " .. v end)
                    r:execute()
                    roots[#roots + 1] = r
                end
                H.drive(tool)
                assert.are.same({ "a in at 0", "a out at 1", "after a", "b in at 1",
                    "b out at 2", "after b" }, log)
                roots = nil
                collectgarbage()
                m:close()
            end)
        end
    end

    it("set_cancel() alone: cancelling the root calls the handler; a late success() returns false", function()
        local log, kept = {}, nil
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            kept = asi
            asi:set_cancel(function() log[#log + 1] = "cancel handler" end)
            tool:immediate(function()
                local was = root:cancel() -- the handler runs in there
                log[#log + 1] = "cancel: " .. tostring(was)
                local r = kept:success(1)
                log[#log + 1] = "late success: " .. tostring(r)
                local r = kept:error("Late")
                log[#log + 1] = "late error: " .. tostring(r)
            end)
        end)
        root:add(function() log[#log + 1] = "never" end)
        root:execute()
        tool:run()
        assert.are.same({ "cancel handler", "cancel: true", "late success: false",
            "late error: false" }, log)
        assert.are.equal("lost", kept:status())
    end)

    it("set_timeout() alone: the timeout wins; a late completion returns false", function()
        local log, kept = {}, nil
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            kept = asi
            asi:set_timeout(1)
        end, function(asi, code)
            log[#log + 1] = "onerror " .. code .. " at " .. tool:now()
            -- after the timeout fired: whatever completes it now is late
            tool:immediate(function()
                local r = kept:success("late")
                log[#log + 1] = "late success: " .. tostring(r)
                local r = kept:error("Late")
                log[#log + 1] = "late error: " .. tostring(r)
            end)
            asi:success()
        end)
        root:run()
        assert.are.same({ "onerror Timeout at 1", "late success: false", "late error: false" }, log)
        assert.are.equal("lost", kept:status())
        assert.is_false(kept:is_valid())
    end)

    it("set_cancel() or set_timeout() with sub-steps or success() does not wait", function()
        local log, kept = {}, {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            kept[1] = asi
            asi:set_timeout(HOUR)
            asi:add(function(a) log[#log + 1] = "sub"; a:success("from sub") end)
        end)
        root:add(function(asi, v)
            log[#log + 1] = v
            kept[2] = asi
            asi:set_cancel(function() end)
            asi:success("done")
        end)
        assert.are.equal("done", root:run())
        assert.are.same({ "sub", "from sub" }, log)
        -- neither handle waits: completing them now is misuse, not late
        for i = 1, 2 do
            assert.are.equal("finished", kept[i]:status())
            assert.has_error(function() kept[i]:success() end)
        end
        assert.truthy(tostring(H.raises(kept[2].success, kept[2])):find("already completed", 1, true))
    end)

    it("a second completion of a waiting step raises", function()
        local errs = {}
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:set_cancel(function() end)
            tool:immediate(function()
                assert.is_true(asi:success(1))
                errs[1] = H.raises(asi.success, asi, 2)
                errs[2] = H.raises(asi.error, asi, "Late")
            end)
        end)
        assert.are.equal(1, root:run())
        for i = 1, 2 do
            assert.truthy(tostring(errs[i]):find("already completed", 1, true), tostring(errs[i]))
        end
    end)

    it("waits the same way with full userdata handles (FUTOIN_LUA_FULL_HANDLES)", function()
        local script = [[
            local fa = require "futoin_async"
            local tool = fa.Tool()
            local log = {}
            local root = fa.AsyncSteps(tool)
            root:add(function(asi)
                assert(getmetatable(asi) == fa.core.metatable("step"))
                asi:set_cancel(function() end)
                tool:deferred(1, function()
                    collectgarbage(); collectgarbage() -- the handle is anchored
                    log[#log + 1] = asi:status()
                    local r = asi:success(5)
                    log[#log + 1] = tostring(r)
                end)
            end)
            root:add(function(asi, v) asi:success(v * 2) end)
            assert(root:run() == 10)
            local kept
            root = fa.AsyncSteps(tool)
            root:add(function(asi) kept = asi; asi:set_timeout(1) end,
                function(asi)
                    tool:immediate(function()
                        local r = kept:success()
                        log[#log + 1] = tostring(r)
                    end)
                    asi:success()
                end)
            root:run()
            assert(table.concat(log, ",") == "waiting,true,false", table.concat(log, ","))
            assert(kept:status() == "lost")
            print("full handles wait ok")
        ]]
        local out = H.run_lua(script, nil, "FUTOIN_LUA_FULL_HANDLES=1")
        assert.truthy(out:find("full handles wait ok", 1, true), out)
    end)
end)
