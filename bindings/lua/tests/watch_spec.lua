-- tool:set_hooks{...} and tool:dump() (futoin/sys/hooks.h,
-- futoin_tool_dump()): the binding hands each event on as a table and the
-- dump as a string; the events and their order are the library's
-- (tests/test_hooks.c). On a virtual-time Tool, so every time is exact.
local H = require "helper"
local fa = H.fa

describe("hooks and the live dump", function()
    local tool
    before_each(function() tool = fa.Tool { virtual_time = true } end)
    after_each(function()
        collectgarbage()
        tool:close()
    end)

    local function recorder(lines)
        return function(ev)
            local t = { ev.event, "r" .. ev.root_id }
            -- a Lua step is named by its file:line (local functions have
            -- no name), a C step by its function
            if ev.language == "lua" then
                t[#t + 1] = ev.file:match("([^/]+)$") .. ":" .. ev.line
            elseif ev["function"] then
                t[#t + 1] = ev["function"]
            end
            for _, k in ipairs({ "code", "outcome", "wait", "wait_language" }) do
                if ev[k] then t[#t + 1] = ev[k] end
            end
            lines[#lines + 1] = table.concat(t, " ") .. " @" .. ev.now
        end
    end

    it("passes the events of a chain, a handled error and a wait", function()
        local lines = {}
        local rec = recorder(lines)
        local all = {}
        for name in pairs(fa.HOOK_EVENTS) do all[name] = rec end
        tool:set_hooks(all)
        local l_first = debug.getinfo(1, "l").currentline + 1
        local function first(asi) asi:error("MyError", "it broke") end
        local l_wait = debug.getinfo(1, "l").currentline + 1
        local function wait(asi)
            asi:wait_external()
            tool:deferred(30, function() asi:success() end)
        end
        local root = fa.AsyncSteps(tool)
        root:add(first, function(asi, code) asi:success() end)
        root:add(wait)
        root:execute()
        tool:run()
        tool:advance(30)
        local rid = lines[1]:match("^flow_started (r%d+)")
        assert.is_truthy(rid)
        -- execute() of the binding ends the flow with a C step of its own
        -- (tr_finished), which is reported as any step
        local want = {
            "flow_started RID @0",
            "step_entered RID FIRST @0",
            "error_raised RID MyError @0",
            "error_handled RID MyError @0",
            "step_left RID FIRST @0",
            "step_entered RID WAIT @0",
            "wait_begun RID WAIT foreign lua @0",
            "wait_ended RID WAIT foreign lua @30",
            "step_left RID WAIT @30",
            "step_entered RID tr_finished @30",
            "step_left RID tr_finished @30",
            "flow_finished RID success @30",
        }
        for i, l in ipairs(want) do
            want[i] = l:gsub("RID", rid):gsub("FIRST", "watch_spec.lua:" .. l_first)
                :gsub("WAIT", "watch_spec.lua:" .. l_wait)
        end
        assert.are.same(want, lines)
        -- cleared: nothing more is reported
        tool:set_hooks()
        fa.AsyncSteps(tool):add(function() end):run()
        assert.are.equal(#want, #lines)
        root:free()
    end)

    it("holds one registry reference while hooks are set, none otherwise", function()
        -- a Tool that never had hooks gives nothing back when it goes (a
        -- 0 taken for a reference made the count -1)
        local refs0 = fa.refs()
        fa.Tool { virtual_time = true }:close()
        assert.are.equal(refs0, (fa.refs()))
        tool:set_hooks { cancel = function() end }
        assert.are.equal(refs0 + 1, (fa.refs()))
        tool:set_hooks { cancel = function() end }
        assert.are.equal(refs0 + 1, (fa.refs()))
        tool:set_hooks()
        assert.are.equal(refs0, (fa.refs()))
        local t2 = fa.Tool { virtual_time = true }
        t2:set_hooks { cancel = function() end }
        t2:close()
        assert.are.equal(refs0, (fa.refs()))
    end)

    it("refuses unknown events and non-functions", function()
        assert.truthy(tostring(H.raises(tool.set_hooks, tool, { step_started = print }))
            :find("no event 'step_started'", 1, true))
        assert.truthy(tostring(H.raises(tool.set_hooks, tool, { cancel = 1 }))
            :find("cancel must be a function", 1, true))
    end)

    it("dumps each waiting flow with its reason and origin", function()
        local mtx = fa.Mutex()
        local l_sleepy = debug.getinfo(1, "l").currentline + 1
        local function sleepy(asi) asi:set_timeout(5000) end
        local function wait_ext(asi) asi:wait_external() end
        local l_guarded = debug.getinfo(1, "l").currentline + 1
        local function guarded(asi) asi:wait_external() end
        local r1 = fa.AsyncSteps(tool); r1:add(sleepy)
        local r2 = fa.AsyncSteps(tool); r2:add(wait_ext)
        local r3 = fa.AsyncSteps(tool); r3:sync(mtx, guarded)
        local r4 = fa.AsyncSteps(tool); r4:sync(mtx, guarded)
        r1:execute(); r2:execute(); r3:execute()
        tool:run()
        tool:advance(400)
        r4:execute()
        tool:run()
        tool:advance(600)
        local d = tool:dump()
        assert.truthy(d:find("^futoin%-dump version=1 now=1000 roots=4\n"), d)
        assert.truthy(d:find("end roots=4\n$"), d)
        local ids = {}
        for id in d:gmatch("\nroot=(%d+) state=running") do ids[#ids + 1] = tonumber(id) end
        table.sort(ids)
        assert.are.equal(4, #ids, d)
        local a, b, c, e = ids[1], ids[2], ids[3], ids[4]
        local function has(pattern)
            assert.truthy(d:find(pattern), "no " .. pattern .. " in:\n" .. d)
        end
        -- on a timer
        has(("\nroot=%d flow=0 wait=timer since=0 waited=1000 due=5000\nroot=%d flow=0 at=0 lua [^\n]*watch_spec.lua:%d%%)")
            :format(a, a, l_sleepy))
        -- on an external completion: a Lua step, which Lua completes
        has(("\nroot=%d flow=0 wait=foreign since=0 waited=1000 language=lua\nroot=%d flow=0 at=0 lua [^\n]*watch_spec.lua")
            :format(b, b))
        -- the Mutex's holder waits in its section, the other flow is first in its queue
        has(("\nroot=%d flow=0 wait=foreign since=0 waited=1000 language=lua\nroot=%d flow=0 at=0 lua [^\n]*watch_spec.lua:%d%%)")
            :format(c, c, l_guarded))
        has(("\nroot=%d flow=0 wait=sync since=400 waited=600 object=Mutex place=1 queued=1\nroot=%d flow=0 section=lua [^\n]*watch_spec.lua:%d%%)")
            :format(e, e, l_guarded))
        -- a freed root is no longer listed
        r2:free()
        d = tool:dump()
        assert.truthy(d:find("^futoin%-dump version=1 now=1000 roots=3\n"), d)
        assert.is_nil(d:find(("\nroot=%d "):format(b)), d)
        r1:free(); r3:free(); r4:free()
        assert.are.equal("futoin-dump version=1 now=1000 roots=0\nend roots=0\n", tool:dump())
        mtx:close()
    end)
end)
