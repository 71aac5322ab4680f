-- Nothing leaks: after 100,000 flows ending in success, error and cancel
-- (with values, custom values, state, error handlers, cancel handlers and
-- timers in play) the registry references the glue holds, the callback
-- records the runtime holds and collectgarbage("count") are back at their
-- baseline.
local H = require "helper"
local fa = H.fa

local FLOWS = tonumber(os.getenv("FUTOIN_LEAK_FLOWS") or "") or 100000
local BATCH = 500

describe("leaks", function()
    local tool = fa.Tool()

    -- One flow; `kind` 0: success, 1: error, 2: cancel.
    local function flow(kind, i, results)
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            asi:state().n = i
            asi:success({ i = i }, "s" .. i, { 1, 2, 3 }, i)
        end)
        if kind == 0 then
            root:add(function(asi, t, s, arr, n)
                asi:add(function(a) a:success(t.i + n) end)
            end)
            root:add(function(asi, v) results.ok = results.ok + 1 end)
            root:execute()
        elseif kind == 1 then
            root:add(function(asi, t)
                if t.i % 2 == 0 then
                    error({ why = "table error " .. t.i })
                end
                asi:error("MyError", "flow " .. t.i)
            end, function(asi, code)
                results.handled = results.handled + 1
                -- not recovered: the error reaches execute()'s callback
            end)
            root:execute(function(code, info, last)
                results.failed = results.failed + 1
            end)
        else
            root:add(function(asi, t)
                asi:set_cancel(function() results.cancelled = results.cancelled + 1 end)
                asi:wait_external()
                tool:immediate(function() root:cancel() end)
            end)
            root:execute()
        end
    end

    local function run(n)
        local results = { ok = 0, failed = 0, handled = 0, cancelled = 0 }
        local i = 0
        while i < n do
            for _ = 1, math.min(BATCH, n - i) do
                flow(i % 3, i, results)
                i = i + 1
            end
            tool:run()
        end
        return results
    end

    it("after 100,000 flows, references and Lua memory are back at baseline", function()
        -- warm up: the record pool, the registry and other tables reach the
        -- sizes this load needs (pools do not shrink; how many finished
        -- roots await collection at the peak depends on the GC's pace, so
        -- the warm-up is long); the second half below proves the baseline
        run(math.max(10 * BATCH, FLOWS // 5))
        local refs0, recs0 = H.settle()
        local mem0 = collectgarbage("count")
        local pool0 = select(3, fa.refs())
        local r = run(FLOWS // 2)
        H.settle()
        local mem_half = collectgarbage("count")
        local r2 = run(FLOWS - FLOWS // 2)
        local refs, recs = H.settle()
        local mem = collectgarbage("count")
        for k, v in pairs(r2) do r[k] = r[k] + v end
        local want = { [0] = 0, 0, 0 }
        for _, half in ipairs({ FLOWS // 2, FLOWS - FLOWS // 2 }) do
            for i = 0, half - 1 do want[i % 3] = want[i % 3] + 1 end
        end
        assert.are.equal(want[0], r.ok)
        assert.are.equal(want[1], r.failed)
        assert.are.equal(want[1], r.handled)
        assert.are.equal(want[2], r.cancelled)
        print(("\n  leaks: %d flows (%d ok, %d error, %d cancel); refs %d -> %d, "
            .. "records %d -> %d, Lua heap %.1f -> %.1f KiB (half %.1f), pool %d -> %d"):format(FLOWS, r.ok,
            r.failed, r.cancelled, refs0, refs, recs0, recs, mem0, mem, mem_half, pool0, select(3, fa.refs())))
        assert.are.equal(refs0, refs)
        assert.are.equal(recs0, recs)
        -- Lua's heap: back within 16 KiB of the baseline (table sizes,
        -- interned strings), and the second 50,000 flows added nothing
        assert.is_true(mem - mem0 < 16, ("Lua heap grew by %.1f KiB"):format(mem - mem0))
        assert.is_true(mem - mem_half < 4,
            ("Lua heap grew by %.1f KiB in the second half"):format(mem - mem_half))
    end)

    it("a root dropped without being run releases everything it held", function()
        local refs0, recs0 = H.settle()
        for i = 1, 1000 do
            local root = fa.AsyncSteps(tool)
            root:state().x = { i }
            root:add(function() end, function() end)
            root:loop(function() end)
            root:repeat_loop(3, function() end)
            root:parallel(function() end):add(function() end)
        end
        local refs, recs = H.settle()
        assert.are.equal(refs0, refs)
        assert.are.equal(recs0, recs)
    end)
end)
