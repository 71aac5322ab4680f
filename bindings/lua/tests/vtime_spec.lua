-- Virtual time: fa.Tool{ virtual_time = true } never waits on the wall
-- clock. Its clock (tool:now(), ms from 0) moves only with tool:advance(ms),
-- which runs every timer that falls due on the way, in due-time order;
-- tool:next_due() says when the next one is; tool:run() runs what is due
-- now; root:run() advances from timer to timer until the root ends.
-- Assertions are on the virtual clock and on traces, never the wall clock.
local H = require "helper"
local fa = H.fa

describe("virtual time", function()
    local tool, trace
    before_each(function()
        tool = fa.Tool { virtual_time = true }
        trace = H.trace()
    end)
    after_each(function()
        collectgarbage()
        tool:close()
    end)

    -- a callback that traces its name and the tool's clock
    local function at(name)
        return function() trace(name, "at", tool:now()) end
    end

    it("starts at 0 and moves only with advance()", function()
        assert.is_true(tool:is_virtual())
        assert.is_false(fa.Tool():is_virtual())
        assert.are.equal(0, tool:now())
        tool:run()
        assert.are.equal(0, tool:now())
        assert.is_nil(tool:next_due())
        tool:advance(1500)
        assert.are.equal(1500, tool:now())
        tool:advance(0)
        tool:advance(0.5) -- rounded up to the millisecond, as deferred()
        assert.are.equal(1501, tool:now())
    end)

    it("fires timers in due order, FIFO among equal due times", function()
        tool:deferred(30, at("c"))
        tool:deferred(10, at("a1"))
        tool:deferred(20, at("b"))
        tool:deferred(10, at("a2"))
        assert.are.equal(10, tool:next_due())
        tool:run()
        assert.are.same({}, trace.lines)
        tool:advance(25)
        assert.are.same({ "a1 at 10", "a2 at 10", "b at 20" }, trace.lines)
        assert.are.equal(5, tool:next_due())
        tool:advance(5)
        assert.are.same({ "a1 at 10", "a2 at 10", "b at 20", "c at 30" }, trace.lines)
        assert.is_nil(tool:next_due())
    end)

    it("fires timers started during an advance in their turn", function()
        tool:deferred(10, function()
            at("start")()
            tool:immediate(at("imm"))
            tool:deferred(0, at("zero"))
            tool:deferred(5, at("five"))
            tool:deferred(100, at("hundred"))
        end)
        tool:deferred(12, at("twelve"))
        tool:advance(20)
        assert.are.same({ "start at 10", "imm at 10", "zero at 10", "twelve at 12",
            "five at 15" }, trace.lines)
        assert.are.equal(90, tool:next_due())
        tool:advance(tool:next_due())
        assert.are.equal("hundred at 110", trace.lines[#trace.lines])
        assert.is_nil(tool:next_due())
    end)

    it("a minute's timeout completed after 30 s of virtual time", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            trace("wait at", tool:now())
            asi:set_cancel(function() trace("cancelled") end)
            asi:set_timeout(60000)
            tool:deferred(30000, function()
                trace("complete at", tool:now())
                asi:success("done")
            end)
        end)
        root:add(function(_, v) trace("after", v, "at", tool:now()) end)
        root:execute()
        tool:run()
        assert.are.same({ "wait at 0" }, trace.lines)
        assert.are.equal(30000, tool:next_due())
        tool:advance(30000)
        assert.are.same({ "wait at 0", "complete at 30000", "after done at 30000" },
            trace.lines)
        assert.is_nil(tool:next_due()) -- the step's timeout went with the wait
    end)

    it("gives the half-timeout flow the same trace on both clocks", function()
        -- on the wall clock scaled down to 60 ms / 30 ms: both timers sit in
        -- one heap, so even a stalled loop fires the completion first
        local function flow(t, unit)
            local tr = H.trace()
            local root = fa.AsyncSteps(t)
            root:add(function(asi)
                tr("wait")
                asi:set_timeout(2 * unit)
                t:deferred(unit, function()
                    tr("complete")
                    asi:success("done")
                end)
            end)
            root:add(function(_, v) tr("after", v) end)
            root:run()
            return tr.lines
        end
        local wall = flow(fa.Tool(), 30)
        assert.are.same({ "wait", "complete", "after done" }, wall)
        assert.are.same(wall, flow(tool, 30000))
        assert.are.equal(30000, tool:now())
    end)

    it("root:run() advances from timer to timer until the root ends", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:set_timeout(60000)
            tool:deferred(10000, function() trace("tick at", tool:now()) end)
        end)
        local e = H.raises(root.run, root)
        assert.are.equal("Timeout", e.code)
        assert.are.same({ "tick at 10000" }, trace.lines)
        assert.are.equal(60000, tool:now())
        assert.is_nil(tool:next_due())
    end)

    it("root:run() refuses to wait for an event no timer brings", function()
        local root = fa.AsyncSteps(tool)
        root:add(function(asi) asi:wait_external() end)
        local e = H.raises(root.run, root)
        assert.matches("no timer", tostring(e))
        root:cancel()
    end)

    it("Throttle and Limiter periods follow the virtual clock", function()
        local thr = fa.Throttle(1, 1000, nil, tool)
        local lim = fa.Limiter { concurrent = 3, max_queue = 3, rate = 2, period_ms = 500,
            burst = 1, tool = tool }
        local roots = {}
        local function enter(obj, name)
            local root = fa.AsyncSteps(tool)
            root:sync(obj, function() trace(name, "in at", tool:now()) end)
            root:execute()
            roots[#roots + 1] = root
        end
        for _, n in ipairs({ "a", "b", "c" }) do enter(thr, n) end
        tool:run()
        assert.are.same({ "a in at 0" }, trace.lines)
        tool:advance(999)
        assert.are.same({ "a in at 0" }, trace.lines)
        tool:advance(1)
        tool:advance(5000)
        assert.are.same({ "a in at 0", "b in at 1000", "c in at 2000" }, trace.lines)
        assert.is_nil(tool:next_due())
        trace = H.trace()
        for _, n in ipairs({ "d", "e", "f" }) do enter(lim, n) end
        tool:run()
        tool:advance(499)
        assert.are.same({ "d in at 6000", "e in at 6000" }, trace.lines)
        tool:advance(1)
        assert.are.same({ "d in at 6000", "e in at 6000", "f in at 6500" }, trace.lines)
        for _, r in ipairs(roots) do r:free() end
        thr:close()
        lim:close()
    end)

    it("refuses bad input with an error naming it", function()
        for _, bad in ipairs({ -1, -0.5, 0 / 0, math.huge, -math.huge }) do
            assert.matches("ms must be a finite number >= 0",
                tostring(H.raises(tool.advance, tool, bad)))
        end
        assert.matches("advance.*number",
            tostring(H.raises(tool.advance, tool, {})))
        assert.matches("too large", tostring(H.raises(tool.advance, tool, 2 ^ 64)))
        assert.are.equal(0, tool:now())
        assert.matches("wall clock",
            tostring(H.raises(function() fa.Tool():advance(1) end)))
        assert.matches("a loop of its own", tostring(H.raises(fa.Tool,
            { virtual_time = true, uv_loop = tool:uv_loop() })))
        assert.matches("a boolean", tostring(H.raises(fa.Tool, { virtual_time = 1 })))
        -- not from inside the loop
        local seen
        local root = fa.AsyncSteps(tool)
        root:add(function()
            seen = tostring(H.raises(tool.advance, tool, 1))
        end)
        root:run()
        assert.matches("not from inside the loop", seen)
        tool:deferred(1, function() seen = tostring(H.raises(tool.advance, tool, 1)) end)
        tool:advance(1)
        assert.matches("not from inside the loop", seen)
        assert.are.equal(1, tool:now())
        local closed = fa.Tool { virtual_time = true }
        closed:close()
        assert.matches("closed", tostring(H.raises(closed.advance, closed, 1)))
        assert.matches("closed", tostring(H.raises(closed.next_due, closed)))
    end)

    it("takes a load policy too (set once: a second one is refused)", function()
        local t = fa.Tool { virtual_time = true, allow = { languages = { "lua" } } }
        assert.is_true(t:is_virtual())
        assert.matches("load policy already", tostring(H.raises(t.set_load_policy, t, {})))
        t:deferred(1000, function() trace("at", t:now()) end)
        t:advance(1000)
        assert.are.same({ "at 1000" }, trace.lines)
        t:close()
    end)
end)
