-- Trace context (futoin/trace.h) from Lua: asi:set_trace(traceparent) and
-- asi:trace() over the library's per-root context.
local H = require "helper"
local fa = H.fa

local TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
local TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
local PARENT = "00f067aa0ba902b7"

describe("trace context", function()
    local tool
    before_each(function() tool = fa.Tool() end)
    after_each(function()
        collectgarbage()
        tool:close()
    end)

    it("is seen by the next steps, each a span under its frame", function()
        local seen, child = {}, nil
        local root = fa.AsyncSteps(tool)
        root:add(function(asi)
            assert.is_nil(asi:trace())
            asi:set_trace(TP)
            seen.setter = asi:trace()
        end)
        root:add(function(asi)
            seen.outer = asi:trace()
            asi:add(function(a) seen.inner = a:trace() end)
        end)
        root:add(function(asi)
            seen.holder = asi:trace()
            local p = asi:parallel()
            p:add(function(a) seen.b1 = a:trace() end)
            p:add(function(a) seen.b2 = a:trace() end)
        end)
        root:add(function(asi)
            child = asi:new_instance()
            seen.child_root = child:trace()
            child:add(function(a) seen.child = a:trace() end)
            child:execute()
        end)
        root:run()
        local s, o, i = seen.setter, seen.outer, seen.inner
        assert.are.equal(TRACE_ID, s.trace_id)
        assert.are.equal(1, s.flags)
        assert.are.equal(PARENT, s.parent_span_id)
        assert.are.equal(PARENT, o.parent_span_id)
        assert.are.equal(o.span_id, i.parent_span_id)
        assert.are.equal("00-" .. TRACE_ID .. "-" .. i.span_id .. "-01", i.traceparent)
        -- branches run under the step that called parallel()
        assert.are.equal(seen.b1.parent_span_id, seen.b2.parent_span_id)
        assert.are.equal(seen.holder.span_id, seen.b1.parent_span_id)
        assert.are_not.equal(seen.b1.span_id, seen.b2.span_id)
        -- new_instance(): the same trace under the starting step's span
        assert.are.equal(TRACE_ID, seen.child.trace_id)
        assert.is_nil(seen.child_root.parent_span_id)
        assert.are.equal(seen.child_root.span_id, seen.child.parent_span_id)
        local spans = {}
        for _, t in pairs { s, o, i, seen.b1, seen.b2, seen.child } do
            assert.is_nil(spans[t.span_id])
            spans[t.span_id] = true
        end
        assert.are.equal(PARENT, root:trace().span_id)
        child:free()
        root:free()
    end)

    it("refuses a bad value and keeps the context; nil clears", function()
        local root = fa.AsyncSteps(tool)
        root:set_trace(TP)
        for _, bad in ipairs {
            "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            TP .. "\0",
        } do
            local ok, err = pcall(root.set_trace, root, bad)
            assert.is_false(ok)
            assert.truthy(tostring(err):find("traceparent", 1, true), err)
        end
        assert.is_false(pcall(root.set_trace, root, 42))
        assert.are.equal(TP, root:trace().traceparent)
        root:set_trace(nil)
        assert.is_nil(root:trace())
        root:free()
    end)
end)
